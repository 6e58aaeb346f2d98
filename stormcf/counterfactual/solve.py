"""Solving a counterfactual problem end to end: Storm first, the exact special cases, the MIQCQP, Storm's checks.

:func:`solve_counterfactual` is the entry point; one :class:`~stormcf.run.Run` bounds all of it. The plan:

1. :func:`~stormcf.counterfactual.preanalysis.preanalyse` (Storm): ``trivial`` / ``infeasible`` without a solver,
   otherwise the pruned encoding of every bound and Storm's optimal scheduler of each, the first candidates.
2. One bound, d∞ alone: the exact bisection (:func:`stages.dinf_stage`); d0 alone: heuristics and the d0 MILP
   (:func:`stages.d0_stage`). Any other weights, or several bounds: the d∞ and d0 stages of every bound whatever
   the weights (they give valid bounds on every strategy's d0 and d∞, each bound's alone also for all together,
   and candidates), the d∞ polish of the best sparse candidate, a descent by sequential linear programming from
   their strategies (:mod:`descent`, the primal method of d1), then the MIQCQP of every bound (Gurobi, or SCIP
   when the instance exceeds the Gurobi licence) warm-started with the best candidate.
3. Every policy a stage finds is checked by Storm on its induced DTMC against every bound
   (:func:`stormcf.verify.check_strategy`, with the stage's own value as ``expected``); only strategies that meet
   all bounds are candidates. The answer is the best candidate: a mixed result is never worse than the special
   cases it started from.
4. The status comes from :class:`~stormcf.counterfactual.certify.Certificate` alone: ``optimal`` when the best
   candidate is within the relative gap 1e-4 of the best proven lower bound, ``suboptimal`` with the gap
   otherwise, ``timeout`` when the time ran out before any valid strategy; a solver's own "optimal" is never passed
   on, and a bound that contradicts a strategy Storm accepted is dropped with a note. ``P<γ`` is solved as
   ``P<=γ·(1 - 1e-9)`` (and ``>`` likewise).
"""
from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..deadline import Deadline
from ..distance import strategy_distance
from ..errors import SolverError, TimeLimitReached
from ..interrupt import Interrupted, stopped, stopped_by, until_request
from ..reachability import can_reach
from ..run import Run
from ..solvers import SOLVERS, LicenceLimitError, available, backend
from ..strategy import Strategy
from ..verify import Check, check_strategy
from .bellman import evaluate, leaves_surely, tightened
from .certify import GAP, Candidate, Certificate
from .descent import descent_stage
from .preanalysis import BoundAnalysis, Encoding, Preanalysis, preanalyse, region_of
from .problem import CounterfactualProblem
from .programs import miqcqp_program
from .result import CounterfactualResult, novelty
from .stages import d0_stage, dinf_stage, miqcqp_stage

#: the default time limit (seconds) of a counterfactual search: the MIQCQP is anytime, with no natural end
TIME_LIMIT = 600.0
#: relative margin of a strict bound P<γ
STRICT_MARGIN = 1e-9
#: shares of the remaining time for the stages of a mixed objective (the MIQCQP gets the rest); d0 gets the larger
#: share when it is weighted, the smaller one when it only provides candidates
DINF_SHARE, D0_SHARE, D0_CANDIDATE_SHARE, POLISH_SHARE, DESCENT_SHARE = 0.15, 0.75, 0.3, 0.5, 0.5
#: decimals of the changed probabilities of a strategy that is checked in exact arithmetic
EXACT_DECIMALS = 9
#: a solver stage is skipped when less than this is left of the time limit
MIN_SOLVE_SECONDS = 2.0
#: the agreement required between a stage's own value of a policy and Storm's (relative)
AGREEMENT = 1e-6
#: the stage named by a result without a strategy when the time ran out
OUT_OF_TIME = "time limit"


def _encoded(a: BoundAnalysis) -> Encoding:
    """The encoding of a bound, which :func:`~stormcf.counterfactual.preanalysis.preanalyse` makes for every bound of
    an instance it leaves to the solvers."""
    assert a.encoding is not None
    return a.encoding


