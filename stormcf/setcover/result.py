"""The answer for one agent: the explanation in the instance's words, and one JSON document (``command = "setcover"``);
and the results of the learning pipeline (``setcover-data``, ``setcover-learn``, ``setcover-evaluate``): facts.

The cost shown is Storm's: the expected cost of the plan on the DTMC it induces (``R{"cost"}=? [F "goal"]``), and
optimality is Storm's ``Rmin=? [F "goal"]`` on the agent's projected MDP where that MDP fits in memory.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import ExplicitModel
from ..report import Report
from ..verify import Check, format_value
from .data import LabelledAgents
from .generators import NETWORKS, Generator, best_epochs
from .pipeline import DataSetProblem, EvaluationProblem, TrainingProblem
from .problem import SetCoverProblem


@dataclass(eq=False)
class SetCoverResult(Report):
    """A counterfactual explanation (a set of actions, or an ordered plan) for one agent.

    Attributes:
        problem: the agent and its instance.
        status: ``optimal``, ``suboptimal`` (greedy: valid, with the gap to the optimum or to the LP bound),
            ``trivial`` (the agent is already positive), ``infeasible`` (no set of available actions covers it).
        method: the engine that computed the explanation.
        actions: the explanation (ascending catalogue order).
        plan: the actions in the order they are taken (any order is optimal for sets).
        cost: the plan's (expected) cost, Storm's value when checked.
        optimal_cost: the optimum (Storm's Rmin when checked), None if not known.
        lower_bound: a proven lower bound on the optimum (LP relaxation), when the optimum is not known.
        unique: whether the optimal set is unique (None when not decided).
        checks: Storm's re-checks.
        timings: seconds per phase.
        mdp: the checked projected MDP (None when it was too large to build).
    """

    command = "setcover"

    problem: SetCoverProblem
    status: str
    method: str
    actions: tuple[int, ...]
    plan: tuple[int, ...]
    cost: float
    optimal_cost: float | None
    unique: bool | None
    lower_bound: float | None = None
    checks: list[Check] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    extra_notes: list[str] = field(default_factory=list)
    mdp: ExplicitModel | None = None

    @property
    def model(self) -> ExplicitModel | None:
        return self.mdp

    @property
    def notes(self) -> list[str]:
        return list(self.extra_notes)

    @property
    def final_state(self) -> np.ndarray:
        """x* = x + Σ_{i∈I} e_i."""
        return self.problem.instance.final_state(self.problem.agent, self.actions)

    @property
    def gap(self) -> float | None:
        """cost / bound − 1 against the optimum (or the LP bound); 0 for optimal answers."""
        bound = self.optimal_cost if self.optimal_cost is not None else self.lower_bound
        if bound is None or not math.isfinite(self.cost):
            return None
        return 0.0 if self.cost == bound else (self.cost / bound - 1.0 if bound > 0 else math.inf)

    def payload(self) -> dict[str, Any]:
        inst = self.problem.instance
        return {"agent": self.problem.agent.tolist(), "group": self.problem.group,
                "missing": [inst.features[j] for j in self.problem.missing],
                "actions": inst.names(self.actions), "plan": inst.names(self.plan),
                "cost": self.cost, "optimal_cost": self.optimal_cost, "lower_bound": self.lower_bound,
                "gap": self.gap, "final_state": self.final_state.tolist() if self.status != "infeasible" else None,
                "unique": self.unique, "method": self.method, "time_s": self.timings.get("solve", 0.0)}

    def text(self) -> str:
        inst, p = self.problem.instance, self.problem
        lines = [f"Agent {p.agent_text()}" + (f" (group {p.group})" if p.group else "") + ":"]
        if self.status == "trivial":
            lines.append("  already positive: no action needed (cost 0).")
        elif self.status == "infeasible":
            lacking = ", ".join(inst.features[j] for j in p.missing)
            lines.append(f"  lacks {lacking}; no set of available actions provides it (Storm: Rmin = inf).")
        else:
            lacking = ", ".join(f"{inst.features[j]}" + (f" (+{d})" if d > 1 else "")
                                for j, d in zip(p.missing, p.deficit()))
            lines.append(f"  lacks {lacking}")
            kind = "Optimal" if self.status == "optimal" else "Valid (not optimal)"
            what = "plan" if inst.ordered else "counterfactual explanation"
            expected = "expected " if inst.stochastic else ""
            lines.append(f"{kind} {what} ({expected}cost {format_value(self.cost)}): "
                         + (" -> ".join(inst.names(self.plan)) if inst.ordered else ", ".join(inst.names(self.actions))))
            for i in self.plan:
                gives = [f"{inst.features[j]}" + (f"+{inst.effects[i, j]}" if inst.effects[i, j] > 1 else "")
                         for j in np.flatnonzero(inst.effects[i])]
                chance = f", succeeds with probability {inst.success[i]:g}" if inst.success is not None and \
                    inst.success[i] < 1 else ""
                lines.append(f"  {inst.action_names[i]} (cost {format_value(inst.costs[i])}{chance}): "
                             f"{', '.join(gives) or 'nothing'}")
            lines.append(f"  final state: {','.join(str(v) for v in self.final_state.tolist())}")
            bound = self.optimal_cost if self.optimal_cost is not None else self.lower_bound
            if self.status == "suboptimal" and self.gap is not None and bound is not None:
                against = "the optimum" if self.optimal_cost is not None else "the LP lower bound"
                lines.append(f"  {100 * self.gap:.3g}% above {against} {format_value(bound)}")
            if self.unique is False:
                lines.append("  The optimum is not unique: this is the optimal set with the fewest actions "
                             "(inclusion-minimal), the least in catalogue order among those.")
        lines.append(f"status: {self.status}")
        for check in self.checks:
            lines.append(f"checked by Storm on the {check.subject}: {check}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def details(self) -> list[str]:
        return [f"method: {self.method} ({1000 * self.timings.get('solve', 0):.3g} ms)"]


# ======================================================================================== the learning pipeline
@dataclass(eq=False)
class DataSetResult(Report):
    """A data set generated and labelled as the paper's (``setcover-data``): its facts (sizes, the agents dropped
    and why, the family MDP) under ``facts`` in the JSON. :meth:`save` writes it and records where (``out``)."""

    command = "setcover-data"

    problem: DataSetProblem
    data: LabelledAgents
    timings: dict[str, float] = field(default_factory=dict)
    out: str | None = None

    status = "ok"
    model = None
    checks = ()

    def save(self, out: str | os.PathLike, instance_out: str | os.PathLike | None = None) -> None:
        """Write the data set (``.npz``, the instance inside) to ``out`` and the instance alone (JSON) to
        ``instance_out``."""
        self.data.save(out)
        if instance_out is not None:
            self.data.instance.save(instance_out)
        self.out = str(out)

    def payload(self) -> dict[str, Any]:
        return {"facts": {**self.data.info, "cfe_sizes": self.data.sizes(), "out": self.out}}

    def text(self) -> str:
        info, largest = self.data.info, self.problem.max_size
        lines = [f"{self.out or 'the data set'}: {len(self.data)} agents labelled by {self.problem.method} "
                 f"({info['agents']} negative agents, {info['tied']} tied and {info['too_large']} with > {largest} "
                 f"actions dropped); CFE sizes {self.data.sizes()}; family MDP {info['family_states']} states"]
        lines += [f"  group {name}: {part['kept']} of {part['agents']} agents kept ({part['infeasible']} without a "
                  f"cover, {part['tied']} tied, {part['too_large']} with > {largest} actions)"
                  for name, part in info.get("per_group", {}).items()]
        return "\n".join(lines)


@dataclass(eq=False)
class TrainingResult(Report):
    """A trained generator (``setcover-learn``) and its exact match on the held-out agents; its training facts
    under ``facts`` in the JSON. Status ``interrupted`` when the user stopped training (the best epoch so far is the
    generator). :meth:`save` writes the generator and the held-out agents and records where."""

    command = "setcover-learn"

    problem: TrainingProblem
    generator: Generator
    held_out: LabelledAgents
    test_metrics: dict[str, Any]
    limit: str
    timings: dict[str, float] = field(default_factory=dict)
    out: str | None = None
    test_out: str | None = None

    model = None
    checks = ()

    @property
    def status(self) -> str:
        return "interrupted" if self.generator.info.get("stopped") == "interrupted" else "ok"

    @property
    def notes(self) -> list[str]:
        info = self.generator.info
        if info.get("stopped") == "time limit":
            return [f"{self.limit} ended training after {info['epochs']} epochs: {self._kept()}"]
        if info.get("stopped") == "interrupted":
            return [f"interrupted after {info['epochs']} epochs: {self._kept()}"]
        return []

    def _kept(self) -> str:
        """What a network generator stopped early keeps: its best epoch, or an ensemble's networks trained so far."""
        info = self.generator.info
        if "members" not in info:
            return f"the generator is the best epoch so far ({best_epochs(info)})"
        return (f"the generator averages the {len(info['members'])} of {info['settings']['ensemble']} networks "
                f"trained so far (best epochs {best_epochs(info)})")

    def save(self, out: str | os.PathLike, held_out: str | os.PathLike) -> None:
        """Write the generator to ``out`` and the held-out agents (a labelled data set) to ``held_out``."""
        self.generator.save(out)
        self.held_out.save(held_out)
        self.out, self.test_out = str(out), str(held_out)

    def payload(self) -> dict[str, Any]:
        return {"facts": {**self.generator.info, "generator": self.generator.kind, "test": self.test_out}}

    def text(self) -> str:
        info, kind, held_out = self.generator.info, self.generator.kind, self.test_metrics
        trained = _training_line(info) if kind in NETWORKS else f"k = {self.generator.k}"
        lines = [f"{self.out or 'the generator'}: {kind} generator trained on {info['train_agents']} agents, "
                 f"{trained}, {info['seconds']:.1f} s",
                 f"exact match on the {len(self.held_out)} held-out agents: {held_out['exact_match']:.4f} ± "
                 f"{held_out['ci95']:.4f} " + (f"(they are in {self.test_out})" if self.test_out else "(not saved)")]
        return "\n".join(lines + [f"note: {note}" for note in self.notes])


