"""Input files made from a model: strategy files (``stormcf strategy-file``) and observed paths simulated under a
strategy (``stormcf simulate``), so that the analyses' inputs need no Python.

- :func:`make_strategy_file`: the uniform strategy, a seeded random one (σ(s) ~ Dirichlet(1, ..., 1) in every
  state), or Storm's optimal memoryless deterministic scheduler for a property such as ``Pmin=? [F "rejected"]``
  (whose value under the induced DTMC Storm then re-checks against the optimum), over the full model.
- :func:`make_path_file`: a path of T steps sampled from the initial state under a strategy, seeded
  (:func:`stormcf.paths.simulate`), with its probability.

Both write their file atomically and return a :class:`~stormcf.report.Report`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .errors import OptionError
from .limits import require_memory
from .model import ExplicitModel
from .paths import ObservedPath, simulate
from .report import Report
from . import storm
from .storm import parse_property
from .strategy import Strategy
from .verify import Check, check_strategy, format_value

#: how a strategy file is made
STRATEGY_KINDS = ("uniform", "random", "scheduler")


@dataclass(frozen=True, eq=False, repr=False)
class StrategyFile(Report):
    """A strategy written to a file (``stormcf strategy-file``)."""

    command = "strategy-file"
    strategy: Strategy
    kind: str
    file: str
    prop: str | None = None
    seed: int | None = None
    checks: Sequence[Check] = ()
    timings: dict[str, float] = field(default_factory=dict)
    notes: Sequence[str] = ()
    status = "ok"

    @property
    def model(self) -> ExplicitModel:
        return self.strategy.model

    def payload(self) -> dict[str, Any]:
        return {"kind": self.kind, "property": self.prop, "seed": self.seed, "file": self.file,
                "decision_states": int(self.model.decision_states.sum()),
                "deterministic": self.strategy.is_deterministic}

    def text(self) -> str:
        what = {"uniform": "the uniform strategy", "random": f"a random strategy (seed {self.seed})",
                "scheduler": f"Storm's optimal scheduler for {self.prop}"}[self.kind]
        lines = [f"{self.file}: {what}, {int(self.model.decision_states.sum())} decision states listed"]
        lines += [f"checked by Storm on the DTMC it induces: {c}" for c in self.checks]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def make_strategy_file(model: ExplicitModel, out: str | os.PathLike, kind: str, prop: str | None = None,
                       seed: int | None = None) -> StrategyFile:
    """Make a strategy of ``model`` (``kind``: uniform, random with ``seed``, or Storm's optimal scheduler for
    ``prop``) and write it to ``out`` (the strategy file format of :mod:`stormcf.strategy`)."""
    if kind not in STRATEGY_KINDS:
        raise OptionError(f"unknown kind of strategy '{kind}' (kinds: {', '.join(STRATEGY_KINDS)})")
    checks: tuple[Check, ...] = ()
    notes: list[str] = []
    if kind == "uniform":
        strategy = Strategy.uniform(model)
    elif kind == "random":
        if seed is None or seed < 0:
            raise OptionError(f"a random strategy needs a seed >= 0, got {seed}")
        strategy = Strategy.random(model, seed)
    else:
        if prop is None:
            raise OptionError("Storm's scheduler needs a property such as 'Pmin=? [F \"bad\"]'")
        parsed = parse_property(model, prop)
        if parsed.optimization is None:
            raise OptionError(f"{parsed.text} has no direction: Storm's scheduler needs Pmin/Pmax/Rmin/Rmax/Tmin/Tmax")
        choices = storm.optimal_choices(model, parsed)
        strategy = Strategy(model, choices.probabilities)
        checks = (check_strategy(strategy, parsed, expected=float(choices.values[model.initial_state]),
                                 subject="DTMC induced by Storm's scheduler").named("scheduler").confirm(),)
        if choices.open_states.size:
            notes.append(f"Storm's scheduler leaves the choice open in {choices.open_states.size} state(s) (e.g. "
                         f"{model.state_name(int(choices.open_states[0]))}), where the value does not depend on "
                         f"it; the file plays their first choice (Storm's check above confirms the value)")
        if not choices.deterministic:
            notes.append("Storm's scheduler randomises; the file keeps its distributions")
    strategy.save(out)
    return StrategyFile(strategy, kind, str(out), prop, seed, checks, notes=tuple(notes))


@dataclass(frozen=True, eq=False, repr=False)
class PathFile(Report):
    """An observed path sampled under a strategy and written to a file (``stormcf simulate``)."""

    command = "simulate"
    path: ObservedPath
    strategy_name: str
    seed: int
    file: str
    checks: Sequence[Check] = ()
    timings: dict[str, float] = field(default_factory=dict)
    status = "ok"

    @property
    def model(self) -> ExplicitModel:
        return self.path.model

    @property
    def probability(self) -> float:
        """The probability of the path's transitions (its successors given its states and actions)."""
        return float(np.prod(self.path.transition_probabilities()))

    def payload(self) -> dict[str, Any]:
        return {"strategy": self.strategy_name, "seed": self.seed, "file": self.file, "steps": self.path.T,
                "transition_probability": self.probability, "path": self.path.to_dict()}

    def text(self) -> str:
        m, p = self.model, self.path
        lines = [f"{self.file}: {p.T} steps from {m.state_name(int(p.states[0]))} under {self.strategy_name} "
                 f"(seed {self.seed}); probability of its transitions {format_value(self.probability)}"]
        shown = min(p.T, 10)
        t = 0
        while t < shown:
            s, r = int(p.states[t]), int(p.choices[t])
            if _absorbing(m, s):                  # the steps that stay in an absorbing state: one line
                end = t
                while end + 1 < shown and int(p.states[end + 1]) == s:
                    end += 1
                lines.append(f"  t={t}{f'..{end}' if end > t else ''}  {m.state_name(s)}  stays (absorbing state)")
                t = end + 1
                continue
            lines.append(f"  t={t}  {m.state_name(s)}  {m.choice_name(r) or '(unnamed action)'}")
            t += 1
        if p.T > shown:
            lines.append(f"  ... ({p.T - shown} more steps)")
        if p.final_state is not None:
            lines.append(f"  final state {m.state_name(int(p.final_state))}")
        return "\n".join(lines)


def _absorbing(m: ExplicitModel, s: int) -> bool:
    """Whether the state ``s`` has one choice, which stays in ``s`` with probability 1."""
    rows = m.choices(s)
    if len(rows) != 1:
        return False
    start, end = m.transitions.indptr[rows[0]], m.transitions.indptr[rows[0] + 1]
    return end - start == 1 and int(m.transitions.indices[start]) == s


def make_path_file(strategy: Strategy, out: str | os.PathLike, steps: int, seed: int = 0,
                   strategy_name: str = "the strategy") -> PathFile:
    """Sample a path of ``steps`` steps from the initial state under ``strategy`` (seeded) and write it to ``out``
    (the path file format of :mod:`stormcf.paths`, with its final state)."""
    if steps < 1:
        raise OptionError(f"a path needs at least one step, got {steps}")
    if seed < 0:
        raise OptionError(f"the seed must be >= 0, got {seed}")
    require_memory(steps * 400, f"a path of {steps} steps")     # the arrays, and the JSON file written from them
    path = simulate(strategy.model, strategy, steps, seed)
    path.save(out)
    return PathFile(path, strategy_name, seed, str(out))