class _Bound:
    """One bound of a run, as the stages of one bound see it (:class:`~stormcf.counterfactual.context.BoundContext`)."""

    def __init__(self, run: "_Search", j: int) -> None:
        self.run, self.j = run, j
        self.analysis: BoundAnalysis = run.pre.bounds[j]
        self.enc = _encoded(self.analysis)
        self.gamma = run.gammas[run.active.index(j)]
        self.certificate, self.sizes = run.certificate, run.sizes
        self.label = f" [{self.analysis.bound.text}]" if len(run.active) > 1 else ""

    def full(self, policy: np.ndarray) -> np.ndarray:
        probs = np.array(self.run.sigma)
        probs[self.enc.rows] = policy
        return probs

    def accept(self, policy: np.ndarray, source: str) -> Candidate | None:
        return self.run.checked(self.full(policy), source, first=self.j)

    def start(self, norm: str | None = None) -> np.ndarray | None:
        best = self.certificate.best_by(norm) if norm else self.certificate.best
        if best is not None:
            return best.probs[self.enc.rows]
        witness = self.analysis.witness
        return None if witness is None else witness.probabilities[self.enc.rows]

    def note(self, text: str) -> None:
        self.run.note(text)


class _Search:
    """One solve: the problem, the pre-analysis, the deadline, and what has been found and proven so far (the
    :class:`~stormcf.counterfactual.context.RunContext` of the stages of the whole problem)."""

    def __init__(self, problem: CounterfactualProblem, pre: Preanalysis, solver: str, deadline: Deadline,
                 exact: bool) -> None:
        self.problem, self.pre, self.solver, self.deadline, self.exact = problem, pre, solver, deadline, exact
        # bounds whose value at s0 is the same for every strategy (s0 is not a maybe state) hold for every candidate
        # (σ violates another one); Storm checks them anyway, the stages work on the others
        self.active = [j for j, a in enumerate(pre.bounds) if _encoded(a).s0 >= 0]
        self.encodings: Sequence[Encoding] = [_encoded(pre.bounds[j]) for j in self.active]
        self.gammas: Sequence[float] = [tightened(a.gamma, STRICT_MARGIN) if a.bound.strict else a.gamma
                                        for a in (pre.bounds[j] for j in self.active)]
        self.region = region_of(problem, self.encodings)
        self.sigma = problem.strategy.probabilities
        self.certificate = Certificate(problem.weights, self.region.n_decision)
        self.notes: list[str] = list(pre.notes)
        self.sizes: dict = {}
        self.bounds = [_Bound(self, j) for j in self.active]
        self.rejected: Counter = Counter()
        self.partial = 0                      # strategies that meet one bound but not all
        self.infeasible: str | None = None    # why no strategy meets all bounds, when a solver proves it
        self.disagreements: list[str] = []
        self.undecided: list[str] = []      # why the bounds of strategies were left undecided (not accepted)
        self._box_values: list | None = None

    @property
    def single(self) -> bool:
        return len(self.bounds) == 1

    # ------------------------------------------------------------------------------------------- candidates
    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def checked(self, probs: np.ndarray, source: str, first: int) -> Candidate | None:
        """Check a strategy (probabilities of every choice) with Storm, bound ``first`` first: None when Storm
        rejects that bound, else the candidate (a candidate of the run when it meets every bound). No new checks
        once the deadline has passed (the best checked candidate is the answer then)."""
        if self.deadline.expired:
            return None
        strategy = Strategy(self.problem.model, probs)
        k_all = len(self.pre.bounds)
        checks: list[Check | None] = [None] * k_all
        for j in [first] + [k for k in range(k_all) if k != first]:
            try:
                check = checks[j] = self._check(strategy, probs, j, source)
            except (TimeLimitReached, Interrupted):    # the deadline stopped Storm's check: no candidate
                self.note(f"{source}: {stopped_by(self.deadline)} ended Storm's check of a strategy before it finished")
                return None
            if not check.holds:
                break
        first_check = checks[first]
        assert first_check is not None                          # checked first (above)
        if not first_check.holds:
            self.rejected[source] += 1
            return None
        done = [c for c in checks if c is not None]
        if len(done) < k_all or not all(c.holds for c in done):
            self.partial += 1
            return Candidate(probs, source, strategy, done, None, strategy_distance(self.problem.strategy, strategy),
                             np.inf)
        return self.adopt(probs, source, done, strategy)

    def accept_strategy(self, probs: np.ndarray, source: str) -> Candidate | None:
        c = self.checked(probs, source, first=self.active[0])
        return c if c is not None and c.valid and len(c.check) == len(self.pre.bounds) else None

    def _check(self, strategy: Strategy, probs: np.ndarray, j: int, source: str) -> Check:
        a = self.pre.bounds[j]
        enc = _encoded(a)
        expected = a.value_of(float(evaluate(enc, probs[enc.rows])[enc.s0])) if enc.s0 >= 0 else a.initial.value
        tolerance = AGREEMENT * abs(expected) + 1e-10 if np.isfinite(expected) else 0.0
        check = check_strategy(strategy, a.bound.property, expected=expected, tolerance=tolerance)
        if check.agrees is False:
            self.disagreements.append(f"{source}: Storm's value {check.value!r}, the stage's {expected!r}")
        if check.holds is None and self.exact:      # undecided in floating point: --exact decides exactly
            check = check_strategy(strategy, a.bound.property, exact=True, expected=expected, tolerance=tolerance)
        if check.holds is None:
            self.undecided.append(check.undecided)
        return check

    def adopt(self, probs: np.ndarray, source: str, checks: list[Check], strategy: Strategy | None = None
              ) -> Candidate | None:
        strategy = strategy or Strategy(self.problem.model, probs)
        distance = strategy_distance(self.problem.strategy, strategy)
        c = Candidate(probs, source, strategy, checks, None, distance, self.problem.weights.combine(distance.values))
        if not c.valid:
            self.rejected[source] += 1
            return c
        self.certificate.add(c)
        return c

    def box_values(self) -> list[np.ndarray | None] | None:
        """σ's values as the upper end of each value box of the MIQCQP, when valid: one bound, σ proper on the maybe
        states (:mod:`~stormcf.counterfactual.programs`)."""
        if not self.single:
            return None
        if self._box_values is None:
            enc = self.encodings[0]
            proper = leaves_surely(enc, enc.sigma).all()
            self._box_values = [evaluate(enc, enc.sigma) if proper else None]
        return self._box_values

    # ------------------------------------------------------------------------------------------- plans
    def solve(self) -> CounterfactualResult:
        kind = self.problem.weights.kind
        for a in self.pre.bounds:
            if a.bound.strict:
                self.note(f"the strict bound {a.bound.text} is solved with the bound tightened by the relative "
                          f"margin {STRICT_MARGIN:g}")
        self._witnesses()
        if self.single and kind == "dinf" and self.solver in ("auto", "highs"):
            reason = "only d∞ counts: exact bisection with robust policy iteration, no optimisation solver needed"
            with self.deadline.phase("d∞ bisection") as budget:
                dinf_stage(self.bounds[0], budget)
        elif self.single and kind == "d0":
            on = "SCIP and HiGHS side by side" if self.solver == "auto" else self.solver
            reason = f"only d0 counts: the d0 MILP on {on}, heuristics and Storm-checked local search"
            with self.deadline.phase("d0") as budget:
                d0_stage(self.bounds[0], budget, self.solver)
        elif self.single and kind == "dinf":
            reason = self.miqcqp(self.deadline, f"the MIQCQP on {self.solver} as asked (weights 0,0,r∞)")
        else:
            reason = self.mixed()
        return self.finish(reason)

    def _witnesses(self) -> None:
        """Storm's optimal scheduler of every bound (checked against every bound) as the first candidates, without
        its arbitrary choices in states whose values are constant (outside every bound's maybe states)."""
        rows = np.concatenate([enc.rows for enc in self.encodings])
        for bound in self.bounds:
            j, a = bound.j, bound.analysis
            source = f"Storm's {a.optimum_text().split(' ')[0]} scheduler" + bound.label
            if a.witness_check is not None and a.witness_check.agrees is False:
                self.disagreements.append(f"{source}: {a.witness_check.value!r} on its DTMC, optimum "
                                          f"{a.witness_check.expected!r}")
            if a.witness is None:
                continue
            probs = np.array(self.sigma)
            probs[rows] = a.witness.probabilities[rows]
            self.checked(probs, source, first=j)

    def mixed(self) -> str:
        several = "" if self.single else f" of each of the {len(self.bounds)} bounds"
        if self.solver == "highs":
            raise SolverError("HiGHS solves only the linear special cases of one bound (weights r0,0,0 and 0,0,r∞); "
                              "the mixed objective and several bounds need a non-convex MIQCQP solver: Gurobi or SCIP")
        w = self.problem.weights
        if self.solver == "gurobi":       # a licence too small for the MIQCQP is the user's error: say so at once
            probe = miqcqp_program(self.region, self.encodings, self.gammas, w).formulation
            backend("gurobi").solve(probe, 0.01)
        for k, bound in enumerate(self.bounds):
            with self.deadline.phase("d∞ bisection", fraction=DINF_SHARE / (len(self.bounds) - k)) as budget:
                dinf_stage(bound, budget)
        d0_share = D0_SHARE if w["d0"] > 0 else D0_CANDIDATE_SHARE
        for k, bound in enumerate(self.bounds):
            with self.deadline.phase("d0", fraction=d0_share / (len(self.bounds) - k)) as budget:
                d0_stage(bound, budget)
        best = self.certificate.best
        if self.single and best is not None:
            changed = np.zeros(self.encodings[0].n_maybe, dtype=bool)
            changed[self.encodings[0].index[best.distance.changed_states]] = True
            with self.deadline.phase("d∞ polish", fraction=POLISH_SHARE) as budget:
                dinf_stage(self.bounds[0], budget, scope=changed)
        if self.certificate.best is not None and not self.decided():
            with self.deadline.phase("descent", fraction=DESCENT_SHARE) as budget:
                descent_stage(self, budget, w)
        reason = (f"the exact d∞ and d0 special cases{several}, a d∞ polish of the sparsest candidate"
                  if self.single else f"the exact d∞ and d0 special cases{several} (bounds for all of them)")
        reason += " and a descent by sequential linear programming from their strategies"
        if self.decided():
            return reason + " (their bounds decide it; no MIQCQP needed)"
        return self.miqcqp(self.deadline, reason + ", then the non-convex MIQCQP of Kobialka et al."
                           + ("" if self.single else " over every bound"))

    def decided(self) -> bool:
        cert, eps = self.certificate, self.problem.epsilon
        if cert.best is None:
            return False
        if eps is not None:
            return cert.best.weighted <= eps or cert.lower > eps
        return cert.optimal

    def miqcqp(self, deadline: Deadline, reason: str) -> str:
        """Run the MIQCQP on the chosen solver; ``auto`` prefers Gurobi and falls back to SCIP (saying why)."""
        weights, eps = self.problem.weights, self.problem.epsilon
        if deadline.interrupted:
            self.note(f"the MIQCQP was skipped: {stopped_by(deadline)} came first")
            return reason
        if deadline.remaining() < MIN_SOLVE_SECONDS:
            self.note(f"the MIQCQP was skipped: less than {MIN_SOLVE_SECONDS:g} s of {deadline.limit} were left")
            return reason
        with deadline.phase("MIQCQP") as budget:
            if self.solver != "auto":
                self.epsilon_outcome(miqcqp_stage(self, budget, self.solver, weights, eps))
                return reason + f", on {self.solver}"
            why = "gurobipy is not installed"
            if available("gurobi"):
                try:
                    self.epsilon_outcome(miqcqp_stage(self, budget, "gurobi", weights, eps))
                    return reason + ", on Gurobi (NonConvex=2)"
                except LicenceLimitError as err:
                    why = str(err).split(";")[0]
            if not available("scip"):
                self.note("no MIQCQP solver is installed (pip install gurobipy or pyscipopt): the answer is the "
                          "best strategy of the special cases")
                return reason
            self.epsilon_outcome(miqcqp_stage(self, budget, "scip", weights, eps))
            return reason + f", on SCIP because {why}"

    def diverse(self, term) -> str | None:
        """The next diverse counterfactual (the MIQCQP with the diversity term); the reason when there is none."""
        weights = self.problem.weights
        name = "MIQCQP with diversity"
        with self.deadline.phase("diverse MIQCQP") as budget:
            first = self.solver if self.solver != "auto" else ("gurobi" if available("gurobi") else "scip")
            try:
                out = miqcqp_stage(self, budget, first, weights, diversity=term, name=name)
            except LicenceLimitError:
                out = miqcqp_stage(self, budget, "scip", weights, diversity=term, name=name)
        found = [c for c in self.certificate.candidates if c.source.startswith(name)]
        if found:
            self.certificate.candidates = found
            return None
        if out is not None and out.status == "infeasible":
            return ("the solver proves that no further valid strategy changes a state-action pair the earlier "
                    "counterfactuals left unchanged")
        if self.deadline.expired:
            return f"{stopped_by(self.deadline)} ended the search"
        status = "no solution" if out is None else out.status
        return f"the MIQCQP found no further valid strategy ({status})"

    def epsilon_outcome(self, out) -> None:
        """An ε-problem's MIQCQP that is infeasible proves that every valid strategy has d > ε; without ε, that no
        memoryless strategy meets every bound."""
        eps = self.problem.epsilon
        if out is None or out.status != "infeasible":
            return
        if eps is not None:
            self.certificate.prove("weighted", np.nextafter(eps, np.inf), "the MIQCQP with d <= ε (infeasible)")
        elif self.certificate.best is None:
            self.infeasible = (f"{out.backend} proves the MIQCQP of every bound infeasible: no memoryless strategy "
                               f"meets {self.problem.properties_text} at once")

    # ------------------------------------------------------------------------------------------- results
    def finish(self, reason: str) -> CounterfactualResult:
        cert = self.certificate
        accepted = {c.source for c in cert.candidates}
        for source, count in self.rejected.items():
            if not any(a.startswith(source) for a in accepted):
                self.note(f"{source}: Storm rejected its {count} strategies (values within the solver's tolerance "
                          f"of γ); they are not reported")
        if self.partial:
            self.note(f"{self.partial} strategies that meet one bound but not every bound were not reported")
        if self.disagreements:
            self.note("Storm's value differs from the analysis's own for " + "; ".join(self.disagreements[:3]) +
                      ": optimality is not claimed")
        if self.undecided:
            self.note(f"{len(self.undecided)} strateg{'y' if len(self.undecided) == 1 else 'ies'} not accepted: "
                      f"undecided against a bound (the last: {self.undecided[-1]})")
        self.notes.extend(n for n in cert.notes if n not in self.notes)
        eps = self.problem.epsilon
        if eps is not None:
            fitting = [c for c in cert.candidates if c.weighted <= eps + 1e-12]
            best = self.exact_best(fitting) if self.exact else min(fitting, key=lambda c: c.weighted, default=None)
            if best is not None:
                return self.result("feasible", best, reason)
            if cert.lower > eps and not fitting:
                return self.result("infeasible", None, reason, stage=cert.lower_source())
            return self.result("timeout", None, reason, stage=OUT_OF_TIME)
        best = self.exact_best(cert.candidates) if self.exact else cert.best
        if best is None:
            if self.deadline.interrupted:
                raise stopped()
            if self.infeasible is not None:
                return self.result("infeasible", None, self.infeasible, stage="MIQCQP")
            return self.result("timeout", None, reason, stage=OUT_OF_TIME)
        gap = cert.gap(best)
        optimal = gap is not None and gap <= GAP and not self.disagreements
        if self.deadline.interrupted and not optimal:
            self.note("stopped at the user's request: the best strategy Storm accepted so far")
            return self.result("interrupted", best, reason)
        return self.result("optimal" if optimal else "suboptimal", best, reason)

    def exact_best(self, candidates: list[Candidate]) -> Candidate | None:
        """The best of ``candidates`` that also meets every bound in exact rational arithmetic (checked best first),
        its changed probabilities cut to :data:`EXACT_DECIMALS` decimals when Storm accepts that (see
        :meth:`short_decimals`)."""
        for c in sorted(candidates, key=lambda c: (c.weighted, c.distance.dinf)):
            c = self.short_decimals(c) or c
            try:
                with self.deadline.phase("exact check"), until_request():    # rational arithmetic may be slow
                    c.exact = [check_strategy(c.strategy, a.bound.property, exact=True, expected=check.value,
                                              tolerance=1e-8) for a, check in zip(self.pre.bounds, c.check)]
            except (TimeLimitReached, Interrupted):
                self.note(f"the exact check was not completed ({stopped_by(self.deadline)}): the answer is checked "
                          f"in floating point only")
                c.exact = None
                return c
            if c.valid:
                return c
            failed = "; ".join(str(e) for e in c.exact if not e.holds)
            self.note(f"the strategy of {c.source} meets the bounds in floating point but not in exact arithmetic "
                      f"({failed}); the next best is reported")
        return None

    def short_decimals(self, c: Candidate) -> Candidate | None:
        """``c`` with the probabilities of its changed states cut to :data:`EXACT_DECIMALS` decimals (the largest
        of each state absorbs the rest, as the exact reading of a strategy does), if Storm accepts it. Rational
        arithmetic on short decimals is much faster than on the 17 digits of a solver's floats (the fractions of the
        solution grow with every digit of the strategy); d moves by at most 1e-9 per changed state."""
        m = self.problem.model
        p = np.array(c.strategy.probabilities)
        rows = np.flatnonzero(np.isin(m.state_of_choice, c.distance.changed_states))
        scale = 10.0 ** EXACT_DECIMALS
        cut = np.floor(p[rows] * scale) / scale
        if np.array_equal(cut, p[rows]):
            return None
        p[rows] = cut
        order = np.lexsort((-p, m.state_of_choice))
        top = order[m.row_groups[:-1]]
        changed = np.isin(np.arange(m.n_states), c.distance.changed_states)
        sums = np.bincount(m.state_of_choice, weights=p, minlength=m.n_states)
        p[top[changed]] += 1.0 - sums[changed]
        short = self.accept_strategy(p, c.source)
        return short if short is not None and short.weighted <= c.weighted + 1e-6 else None

    def result(self, status: str, c: Candidate | None, reason: str, stage: str | None = None
               ) -> CounterfactualResult:
        """The result with candidate ``c`` (found by its source), or without one, decided by ``stage``."""
        cert = self.certificate
        lower = cert.lower if c is None else min(cert.lower, c.weighted)
        return CounterfactualResult(
            self.problem, status, self.pre.initial_checks, [a.optimum for a in self.pre.bounds], reason,
            candidate=c, solver=stage, gap=None if c is None else cert.gap(c), distance_lower_bound=lower,
            lower_bounds=cert.lower_sources(), stages=cert.stages(), sizes=self.all_sizes(), notes=self.notes,
            timings=dict(self.deadline.timings), time_s=self.deadline.elapsed())

    def all_sizes(self) -> dict:
        return {**self.sizes, "pruning": pruning_sizes(self.pre), "paper": paper_sizes(self.problem)}


