"""The result of :func:`~stormcf.recourse.solve.solve_recourse`: the front of plans (cheapest first), Storm's exact
least cost where it applies, the gap, and every Storm re-check."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..model import ExplicitModel
from ..report import Report
from ..verify import Check, format_value
from .trace import StepText


@dataclass(frozen=True, eq=False)
class RecoursePlan:
    """One plan of the front with Storm's values (its :attr:`checks`: cost, P(accept), effort, Gower).

    ``found_by`` says whether the GA found it, Storm's optimal scheduler, or both.
    """

    actions: list[str]
    values: list[str]
    cost: float
    effort: float
    gower: float
    p_accept: float
    freq: dict[str, float]
    states: list[Any]
    steps: list[StepText]
    checks: list[Check]
    found_by: str

    def to_dict(self) -> dict[str, Any]:
        return {"actions": self.actions, "values": self.values, "cost": self.cost, "effort": self.effort,
                "gower": self.gower, "freq": self.freq, "p_accept": self.p_accept, "states": self.states,
                "steps": [s.to_dict() for s in self.steps], "found_by": self.found_by}

    def lines(self, number: int) -> list[str]:
        accept = "" if self.p_accept == 1.0 else f", P(accept) {format_value(self.p_accept)}"
        out = [f"plan {number}: cost {format_value(self.cost)} (effort {format_value(self.effort)}), Gower "
               f"{format_value(self.gower)}{accept}, {len(self.steps)} step{'s' * (len(self.steps) != 1)} "
               f"[{self.found_by}]"]
        out += [f"  {t}. {step.text()}" for t, step in enumerate(self.steps, 1)]
        return out


@dataclass(frozen=True, eq=False)
class RecourseResult(Report):
    """Sequential counterfactuals (plans) for one instance.

    Attributes:
        status: ``optimal`` (the cheapest plan's cost is Storm's proven least cost), ``suboptimal`` (Storm's least
            cost is lower than the GA's cheapest: the gap is reported and Storm's plan is on the front),
            ``feasible`` (no exact answer applies: continuous values or a stochastic model), ``infeasible``
            (Storm proves that no plan reaches acceptance), ``timeout`` (the GA's generations ran out before a
            feasible plan was found, and no exact answer applies), ``trivial`` (x_0 is already accepted),
            ``interrupted`` (stopped by the user: the front of the generations run so far, each plan checked).
        front: the plans, cheapest first (then by Gower).
        optimal_cost: Storm's least cost ``R{"cost"}min=? [F "accept"]`` on the plan MDP, where it is the exact
            optimum over plans (finite values, deterministic effects); else None.
        lower_bound: on stochastic models, Storm's least expected cost over closed-loop strategies (a lower bound
            for every plan); else None.
        gap: the GA's cheapest cost minus ``optimal_cost`` (None without an optimum or a GA plan).
    """

    command = "recourse"

    status: str
    problem_name: str
    objectives: Sequence[str]
    front: list[RecoursePlan]
    optimal_cost: float | None
    lower_bound: float | None
    ga_cost: float | None
    generations: int
    evaluations: int
    time_s: float
    settings: dict[str, Any]
    exact_model: dict[str, Any] | None
    checks: list[Check]
    timings: dict[str, float]
    model: ExplicitModel | None = None
    storm_front: dict[str, Any] | None = None
    extra_notes: list[str] = field(default_factory=list)

    @property
    def gap(self) -> float | None:
        if self.optimal_cost is None or self.ga_cost is None:
            return None
        return self.ga_cost - self.optimal_cost

    @property
    def relative_gap(self) -> float | None:
        gap, ga_cost = self.gap, self.ga_cost
        return None if gap is None or ga_cost is None or ga_cost == 0 else gap / abs(ga_cost)

    @property
    def notes(self) -> list[str]:
        out = ["the front is the BRKGA's (a heuristic): its plans are feasible and mutually non-dominated, but "
               "other non-dominated plans may exist; every reported number was re-checked by Storm"]
        return out + self.extra_notes

    def payload(self) -> dict[str, Any]:
        return {"instance": self.problem_name, "objectives": list(self.objectives),
                "front": [p.to_dict() for p in self.front], "optimal_cost": self.optimal_cost,
                "lower_bound": self.lower_bound, "ga_cost": self.ga_cost, "gap": self.gap,
                "relative_gap": self.relative_gap, "generations": self.generations,
                "evaluations": self.evaluations, "time_s": self.time_s, "settings": self.settings,
                "exact_model": self.exact_model, "storm_front": self.storm_front}

    def text(self) -> str:
        out = [f"recourse for {self.problem_name}: objectives {', '.join(self.objectives)}"]
        s = self.settings
        out.append(f"BRKGA: {self.generations} generations, {self.evaluations:,} evaluations, "
                   f"{self.time_s:.2f} s (seed {s['seed']}, {s['n_offspring']} offspring + {s['n_mutants']} "
                   f"mutants + elites, bias {s['bias']}, duplicates by {s['dedupe']})")
        if self.status == "trivial":
            out.append("x0 is already accepted: nothing to do")
            return "\n".join(out)
        out += self._exact_lines()
        if not self.front:
            out.append("no feasible plan found" + (" (Storm proves none exists)" if self.status == "infeasible"
                                                   else " within the GA's generations"))
        else:
            out.append(f"front: {len(self.front)} plan{'s' * (len(self.front) != 1)}, cheapest first "
                       f"(every number checked by Storm on the DTMC the plan induces)")
            for k, plan in enumerate(self.front, 1):
                out += plan.lines(k)
        if self.storm_front is not None:
            k = len(self.storm_front["vertices"])
            out.append(f"Storm's achievable (cost, Gower) set ({self.storm_front['property']}): {k} "
                       f"{'vertex' if k == 1 else 'vertices'}; every plan of the front lies inside it")
        out += [f"note: {n}" for n in self.extra_notes]
        return "\n".join(out)

    def _exact_lines(self) -> list[str]:
        exact = self.exact_model
        if exact is None:
            return []
        where = f"{exact['property']} on the {exact['subject']} ({exact['states']:,} states, {exact['seconds']:.3f} s)"
        gap = self.gap
        if self.optimal_cost is not None:
            if self.ga_cost is None or gap is None:
                return [f"least cost: {format_value(self.optimal_cost)} (Storm: {where}); the GA found no plan"]
            return [f"least cost: {format_value(self.optimal_cost)} (Storm: {where}); GA's cheapest "
                    f"{format_value(self.ga_cost)}, gap {format_value(gap)}"]
        if self.lower_bound is not None:
            return [f"lower bound: {format_value(self.lower_bound)} (Storm: {where}, closed-loop strategies)"]
        return [f"Storm: {where} = {format_value(exact['value'])}"]
