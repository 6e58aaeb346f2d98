"""Solving a counterfactual problem end to end: Storm first, exact special cases, the MIQCQP, Storm verification.

:func:`solve_counterfactual` is the entry point. The steps:

1. :func:`~stormcf.counterfactual.analysis.preanalyse` (Storm): ``trivial`` / ``infeasible`` without a solver,
   otherwise the pruned encoding and a valid (far) strategy, Storm's Pmin scheduler.
2. d∞ alone: :class:`DinfBisection`; d0 alone: :class:`D0Milp` (HiGHS); otherwise both run first and give the
   MIQCQP a warm start and valid bounds (Σ i_s >= d0*, D∞ >= d∞*), then :class:`Miqcqp` (Gurobi, or SCIP when
   the instance exceeds the Gurobi licence or gurobipy is missing).
3. Every strategy a solver returns is verified by Storm (``stormcf.verify``). Solvers work with tolerances, so the
   bound they are given is γ minus a margin (1e-9 for the exact special cases, 1e-7 for MILP/MIQCQP solvers); if
   Storm still finds the bound violated, the problem is re-solved with a 100x larger margin (twice), and each
   re-solve is recorded in the result's notes. A strategy Storm rejects is never reported as valid.
4. The best valid strategy is reported: ``optimal`` when the solver proved it, ``suboptimal`` with the proven
   lower bound and gap otherwise (time limit); ``P<γ`` is solved as ``P<=γ-margin`` (the strict bound has no
   closest strategy in general: the result is within the margin of the infimum).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..distance import StrategyDistance, strategy_distance
from ..errors import SolverError
from ..reachability import can_reach
from ..strategy import Strategy
from ..verify import Check, check_strategy
from .analysis import Encoding, Preanalysis, preanalyse
from .problem import CounterfactualProblem
from .programs import Bounds
from .result import CounterfactualResult, novelty
from .solvers import D0Milp, DinfBisection, Miqcqp, SolverResult

SOLVERS = ("auto", "gurobi", "scip", "highs")
MARGINS_EXACT = (1e-9, 1e-7, 1e-5)
MARGINS_SOLVER = (1e-7, 1e-5, 1e-3)


@dataclass(eq=False)
class Candidate:
    """A policy turned into a strategy and verified by Storm."""

    probs: np.ndarray
    source: str
    strategy: Strategy
    check: Check
    exact: Check | None
    distance: StrategyDistance
    weighted: float

    @property
    def valid(self) -> bool:
        return bool(self.check.holds) and (self.exact is None or bool(self.exact.holds))


@dataclass(eq=False)
class _Run:
    problem: CounterfactualProblem
    pre: Preanalysis
    solver: str
    time_limit: float
    exact: bool
    t0: float = field(default_factory=time.perf_counter)
    notes: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    sizes: dict = field(default_factory=dict)

    @property
    def enc(self) -> Encoding:
        return self.pre.encoding

    def remaining(self) -> float:
        return max(self.time_limit - (time.perf_counter() - self.t0), 0.01)

    def strategy_of(self, probs: np.ndarray) -> Strategy:
        p = np.array(self.problem.strategy.probabilities)
        p[self.enc.rows] = probs
        return Strategy(self.problem.model, p)

    def candidate(self, probs: np.ndarray, source: str) -> Candidate:
        strategy = self.strategy_of(probs)
        check = check_strategy(strategy, self.problem.property)
        exact = check_strategy(strategy, self.problem.property, exact=True) if self.exact and check.holds else None
        distance = strategy_distance(self.problem.strategy, strategy)
        c = Candidate(probs, source, strategy, check, exact, distance,
                      distance.weighted(*self.problem.weights.as_tuple()))
        if c.valid:
            self.candidates.append(c)
        return c

    def attempt(self, solver, margins: tuple[float, ...], budget: float | None = None) \
            -> tuple[Candidate | None, SolverResult]:
        """Run ``solver`` with bound γ - margin, tightening the margin while Storm rejects its answer."""
        end = time.perf_counter() + (budget if budget is not None else self.remaining())
        for k, margin in enumerate(margins):
            out = solver.solve(self.enc, self.pre.gamma - margin, max(min(end, self.t0 + self.time_limit)
                                                                       - time.perf_counter(), 0.01))
            if out.sizes is not None:
                self.sizes.setdefault("encoded", out.sizes)
            if out.probs is None:
                return None, out
            c = self.candidate(out.probs, solver.name)
            if c.valid:
                if k:
                    self.notes.append(f"{solver.name} was given the bound γ - {margin:g} after Storm rejected "
                                      f"its answer for γ - {margins[k - 1]:g}")
                return c, out
            what = c.check if not c.check.holds else c.exact
            self.notes.append(f"{solver.name}: Storm found {what} for the solver's strategy with margin "
                              f"{margin:g}; rejected")
        return None, out

    def best(self) -> Candidate:
        return min(self.candidates, key=lambda c: (c.weighted, c.distance.dinf))

    # ------------------------------------------------------------------------------------------- plans
    def solve(self) -> CounterfactualResult:
        kind = self.problem.weights.kind
        if self.problem.strict:
            self.notes.append(f"the strict bound {self.problem.property.comparison} is solved as a non-strict one "
                              f"with a safety margin on γ (at least 1e-9): the result is within that margin of "
                              f"the infimum")
        self.candidate(self.pre.witness.probabilities[self.enc.rows], "Storm's Pmin scheduler")
        if kind == "dinf" and self.solver in ("auto", "highs"):
            return self.single(DinfBisection(), "only d∞ counts: exact bisection with robust policy iteration, "
                                                "no optimisation solver needed")
        if kind == "d0":
            name = "highs" if self.solver == "auto" else self.solver
            start = self.pre.witness.probabilities[self.enc.rows]
            return self.single(D0Milp(name, start), "only d0 counts: the d0 MILP (Bellman inequalities with "
                                                   "big-M = 1) is exact and linear")
        if self.solver == "highs":
            raise SolverError("HiGHS solves only the linear special cases (--weights r0,0,0 and 0,0,r∞); the "
                              "mixed objective needs a non-convex MIQCQP solver: --solver gurobi or scip")
        return self.mixed()

    def single(self, solver, reason: str) -> CounterfactualResult:
        margins = MARGINS_EXACT if isinstance(solver, DinfBisection) else MARGINS_SOLVER
        found, out = self.attempt(solver, margins)
        scale = self.problem.weights.rinf if isinstance(solver, DinfBisection) else self.problem.weights.r0
        lower = None if out.bound is None else scale * out.bound
        if isinstance(solver, DinfBisection):
            self.sizes["value_iteration"] = {"rows": int(self.enc.rows.size), "transitions": int(self.enc.P.nnz)}
        if self.problem.epsilon is not None:
            return self.epsilon_verdict(lower, solver.name, reason)
        status = out.status if found is not None and out.status == "optimal" else "suboptimal"
        if found is None:
            self.notes.append(f"{solver.name} ended with status {out.status}; reporting the best valid strategy")
        return self.finish(self.best() if found is None else found, status, solver.name, reason, lower)

    def special_cases(self) -> Bounds:
        """Run the exact special cases for warm starts and valid bounds (each up to a quarter of the time)."""
        w = self.problem.weights
        found, out = self.attempt(DinfBisection(), MARGINS_EXACT, budget=self.time_limit / 4)
        dinf_lower = out.bound or 0.0
        d0_lower = 1.0                                   # σ violates the bound, so some state must change
        if w.r0 > 0:
            start = self.pre.witness.probabilities[self.enc.rows]
            _, out = self.attempt(D0Milp("highs", start), MARGINS_SOLVER, budget=self.time_limit / 4)
            d0_lower = max(d0_lower, out.bound or 0.0)
            self.sizes.pop("encoded", None)
        return Bounds(d0=d0_lower, dinf=dinf_lower)

    def lower_bound(self, bounds: Bounds) -> float:
        w = self.problem.weights
        return w.r0 * bounds.d0 + w.rinf * bounds.dinf + w.r1 * bounds.dinf / self.enc.n_decision

    def mixed(self) -> CounterfactualResult:
        w = self.problem.weights
        bounds = self.special_cases()
        lower = self.lower_bound(bounds)
        if self.problem.epsilon is not None:
            best = self.best()
            if best.weighted <= self.problem.epsilon or lower > self.problem.epsilon:
                return self.epsilon_verdict(lower, best.source, "the exact special cases decide the ε-problem")
        start = self.best().probs
        found, out, name, reason = self.run_miqcqp(lambda b: Miqcqp(b, w.as_tuple(), bounds, start,
                                                                    self.problem.epsilon), self.solver)
        if self.problem.epsilon is not None:
            if out.status == "infeasible":
                return self.epsilon_verdict(np.inf, name, reason)
            return self.epsilon_verdict(lower, name, reason)
        if out.bound is not None:
            lower = max(lower, out.bound)
        best = self.best()
        if found is not None and out.status == "optimal":
            if best is not found:
                self.notes.append(f"the strategy of {best.source} is as close as the MIQCQP optimum (the "
                                  f"solvers work with different safety margins on γ)")
            return self.finish(best, "optimal", name, reason, lower)
        if found is None:
            self.notes.append(f"{name} ended with status {out.status}; reporting the best valid strategy found")
        return self.finish(best, "suboptimal", name if found is best else f"{best.source} (after {name})",
                           reason, lower)

    def run_miqcqp(self, make, solver: str):
        """Run the MIQCQP on ``solver``; ``auto`` prefers Gurobi and falls back to SCIP (saying why)."""
        reason = "mixed objective: the non-convex MIQCQP of seed 000 (1)-(13)"
        if solver != "auto":
            found, out = self.attempt(make(solver), MARGINS_SOLVER)
            return found, out, out.name, reason + f", on {solver} as asked"
        try:
            found, out = self.attempt(make("gurobi"), MARGINS_SOLVER)
            return found, out, out.name, reason + ", on Gurobi (NonConvex=2)"
        except SolverError as err:
            why = str(err).split(";")[0]
        self.sizes.pop("encoded", None)
        found, out = self.attempt(make("scip"), MARGINS_SOLVER)
        return found, out, out.name, reason + f", on SCIP because {why}"

    # ------------------------------------------------------------------------------------------- results
    def epsilon_verdict(self, lower: float | None, solver: str, reason: str) -> CounterfactualResult:
        eps = self.problem.epsilon
        fitting = [c for c in self.candidates if c.weighted <= eps + 1e-12]
        if fitting:
            return self.finish(min(fitting, key=lambda c: c.weighted), "feasible", solver, reason, lower)
        status = "infeasible" if lower is not None and lower > eps else "timeout"
        return self.empty(status, solver, reason, lower)

    def finish(self, c: Candidate, status: str, solver: str, reason: str, lower: float | None) \
            -> CounterfactualResult:
        lower = None if lower is None else min(lower, c.weighted)
        gap = None if lower is None else max(0.0, c.weighted - lower) / max(c.weighted, 1e-12)
        if status == "optimal":
            gap = 0.0 if gap is None or gap < 1e-6 else gap
        return CounterfactualResult(self.problem, status, c.strategy, c.check, self.pre.initial, c.distance,
                                    solver, reason, time.perf_counter() - self.t0, self.pre.optimal_probability,
                                    gap=gap, distance_lower_bound=lower, sizes=self.all_sizes(),
                                    notes=self.notes, exact=c.exact)

    def empty(self, status: str, solver: str, reason: str, lower: float | None) -> CounterfactualResult:
        return CounterfactualResult(self.problem, status, None, None, self.pre.initial, None, solver, reason,
                                    time.perf_counter() - self.t0, self.pre.optimal_probability,
                                    distance_lower_bound=lower, sizes=self.all_sizes(), notes=self.notes)

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


def _decided(problem: CounterfactualProblem, pre: Preanalysis, t0: float, exact: bool) -> CounterfactualResult:
    """The result when Storm decided the instance (trivial / infeasible)."""
    sizes = {"pruning": pruning_sizes(pre), "paper": paper_sizes(problem)}
    elapsed = time.perf_counter() - t0
    if pre.status == "trivial":
        sigma = problem.strategy
        check = check_strategy(sigma, problem.property, exact=True) if exact else None
        return CounterfactualResult(problem, "trivial", sigma, pre.initial, pre.initial,
                                    strategy_distance(sigma, sigma), "storm",
                                    "σ already meets the bound (Storm on the induced DTMC)", elapsed,
                                    pre.optimal_probability, gap=0.0, distance_lower_bound=0.0, sizes=sizes,
                                    exact=check)
    word = "Pmin" if problem.upper else "Pmax"
    reason = (f"{word} = {pre.optimal_probability:.6g} over all actionable strategies (Storm on the MDP with the "
              f"uncontrollable states fixed to σ) does not meet the bound")
    return CounterfactualResult(problem, "infeasible", None, None, pre.initial, None, "storm", reason, elapsed,
                                pre.optimal_probability, sizes=sizes)


def solve_counterfactual(problem: CounterfactualProblem, solver: str = "auto", time_limit: float = 600.0,
                         exact: bool = False) -> CounterfactualResult:
    """A counterfactual strategy for ``problem`` (see the module docstring).

    Args:
        solver: ``auto`` (exact special cases where they apply, else Gurobi, else SCIP), ``gurobi``, ``scip``,
            ``highs`` (linear special cases only). With weights 0,0,r∞ an explicit ``gurobi``/``scip`` solves the
            MIQCQP instead of the bisection (for cross-checks).
        time_limit: seconds for the whole solve; on timeout the best valid strategy is returned (``suboptimal``).
        exact: also check the answer in exact rational arithmetic (Storm over ``stormpy.Rational``).
    """
    if solver not in SOLVERS:
        raise SolverError(f"unknown solver '{solver}' (solvers: {', '.join(SOLVERS)})")
    if not time_limit > 0:
        raise SolverError(f"the time limit must be positive, got {time_limit}")
    t0 = time.perf_counter()
    pre = preanalyse(problem)
    if pre.status is not None:
        return _decided(problem, pre, t0, exact)
    return _Run(problem, pre, solver, time_limit, exact, t0).solve()


def diverse_counterfactuals(problem: CounterfactualProblem, n: int, diversity_weight: float = 2.0,
                            solver: str = "auto", time_limit: float = 600.0, exact: bool = False,
                            perturbation: float = 1e-4) -> CounterfactualResult:
    """``n`` diverse counterfactual strategies (seed 000, Section 4): the k-th minimises d - λ·det(K) over the
    counterfactuals found so far plus itself, K_ij = 1/(1 + ||Δ(σ_i, σ_j)||_1) (+ ``perturbation`` on the
    diagonal). The first is the plain counterfactual; the others are in ``result.diverse``, each with its
    ``novelty`` (fraction of its changed state-action pairs no earlier counterfactual changed). ``time_limit``
    applies to each of the ``n`` solves."""
    from .diverse import DiversityTerm

    if n < 1:
        raise SolverError(f"--diverse needs at least 1 counterfactual, got {n}")
    if not diversity_weight >= 0:
        raise SolverError(f"the diversity weight must be non-negative, got {diversity_weight}")
    first = solve_counterfactual(problem, solver, time_limit, exact)
    if n == 1 or first.strategy is None or first.status == "trivial":
        return first
    if solver == "highs":
        raise SolverError("diverse counterfactuals need the MIQCQP: --solver gurobi, scip or auto")
    first.novelty = 1.0
    pre = preanalyse(problem)
    found = [first]
    w = problem.weights.as_tuple()
    for _ in range(n - 1):
        run = _Run(problem, pre, solver, time_limit, exact)
        previous = [f.strategy.probabilities[pre.encoding.rows] for f in found]
        term = DiversityTerm(previous, diversity_weight, perturbation)
        c, out, name, reason = run.run_miqcqp(lambda b: Miqcqp(b, w, Bounds(), previous[-1], None, term), solver)
        if c is None:
            run.notes.append(f"{name} found no further valid counterfactual (status {out.status})")
            break
        status = "optimal" if out.status == "optimal" else "suboptimal"
        result = run.finish(c, status, name, reason + f", diversity weight λ = {diversity_weight:g}",
                            None)
        result.novelty = novelty(result, found)
        same = [j for j, f in enumerate(found, start=1) if f.strategy.allclose(c.strategy, atol=1e-6)]
        if same:
            result.notes.append(f"identical to counterfactual {same[0]}: no other valid strategy scores better on "
                                f"d - λ·det(K) with these weights")
        found.append(result)
    first.diverse = found[1:]
    return first
