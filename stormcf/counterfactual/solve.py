"""Solving a counterfactual problem end to end: Storm first, the exact special cases, the MIQCQP, Storm's checks.

:func:`solve_counterfactual` is the entry point; one :class:`~stormcf.deadline.Deadline` bounds all of it. The plan:

1. :func:`~stormcf.counterfactual.analysis.preanalyse` (Storm): ``trivial`` / ``infeasible`` without a solver,
   otherwise the pruned encoding and a valid strategy (Storm's Pmin scheduler), the first candidate.
2. d∞ alone: the exact bisection (:func:`stages.dinf_stage`); d0 alone: heuristics and the d0 MILP
   (:func:`stages.d0_stage`); any other weights: both (they give valid bounds on every strategy's d0 and d∞ and
   sparse or small candidates), the d∞ polish of the best sparse candidate, then the MIQCQP (Gurobi, or SCIP when
   the instance exceeds the Gurobi licence) warm-started with the best candidate.
3. Every policy a stage finds is checked by Storm on its induced DTMC (:func:`stormcf.verify.check_strategy`, with
   the stage's own value of the probability as ``expected``); only accepted ones are candidates. The answer is the
   best candidate: a mixed result is never worse than the special cases it started from.
4. The status comes from :class:`~stormcf.counterfactual.certify.Certificate` alone: ``optimal`` when the best
   candidate is within the relative gap 1e-4 of the best proven lower bound, ``suboptimal`` with the gap
   otherwise, ``timeout`` when the time ran out before any valid strategy; a solver's own "optimal" is never passed
   on, and a bound that contradicts a strategy Storm accepted is dropped with a note. ``P<γ`` is solved as
   ``P<=γ·(1 - 1e-9)``.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..deadline import Deadline
from ..distance import strategy_distance
from ..errors import SolverError, TimeLimitReached
from ..interrupt import Interrupted
from ..reachability import can_reach
from ..strategy import Strategy
from ..verify import Check, check_strategy
from .analysis import Preanalysis, preanalyse
from ..solvers import LicenceLimitError, available, backend
from .bellman import evaluate
from .certify import GAP, Candidate, Certificate
from .programs import miqcqp_program
from .problem import CounterfactualProblem
from .result import CounterfactualResult, novelty
from .stages import d0_stage, dinf_stage, miqcqp_stage

SOLVERS = ("auto", "gurobi", "scip", "highs")
#: relative margin of a strict bound P<γ
STRICT_MARGIN = 1e-9
#: shares of the remaining time for the stages of a mixed objective (the MIQCQP gets the rest)
DINF_SHARE, D0_SHARE, POLISH_SHARE = 0.15, 0.75, 0.5
#: decimals of the changed probabilities of a strategy that is checked in exact arithmetic
EXACT_DECIMALS = 9
#: a solver stage is skipped when less than this is left of the time limit
MIN_SOLVE_SECONDS = 2.0
#: the agreement required between a stage's own value of a policy and Storm's (relative)
AGREEMENT = 1e-6


class _Run:
    """One solve: the problem, the pre-analysis, the deadline, and what has been found and proven so far."""

    def __init__(self, problem: CounterfactualProblem, pre: Preanalysis, solver: str, deadline: Deadline,
                 exact: bool) -> None:
        self.problem, self.pre, self.solver, self.deadline, self.exact = problem, pre, solver, deadline, exact
        self.enc = pre.encoding
        self.gamma = pre.gamma * (1 - STRICT_MARGIN) if problem.strict else pre.gamma
        self.certificate = Certificate(problem.weights, self.enc.n_decision)
        self.notes: list[str] = []
        self.sizes: dict = {}
        self.rejected: Counter = Counter()
        self.disagreements: list[str] = []

    # ------------------------------------------------------------------------------------------- candidates
    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def strategy_of(self, probs: np.ndarray) -> Strategy:
        p = np.array(self.problem.strategy.probabilities)
        p[self.enc.rows] = probs
        return Strategy(self.problem.model, p)

    def accept(self, probs: np.ndarray, source: str) -> Candidate | None:
        """Check a policy with Storm; a valid one becomes a candidate. No new checks once the deadline has passed
        (the best checked candidate is the answer then)."""
        if self.deadline.expired:
            return None
        own = float(evaluate(self.enc, probs)[self.enc.s0])
        expected = 1.0 - own if self.pre.complemented else own
        strategy = self.strategy_of(probs)
        try:
            check = check_strategy(strategy, self.problem.property, expected=expected,
                                   tolerance=AGREEMENT * abs(expected) + 1e-10)
        except (TimeLimitReached, Interrupted):      # the deadline (or Ctrl-C) stopped Storm's check: no candidate
            self.note(f"{source}: the time limit ended Storm's check of a strategy before it finished")
            return None
        if check.agrees is False:
            self.disagreements.append(f"{source}: Storm's value {check.value!r}, the stage's {expected!r}")
        return self.adopt(probs, source, check)

    def adopt(self, probs: np.ndarray, source: str, check: Check) -> Candidate | None:
        strategy = self.strategy_of(probs)
        distance = strategy_distance(self.problem.strategy, strategy)
        weighted = distance.weighted(*self.problem.weights.as_tuple())
        c = Candidate(probs, source, strategy, check, None, distance, weighted)
        if not c.valid:
            self.rejected[source] += 1
            return None
        self.certificate.add(c)
        return c

    # ------------------------------------------------------------------------------------------- plans
    def solve(self) -> CounterfactualResult:
        kind = self.problem.weights.kind
        if self.problem.strict:
            self.note(f"the strict bound {self.problem.property.comparison} is solved as "
                      f"P<=γ·(1 - {STRICT_MARGIN:g})")
        if self.pre.witness is not None:
            self.adopt(self.pre.witness.probabilities[self.enc.rows], "Storm's Pmin scheduler", self.pre.witness_check)
        if self.pre.witness_check.agrees is False:
            self.disagreements.append(f"Storm's Pmin scheduler: {self.pre.witness_check.value!r} on its DTMC, "
                                      f"Pmin = {self.pre.witness_check.expected!r}")
        if kind == "dinf" and self.solver in ("auto", "highs"):
            reason = "only d∞ counts: exact bisection with robust policy iteration, no optimisation solver needed"
            with self.deadline.phase("d∞ bisection") as budget:
                dinf_stage(self, budget)
        elif kind == "d0":
            on = "SCIP and HiGHS side by side" if self.solver == "auto" else self.solver
            reason = f"only d0 counts: the d0 MILP on {on}, heuristics and Storm-checked local search"
            with self.deadline.phase("d0") as budget:
                d0_stage(self, budget, self.solver)
        elif kind == "dinf":
            reason = self.miqcqp(self.deadline, f"the MIQCQP on {self.solver} as asked (weights 0,0,r∞)")
        else:
            reason = self.mixed()
        return self.finish(reason)

    def mixed(self) -> str:
        if self.solver == "highs":
            raise SolverError("HiGHS solves only the linear special cases (weights r0,0,0 and 0,0,r∞); the "
                              "mixed objective needs a non-convex MIQCQP solver: Gurobi or SCIP")
        w = self.problem.weights
        if self.solver == "gurobi":       # a licence too small for the MIQCQP is the user's error: say so at once
            probe = miqcqp_program(self.enc, self.gamma, w.as_tuple()).formulation
            backend("gurobi").solve(probe, 0.01)
        with self.deadline.phase("d∞ bisection", fraction=DINF_SHARE) as budget:
            dinf_stage(self, budget)
        if w.r0 > 0:
            with self.deadline.phase("d0", fraction=D0_SHARE) as budget:
                d0_stage(self, budget)
        best = self.certificate.best
        changed = np.zeros(self.enc.n_maybe, dtype=bool)
        changed[self.enc.index[best.distance.changed_states]] = True
        with self.deadline.phase("d∞ polish", fraction=POLISH_SHARE) as budget:
            dinf_stage(self, budget, scope=changed)
        reason = "mixed objective: the exact d∞ and d0 special cases and a d∞ polish of the sparsest candidate"
        if self.decided():
            return reason + " (their bounds decide it; no MIQCQP needed)"
        return self.miqcqp(self.deadline, reason + ", then the non-convex MIQCQP of Kobialka et al.")

    def decided(self) -> bool:
        cert, eps = self.certificate, self.problem.epsilon
        if eps is not None:
            return cert.best.weighted <= eps or cert.lower > eps
        return cert.optimal

    def miqcqp(self, deadline: Deadline, reason: str) -> str:
        """Run the MIQCQP on the chosen solver; ``auto`` prefers Gurobi and falls back to SCIP (saying why)."""
        weights, eps = self.problem.weights.as_tuple(), self.problem.epsilon
        if deadline.remaining() < MIN_SOLVE_SECONDS:
            self.note(f"the MIQCQP was skipped: less than {MIN_SOLVE_SECONDS:g} s of the time limit were left")
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
        weights = self.problem.weights.as_tuple()
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
            return "the time limit ran out"
        status = "no solution" if out is None else out.status
        return f"the MIQCQP found no further valid strategy ({status})"

    def epsilon_outcome(self, out) -> None:
        """An ε-problem's MIQCQP that is infeasible proves that every valid strategy has d > ε."""
        eps = self.problem.epsilon
        if eps is not None and out is not None and out.status == "infeasible":
            self.certificate.prove("weighted", np.nextafter(eps, np.inf), "the MIQCQP with d <= ε (infeasible)")

    # ------------------------------------------------------------------------------------------- results
    def finish(self, reason: str) -> CounterfactualResult:
        cert = self.certificate
        accepted = {c.source for c in cert.candidates}
        for source, count in self.rejected.items():
            if not any(a.startswith(source) for a in accepted):
                self.note(f"{source}: Storm rejected its {count} strategies (values within the solver's tolerance "
                          f"of γ); they are not reported")
        if self.disagreements:
            self.note("Storm's value differs from the analysis's own for " + "; ".join(self.disagreements[:3]) +
                      ": optimality is not claimed")
        self.notes.extend(n for n in cert.notes if n not in self.notes)
        eps = self.problem.epsilon
        if eps is not None:
            fitting = [c for c in cert.candidates if c.weighted <= eps + 1e-12]
            if fitting:
                return self.result("feasible", min(fitting, key=lambda c: c.weighted), reason)
            return self.result("infeasible" if cert.lower > eps else "timeout", None, reason)
        best = self.exact_best() if self.exact else cert.best
        if best is None:
            if self.deadline.interrupted:
                raise Interrupted
            return self.result("timeout", None, reason)
        gap = cert.gap(best)
        optimal = gap is not None and gap <= GAP and not self.disagreements
        if self.deadline.interrupted and not optimal:
            self.note("stopped at the user's request: the best strategy Storm accepted so far")
            return self.result("interrupted", best, reason)
        return self.result("optimal" if optimal else "suboptimal", best, reason)

    def exact_best(self) -> Candidate | None:
        """The best candidate that also holds in exact rational arithmetic (checked best first), its changed
        probabilities cut to :data:`EXACT_DECIMALS` decimals when Storm accepts that (see :meth:`short_decimals`)."""
        for c in sorted(self.certificate.candidates, key=lambda c: (c.weighted, c.distance.dinf)):
            c = self.short_decimals(c) or c
            try:
                with self.deadline.phase("exact check"):
                    c.exact = check_strategy(c.strategy, self.problem.property, exact=True,
                                             expected=c.check.value, tolerance=1e-8)
            except (TimeLimitReached, Interrupted):
                self.note("the time limit ended the exact check before it finished: the answer is checked in "
                          "floating point only")
                return c
            if c.exact.holds:
                return c
            self.note(f"the strategy of {c.source} holds in floating point but not in exact arithmetic "
                      f"({c.exact}); the next best is reported")
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
        short = self.accept(p[self.enc.rows], c.source)
        return short if short is not None and short.weighted <= c.weighted + 1e-6 else None

    def result(self, status: str, c: Candidate | None, reason: str) -> CounterfactualResult:
        cert = self.certificate
        lower = cert.lower if c is None else min(cert.lower, c.weighted)
        return CounterfactualResult(
            self.problem, status, self.pre.initial, self.pre.optimal_probability, reason,
            candidate=c, gap=None if c is None else cert.gap(c), distance_lower_bound=lower,
            lower_bounds=cert.lower_sources(), stages=cert.stages(), sizes=self.all_sizes(), notes=self.notes,
            timings=dict(self.deadline.timings), time_s=self.deadline.elapsed())

    def all_sizes(self) -> dict:
        return {**self.sizes, "pruning": pruning_sizes(self.pre), "paper": paper_sizes(self.problem)}


