"""The answer of ``stormcf repair``: what to change in the model's parameters and by how much, Storm's values before
and after, the proof (or the gap), the sensitivities at the nominal valuation; text for people and the JSON of
``docs/json.md``."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

from ..report import Report
from ..storm.parametric import ENGINES, exact_text
from ..verify import Check, format_value
from .geometry import Box
from .problem import RepairProblem
from .search import Candidate, Outcome

#: parameters shown by name in the sensitivity line (the JSON has them all)
SHOWN = 5


@dataclass(frozen=True)
class Sensitivity:
    """The derivatives of a bound's quantity at the nominal valuation (parameter -> derivative), how they were
    computed, and the solution function they come from with the parameters it depends on, when Storm gave one."""

    property: str
    method: str
    gradient: Mapping[str, float]
    solution_function: str | None = None
    depends_on: frozenset[str] | None = None

    def ranked(self, weights: Mapping[str, Fraction]) -> list[str]:
        """The parameters by how much the quantity changes per unit of distance along them, most first."""
        return sorted(self.gradient, key=lambda n: -abs(self.gradient[n]) / float(weights[n]))

    def to_dict(self) -> dict[str, Any]:
        return {"property": self.property, "method": self.method, "derivatives": dict(self.gradient),
                "solution_function": self.solution_function}


@dataclass(frozen=True, eq=False)
class RepairResult(Report):
    """The result of :func:`~stormcf.repair.solve_repair`.

    Attributes:
        problem: the question.
        status: ``optimal`` (proven within the allowed gap), ``suboptimal`` (Storm confirmed the answer, the gap to
            the proven bound is reported), ``interrupted``, ``infeasible`` (no valuation of the region meets the
            bounds), ``trivial`` (the nominal valuation meets them).
        nominal_checks: Storm's check of every bound at the nominal valuation.
        answer: the answer (None when infeasible), with ``answer_checks``, Storm's checks there.
        outcome: what the search found and proved (None when trivial).
        sensitivities: the derivatives at the nominal valuation, per bound.
        tolerance, gap: the absolute and relative gap allowed for ``optimal``.
        engine: the region-checking engine, in words.
    """

    command = "repair"
    problem: RepairProblem
    status: str
    nominal_checks: Sequence[Check]
    answer: Candidate | None
    answer_checks: Sequence[Check]
    outcome: Outcome | None
    sensitivities: Sequence[Sensitivity]
    tolerance: float
    gap: float
    engine: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def model(self):
        return self.problem.nominal_model

    @property
    def checks(self) -> list[Check]:
        return [*self.nominal_checks, *self.answer_checks]

    @property
    def distance(self) -> float | None:
        return self.answer.distance if self.answer is not None else None

    @property
    def lower_bound(self) -> float | None:
        """The proven lower bound on the distance of every valuation that meets the bounds (None when infeasible)."""
        if self.status == "trivial":
            return 0.0
        if self.outcome is None or self.status == "infeasible":
            return None
        return self.outcome.lower_bound if self.outcome.proven else None

    @property
    def approximate(self) -> bool:
        """An infeasibility or a bound that rests on robust lifting, whose value iteration has no error bound."""
        return self.outcome is not None and not self.outcome.proven and self.status == "infeasible"

    @property
    def notes(self) -> list[str]:
        out = []
        p = self.problem
        if p.engine != "lifting" and self.outcome is not None:
            out.append(f"region checks by {self.engine}: {p.engine_reason}")
        if self.outcome is not None and not self.outcome.proven:
            out.append(f"{ENGINES[p.engine][1]}: its bounds are no proof, so no lower bound is claimed")
        if self.outcome is not None and self.outcome.stopped == "time":
            out.append("the time limit ended the search: the best answer Storm confirmed is reported")
        if self.outcome is not None and len(p.parameters) > 3 and self.answer is not None and self.status != "optimal":
            out.append("more than 3 parameters: the answer comes from a local search; the lower bound is the radius "
                       "around the nominal valuation that parameter lifting proves infeasible")
        return out

    # ------------------------------------------------------------------------------------------ JSON
    def payload(self) -> dict[str, Any]:
        p = self.problem
        answer = self.answer
        return {
            "parameters": list(p.parameters), "bounds": [prop.text for prop in p.properties],
            "norm": p.norm, "scale": p.scale, "weights": _floats(p.parameters, p.distance.weights),
            "nominal": _floats(p.parameters, p.point), "nominal_exact": _texts(p.parameters, p.point),
            "region": _box(p.parameters, p.box),
            "strategy": p.where if p.policy is not None else None,
            "valuation": _floats(p.parameters, answer.point) if answer else None,
            "valuation_exact": _texts(p.parameters, answer.point) if answer else None,
            "changes": self.changes() if answer else [],
            "distance": self.distance,
            "distance_exact": (str(p.distance.exact(p.point, answer.point))
                               if answer and p.distance.exact(p.point, answer.point) is not None else None),
            "lower_bound": self.lower_bound,
            "gap": (self.distance - self.lower_bound
                    if self.distance is not None and self.lower_bound is not None else None),
            "tolerance": self.tolerance, "gap_allowed": self.gap,
            "certified_region": _box(p.parameters, answer.certified) if answer and answer.certified else None,
            "found_by": answer.how if answer else None,
            "engine": {"name": p.engine, "method": self.engine, "proves": ENGINES[p.engine][2],
                       "why": p.engine_reason},
            "search": self._search(),
            "sensitivity": [s.to_dict() for s in self.sensitivities],
            "results": self.results(),
        }

    def changes(self) -> list[dict[str, Any]]:
        """Per parameter that changes: its nominal value, the answer's, the change (largest weighted change first)."""
        p, answer = self.problem, self.answer
        if answer is None:
            return []
        rows = [(name, x, y, w) for name, x, y, w in zip(p.parameters, p.point, answer.point, p.distance.weights)
                if x != y]
        rows.sort(key=lambda r: -abs(r[2] - r[1]) * r[3])
        return [{"parameter": name, "nominal": float(x), "value": float(y), "change": float(y - x),
                 "change_exact": str(y - x)} for name, x, y, _ in rows]

    def results(self) -> list[dict[str, Any]]:
        """Per bound: Storm's value at the nominal valuation and at the answer, and whether the bound holds there."""
        out = []
        for k, prop in enumerate(self.problem.properties):
            before = self.nominal_checks[k]
            after = self.answer_checks[k] if self.answer_checks else None
            out.append({"property": prop.text, "nominal": before.value, "nominal_holds": before.holds,
                        "value": after.value if after else None,
                        "exact": str(after.exact) if after is not None and after.exact is not None else None,
                        "holds": after.holds if after else None})
        return out

    def _search(self) -> dict[str, Any] | None:
        o = self.outcome
        if o is None:
            return None
        return {"method": o.method, "stopped": o.stopped, "proven": o.proven, **o.counts,
                "region_checks": o.region_checks,
                "seconds": {"region_checks": o.region_seconds, "search": o.seconds}}

    # ------------------------------------------------------------------------------------------ text
    def text(self) -> str:
        p = self.problem
        lines = [f"parameters: {', '.join(p.parameters)}",
                 f"nominal valuation: {_valuation_text(p.parameters, p.point)}",
                 f"region: {p.region_text}"]
        if p.policy is not None:
            lines.append(f"under the strategy {p.where or ''}".rstrip())
        lines.append("at the nominal valuation:")
        lines += [f"  {c.property} = {c.value_text()}  [{'holds' if c.holds else 'violated'}]"
                  for c in self.nominal_checks]
        if self.status == "trivial":
            lines.append("status: trivial: the nominal valuation meets every bound; nothing to change")
        elif self.status == "infeasible":
            lines.append(self._infeasible_text())
        else:
            lines += self._answer_text()
        lines += self._sensitivity_text()
        lines.append("checked by " + "; ".join(sorted({c.method for c in self.checks})))
        return "\n".join(lines)

    def _answer_text(self) -> list[str]:
        p, answer = self.problem, self.answer
        assert answer is not None                       # every status but infeasible has an answer
        scale = "" if p.scale == "none" else ", each change divided by the region's width"
        lines = [f"change the parameters as follows ({p.distance.name} distance {format_value(answer.distance)}"
                 f"{scale}):"]
        for row in self.changes():
            exact = next(y for n, y in zip(p.parameters, answer.point) if n == row["parameter"])
            lines.append(f"  {row['parameter']}: {format_value(row['nominal'])} -> {_exact_or_value(exact)} "
                         f"({row['change']:+.6g})")
        unchanged = [n for n, x, y in zip(p.parameters, p.point, answer.point) if x == y]
        if unchanged:
            lines.append(f"  unchanged: {', '.join(unchanged)}")
        lines.append("then:")
        lines += [f"  {c.property} = {c.value_text()}  [{'holds' if c.holds else 'violated'}]"
                  for c in self.answer_checks]
        lines.append("status: " + self._status_text())
        if answer.certified is not None:
            lines.append(f"certified region: every valuation with {_box_text(p.parameters, answer.certified)} meets "
                         f"every bound (parameter lifting)")
        return lines

    def _status_text(self) -> str:
        o, answer = self.outcome, self.answer
        assert o is not None and answer is not None     # a searched answer (_answer_text of a status but trivial)
        d = answer.distance
        bound = self.lower_bound
        if self.status == "optimal":
            allowed = max(self.tolerance, self.gap * d)
            return (f"optimal: no valuation closer than {format_value(max(d - allowed, 0.0))} meets every bound "
                    f"(proven)")
        reason = {"user": "stopped by the user", "time": "the time limit ended the search"}.get(o.stopped or "", "")
        gap = (f"the proven lower bound is {format_value(bound)} (gap {format_value(d - bound)})" if bound is not None
               else "no proven lower bound")
        return f"{self.status}: {reason + '; ' if reason else ''}{gap}"

    def _infeasible_text(self) -> str:
        assert self.outcome is not None                 # infeasible is what the search proved or found
        proof = "proven" if self.outcome.proven else "not proven"
        return f"status: infeasible: no valuation of the region meets every bound ({proof})"

    def details(self) -> list[str]:
        """How the answer was found (``-v``): the search and its proof, the tolerance, the derivatives' method."""
        o = self.outcome
        if o is None:
            return []
        lines = [f"method: {o.method}; proof by {self.engine}"]
        searched = (f"{_count(o.counts.get('boxes', 0), 'box')}, {o.counts.get('violated', 0)} proven to violate a "
                    f"bound, {_count(o.region_checks, 'region check')}, "
                    f"{_count(o.counts.get('valuations', 0), 'valuation')} checked")
        lines.append(f"search: {searched}")
        if self.status == "optimal" and self.answer is not None:
            allowed = max(self.tolerance, self.gap * self.answer.distance)
            lines.append(f"optimal means: every valuation closer than the answer minus {allowed:g} (the tolerance) "
                         f"violates a bound")
        lines += [f"derivatives of {s.property}: {s.method}" for s in self.sensitivities if s.gradient]
        return lines

    def _sensitivity_text(self) -> list[str]:
        p = self.problem
        weights = dict(zip(p.parameters, p.distance.weights))
        lines = []
        for s, check in zip(self.sensitivities, self.nominal_checks):
            if check.holds or not s.gradient:
                continue
            ranked = s.ranked(weights)
            parts = ", ".join(f"{n} (∂/∂{n} = {format_value(s.gradient[n])})" for n in ranked[:SHOWN])
            if len(ranked) > SHOWN:
                parts += f", ... ({len(ranked) - SHOWN} more in the JSON)"
            lines.append(f"most sensitive at the nominal valuation: {s.property}: {parts}")
            if s.solution_function is not None and len(s.solution_function) <= 300:
                lines.append(f"  solution function: {s.solution_function}")
        return lines


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else ("es" if what.endswith("x") else "s"))


def _floats(names: Sequence[str], values: Sequence[Fraction]) -> dict[str, float]:
    return {n: float(v) for n, v in zip(names, values)}


def _texts(names: Sequence[str], values: Sequence[Fraction]) -> dict[str, str]:
    return {n: str(v) for n, v in zip(names, values)}


def _box(names: Sequence[str], box: Box) -> dict[str, list[float]]:
    return {n: [float(lo), float(hi)] for n, lo, hi in zip(names, box.lo, box.hi)}


def _box_text(names: Sequence[str], box: Box) -> str:
    return ", ".join(f"{_exact_or_value(lo)}<={n}<={_exact_or_value(hi)}" for n, lo, hi in zip(names, box.lo, box.hi))


def _valuation_text(names: Sequence[str], values: Sequence[Fraction]) -> str:
    return ", ".join(f"{n}={_exact_or_value(v)}" for n, v in zip(names, values))


def _exact_or_value(x: Fraction) -> str:
    """A value for people: as written when it is short (0.35, 1/3), else 6 significant digits."""
    text = exact_text(x)
    return text if len(text) <= 12 else format_value(float(x))