def pruning_sizes(pre: Preanalysis) -> dict:
    """What Storm's pre-analysis kept: the states of the model, the maybe states of any bound and the changeable
    ones among them, and per bound its constant sets (``p_one``/``p_zero``: those of the first bound)."""
    m = pre.problem.model
    per_bound = []
    for a in pre.bounds:
        sets, enc = a.sets, a.encoding
        assert sets is not None                 # analyse_bound made them
        per_bound.append({"bound": a.bound.text, "one": int(sets.one.sum()), "zero": int(sets.zero.sum()),
                          "infinite": int(sets.infinite.sum()), "maybe": 0 if enc is None else enc.n_maybe,
                          "maybe_changeable": 0 if enc is None else int(enc.changeable.sum())})
    encodings = [a.encoding for a in pre.bounds if a.encoding is not None]
    maybe = np.unique(np.concatenate([e.maybe for e in encodings])) if encodings else np.zeros(0, dtype=np.int64)
    return {"states": m.n_states, "decision_states": int(m.decision_states.sum()),
            "changeable": int(pre.actionable.changeable.sum()), "p_one": per_bound[0]["one"],
            "p_zero": per_bound[0]["zero"], "maybe": int(maybe.size),
            "maybe_changeable": int(pre.actionable.changeable[maybe].sum()), "bounds": per_bound}