def pruning_sizes(pre: Preanalysis) -> dict:
    m = pre.problem.model
    enc = pre.encoding
    return {"states": m.n_states, "decision_states": int(m.decision_states.sum()),
            "changeable": int(pre.actionable.changeable.sum()), "p_one": int(pre.one.sum()),
            "p_zero": int(pre.zero.sum()), "maybe": 0 if enc is None else enc.n_maybe,
            "maybe_changeable": 0 if enc is None else int(enc.changeable.sum())}


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
    if pre.status == "trivial":
        sigma = problem.strategy
        check = check_strategy(sigma, problem.property, exact=True) if exact else None
        candidate = Candidate(sigma.probabilities, "storm", sigma, pre.initial, check,
                              strategy_distance(sigma, sigma), 0.0)
        return CounterfactualResult(problem, "trivial", pre.initial, pre.optimal_probability,
                                    "σ already meets the bound (Storm on the induced DTMC)", candidate=candidate,
                                    gap=0.0, distance_lower_bound=0.0, sizes=sizes,
                                    timings=dict(deadline.timings), time_s=deadline.elapsed())
    word = f"P{problem.optimization.value}"
    reason = (f"{word} = {pre.optimal_probability:.6g} over all actionable strategies (Storm on the MDP with the "
              f"uncontrollable states fixed to σ) does not meet the bound")
    return CounterfactualResult(problem, "infeasible", pre.initial, pre.optimal_probability, reason,
                                sizes=sizes, timings=dict(deadline.timings), time_s=deadline.elapsed(),
                                solver="storm")


