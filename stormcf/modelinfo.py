"""What ``stormcf info`` answers: the sizes and vocabulary of a model (:class:`ModelFacts`) as a result of the shared
protocol (:class:`ModelInfo`).

The command line reads the facts straight from Storm's model (:func:`stormcf.storm.model_facts`), without the
explicit model and its numpy/scipy arrays, so that ``info`` on a small model costs little more than Storm's parse and
build (issue 34); :meth:`ModelFacts.of` reads the same facts from an :class:`~stormcf.model.ExplicitModel`. This
module imports no numpy."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .report import Report

if TYPE_CHECKING:
    from .model import ExplicitModel


@dataclass(frozen=True)
class ModelFacts:
    """Sizes and vocabulary of a model (what ``stormcf info`` prints; the keys of
    :meth:`~stormcf.model.ExplicitModel.summary`), and the names of the states the text shows.

    ``shared_example`` is the first state (by index) with several choices of one action, as its name and the names
    of its choices (``a#0``, ``a#1``, ...), or None; ``timings`` the seconds of loading the model by phase (wall
    clock; ``<phase>_cpu``: CPU seconds of the thread that loaded it, as :func:`~stormcf.storm.load_timings`)."""

    source: str
    model_type: str
    n_states: int
    n_choices: int
    n_transitions: int
    n_decision_states: int
    initial_state: Any                  # the initial state's valuation (a dict), or its index without variables
    initial_name: str
    labels: Sequence[str]
    actions: Sequence[str]
    shared_action_states: int
    shared_example: tuple[str, Sequence[str]] | None
    reward_models: Mapping[str, Sequence[str]]
    variables: Mapping[str, Sequence[Any]]
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, model: ExplicitModel) -> "ModelFacts":
        """The facts of an explicit model (with its loading times when Storm loaded it from a file)."""
        from .storm import load_timings
        summary = model.summary()
        shared = model.shared_action_states.nonzero()[0]
        example = None
        if shared.size:
            s = int(shared[0])
            example = (model.state_name(s), model.enabled_actions(s))
        return cls(model.source, model.model_type, model.n_states, model.n_choices, model.n_transitions,
                   model.n_decision_states, summary["initial_state"], model.state_name(model.initial_state),
                   summary["labels"], summary["actions"], summary["shared_action_states"], example,
                   summary["reward_models"], summary["variables"], load_timings(model))

    def summary(self) -> dict[str, Any]:
        """The keys of :meth:`~stormcf.model.ExplicitModel.summary`, with the same values."""
        return {"source": self.source, "type": self.model_type, "states": self.n_states, "choices": self.n_choices,
                "transitions": self.n_transitions, "decision_states": self.n_decision_states,
                "initial_state": self.initial_state, "labels": list(self.labels), "actions": list(self.actions),
                "shared_action_states": self.shared_action_states,
                "reward_models": {k: list(v) for k, v in self.reward_models.items()},
                "variables": {k: list(v) for k, v in self.variables.items()}}


@dataclass(frozen=True, eq=False)
class ModelInfo(Report):
    """Sizes and vocabulary of a model (``stormcf info``): ``ModelInfo(storm.model_facts(file))``, or
    ``ModelInfo(ModelFacts.of(model))`` for an explicit model."""

    command = "info"
    model: ModelFacts
    status = "ok"
    checks: Sequence[Any] = ()

    @property
    def timings(self) -> dict[str, float]:
        """Loading the model: Storm's parsing and building, stormcf's reading of the facts (or extraction)."""
        return {phase: t for phase, t in self.model.timings.items() if not phase.endswith("_cpu")}

    def payload(self) -> dict[str, Any]:
        summary = self.model.summary()
        for key in ("source", "type", "states", "choices", "transitions", "decision_states"):
            summary.pop(key)
        return summary

    def text(self) -> str:
        m = self.model
        variables = ", ".join(f"{v} in [{lo}, {hi}]" for v, (lo, hi) in m.variables.items()) or "none"
        rewards = [f'"{k}" ({", ".join(parts)} rewards)' for k, parts in m.reward_models.items()]
        return "\n".join([f"initial state: {m.initial_name}",
                          f"variables:     {variables}",
                          "labels:        " + (", ".join(f'"{k}"' for k in m.labels) or "none"),
                          "actions:       " + (", ".join(m.actions) or "none"),
                          "choice names:  " + _choice_naming(m),
                          "reward models: " + (", ".join(rewards) or "none")])


def _choice_naming(facts: ModelFacts) -> str:
    if facts.shared_example is None:
        return "the action names (no state has two choices of one action)"
    name, choices = facts.shared_example
    return (f"{facts.shared_action_states} state(s) have several choices of one action, named a#0, a#1, ... in "
            f"Storm's order (e.g. {', '.join(choices)} in state {name})")

