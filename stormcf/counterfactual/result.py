"""The answer to a counterfactual-strategy problem: a :class:`~stormcf.report.Report` (``command = "strategy"``) with
the paper's explanation for people and one JSON document for scripts.

Every strategy in a result was model-checked by Storm on the DTMC it induces; ``verification`` is that check and
the probability shown is Storm's.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..distance import CHANGE_TOLERANCE, StrategyDistance
from ..model import ExplicitModel
from ..report import Report
from ..strategy import Strategy
from ..verify import Check, format_exact, format_value
from .bounds import REWARD, Bound
from .problem import CounterfactualProblem

if TYPE_CHECKING:
    from .certify import Candidate


def target_name(problem: CounterfactualProblem | Bound) -> str:
    """The target of ``P<=γ [F φ]`` (of the first bound of a problem) as the user wrote it: the label name, or the
    expression."""
    bound = problem if isinstance(problem, Bound) else problem.bounds[0]
    return _unquoted(bound.path_text(target_only=True))


def _unquoted(text: str) -> str:
    """``"rejected"`` -> ``rejected``; ``("granted" | "rejected")`` -> ``"granted" | "rejected"``."""
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text[1:-1] if re.fullmatch(r'"[^"]*"', text) else text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _value_words(bound: Bound, value: float) -> str:
    """The sentence stating a bound's value: ``State 'rejected' is reached with probability 0.411``."""
    number = format_value(value)
    target = _quoted(target_name(bound))
    if bound.kind == REWARD:
        return f"The expected \"{bound.reward_model}\" reward until {target} is {number}"
    if bound.is_until:
        avoid = _unquoted(bound.path_text().split(" U ", 1)[0].strip())
        return f"State {target} is reached through states with {avoid} with probability {number}"
    return f"State {target} is reached with probability {number}"


def _quoted(name: str) -> str:
    """A label name in quotes (``'rejected'``), an expression as it is."""
    return f"'{name}'" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else name


