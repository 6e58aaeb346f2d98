"""The search for the closest valuation that meets every bound, and the proof that nothing closer does.

**Branch and bound** (:meth:`Search.branch_and_bound`, the proof for up to :data:`MAX_PROVEN_PARAMETERS`
parameters): boxes of the region are taken best first, by their distance to the nominal valuation (the distance of
their closest valuation, a lower bound for all of theirs). Storm's parameter lifting bounds each bound's quantity
over a box (:class:`~stormcf.storm.parametric.RegionChecker`), and the box is

- *violated* when some bound fails everywhere in it: pruned, proven;
- *satisfied* when every bound holds everywhere in it: its closest valuation is an answer (certified by the box);
- otherwise its closest valuation is checked by Storm (:meth:`~stormcf.storm.parametric.ParametricBuild.values`):
  when it meets every bound it is an answer no valuation of the box beats, else the box is split in two along its
  widest side.

As boxes are taken best first, the smallest distance of a box still open is a proven lower bound of the optimum;
the search ends when the best answer is within the allowed gap (``tolerance``, or ``gap`` times the answer) of it,
with a proof that every valuation closer than the answer minus that gap violates a bound. When no box is left and no
answer was found, no valuation of the region meets the bounds (proven infeasible).

**Many parameters** (:meth:`Search.local`): boxes in many dimensions need too many splits for a proof, so a local
method finds the answer: Storm's own feasibility search for each bound (gradient descent on DTMCs, parameter lifting
on MDPs) gives valuations that meet it; those that meet every bound are pulled towards the nominal valuation (the
segment between them bisected, then one parameter at a time moved back as far as the bounds allow, Storm checking
every step). The proven lower bound is the largest radius r such that parameter lifting proves every valuation
within weighted l∞ distance r of the nominal one to violate a bound (bisection on r): those contain every valuation
within l1 or l2 distance r.

Proofs hold as far as the engine's bounds are sound (:data:`~stormcf.storm.parametric.ENGINES`): Storm's parameter
lifting with sound value iteration (its values widened by twice the relative precision) or in exact arithmetic;
robust lifting's value iteration has no error bound, so its lower bounds are reported but not claimed as proofs.
"""
from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

from ..errors import PropertyError, TimeLimitReached
from ..interrupt import Interrupted
from ..run import Run
from ..storm.parametric import ENGINES, PRECISION
from .geometry import Box, Point
from .problem import RepairProblem

#: up to this many parameters the branch and bound proves the optimum; above it the local method answers
MAX_PROVEN_PARAMETERS = 3
#: boxes are not split below this weighted width (as a share of the region's)
MIN_WIDTH = Fraction(1, 10**12)
#: the answers kept for Storm's final check (the best first; the next one if Storm refuses one)
KEPT = 5
#: bisection steps of the local method (along a segment, along one parameter) and of the proven radius
SEGMENT_STEPS, COORDINATE_STEPS, RADIUS_STEPS = 30, 20, 16
#: one Storm call may take the larger of 2 s and 5% of the time left (60 s without a time limit); a box whose check
#: takes longer stays undecided (and is split), a valuation whose check does is not taken as an answer
CALL_SECONDS = (2.0, 0.05, 60.0)
#: the share of the time left that Storm's feasibility search (many parameters) may take for one bound
FEASIBILITY_SHARE = 0.25
#: the most decimals an answer's values are rounded to (:meth:`Search.shortened`)
DECIMALS = 8
#: valuations checked along a ray before its bisection
RAY_SCAN = 8

VIOLATED, SATISFIED, UNKNOWN = "violated", "satisfied", "unknown"


@dataclass(frozen=True)
class Candidate:
    """A valuation that meets every bound by the search's checks: its distance to the nominal valuation, how it was
    found, and the box that certifies it (every valuation of the box meets every bound), if any."""

    point: Point
    distance: float
    how: str
    certified: Box | None = None