def _timeout(problem: CounterfactualProblem, deadline: Deadline, err: TimeLimitReached) -> CounterfactualResult:
    return CounterfactualResult(problem, "timeout", None, None, str(err), timings=dict(deadline.timings),
                                time_s=deadline.elapsed(), solver="storm")


def _check_arguments(solver: str) -> None:
    if solver not in SOLVERS:
        raise SolverError(f"unknown solver '{solver}' (solvers: {', '.join(SOLVERS)})")


def solve_counterfactual(problem: CounterfactualProblem, solver: str = "auto", time_limit: float | None = 600.0,
                         exact: bool = False, deadline: Deadline | None = None) -> CounterfactualResult:
    """A counterfactual strategy for ``problem`` (see the module docstring).

    Args:
        solver: ``auto`` (exact special cases where they apply, else Gurobi, else SCIP), ``gurobi``, ``scip``,
            ``highs`` (linear special cases only). With weights 0,0,r∞ an explicit ``gurobi``/``scip`` solves the
            MIQCQP instead of the bisection (for cross-checks).
        time_limit: seconds for the whole solve (pre-analysis, every solve and every Storm check), within the
            active deadline (:meth:`~stormcf.deadline.Deadline.current`); when it runs out the best checked strategy
            is returned (``suboptimal``) or ``timeout``. Ignored when ``deadline`` is given (a command's one
            deadline, started when the command started).
        exact: also check the answer in exact rational arithmetic (Storm over ``stormpy.Rational``).
    """
    _check_arguments(solver)
    deadline = deadline or Deadline.current().sub(seconds=time_limit)
    pre = _preanalysis_or_answer(problem, deadline, exact)
    if isinstance(pre, CounterfactualResult):
        return pre
    return _Run(problem, pre, solver, deadline, exact).solve()


