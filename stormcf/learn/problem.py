"""The learning problem of ``stormcf learn``: an event log and the options, validated once when built.

Names: every action and observation of the log gets a PRISM identifier (:mod:`.names`); every observation becomes
a label of its identifier; ``labels`` adds grouped labels (``negative`` = Rejected, Cancelled); a grouped label
named in ``final_only`` holds only where its observation was the **last event of a case**. For that the learner
sees such last events as outputs of their own (``Rejected`` at the end of a case is another output than
``Rejected`` in the middle), so they become states of their own; the observation's label covers both.

Rewards: ``rewards`` maps a reward model name to a cost per action (``{"cost": {"Submit": 5}}``); the reward model
``steps`` (1 per action, implicit ones included) is always written.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..errors import LearnError
from .alergia import Traces, resolve_alpha
from .log import EventLog
from .names import identifiers, is_identifier

#: the learners: stormcf's implementation of IOAlergia and AALpy's own (the same automaton, far slower)
LEARNERS = ("stormcf", "aalpy")
#: the reward model of step counts written into every learned model
STEPS = "steps"


@dataclass(frozen=True, eq=False)
class LearnProblem:
    """A validated learning problem.

    Attributes:
        log: the event log.
        alpha: IOAlergia's compatibility parameter α in (0, 2] (AALpy's ``eps``), or ``"auto"`` (10 / steps).
        labels: grouped label name -> observation names (as in the log).
        final_only: grouped labels that hold only at the last event of a case.
        rewards: reward model name -> {action name (as in the log): cost}.
        laplace: the pseudo-count λ of Laplace smoothing of the learned strategy (0: plain frequencies).
        learner: ``"stormcf"`` or ``"aalpy"`` (module :mod:`.alergia`).
        model_path: where the PRISM model is written (``None``: a temporary file, kept as text in the result).
        strategy_path: where the learned strategy is written (optional).
        drn_path: where the model is also written in Storm's DRN format (optional).
        properties: properties Storm checks on the DTMC the learned strategy induces (besides ``P=? [F "label"]``
            for every grouped label).
    """

    log: EventLog
    alpha: float | str = 0.05
    labels: Mapping[str, Sequence[str]] = field(default_factory=dict)
    final_only: frozenset[str] = frozenset()
    rewards: Mapping[str, Mapping[str, float | str]] = field(default_factory=dict)
    laplace: float = 0.0
    learner: str = "stormcf"
    model_path: Path | None = None
    strategy_path: Path | None = None
    drn_path: Path | None = None
    properties: Sequence[str] = ()
    #: α as a number
    alpha_value: float = field(init=False, repr=False)
    #: action name (as in the log) -> PRISM identifier
    action_ids: dict[str, str] = field(init=False, repr=False)
    #: observation name (as in the log) -> PRISM identifier (and label name)
    observation_ids: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        if self.log.n_steps == 0:
            raise LearnError(f"{self.log.source}: no case has a step after its initial observation; nothing to learn")
        set_("alpha_value", resolve_alpha(self.alpha, self.log.n_steps))
        if self.learner not in LEARNERS:
            raise LearnError(f"unknown learner {self.learner!r}: use {' or '.join(LEARNERS)}")
        if isinstance(self.laplace, bool) or not isinstance(self.laplace, (int, float)) or not (
                math.isfinite(self.laplace) and self.laplace >= 0):
            raise LearnError(f"the Laplace pseudo-count must be a number >= 0, got {self.laplace!r}")
        set_("action_ids", identifiers(self.log.actions))
        set_("observation_ids", identifiers(self.log.observations))
        set_("labels", self._grouped_labels())
        set_("final_only", frozenset(self.final_only))
        for name in self.final_only:
            if name not in self.labels:
                raise LearnError(f"final-only label '{name}' is not a grouped label (labels: "
                                 f"{', '.join(self.labels) or 'none'})")
        set_("rewards", self._reward_models())
        set_("properties", tuple(self.properties))
        self._require_known_labels()
        for key, suffixes in (("model_path", (".prism", ".nm")), ("drn_path", (".drn",)), ("strategy_path", ())):
            set_(key, _output_path(getattr(self, key), suffixes))

    def _grouped_labels(self) -> dict[str, tuple[str, ...]]:
        taken = {v: k for k, v in self.observation_ids.items()}
        out = {}
        for name, observations in self.labels.items():
            if not is_identifier(name):
                raise LearnError(f"label name '{name}' is not a PRISM identifier (letters, digits, _; no keyword)")
            if name in taken:
                raise LearnError(f"label '{name}' is already the label of the observation '{taken[name]}'")
            observations = tuple(observations)
            if not observations:
                raise LearnError(f"label '{name}' names no observation")
            for o in observations:
                if o not in self.observation_ids:
                    raise LearnError(f"label '{name}': no observation '{o}' in {self.log.source} "
                                     f"(observations: {_some(self.log.observations)})")
            out[name] = observations
        return out

    def _require_known_labels(self) -> None:
        """A property may only name labels the learned model will have: an observation of the log (by its PRISM
        identifier) or a grouped label. Said before learning, with what the log holds."""
        known = set(self.observation_ids.values()) | set(self.labels) | {"init", "deadlock"}
        for text in self.properties:
            for name in re.findall(r'"([^"]*)"', re.sub(r'\{"[^"]*"\}', "", text)):
                if name not in known:
                    log, labels = self.log, _some(sorted(known - {"init", "deadlock"}))
                    raise LearnError(f"property '{text}' names the label \"{name}\", but no event of {log.source} "
                                     f"({log.n_cases} cases, {log.events} events) is observed as '{name}' and no "
                                     f"grouped label is named so (labels: {labels})")

    def _reward_models(self) -> dict[str, dict[str, Fraction]]:
        out: dict[str, dict[str, Fraction]] = {}
        for name, costs in self.rewards.items():
            if not is_identifier(name):
                raise LearnError(f"reward model name '{name}' is not a PRISM identifier")
            if name == STEPS:
                raise LearnError(f"the reward model '{STEPS}' (step counts) is written by stormcf; choose another name")
            out[name] = {}
            for action, value in costs.items():
                if action not in self.action_ids:
                    raise LearnError(f"reward '{name}': no action '{action}' in {self.log.source} "
                                     f"(actions: {_some(self.log.actions)})")
                out[name][action] = _exact(value, f"reward '{name}', action '{action}'")
        return out

    # ------------------------------------------------------------------------------------------ derived data
    @property
    def final_observations(self) -> frozenset[str]:
        """The observations whose last events of a case become outputs of their own."""
        return frozenset(o for name in self.final_only for o in self.labels[name])

    @property
    def outputs(self) -> list[tuple[str, bool]]:
        """The learner's outputs in code order: (observation, is the last event of a case)."""
        finals = sorted(self.final_observations)
        return [(o, False) for o in self.log.observations] + [(o, True) for o in finals]

    def traces(self) -> Traces:
        """The log as the learner's traces: a last event whose observation is final-only gets its final output."""
        log = self.log
        outputs = log.step_observations.copy()
        finals = sorted(self.final_observations)
        if finals:
            code = {log.observations.index(o): len(log.observations) + k for k, o in enumerate(finals)}
            last = log.offsets[1:][np.diff(log.offsets) > 0] - 1
            for obs, final in code.items():
                hit = last[outputs[last] == obs]
                outputs[hit] = final
        return Traces(int(log.initial[0]), log.offsets, log.step_actions, outputs, len(log.actions),
                      len(log.observations) + len(finals))


def _exact(value: float | str, where: str) -> Fraction:
    try:
        x = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise LearnError(f"{where}: '{value}' is not a number") from None
    return x


def _output_path(path: Path | str | None, suffixes: tuple[str, ...]) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise LearnError(f"{p}: the file name must end in {' or '.join(suffixes)}")
    if not p.parent.is_dir():
        raise LearnError(f"{p}: cannot write there (no directory {p.parent})")
    return p


def _some(names: Sequence[str], limit: int = 8) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