@dataclass
class Outcome:
    """What the search found and proved.

    Attributes:
        candidates: answers, best first (at most :data:`KEPT`).
        lower_bound: the best lower bound on the optimal distance (0 when nothing was proven).
        proven: whether ``lower_bound`` is a proof (the engine's bounds are sound).
        infeasible: no valuation of the region meets the bounds (proven when ``proven``).
        method: how the answer was searched, in words.
        stopped: ``"time"`` or ``"user"`` when the search was cut short.
        counts: boxes checked and their verdicts, valuations checked.
        region_checks, region_seconds: Storm's region checks (parameter lifting): calls and seconds.
        seconds: the whole search.
    """

    candidates: list[Candidate]
    lower_bound: float
    proven: bool
    infeasible: bool
    method: str
    stopped: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    region_checks: int = 0
    region_seconds: float = 0.0
    seconds: float = 0.0


class Search:
    """One search (module docstring) within ``run``; ``tolerance`` and ``gap`` are the absolute and relative gap
    allowed between an answer and the proven bound; ``exact_points`` checks valuations in exact arithmetic,
    ``exact_rounding`` the rounded answer (:meth:`shortened`); ``relevant`` names the parameters the bounds depend
    on (default: all), along which boxes are split."""

    def __init__(self, problem: RepairProblem, run: Run, tolerance: float, gap: float, exact_points: bool,
                 exact_rounding: bool = False, relevant: frozenset[str] | None = None) -> None:
        self.problem, self.run = problem, run
        self.tolerance, self.gap, self.exact_points = tolerance, gap, exact_points
        self.exact_rounding = exact_rounding or exact_points
        self.build = problem.search_build
        self.x0, self.distance = problem.point, problem.distance
        #: boxes are split along the parameters the bounds depend on (weighted as the distance weighs them)
        self.splits = tuple(w if relevant is None or name in relevant else Fraction(0)
                            for name, w in zip(problem.parameters, problem.distance.weights))
        self.checkers = [self.build.region_checker(j, problem.engine) for j in range(len(problem.properties))]
        self.proves = ENGINES[problem.engine][2]
        self.candidates: list[Candidate] = []
        self.counts = {"boxes": 0, "violated": 0, "satisfied": 0, "split": 0, "valuations": 0}
        self.stopped: str | None = None

    # ------------------------------------------------------------------------------------------ shared steps
    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    def offer(self, candidate: Candidate) -> None:
        if any(c.point == candidate.point for c in self.candidates):
            return
        self.candidates = sorted(self.candidates + [candidate], key=lambda c: c.distance)[:KEPT]

    def allowed(self, distance: float) -> float:
        return max(self.tolerance, self.gap * distance)

    def call_seconds(self) -> float:
        """The longest one Storm call may take (:data:`CALL_SECONDS`): a box whose check crawls is split instead."""
        low, share, unlimited = CALL_SECONDS
        return max(low, share * self.run.remaining()) if self.run.limited else unlimited

    def expired(self) -> bool:
        if self.run.expired:
            self._cut_short()
            return True
        return False

    def _cut_short(self) -> None:
        """A Storm call or the loop ended by the run: the user's stop or the time."""
        self.stopped = "user" if self.run.interrupted else "time"

    def classify(self, box: Box, known: frozenset[int]) -> tuple[str, frozenset[int]]:
        """The box's verdict (module docstring) and the bounds proven to hold on all of it (``known`` were proven on
        a box containing it). The side of each bound that can prove a violation is asked first."""
        self.counts["boxes"] += 1
        lo, hi = self.problem.valuation(box.lo), self.problem.valuation(box.hi)
        open_bounds = [j for j in range(len(self.checkers)) if j not in known]
        for j in open_bounds:
            prop, upper = self.problem.properties[j], _upper(self.problem.properties[j])
            extreme = self.checkers[j].extremum(lo, hi, "min" if upper else "max", self.call_seconds())
            if extreme is not None and not prop.satisfied_by(extreme):
                self.counts["violated"] += 1
                return VIOLATED, known
        holds = set(known)
        for j in open_bounds:
            prop, upper = self.problem.properties[j], _upper(self.problem.properties[j])
            extreme = self.checkers[j].extremum(lo, hi, "max" if upper else "min", self.call_seconds())
            if extreme is not None and prop.satisfied_by(extreme):
                holds.add(j)
        if len(holds) == len(self.checkers):
            self.counts["satisfied"] += 1
            return SATISFIED, frozenset(holds)
        return UNKNOWN, frozenset(holds)

    def meets(self, point: Point, exact: bool | None = None) -> bool:
        """Whether Storm's values at ``point`` meet every bound (floating-point values with the solver's relative
        precision as a margin against them; ``exact``: in exact arithmetic, by default as the search's points)."""
        exact = self.exact_points if exact is None else exact
        self.counts["valuations"] += 1
        values = self.build.values(self.problem.valuation(point), exact, self.call_seconds())
        if values is None:
            return False
        margin = Fraction(0) if exact else 2 * PRECISION
        for prop, value in zip(self.problem.properties, values):
            if not isinstance(value, Fraction):            # an infinite expected reward
                if not prop.satisfied_by(value):
                    return False
                continue
            worst = value + margin * abs(value) if _upper(prop) else value - margin * abs(value)
            if not prop.satisfied_by(worst):
                return False
        return True

    def outcome(self, method: str, lower_bound: float, infeasible: bool = False) -> Outcome:
        return Outcome(list(self.candidates), lower_bound, self.proves, infeasible, method, self.stopped,
                       dict(self.counts), sum(c.calls for c in self.checkers), sum(c.seconds for c in self.checkers))

    # ------------------------------------------------------------------------------------------ branch and bound
    def branch_and_bound(self) -> Outcome:
        """Best-first branch and bound over the region (module docstring)."""
        root = self.problem.box
        floor = root.width(self.splits) * MIN_WIDTH
        order = itertools.count()
        heap: list[tuple[float, int, Box, frozenset[int]]] = [(self.distance.to_box(self.x0, root), next(order), root,
                                                                frozenset())]
        unresolved: list[float] = []
        shot = -1.0                  # the lower bound when the last ray was shot
        with self.run.progress(desc="branch and bound", unit="box") as bar:
            while heap:
                bound = heap[0][0]
                best = self.best
                if best is not None and best.distance - bound <= self.allowed(best.distance):
                    break
                if self.expired():
                    break
                lower, _, box, known = heapq.heappop(heap)
                try:
                    verdict, known = self.classify(box, known)
                    bar.update()
                    if verdict == VIOLATED:
                        continue
                    closest = box.closest(self.x0)
                    if verdict == SATISFIED:
                        self.offer(Candidate(closest, lower, "a box where every bound holds", box))
                    elif self.meets(closest):
                        self.offer(Candidate(closest, lower, "a valuation Storm checked"))
                    elif box.width(self.splits) <= floor:
                        unresolved.append(lower)
                    else:
                        if self.best is None or lower >= shot + (self.best.distance - shot) / 4:
                            shot = lower
                            self._shoot(closest)
                        self.counts["split"] += 1
                        for child in box.split(self.splits):
                            if not self._settled(child, closest):
                                heapq.heappush(heap, (self.distance.to_box(self.x0, child), next(order), child,
                                                      known))
                        self._probe(box.center())
                except (TimeLimitReached, Interrupted):    # a region check cut short: the box stays open
                    heapq.heappush(heap, (lower, next(order), box, known))
                    self._cut_short()
                    break
                self._postfix(bar, heap, unresolved)
        open_bounds = ([heap[0][0]] if heap else []) + unresolved
        lower_bound = min(open_bounds, default=self.best.distance if self.best else 0.0)
        if self.best is not None:
            lower_bound = min(lower_bound, self.best.distance)
        infeasible = not open_bounds and self.best is None
        return self.outcome("branch and bound over boxes of the region", lower_bound, infeasible)

    def _shoot(self, through: Point) -> None:
        """An answer on the ray from the nominal valuation through ``through`` (an infeasible valuation): the first
        valuation on it that meets every bound, within the region (bisection to half the allowed gap). The rays go
        through the closest valuations of the boxes that bound the optimum, so they point where the answer is."""
        direction = [b - a for a, b in zip(self.x0, through)]
        if not any(direction):
            return
        region = self.problem.box
        far = min((((hi if d > 0 else lo) - a) / d for a, d, lo, hi in zip(self.x0, direction, region.lo, region.hi)
                   if d), default=Fraction(1))
        along = lambda t: tuple(a + t * d for a, d in zip(self.x0, direction))       # noqa: E731
        unit = self.distance.between(self.x0, through)
        if far <= 1 or (self.best is not None and unit >= self.best.distance):
            return
        low, high = Fraction(1), None
        for k in range(1, RAY_SCAN + 1):                  # the first of a few valuations along the ray that meets them
            t = 1 + (far - 1) * k / RAY_SCAN
            if self.best is not None and float(t) * unit >= self.best.distance:
                return
            if self.meets(along(t)):
                high = t
                break
            low = t
        if high is None:
            return
        for _ in range(SEGMENT_STEPS):
            if (high - low) * Fraction(unit) <= self.allowed(float(high) * unit) / 2 or self.run.expired:
                break
            middle = (low + high) / 2
            if self.meets(along(middle)):
                high = middle
            else:
                low = middle
        point = along(high)
        self.offer(Candidate(point, self.distance.between(self.x0, point), "a valuation Storm checked"))

    def _probe(self, point: Point) -> None:
        """Check a valuation that would beat the best answer (a box's center: deeper inside than its closest
        valuation, so where the bounds cut the box it is the one that may meet them)."""
        distance = self.distance.between(self.x0, point)
        if self.best is not None and distance >= self.best.distance - self.allowed(self.best.distance):
            return
        if self.meets(point):
            self.offer(Candidate(point, distance, "a valuation Storm checked"))

    def shortened(self, lower_bound: float) -> list[Candidate]:
        """The best answer with its values rounded to the fewest decimals (up to :data:`DECIMALS`) that keep it an
        answer within the allowed gap of ``lower_bound`` (0.4 rather than 0.40000152587890625), as a candidate
        before the others; none when no rounding does (or the run has ended). Rounded values are checked in exact
        arithmetic where Storm's check of the answer is exact (a bound met exactly by 0.4 is then kept)."""
        best = self.best
        if best is None:
            return []
        limit = lower_bound + self.allowed(best.distance)
        for digits in range(1, DECIMALS + 1):
            if self.run.expired:
                break
            point = self.problem.box.closest(tuple(round(x, digits) for x in best.point))
            if point == best.point:
                break
            distance = self.distance.between(self.x0, point)
            if distance <= max(limit, best.distance) and self.meets(point, self.exact_rounding):
                return [Candidate(point, distance, best.how + ", its values rounded")]
        return []

    def _settled(self, child: Box, parent_closest: Point) -> bool:
        """Whether the closest valuation of a new box (one the parent's did not show infeasible) meets every bound:
        then it is an answer no valuation of the box beats, and the box needs no check. Only asked of boxes that
        could beat the best answer."""
        closest = child.closest(self.x0)
        if closest == parent_closest:
            return False
        distance = self.distance.between(self.x0, closest)
        if self.best is not None and distance >= self.best.distance:
            return False
        if self.meets(closest):
            self.offer(Candidate(closest, distance, "a valuation Storm checked"))
            return True
        return False

    def _postfix(self, bar, heap: Sequence, unresolved: Sequence[float]) -> None:
        bound = min(([heap[0][0]] if heap else []) + list(unresolved), default=None)
        values = {"best": f"{self.best.distance:.6g}" if self.best else "none"}
        if bound is not None:
            values["bound"] = f"{bound:.6g}"
        bar.set_postfix(**values)

    # ------------------------------------------------------------------------------------------ many parameters
    def local(self) -> Outcome:
        """The local method and the proven radius (module docstring)."""
        method = "gradient descent" if self.build.model_type == "dtmc" else "lifting"
        lo, hi = self.problem.valuation(self.problem.box.lo), self.problem.valuation(self.problem.box.hi)
        infeasible = False
        with self.run.activity(f"Storm's feasibility search ({method})"):
            for j in range(len(self.problem.properties)):
                if self.expired():
                    break
                try:
                    verdict, witness = self.build.feasible(j, lo, hi, method, self._feasibility_seconds())
                except (TimeLimitReached, Interrupted):
                    self._cut_short()
                    break
                except PropertyError:                # Storm's search refuses the region (its graph changes)
                    continue
                if verdict == "violated" and self.proves:    # Storm's parameter lifting, sound here
                    infeasible = True
                    break
                if witness is not None:
                    point = self.problem.box.closest(tuple(witness[n] for n in self.problem.parameters))
                    if self.meets(point):
                        self.offer(Candidate(point, self.distance.between(self.x0, point),
                                             f"Storm's feasibility search ({method}), then moved towards the nominal "
                                             f"valuation"))
        if infeasible:
            return self.outcome(f"Storm's feasibility search ({method})", 0.0, infeasible=True)
        if self.best is not None:
            self._pull(self.best)
        radius = self._proven_radius()
        if self.best is None and not self.expired():
            found = self.branch_and_bound()                  # no start: look for an answer box by box
            radius = max(radius, found.lower_bound)
        return self.outcome(f"a local search from Storm's feasibility search ({method}); the bound by parameter "
                            f"lifting around the nominal valuation", radius)

    def _feasibility_seconds(self) -> float | None:
        """Storm's feasibility search may take a quarter of the time left (it refines regions until it decides)."""
        return FEASIBILITY_SHARE * self.run.remaining() if self.run.limited else None

    def _pull(self, start: Candidate) -> None:
        """Move an answer towards the nominal valuation: the segment between them bisected, then one parameter at a
        time (the largest weighted change first), each step checked by Storm."""
        point = self._towards(start.point, lambda t: tuple(a + t * (b - a) for a, b in zip(self.x0, start.point)),
                              SEGMENT_STEPS)
        for _ in range(2):
            changes = self.distance.differences(self.x0, point)
            for i in sorted(range(len(point)), key=lambda i: -changes[i]):
                if changes[i] == 0 or self.expired():
                    continue
                base = point
                point = self._towards(base, lambda t, i=i, base=base: base[:i] + (self.x0[i] + t * (base[i] - self.x0[i]),)
                                      + base[i + 1:], COORDINATE_STEPS)
        self.offer(Candidate(point, self.distance.between(self.x0, point), start.how))

    def _towards(self, feasible: Point, along, steps: int) -> Point:
        """Bisection on t in [0, 1] for the smallest t whose valuation ``along(t)`` meets every bound, ``along(1)``
        being the feasible ``feasible``."""
        low, high, best = Fraction(0), Fraction(1), feasible
        for _ in range(steps):
            if self.expired():
                break
            middle = (low + high) / 2
            point = along(middle)
            if self.meets(point):
                high, best = middle, point
            else:
                low = middle
        return best

    def _proven_radius(self) -> float:
        """The largest radius (bisection) for which every valuation of the region within weighted l∞ distance r of
        the nominal one is proven to violate a bound."""
        region, weights = self.problem.box, self.distance.weights
        far = max((max(x - lo, hi - x) * w for x, lo, hi, w in zip(self.x0, region.lo, region.hi, weights)))
        high = Fraction(self.best.distance) if self.best is not None else far
        low = Fraction(0)
        with self.run.activity("parameter lifting around the nominal valuation"):
            for _ in range(RADIUS_STEPS):
                if self.expired():
                    break
                middle = (low + high) / 2
                try:
                    verdict, _ = self.classify(region.around(self.x0, middle, weights), frozenset())
                except (TimeLimitReached, Interrupted):
                    self._cut_short()
                    break
                if verdict == VIOLATED:
                    low = middle
                else:
                    high = middle
        return float(low)


def search(problem: RepairProblem, run: Run, tolerance: float, gap: float, exact_points: bool,
           exact_rounding: bool = False, relevant: frozenset[str] | None = None) -> Outcome:
    """The branch and bound for up to :data:`MAX_PROVEN_PARAMETERS` parameters, the local method beyond; then the
    best answer's values rounded where they can be (:meth:`Search.shortened`)."""
    started = time.perf_counter()
    try:
        searcher = Search(problem, run, tolerance, gap, exact_points, exact_rounding, relevant)
        outcome = (searcher.branch_and_bound() if len(problem.parameters) <= MAX_PROVEN_PARAMETERS
                   else searcher.local())
        outcome.candidates = searcher.shortened(outcome.lower_bound) + outcome.candidates
    finally:
        problem.search_build.close()             # Storm's worker process for the search's calls
    outcome.seconds = time.perf_counter() - started
    return outcome


def _upper(prop) -> bool:
    """Whether the bound is an upper bound (``<=``, ``<``): its minimum over a box can prove a violation."""
    return prop.comparison in ("<", "<=")