def _preanalysis_or_answer(problem: CounterfactualProblem, deadline: Deadline,
                           exact: bool) -> Preanalysis | CounterfactualResult:
    """Storm's pre-analysis, or the result when it already decides the problem (trivial, infeasible, timeout)."""
    try:
        with deadline.phase("pre-analysis"):
            pre = preanalyse(problem, deadline)
    except TimeLimitReached as err:
        return _timeout(problem, deadline, err)
    return pre if pre.status is None else _decided(problem, pre, deadline, exact)


def diverse_counterfactuals(problem: CounterfactualProblem, n: int, diversity_weight: float = 2.0,
                            solver: str = "auto", time_limit: float | None = 600.0, exact: bool = False,
                            perturbation: float = 1e-4, deadline: Deadline | None = None) -> CounterfactualResult:
    """``n`` diverse counterfactual strategies (seed 000, Section 4): the k-th minimises d - λ·det(K) over the
    counterfactuals found so far plus itself, K_ij = 1/(1 + ||Δ(σ_i, σ_j)||_1) (+ ``perturbation`` on the
    diagonal), and must change some state-action pair that no earlier one changed (its probability drops by at
    least :data:`~stormcf.counterfactual.diverse.NOVEL_CHANGE`), so every one is distinct and novel. The first is
    the plain counterfactual; the others are in ``result.diverse`` (status ``feasible``: valid, minimising the
    diversity objective), each with its ``novelty``. When fewer than ``n`` exist or fit in the time, the first
    result's notes say why. ``time_limit`` (or ``deadline``) bounds all ``n`` solves together."""
    from .diverse import DiversityTerm

    _check_arguments(solver)
    if n < 1:
        raise SolverError(f"the number of diverse counterfactuals must be at least 1, got {n}")
    if not diversity_weight >= 0:
        raise SolverError(f"the diversity weight must be non-negative, got {diversity_weight}")
    if n > 1 and solver == "highs":
        raise SolverError("diverse counterfactuals need the MIQCQP: the solver gurobi, scip or auto")
    deadline = deadline or Deadline.current().sub(seconds=time_limit)
    pre = _preanalysis_or_answer(problem, deadline, exact)
    if isinstance(pre, CounterfactualResult):
        return pre
    first = _Run(problem, pre, solver, deadline.sub(fraction=1.0 / n), exact).solve()
    if n == 1 or first.strategy is None:
        return first
    first.novelty = 1.0
    found = [first]
    while len(found) < n:
        budget = deadline.sub(fraction=1.0 / (n - len(found)))
        run = _Run(problem, pre, solver, budget, exact)
        previous = [f.strategy.probabilities[pre.encoding.rows] for f in found]
        term = DiversityTerm(previous, diversity_weight, perturbation)
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
