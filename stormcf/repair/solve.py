"""``stormcf repair``, start to end: Storm's values at the nominal valuation, the sensitivities there, the search
(:mod:`.search`), and Storm's re-check of the answer on the model it builds from the PRISM file with the answer's
values as constants, exactly (rational arithmetic) on models of up to :data:`EXACT_TRANSITIONS` transitions, with
Storm's sound value iteration beyond (the check says which)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from .. import storm
from ..errors import StormcfError, TimeLimitReached, VerificationFailure
from ..interrupt import stopped
from ..run import Run
from ..storm.parametric import ENGINES
from ..verify import Check, check_model, check_strategy
from .problem import TOLERANCE, RepairProblem
from .result import RepairResult, Sensitivity
from .search import Candidate, Outcome, search

#: the answer is re-checked in exact rational arithmetic on models of at most this many transitions (an exact check
#: of a 145,000-state BRP took Storm 309 s; one of 22,000 transitions 1.6 s, and its value has 6,908 digits)
EXACT_TRANSITIONS = 5_000
#: the step of forward differences, as a share of the region's width along the parameter
DIFFERENCE_STEP = Fraction(1, 10**5)
#: the longest Storm may take for a solution function (state elimination can explode) before differences are used
SOLUTION_SECONDS = 2.0
#: the default time limit of a run (seconds): the search is anytime
TIME_LIMIT = 600.0


@dataclass(frozen=True)
class Answer:
    """A valuation Storm confirmed: the search's candidate and Storm's checks of every bound there."""

    candidate: Candidate
    checks: tuple[Check, ...]


def solve_repair(problem: RepairProblem, *, tolerance: float = TOLERANCE, gap: float = 0.0,
                 exact: bool | None = None, run: Run | None = None,
                 time_limit: float | None = None) -> RepairResult:
    """The closest valuation to the nominal one that meets every bound, with Storm's checks and, for up to three
    parameters, the proof that nothing closer (by more than ``max(tolerance, gap·distance)``) does.

    Args:
        problem: the question (:class:`~stormcf.repair.RepairProblem`).
        tolerance, gap: the absolute and relative gap allowed between the answer and the proven lower bound.
        exact: re-check in exact arithmetic (None: on models of up to :data:`EXACT_TRANSITIONS` transitions).
        run, time_limit: the run (:class:`~stormcf.run.Run`) or a time limit in seconds; when it ends (or the user
            stops it) the best answer Storm confirmed is reported (``suboptimal``, ``interrupted``), or, without one,
            :class:`~stormcf.errors.TimeLimitReached` (:class:`~stormcf.interrupt.Interrupted`) is raised.
    """
    run = Run.of(run, time_limit)
    with run.active():
        return _Repair(problem, tolerance, gap, exact, run).solve()


class _Repair:
    def __init__(self, problem: RepairProblem, tolerance: float, gap: float, exact: bool | None, run: Run) -> None:
        self.problem, self.tolerance, self.gap, self.run = problem, tolerance, gap, run
        self.exact = exact if exact is not None else problem.build.n_transitions <= EXACT_TRANSITIONS
        self.exact_points = bool(exact)

    def solve(self) -> RepairResult:
        p = self.problem
        with self.run.phase("nominal") as phase:
            nominal = self.checks(p.nominal_model, p.policy, "nominal")
        # Storm's check of the answer: a build of the model file and checks as at the nominal valuation, three times
        # over (a loaded machine; an answer Storm refuses in floating point is followed by the next)
        reserve = 3 * (sum(storm.load_timings(p.nominal_model).values()) + phase.elapsed()) + 2.0
        if all(c.holds for c in nominal):
            return self.result("trivial", nominal, Answer(Candidate(p.point, 0.0, "the nominal valuation"), nominal),
                               None, [])
        with self.run.phase("sensitivity"):
            sensitivities = self.sensitivities(nominal)
        seconds = max(self.run.remaining() - reserve, 0.01) if self.run.limited else None
        with self.run.phase("search", seconds=seconds) as budget:
            outcome = search(p, budget, self.tolerance, self.gap, self.exact_points, self.exact,
                             _relevant(p, sensitivities))
        with self.run.phase("check"):
            answer = self.confirm(outcome.candidates)
        return self.result(self.status(outcome, answer), nominal, answer, outcome, sensitivities)

    # ------------------------------------------------------------------------------------------ Storm's checks
    def checks(self, model, policy, name: str) -> tuple[Check, ...]:
        """Storm's check of every bound on ``model`` (the PRISM file built with a valuation's values), or on the DTMC
        ``policy`` induces on it."""
        out = []
        for text in self.problem.bounds:          # as the user wrote them (Storm's printed 1/5 reads back as 0)
            check = (check_model(model, text, exact=self.exact) if policy is None
                     else check_strategy(policy, text, exact=self.exact))
            out.append(check.named(name))
        return tuple(out)

    def confirm(self, candidates: Sequence[Candidate]) -> Answer | None:
        """The best candidate Storm confirms on the model built with its values. A candidate the search proved (a box
        where every bound holds, or exact values) that Storm refuses is an internal error; a floating-point one is
        dropped for the next."""
        p = self.problem
        for candidate in candidates:
            model = storm.load_model(p.model.file, p.model.constants_with(p.valuation(candidate.point)),
                                     shown_as=p.model.source)
            policy = None if p.policy is None else type(p.policy)(model, p.policy.probabilities)
            checks = self.checks(model, policy, "answer")
            if all(c.holds for c in checks):
                return Answer(candidate, checks)
            if candidate.certified is not None or self.exact_points:
                failed = next(c for c in checks if not c.holds)
                raise VerificationFailure(f"Storm's value of {failed.property} at the valuation "
                                          f"{p.valuation(candidate.point)} is {failed.value!r}, which violates the "
                                          f"bound the search proved there; refusing to report it")
        return None

    # ------------------------------------------------------------------------------------------ sensitivities
    def sensitivities(self, nominal: Sequence[Check]) -> list[Sensitivity]:
        """The derivatives of every bound's quantity at the nominal valuation: of Storm's solution function on small
        DTMCs, else forward differences of Storm's values (a step of :data:`DIFFERENCE_STEP` of the region's width,
        into the region)."""
        p, build = self.problem, self.problem.search_build
        out = []
        for k, prop in enumerate(p.properties):
            if self.run.expired:
                break
            solution = build.solution_function(k, p.valuation(p.point), SOLUTION_SECONDS)
            if solution is not None:
                gradient = {n: float(g) for n, g in solution.gradient.items()}
                out.append(Sensitivity(prop.text, "Storm's solution function, differentiated", gradient,
                                       solution.text, solution.parameters))
            else:
                out.append(Sensitivity(prop.text, f"forward differences of Storm's values (step {float(DIFFERENCE_STEP):g} "
                                                  f"of the region's width)", self.differences(k), None))
        return out

    def differences(self, k: int) -> dict[str, float]:
        p, build = self.problem, self.problem.search_build
        base = build.values(p.valuation(p.point))[k]
        gradient = {}
        for i, name in enumerate(p.parameters):
            lo, hi = p.box.lo[i], p.box.hi[i]
            step = (hi - lo) * DIFFERENCE_STEP * (1 if p.point[i] + (hi - lo) * DIFFERENCE_STEP <= hi else -1)
            moved = p.point[:i] + (p.point[i] + step,) + p.point[i + 1:]
            value = build.values(p.valuation(moved))[k]
            gradient[name] = float((value - base) / step) if isinstance(value, Fraction) else float("nan")
        return gradient

    # ------------------------------------------------------------------------------------------ the result
    def status(self, outcome: Outcome, answer: Answer | None) -> str:
        if answer is None:
            if outcome.infeasible:
                return "infeasible"
            if outcome.stopped == "user":
                raise stopped()
            if outcome.stopped is None and not outcome.candidates:
                raise StormcfError("no valuation meeting every bound was found in the region, and Storm's parameter "
                                   "lifting leaves boxes narrower than 1e-12 of it undecided (a bound met only on "
                                   "a boundary?)")
            if outcome.stopped is None:
                raise VerificationFailure("Storm refuses every valuation the search found to meet the bounds (in "
                                          "floating point, within its precision); refusing to report one")
            raise TimeLimitReached(f"{self.run.limit} was reached during the search, before a valuation meeting the "
                                   f"bounds was found")
        if outcome.stopped == "user":
            return "interrupted"
        allowed = max(self.tolerance, self.gap * answer.candidate.distance)
        if outcome.proven and answer.candidate.distance - outcome.lower_bound <= allowed:
            return "optimal"
        return "suboptimal"

    def result(self, status: str, nominal: tuple[Check, ...], answer: Answer | None, outcome: Outcome | None,
               sensitivities: list[Sensitivity]) -> RepairResult:
        return RepairResult(self.problem, status, nominal, answer.candidate if answer else None,
                            answer.checks if answer else (), outcome, sensitivities, self.tolerance, self.gap,
                            ENGINES[self.problem.engine][1], dict(self.run.timings))




def _relevant(problem: RepairProblem, sensitivities: Sequence[Sensitivity]) -> frozenset[str]:
    """The parameters some bound's quantity depends on: those of the solution functions when Storm gave one for every
    bound, else all of them (the search does not split boxes along the others: no bound changes along them)."""
    found = [s.depends_on for s in sensitivities if s.depends_on is not None]
    if len(found) < len(problem.properties):
        return frozenset(problem.parameters)
    return frozenset[str]().union(*found) or frozenset(problem.parameters)