def short_number(x: float) -> str:
    """Probabilities in explanations: 4 decimals, trailing zeros dropped (JSON keeps every digit)."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class CounterfactualResult(Report):
    """A counterfactual strategy σ* (or the verdict that none is needed / none exists / none was found in time).

    Attributes:
        status: ``optimal`` (proven: within ``gap`` <= 1e-4 of the proven lower bound), ``suboptimal`` (valid, not
            proven optimal: the gap is reported), ``feasible`` (an ε-counterfactual, optimality not sought),
            ``infeasible``, ``trivial`` (σ meets every bound), ``timeout`` (no valid strategy within the time limit).
        strategy: σ* (σ itself for ``trivial``; None when there is none).
        verifications: Storm's check of every bound on the DTMC induced by σ* (``verification``: the first's);
            ``exact_checks`` (``exact``): the same in rational arithmetic (with ``exact=True``); ``initial_checks``
            (``initial``): Storm's checks on σ; ``value``: Storm's value of the first bound under σ*
            (``probability`` when it is a probability bound).
        distance: every norm between σ and σ*; ``distance_lower_bound``: no valid strategy is closer (weighted);
            ``lower_bounds``: the proven bound of each norm and the stage that proved it; ``stages``: the best
            checked strategy of every stage (the answer is the best of them).
        solver: the stage that found σ*; ``solver_reason``: the plan and why it was chosen.
        optima: per bound, the best value any actionable strategy achieves alone (Storm: Pmin for ``P<=``, Pmax for
            ``P>=``, Rmin/Rmax for rewards); ``optimal_probability``: the first's.
        diverse: further counterfactuals of a diverse run, each with its ``novelty``.
    """

    command = "strategy"
    status: str                                 # set here (Report declares it read-only)
    timings: dict[str, float]

    def __init__(self, problem: CounterfactualProblem, status: str,
                 initial: list[Check] | tuple[Check, ...] | Check | None,
                 optima: list[float] | tuple[float, ...] | float | None, reason: str, *,
                 candidate: "Candidate | None" = None,
                 solver: str | None = None, gap: float | None = None, distance_lower_bound: float | None = None,
                 lower_bounds: dict | None = None, stages: dict | None = None, sizes: dict | None = None,
                 notes: Sequence[str] = (),
                 timings: dict | None = None, time_s: float = 0.0) -> None:
        self.problem, self.status, self.solver_reason = problem, status, reason
        self.initial_checks: list[Check] = [] if initial is None else \
            (list(initial) if isinstance(initial, (list, tuple)) else [initial])
        self.optima: list[float] = [] if optima is None else \
            (list(optima) if isinstance(optima, (list, tuple)) else [optima])
        #: the first bound's optimum in exact arithmetic, when Storm's exact optimum decided the instance
        self.exact_optimum: Fraction | None = None
        self.strategy: Strategy | None = None if candidate is None else candidate.strategy
        self.verifications: list[Check] = [] if candidate is None else list(candidate.check)
        self.exact_checks: list[Check] = [] if candidate is None or candidate.exact is None else list(candidate.exact)
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

    # ------------------------------------------------------------------------------------------- the first bound
    @property
    def initial(self) -> Check | None:
        """Storm's check of the first bound on σ."""
        return self.initial_checks[0] if self.initial_checks else None

    @property
    def verification(self) -> Check | None:
        """Storm's check of the first bound on the DTMC σ* induces."""
        return self.verifications[0] if self.verifications else None

    @property
    def exact(self) -> Check | None:
        return self.exact_checks[0] if self.exact_checks else None

    @property
    def optimal_probability(self) -> float | None:
        """Storm's optimum of the first bound over all actionable strategies (Pmin for ``P<=``, Pmax for ``P>=``,
        Rmin/Rmax for rewards)."""
        return self.optima[0] if self.optima else None

    # ------------------------------------------------------------------------------------------- protocol
    @property
    def model(self) -> ExplicitModel:
        return self.problem.model

    @property
    def notes(self) -> list[str]:
        return self._notes

    @property
    def checks(self) -> list[Check]:
        """Storm's checks of σ and of every reported σ*, for every bound (float, and exact when asked)."""
        out = list(self.initial_checks)
        for r in [self, *self.diverse]:
            out.extend(c for c in r.verifications + r.exact_checks if all(c is not i for i in self.initial_checks))
        return out

    @property
    def approximate(self) -> bool:
        """A valid strategy whose optimality is not proven (time limit or gap), or none found in time."""
        return self.status in ("suboptimal", "timeout")

    @property
    def value(self) -> float | None:
        """Storm's value of the first bound under σ*."""
        return None if self.verification is None else self.verification.value

    @property
    def probability(self) -> float | None:
        """Storm's probability under σ* when the first bound is a probability bound (else None)."""
        return self.value if self.problem.bounds[0].kind != REWARD else None

    @property
    def weighted_distance(self) -> float | None:
        return None if self.distance is None else self.problem.weights.combine(self.distance.values)

    # ------------------------------------------------------------------------------------------- changes
    def changes(self) -> list[dict[str, Any]]:
        """The changed states with their changed actions: ``{state, name, delta, actions: {a: {from, to}}}``."""
        if self.strategy is None or self.distance is None:
            return []
        m, sigma = self.problem.model, self.problem.strategy
        out = []
        for s in self.distance.changed_states:
            actions = {}
            for r, name in zip(m.choices(int(s)), m.enabled_actions(int(s))):
                before, after = float(sigma.probabilities[r]), float(self.strategy.probabilities[r])
                if abs(after - before) > CHANGE_TOLERANCE:
                    actions[name] = {"from": before, "to": after}
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
        """The paper's textual explanation (Section 5, "interpretable recommendations"), for every bound."""
        bounds = self.problem.bounds
        if not self.initial_checks:
            return f"No answer for {self.problem.properties_text}: {self.solver_reason}."
        lines = [_value_words(b, c.value) + "." for b, c in zip(bounds, self.initial_checks)]
        if self.status == "trivial":
            lines.append(f"The strategy already meets {self.problem.properties_text}: nothing to change.")
            return "\n".join(lines)
        paper = len(bounds) == 1 and bounds[0].kind != REWARD and not bounds[0].is_until     # seed 000's question
        if self.strategy is None:
            first = bounds[0]
            what = "least" if first.optimization.value == "min" else "largest"
            if self.status == "infeasible" and self.problem.epsilon is not None and self._reachable():
                reason = f"every valid strategy is at distance at least {self.distance_lower_bound:.6g} > ε"
            elif self.status == "timeout":
                reason = "no valid strategy was found within the time limit"
            elif len(bounds) == 1 and self.optimal_probability is not None:
                quantity = "probability" if paper else first.quantity()
                optimum = (f"exactly {format_exact(self.exact_optimum)} (Storm, exact arithmetic)"
                           if self.exact_optimum is not None else f"{format_value(self.optimal_probability)} (Storm)")
                reason = f"the {what} {quantity} any actionable strategy achieves is {optimum}"
            else:
                reason = self.solver_reason
            if paper:
                lines.append(f"No actionable strategy reaches it with probability {first.comparison} "
                             f"{first.value:g}: {reason}.")
            else:
                lines.append(f"No actionable strategy meets {self.problem.properties_text}: {reason}.")
            return "\n".join(lines)
        if paper:
            lines.append(f"You can reach it with probability {format_value(self.verifications[0].value)} as "
                         f"follows:")
        else:
            met = "; ".join(_value_words(b, c.value).replace("State ", "state ", 1).replace("The ", "the ", 1)
                            for b, c in zip(bounds, self.verifications))
            lines.append(f"You can meet {self.problem.properties_text} ({met}) as follows:")
        assert self.distance is not None        # σ* comes with its distance (both from the candidate)
        for s, change in zip(self.distance.changed_states, self.changes()):
            lines.append(f"  In state '{change['name']}':")
            lines.extend(f"    {move}" for move in self._moves(int(s), change))
        return "\n".join(lines)

    def _moves(self, s: int, change: dict[str, Any]) -> list[str]:
        """Every action of the changed state ``s`` with a probability under σ or σ*: the increased ones first, then
        the decreased ones, then those kept (so that the probabilities shown under σ* add up to 1)."""
        m, sigma = self.problem.model, self.problem.strategy
        kept = {name: float(sigma.probabilities[r]) for r, name in zip(m.choices(s), m.enabled_actions(s))
                if name not in change["actions"] and sigma.probabilities[r] > CHANGE_TOLERANCE}
        moves = sorted(change["actions"].items(), key=lambda kv: kv[1]["to"] <= kv[1]["from"])
        return ([f"{'increase' if to['to'] > to['from'] else 'decrease'} probability of action '{action}' to "
                 f"{short_number(to['to'])}" for action, to in moves]
                + [f"keep probability of action '{action}' at {short_number(p)}" for action, p in kept.items()])

    def _reachable(self) -> bool:
        """Whether Storm's optimum of every bound alone meets it."""
        return all(b.property.satisfied_by(v) or abs(v - b.value) < 1e-9
                   for b, v in zip(self.problem.bounds, self.optima))

    def status_line(self) -> str:
        """The status and, where the answer is not proven optimal outright, how close it is: one short clause (how
        it was found is in :meth:`details`)."""
        status = f"status: {self.status}"
        if self.status == "suboptimal" and self.distance_lower_bound is not None:
            status += f" (no valid strategy is closer than d = {self.distance_lower_bound:.6g}"
            status += f", gap {self.gap:.3g})" if self.gap is not None else ")"
        elif self.status == "optimal" and self.gap:
            status += f" (gap {self.gap:.2g} to the proven lower bound d = {self.distance_lower_bound:.6g})"
        return status

    def details(self) -> list[str]:
        """How the answer was found: the stage and its plan, the time, the encoded sizes (``-v``)."""
        return [f"method: {self.solver}: {self.solver_reason}; {self.time_s:.3g} s", *self._size_lines()]

    def text(self) -> str:
        lines = [self.explanation()]
        if self.distance is not None and self.status != "trivial":
            lines.append(f"distance: {self.distance.text()}; d = {self.weighted_distance:.6g} "
                         f"(weights {self.problem.weights.text()})")
        lines.append(self.status_line())
        if self.verification is not None:
            lines.append(f"checked by {self.verification.method}: " + "; ".join(map(str, self.verifications)))
        if self.exact_checks:
            lines.append("exact check: " + "; ".join(map(str, self.exact_checks)))
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
        w = self.problem.weights
        first = self.problem.bounds[0]
        out = {
            "property": self.problem.properties_text,
            "optimization": self.problem.optimization.word,
            "probability": self.probability,
            "value": self.value,
            "initial_probability": None if self.initial is None or first.kind == REWARD else self.initial.value,
            "bound": float(self.problem.bound),
            "optimal_probability": self.optimal_probability,
            "bounds": self.bound_entries(),
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

    def bound_entries(self) -> list[dict[str, Any]]:
        """Every bound with Storm's values under σ and σ*, its optimum and its checks."""
        out = []
        for k, b in enumerate(self.problem.bounds):
            at = lambda xs: xs[k] if k < len(xs) else None  # noqa: E731
            initial, check, exact = at(self.initial_checks), at(self.verifications), at(self.exact_checks)
            out.append({"property": b.text, "kind": b.kind, "optimization": b.optimization.word,
                        "bound": b.value, "initial_value": None if initial is None else initial.value,
                        "value": None if check is None else check.value, "optimal_value": at(self.optima),
                        "holds": None if check is None else check.holds,
                        "verification": None if check is None else check.to_dict(),
                        "exact": None if exact is None else exact.to_dict()})
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
