"""The answer for one agent: the explanation in the instance's words, and one JSON document (``command = "setcover"``).

The cost shown is Storm's: the expected cost of the plan on the DTMC it induces (``R{"cost"}=? [F "goal"]``), and
optimality is Storm's ``Rmin=? [F "goal"]`` on the agent's projected MDP where that MDP fits in memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import ExplicitModel
from ..report import Report
from ..verify import Check, format_value
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
            if self.status == "suboptimal" and self.gap is not None:
                against = "the optimum" if self.optimal_cost is not None else "the LP lower bound"
                bound = self.optimal_cost if self.optimal_cost is not None else self.lower_bound
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