def paper_sizes(problem: CounterfactualProblem) -> dict:
    """Variables and constraints of the paper's encoding (1)-(13) on the whole model, without pruning:
    p_s, Δ_s, i_s per state, p_sa per choice, D0, D1, D∞; Σ_a p_sa = 1, Δ_s with two linearising rows per
    choice, Δ_s <= i_s, Δ_s <= D∞ per state, p_t = 1, p_s = 0 outside Reach(t), a Bellman equation per other
    state, p_s0 <= γ, and the definitions of D0 and D1."""
    m = problem.model
    n, c = m.n_states, m.n_choices
    reach = can_reach(m, problem.target)
    bellman = int((reach & ~problem.target).sum())
    constraints = n + 2 * c + n + n + n + int(problem.target.sum()) + (n - int(reach.sum())) + bellman + 3
    return {"variables": n + c + n + n + 3, "binaries": n, "constraints": constraints,
            "quadratic_constraints": bellman}


def _decided(problem: CounterfactualProblem, pre: Preanalysis, deadline: Deadline,
             exact: bool) -> CounterfactualResult:
    """The result when Storm decided the instance (trivial / infeasible)."""
    sizes = {"pruning": pruning_sizes(pre), "paper": paper_sizes(problem)}
    optima = [a.optimum for a in pre.bounds]
    if pre.status == "trivial":
        sigma = problem.strategy
        checks = [check_strategy(sigma, a.bound.property, exact=True) for a in pre.bounds] if exact else None
        candidate = Candidate(sigma.probabilities, "storm", sigma, pre.initial_checks, checks,
                              strategy_distance(sigma, sigma), 0.0)
        return CounterfactualResult(problem, "trivial", pre.initial_checks, optima,
                                    f"{pre.reason} (Storm on the induced DTMC)", candidate=candidate,
                                    gap=0.0, distance_lower_bound=0.0, sizes=sizes,
                                    timings=dict(deadline.timings), time_s=deadline.elapsed())
    result = CounterfactualResult(problem, "infeasible", pre.initial_checks, optima, pre.reason, sizes=sizes,
                                  timings=dict(deadline.timings), time_s=deadline.elapsed(), solver="storm")
    first = pre.bounds[0].exact_optimum
    result.exact_optimum = first if isinstance(first, Fraction) else None
    return result