def _training_line(info: dict) -> str:
    """How a network generator was trained: its epochs, best epoch(s), validation score, why it stopped."""
    if "members" not in info:
        return (f"{info['epochs']} epochs (best epoch {info['best_epoch']}, validation exact match "
                f"{info['validation_exact_match']:.4f}; stopped: {info['stopped']})")
    scores = ", ".join(f"{m['validation_exact_match']:.4f}" for m in info["members"])
    return (f"an ensemble of {len(info['members'])} networks, {info['epochs']} epochs (best epochs "
            f"{best_epochs(info)}; validation exact match of each on its own split "
            f"{scores}; stopped: {info['stopped']})")


@dataclass(eq=False)
class EvaluationResult(Report):
    """A generator's metrics on labelled agents (``setcover-evaluate``, :func:`~.generators.evaluate`) under ``facts``
    in the JSON."""

    command = "setcover-evaluate"

    problem: EvaluationProblem
    metrics: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)

    status = "ok"
    model = None
    checks = ()

    @property
    def notes(self) -> list[str]:
        return ["exact match, valid rates and cost ratios are measured on the given agents"]

    def payload(self) -> dict[str, Any]:
        return {"facts": dict(self.metrics)}

    def text(self) -> str:
        width = max(len(key) for key in self.metrics)
        return "\n".join(f"{key:<{width}}  {_shown(value)}" for key, value in self.metrics.items())


def _shown(value: Any) -> str:
    """Floats with 6 significant digits; per-size and per-group rates as ``key: rate`` pairs."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) or "-"
    return str(value)
