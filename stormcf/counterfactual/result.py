"""The answer to a counterfactual-strategy problem: a :class:`~stormcf.report.Report` (``command = "strategy"``) with
the paper's explanation for people and one JSON document for scripts.

Every strategy in a result was model-checked by Storm on the DTMC it induces; ``verification`` is that check and
the probability shown is Storm's.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..distance import CHANGE_TOLERANCE, StrategyDistance
from ..model import ExplicitModel
from ..report import Report
from ..strategy import Strategy
from ..verify import Check, format_value
from .problem import CounterfactualProblem

if TYPE_CHECKING:
    from .certify import Candidate


def target_name(problem: CounterfactualProblem) -> str:
    """The target of ``P<=γ [F φ]`` as the user wrote it: the label name, or the expression."""
    m = re.search(r"\[F (.*)\]\s*$", problem.property.text)
    text = m.group(1).strip() if m else problem.property.text
    return text[1:-1] if re.fullmatch(r'"[^"]*"', text) else text


def _number(x: float) -> str:
    """Probabilities in explanations: 4 decimals, trailing zeros dropped (JSON keeps every digit)."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class CounterfactualResult(Report):
    """A counterfactual strategy σ* (or the verdict that none is needed / none exists / none was found in time).

    Attributes:
        status: ``optimal`` (proven: within ``gap`` <= 1e-4 of the proven lower bound), ``suboptimal`` (valid, not
            proven optimal: the gap is reported), ``feasible`` (an ε-counterfactual, optimality not sought),
            ``infeasible``, ``trivial`` (σ meets the bound), ``timeout`` (no valid strategy within the time limit).
        strategy: σ* (σ itself for ``trivial``; None when there is none).
        verification: Storm's check of the property on the DTMC induced by σ*; ``exact``: the same in rational
            arithmetic (with ``exact=True``); ``initial``: Storm's check on σ.
        distance: d0, d1, d∞ between σ and σ*; ``distance_lower_bound``: no valid strategy is closer (weighted);
            ``lower_bounds``: the proven bound of each norm and the stage that proved it; ``stages``: the best
            checked strategy of every stage (the answer is the best of them).
        solver: the stage that found σ*; ``solver_reason``: the plan and why it was chosen.
        optimal_probability: the least (for ``P<=``; largest for ``P>=``) probability any actionable strategy
            achieves (Storm).
        diverse: further counterfactuals of a diverse run, each with its ``novelty``.
    """

    command = "strategy"

    def __init__(self, problem: CounterfactualProblem, status: str, initial: Check | None,
                 optimal_probability: float | None, reason: str, *, candidate: "Candidate | None" = None,
                 solver: str | None = None, gap: float | None = None, distance_lower_bound: float | None = None,
                 lower_bounds: dict | None = None, stages: dict | None = None, sizes: dict | None = None,
                 notes: Sequence[str] = (),
                 timings: dict | None = None, time_s: float = 0.0) -> None:
        self.problem, self.status, self.initial = problem, status, initial
        self.optimal_probability, self.solver_reason = optimal_probability, reason
        self.strategy: Strategy | None = None if candidate is None else candidate.strategy
        self.verification: Check | None = None if candidate is None else candidate.check
        self.exact: Check | None = None if candidate is None else candidate.exact
        self.distance: StrategyDistance | None = None if candidate is None else candidate.distance
        self.solver = solver or (candidate.source if candidate is not None else "")
        self.gap, self.distance_lower_bound = gap, distance_lower_bound
        self.lower_bounds = lower_bounds or {}
        self.stages = stages or {}
        self.sizes = sizes or {}
        self._notes = list(notes)
        self.timings = timings or {}
        self.time_s = time_s
        self.novelty: float | None = None
        self.diverse: list[CounterfactualResult] = []

    # ------------------------------------------------------------------------------------------- protocol
    @property
    def model(self) -> ExplicitModel:
        return self.problem.model

    @property
    def notes(self) -> list[str]:
        return self._notes

    @property
    def checks(self) -> list[Check]:
        """Storm's checks of σ and of every reported σ* (float, and exact when asked)."""
        out = [] if self.initial is None else [self.initial]
        for r in [self, *self.diverse]:
            out.extend(c for c in (r.verification, r.exact) if c is not None and c is not self.initial)
        return out

    @property
    def approximate(self) -> bool:
        """A valid strategy whose optimality is not proven (time limit or gap), or none found in time."""
        return self.status in ("suboptimal", "timeout")

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
        if self.initial is None:
            return f"No answer for {self.problem.property.text}: {self.solver_reason}."
        lines = [f"State '{target}' is reached with probability {format_value(self.initial.value)}."]
        bound = float(self.problem.bound)
        cmp = self.problem.property.comparison
        if self.status == "trivial":
            lines.append(f"The strategy already meets {self.problem.property.text}: nothing to change.")
            return "\n".join(lines)
        if self.strategy is None:
            what = "least" if self.problem.optimization.value == "min" else "largest"
            reason = (f"the {what} probability any actionable strategy achieves is "
                      f"{format_value(self.optimal_probability)} (Storm)")
            if self.status == "infeasible" and self.problem.epsilon is not None and self._reachable():
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

    def _reachable(self) -> bool:
        value = self.optimal_probability
        return self.problem.property.satisfied_by(value) or abs(value - float(self.problem.bound)) < 1e-9

    def status_line(self) -> str:
        status = f"status: {self.status}"
        if self.status == "suboptimal" and self.distance_lower_bound is not None:
            status += f" (no valid strategy is closer than d = {self.distance_lower_bound:.6g}"
            status += f", gap {self.gap:.3g})" if self.gap is not None else ")"
        elif self.status == "optimal" and self.gap:
            status += f" (gap {self.gap:.2g} to the proven lower bound d = {self.distance_lower_bound:.6g})"
        return f"{status}; {self.solver}: {self.solver_reason}; {self.time_s:.3g} s"

    def text(self) -> str:
        lines = [self.explanation()]
        if self.distance is not None and self.status != "trivial":
            w = self.problem.weights
            lines.append(f"distance: d0 = {self.distance.d0}, d1 = {self.distance.d1:.6g}, "
                         f"d∞ = {self.distance.dinf:.6g}; d = {self.weighted_distance:.6g} "
                         f"(weights {w.r0:g},{w.r1:g},{w.rinf:g})")
        lines.append(self.status_line())
        if self.verification is not None:
            lines.append(f"checked by {self.verification.method}: {self.verification}")
        if self.exact is not None:
            lines.append(f"exact check: {self.exact}")
        lines.extend(self._size_lines())
        lines.extend(f"note: {n}" for n in self.notes)
        for k, other in enumerate(self.diverse, start=2):
            novelty = "" if other.novelty is None else f" (novel state-action pairs: {other.novelty:.0%})"
            lines.append(f"\n-- diverse counterfactual {k}{novelty}")
            lines.append(other.text())
        return "\n".join(lines)

    def _size_lines(self) -> list[str]:
        pruning = self.sizes.get("pruning")
        if not pruning:
            return []
        if self.sizes.get("encoded"):
            e, p = self.sizes["encoded"], self.sizes["paper"]
            return [f"encoded: {pruning['maybe']} of {pruning['states']} states, {e['variables']} variables, "
                    f"{e['constraints']} constraints (the paper's encoding of the whole model: {p['variables']} "
                    f"variables, {p['constraints']} constraints)"]
        if self.sizes.get("value_iteration"):
            v = self.sizes["value_iteration"]
            return [f"encoded: {pruning['maybe']} of {pruning['states']} states, {v['rows']} choices, "
                    f"{v['transitions']} transitions (no optimisation variables)"]
        return []

    # ------------------------------------------------------------------------------------------- JSON
    def payload(self, with_diverse: bool = True) -> dict[str, Any]:
        w = self.problem.weights.as_tuple()
        out = {
            "property": self.problem.property.text,
            "optimization": self.problem.optimization.word,
            "probability": self.probability,
            "initial_probability": None if self.initial is None else self.initial.value,
            "bound": float(self.problem.bound),
            "optimal_probability": self.optimal_probability,
            "distance": None if self.distance is None else self.distance.to_dict(w),
            "distance_lower_bound": self.distance_lower_bound,
            "lower_bounds": self.lower_bounds,
            "stages": self.stages,
            "changes": self.changes(),
            "solver": self.solver,
            "solver_reason": self.solver_reason,
            "time_s": self.time_s,
            "gap": self.gap,
            "epsilon": self.problem.epsilon,
            "verification": None if self.verification is None else self.verification.to_dict(),
            "exact": None if self.exact is None else self.exact.to_dict(),
            "sizes": self.sizes,
            "strategy": None if self.strategy is None else self.strategy.to_dict(),
        }
        out["novelty"] = self.novelty
        if with_diverse:
            out["diverse"] = [self.summary()] + [d.summary() for d in self.diverse] if self.diverse else None
        return out

    def summary(self) -> dict[str, Any]:
        """This result's own keys without its diverse list (an entry of ``diverse``), with its status and notes."""
        return {"status": self.status, **self.payload(with_diverse=False), "notes": list(self.notes)}


def novelty(result: CounterfactualResult, earlier: list[CounterfactualResult]) -> float:
    """Fraction of the changed state-action pairs of ``result`` that no earlier counterfactual changed."""
    pairs = result.changed_pairs()
    if not pairs:
        return 0.0
    seen = set().union(*(e.changed_pairs() for e in earlier)) if earlier else set()
    return len(pairs - seen) / len(pairs)