def _timeout(problem: CounterfactualProblem, deadline: Deadline, err: TimeLimitReached) -> CounterfactualResult:
    return CounterfactualResult(problem, "timeout", None, None, str(err), timings=dict(deadline.timings),
                                time_s=deadline.elapsed(), solver="storm")


def _check_arguments(solver: str) -> None:
    if solver not in SOLVERS:
        raise SolverError(f"unknown solver '{solver}' (solvers: {', '.join(SOLVERS)})")


def solve_counterfactual(problem: CounterfactualProblem, solver: str = "auto", exact: bool = False, *,
                         run: Run | None = None, time_limit: float | None = TIME_LIMIT) -> CounterfactualResult:
    """A counterfactual strategy for ``problem`` (see the module docstring).

    Args:
        solver: ``auto`` (exact special cases where they apply, else Gurobi, else SCIP), ``gurobi``, ``scip``,
            ``highs`` (linear special cases only). With weights 0,0,r∞ an explicit ``gurobi``/``scip`` solves the
            MIQCQP instead of the bisection (for cross-checks).
        exact: also check the answer in exact rational arithmetic (Storm over ``stormpy.Rational``).
        run, time_limit: the run the solve works in (its budget, stop request, progress), bounded by ``time_limit``
            seconds more (:meth:`~stormcf.run.Run.of`; default :data:`TIME_LIMIT`, ``None`` for none): the whole
            solve, pre-analysis, every solve and every Storm check. When it runs out (or the run is stopped) the
            best checked strategy is returned (``suboptimal``, ``interrupted``) or ``timeout``.
    """
    return diverse_counterfactuals(problem, 1, solver=solver, exact=exact, run=run, time_limit=time_limit)


