"""The answer to a counterfactual-strategy problem: text for people (the paper's explanation), JSON for scripts.

Every strategy in a result was model-checked by Storm on the DTMC it induces; ``verification`` is that check and
the probability shown is Storm's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..distance import CHANGE_TOLERANCE, StrategyDistance
from ..strategy import Strategy
from ..verify import Check, format_value
from .problem import CounterfactualProblem

def target_name(problem: CounterfactualProblem) -> str:
    """The target of ``P<=γ [F φ]`` as the user wrote it: the label name, or the expression."""
    m = re.search(r"\[F (.*)\]\s*$", problem.property.text)
    text = m.group(1).strip() if m else problem.property.text
    return text[1:-1] if re.fullmatch(r'"[^"]*"', text) else text


def _number(x: float) -> str:
    """Probabilities in explanations: 4 decimals, trailing zeros dropped (JSON keeps every digit)."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass(eq=False)
class CounterfactualResult:
    """A counterfactual strategy σ* (or the verdict that none is needed / none exists).

    Attributes:
        status: ``optimal``, ``suboptimal`` (valid, not proven optimal: time limit or gap), ``feasible`` (an
            ε-counterfactual, optimality not sought), ``infeasible``, ``trivial`` (σ meets the bound), ``timeout``
            (no valid strategy found in time).
        strategy: σ* (σ itself for ``trivial``; None when there is none).
        verification: Storm's check of the property on the DTMC induced by σ*.
        initial: Storm's check on σ.
        distance: d0, d1, d∞ between σ and σ*; ``distance_lower_bound``: no valid strategy is closer (weighted).
        solver / solver_reason: what computed σ* and why it was chosen.
        optimal_probability: the least probability any actionable strategy achieves (Pmin, Storm).
        diverse: further counterfactuals of a diverse run, each with its ``novelty``.
    """

    problem: CounterfactualProblem
    status: str
    strategy: Strategy | None
    verification: Check | None
    initial: Check
    distance: StrategyDistance | None
    solver: str
    solver_reason: str
    time_s: float
    optimal_probability: float
    gap: float | None = None
    distance_lower_bound: float | None = None
    sizes: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    exact: Check | None = None
    novelty: float | None = None
    diverse: list["CounterfactualResult"] = field(default_factory=list)

    @property
    def probability(self) -> float | None:
        return None if self.verification is None else self.verification.value

    @property
    def weighted_distance(self) -> float | None:
        return None if self.distance is None else self.distance.weighted(*self.problem.weights.as_tuple())

    # ------------------------------------------------------------------------------------------- changes
    def changes(self) -> list[dict[str, Any]]:
        """The changed states with their changed actions: ``{state, name, delta, actions: {a: {from, to}}}``."""
        if self.strategy is None or self.distance is None:
            return []
        m, sigma = self.problem.model, self.problem.strategy
        out = []
        for s in self.distance.changed_states:
            actions = {}
            for r in m.choices(int(s)):
                before, after = float(sigma.probabilities[r]), float(self.strategy.probabilities[r])
                if abs(after - before) > CHANGE_TOLERANCE:
                    actions[m.choice_name(r)] = {"from": before, "to": after}
            out.append({"state": m.valuation(int(s)), "name": m.state_name(int(s)),
                        "delta": float(self.distance.per_state[s]), "actions": actions})
        return out

    def changed_pairs(self) -> set[int]:
        """The choices (state-action pairs, as rows) whose probability changed."""
        if self.strategy is None:
            return set()
        diff = np.abs(self.strategy.probabilities - self.problem.strategy.probabilities)
        return set(np.flatnonzero(diff > CHANGE_TOLERANCE).tolist())

    # ------------------------------------------------------------------------------------------- text
    def explanation(self) -> str:
        """The paper's textual explanation (Section 5, "interpretable recommendations")."""
        target = target_name(self.problem)
        lines = [f"State '{target}' is reached with probability {format_value(self.initial.value)}."]
        bound = float(self.problem.bound)
        cmp = self.problem.property.comparison
        if self.status == "trivial":
            lines.append(f"The strategy already meets {self.problem.property.text}: nothing to change.")
            return "\n".join(lines)
        if self.strategy is None:
            what = "least" if self.problem.upper else "largest"
            reason = (f"the {what} probability any actionable strategy achieves is "
                      f"{format_value(self.optimal_probability)} (Storm)")
            if self.status == "infeasible" and self.problem.epsilon is not None and \
                    self._reachable(self.optimal_probability):
                reason = f"every valid strategy is at distance at least {self.distance_lower_bound:.6g} > ε"
            elif self.status == "timeout":
                reason = "no valid strategy was found within the time limit"
            lines.append(f"No actionable strategy reaches it with probability {cmp} {bound:g}: {reason}.")
            return "\n".join(lines)
        lines.append(f"You can reach it with probability {format_value(self.probability)} as follows:")
        for change in self.changes():
            lines.append(f"  In state '{change['name']}':")
            moves = sorted(change["actions"].items(), key=lambda kv: kv[1]["to"] <= kv[1]["from"])
            for action, fr_to in moves:
                verb = "increase" if fr_to["to"] > fr_to["from"] else "decrease"
                lines.append(f"    {verb} probability of action '{action}' to {_number(fr_to['to'])}")
        return "\n".join(lines)

    def _reachable(self, value: float) -> bool:
        return self.problem.property.satisfied_by(value) or abs(value - float(self.problem.bound)) < 1e-9

    def __str__(self) -> str:
        lines = [self.explanation()]
        if self.distance is not None and self.status != "trivial":
            w = self.problem.weights
            lines.append(f"distance: d0 = {self.distance.d0}, d1 = {self.distance.d1:.6g}, "
                         f"d∞ = {self.distance.dinf:.6g}; d = {self.weighted_distance:.6g} "
                         f"(weights {w.r0:g},{w.r1:g},{w.rinf:g})")
        status = f"status: {self.status}"
        if self.status == "suboptimal" and self.distance_lower_bound is not None:
            status += f" (no valid strategy is closer than d = {self.distance_lower_bound:.6g}"
            status += f", gap {self.gap:.3g})" if self.gap is not None else ")"
        lines.append(f"{status}; {self.solver}: {self.solver_reason}; {self.time_s:.3g} s")
        if self.verification is not None:
            lines.append(f"checked by {self.verification.method}: {self.verification}")
        if self.exact is not None:
            lines.append(f"exact check: {self.exact}")
        if self.sizes.get("encoded"):
            e, p = self.sizes["encoded"], self.sizes["paper"]
            lines.append(f"encoded: {self.sizes['pruning']['maybe']} of {self.sizes['pruning']['states']} states, "
                         f"{e['variables']} variables, {e['constraints']} constraints "
                         f"(the paper's encoding of the whole model: {p['variables']} variables, "
                         f"{p['constraints']} constraints)")
        elif self.sizes.get("value_iteration"):
            v = self.sizes["value_iteration"]
            lines.append(f"encoded: {self.sizes['pruning']['maybe']} of {self.sizes['pruning']['states']} states, "
                         f"{v['rows']} choices, {v['transitions']} transitions (no optimisation variables)")
        lines.extend(f"note: {n}" for n in self.notes)
        for k, other in enumerate(self.diverse, start=2):
            lines.append(f"\n-- diverse counterfactual {k} (novel state-action pairs: {other.novelty:.0%})")
            lines.append(str(other))
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        w = self.problem.weights.as_tuple()
        out = {
            "status": self.status,
            "property": self.problem.property.text,
            "probability": self.probability,
            "initial_probability": self.initial.value,
            "bound": float(self.problem.bound),
            "optimal_probability": self.optimal_probability,
            "distance": None if self.distance is None else self.distance.to_dict(w),
            "distance_lower_bound": self.distance_lower_bound,
            "changes": self.changes(),
            "solver": self.solver,
            "solver_reason": self.solver_reason,
            "time_s": self.time_s,
            "gap": self.gap,
            "epsilon": self.problem.epsilon,
            "verification": None if self.verification is None else self.verification.to_dict(),
            "sizes": self.sizes,
            "notes": self.notes,
            "strategy": None if self.strategy is None else self.strategy.to_dict(),
        }
        if self.exact is not None:
            out["exact"] = self.exact.to_dict()
        if self.novelty is not None:
            out["novelty"] = self.novelty
        if self.diverse:
            out["diverse"] = [self.without_diverse().to_dict()] + [d.to_dict() for d in self.diverse]
        return out

    def without_diverse(self) -> "CounterfactualResult":
        copy = CounterfactualResult(**{k: getattr(self, k) for k in self.__dataclass_fields__})
        copy.diverse = []
        return copy


def novelty(result: CounterfactualResult, earlier: list[CounterfactualResult]) -> float:
    """Fraction of the changed state-action pairs of ``result`` that no earlier counterfactual changed."""
    pairs = result.changed_pairs()
    if not pairs:
        return 0.0
    seen = set().union(*(e.changed_pairs() for e in earlier)) if earlier else set()
    return len(pairs - seen) / len(pairs)