def _preanalysis_or_answer(problem: CounterfactualProblem, deadline: Run,
                           exact: bool) -> Preanalysis | CounterfactualResult:
    """Storm's pre-analysis, or the result when it already decides the problem (trivial, infeasible, timeout)."""
    try:
        with deadline.phase("pre-analysis"):
            pre = preanalyse(problem, deadline)
    except TimeLimitReached as err:
        return _timeout(problem, deadline, err)
    return pre if pre.status is None else _decided(problem, pre, deadline, exact)


def diverse_counterfactuals(problem: CounterfactualProblem, n: int, diversity_weight: float = 2.0,
                            solver: str = "auto", exact: bool = False, perturbation: float = 1e-4, *,
                            run: Run | None = None, time_limit: float | None = TIME_LIMIT) -> CounterfactualResult:
    """``n`` diverse counterfactual strategies (seed 000, Section 4): the k-th minimises d - λ·det(K) over the
    counterfactuals found so far plus itself, K_ij = 1/(1 + ||Δ(σ_i, σ_j)||_1) (+ ``perturbation`` on the
    diagonal), and must change some state-action pair that no earlier one changed (its probability drops by at
    least :data:`~stormcf.counterfactual.diverse.NOVEL_CHANGE`), so every one is distinct and novel. The first is
    the plain counterfactual; the others are in ``result.diverse`` (status ``feasible``: valid, minimising the
    diversity objective), each with its ``novelty``. When fewer than ``n`` exist or fit in the time, the first
    result's notes say why. ``run`` and ``time_limit`` (as for :func:`solve_counterfactual`) bound all ``n``
    solves together."""
    _check_arguments(solver)
    if n < 1:
        raise SolverError(f"the number of diverse counterfactuals must be at least 1, got {n}")
    if not diversity_weight >= 0:
        raise SolverError(f"the diversity weight must be non-negative, got {diversity_weight}")
    if n > 1 and solver == "highs":
        raise SolverError("diverse counterfactuals need the MIQCQP: the solver gurobi, scip or auto")
    run = Run.of(run, time_limit)
    with run.active():
        return _diverse(problem, n, diversity_weight, solver, exact, perturbation, run)


def _diverse(problem: CounterfactualProblem, n: int, diversity_weight: float, solver: str, exact: bool,
             perturbation: float, deadline: Run) -> CounterfactualResult:
    from .diverse import DiversityTerm

    pre = _preanalysis_or_answer(problem, deadline, exact)
    if isinstance(pre, CounterfactualResult):
        return pre
    first = _Search(problem, pre, solver, deadline.sub(fraction=1.0 / n), exact).solve()
    if n == 1 or first.strategy is None:
        return first
    first.novelty = 1.0
    found = [first]
    while len(found) < n:
        budget = deadline.sub(fraction=1.0 / (n - len(found)))
        run = _Search(problem, pre, solver, budget, exact)
        previous = [f.strategy.probabilities for f in found if f.strategy is not None]   # all: each found one
        term = DiversityTerm(previous, run.region, diversity_weight, perturbation)
        why = run.diverse(term)
        if why is not None:
            first.notes.append(f"only {len(found)} of {n} diverse counterfactuals: {why}")
            break
        result = run.finish(f"the MIQCQP of d - λ·det(K) with λ = {diversity_weight:g}, changing a state-action "
                            f"pair no earlier counterfactual changed")
        result.status = "feasible" if result.strategy is not None else result.status
        result.gap = result.distance_lower_bound = None
        result.novelty = novelty(result, found)
        found.append(result)
    first.diverse = found[1:]
    return first
