"""The stages of a counterfactual run, each a function of a context and a time budget.

Stages of one bound (a :class:`~.context.BoundContext`: the bound's encoding and threshold); with several bounds
each runs for every bound, and what it proves for one bound alone is a valid lower bound for all of them together:

- :func:`dinf_stage`: d∞, exact (bisection + robust policy iteration; no optimisation solver); restricted to a set
  of states it polishes another candidate (the least d∞ among strategies changing only those states);
- :func:`d0_stage`: d0, exact: on large programmes the LP relaxation first (a proven bound in seconds) and its
  rounding (the MILP's warm start: on the 10^5-state process model SCIP then proves the optimum 3,261 in about
  50 s, where from the greedy set's 3,309 neither SCIP nor HiGHS finished the root in 120 s); the d0 MILP on SCIP
  and HiGHS side by side (or on the back end asked for, while greedy heuristics and Storm-checked local search look
  for small switched sets), then local search from the best one while time is left (an anytime loop: the MILP
  proves the bound, the searches tighten the incumbent).

Stages of the whole problem (a :class:`~.context.RunContext`: every bound over the shared strategy variables):

- :func:`miqcqp_stage`: the weighted objective, the non-convex MIQCQP of seed 000 on Gurobi or SCIP, warm-started
  with the best candidate and cut by the proven bounds of the other stages;
- :func:`stormcf.counterfactual.descent.descent_stage`: a local descent on the weighted distance by sequential
  linear programming (the primal method of d1), also the repair of a solution Storm rejects.

Every policy a stage finds goes through ``accept`` (Storm checks every bound; only strategies that meet all are
candidates), and every lower bound through ``certificate.prove`` (kept only when the solve was a relaxation of the
problem and agrees with every checked candidate). Solvers are run at the bound γ itself, so that their bounds are
valid; when Storm rejects a solution (its value is within the solver's tolerance of γ), the policy is repaired
exactly (d0: the optimal rows of its switched states; otherwise a linearised step from Storm-exact values towards
γ·(1 - ρ), :func:`~stormcf.counterfactual.descent.repair`) or the programme is re-solved for a feasible point at
γ·(1 - ρ) with growing relative margins ρ, whose bounds are then not used.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..deadline import Deadline
from ..distance import Weights
from ..interrupt import stopped_by
from ..solvers import SolverOutcome, available, backend
from .bellman import tightened
from .context import BoundContext, RunContext
from .descent import repair
from .greedy import greedy_d0, improve_d0, rounded_d0
from .preanalysis import Encoding
from .programs import d0_program, miqcqp_program
from .robust import changes, dinf_bisection, switched_optimum

#: relative margins γ·(1 - ρ) of the re-solves for a feasible point after Storm rejected the solution at γ
MARGINS = (1e-9, 1e-7, 1e-5)
#: the back ends of the d0 MILP with ``auto``, run side by side
PORTFOLIO = ("scip", "highs")
#: d0 MILPs with this many variables get their LP relaxation solved first, within this share of the time left
RELAXATION_FIRST, RELAXATION_SHARE = 20_000, 0.25
#: relative margin of the heuristics' thresholds (their policies are checked by Storm at γ itself)
HEURISTIC_MARGIN = 1e-10
#: the MIQCQP is not run beyond this many bilinear terms (the 10^5-state process model has 18,140: SCIP did not
#: finish reading it in the time left)
MIQCQP_LIMIT = 10_000
#: share of the time left that a solver leaves for Storm's checks and the repair of its answer (at most RESERVE_MAX s)
RESERVE, RESERVE_MAX = 0.1, 10.0


def _solver_budget(deadline: Deadline) -> float:
    """The solver's time: what is left, less a reserve for checking and repairing its answer."""
    left = deadline.budget()
    return max(left - min(RESERVE * left, RESERVE_MAX), 0.01)


# ================================================================================================ d∞
DINF_NAME = "d∞ bisection (robust policy iteration)"


def dinf_stage(ctx: BoundContext, deadline: Deadline, scope: np.ndarray | None = None) -> None:
    """The optimal d∞ (``scope`` None: proves the lower bound ``dinf``) or, with ``scope`` (mask over maybe states),
    the least d∞ among strategies that change only those states (a polish of a sparse candidate; no bound)."""
    enc = ctx.enc
    if scope is None:
        name = DINF_NAME + ctx.label
        out = dinf_bisection(enc, ctx.gamma, ctx.start("dinf"), lambda p: ctx.accept(p, name) is not None,
                             deadline=deadline)
        ctx.sizes["value_iteration"] = {"rows": int(enc.rows.size), "transitions": int(enc.P.nnz)}
        ctx.certificate.prove("dinf", out.lower, name)
        if out.timed_out:
            ctx.note(f"{name}: {stopped_by(deadline)} stopped the bisection at d∞ in [{out.lower:.6g}, {out.dinf:.6g}]")
        return
    name = "d∞ polish of the changed states" + ctx.label
    dinf_bisection(enc, ctx.gamma, ctx.start(), lambda p: ctx.accept(p, name) is not None, deadline=deadline,
                   scope=scope)


# ================================================================================================ d0
def d0_stage(ctx: BoundContext, deadline: Deadline, backend_name: str = "auto") -> None:
    """The optimal d0 (module docstring). ``auto`` runs SCIP and HiGHS side by side in child processes and stops the
    other when one proves optimality (SCIP solves the d0 MILPs of the 10k- and 30k-state process models in seconds,
    HiGHS the 15k one faster); a named back end runs alone. The greedy heuristic and local search work in this
    process until the first solver ends."""
    enc, gamma, cert = ctx.enc, ctx.gamma, ctx.certificate
    cert.prove("d0", 1.0, "Storm (σ violates the bound)")
    program = d0_program(enc, gamma, ctx.start("d0"))
    ctx.sizes["encoded"] = program.formulation.sizes()
    if not program.proves_bounds:
        ctx.note(f"d0 MILP{ctx.label}: σ never reaches the target from some states and some strategy has an "
                 f"infinite expected reward there, so the MILP caps the values and its bound is not used")
    if program.formulation.n_vars >= RELAXATION_FIRST and program.proves_bounds:
        if _d0_relaxation(ctx, deadline, program):
            program = d0_program(enc, gamma, ctx.start("d0"))           # the MILP starts from the rounded set
    names = tuple(n for n in PORTFOLIO if available(n)) if backend_name == "auto" else (backend_name,)
    jobs = {name: backend(name).start(program.formulation, deadline.budget(), child=len(names) > 1) for name in names}
    with deadline.phase("d0 heuristics", until=lambda: any(job.done() for job in jobs.values())) as budget:
        _d0_heuristics(ctx, budget)
    with deadline.phase("d0 MILP"):
        outcomes = _first_optimal(jobs)
    for name, out in outcomes.items():
        _d0_solution(ctx, deadline, out, program, name, f"d0 MILP ({name}){ctx.label}")
    best = ctx.start("d0")
    if best is not None and _d0(enc, best) > cert.bound("d0") and not deadline.expired:
        with deadline.phase("d0 local search") as budget:
            _d0_local_search(ctx, budget, best)


def _d0_relaxation(ctx: BoundContext, deadline: Deadline, program) -> bool:
    """The LP relaxation of a large d0 MILP first (HiGHS, seconds): its bound is proven at once, while the MILP's
    root may not finish in the time left (on the 10^5-state process model HiGHS's root cuts raise the relaxation's
    3,152 to 3,234 in 34 CPU s and 3,258 in 110 s); its solution is rounded (:func:`greedy.rounded_d0`). True when
    the rounded set became the best candidate."""
    name = f"d0 LP relaxation (highs){ctx.label}"
    with deadline.phase("d0 LP relaxation") as budget:
        out = backend("highs").solve(program.formulation.relaxation(), RELAXATION_SHARE * budget.budget())
    if out.status == "optimal" and out.bound is not None:
        ctx.certificate.prove("d0", float(math.ceil(out.bound - 1e-6)), name)
    elif out.note:
        ctx.note(f"{name}: {out.note}")
    if out.x is None or deadline.expired:
        return False
    best = ctx.start("d0")
    with deadline.phase("d0 LP rounding") as budget:
        rounded = rounded_d0(ctx.enc, program.switch_share(ctx.enc, out.x), tightened(ctx.gamma, HEURISTIC_MARGIN),
                             budget)
    if rounded is None or (best is not None and _d0(ctx.enc, rounded.policy) >= _d0(ctx.enc, best)):
        return False
    return ctx.accept(rounded.policy, "d0 LP rounding" + ctx.label) is not None


def _d0(enc: Encoding, policy: np.ndarray) -> int:
    return int((changes(enc, policy) > 0).sum())


def _first_optimal(jobs: dict) -> dict[str, SolverOutcome]:
    """Wait for the jobs; as soon as one ends optimal, stop the others. The outcomes of those that ended (a job
    that overruns its time limit, as SCIP can in presolve, is stopped then)."""
    outcomes: dict[str, SolverOutcome] = {}
    try:
        while len(outcomes) < len(jobs) and not any(o.status == "optimal" for o in outcomes.values()):
            for name, job in jobs.items():
                if name not in outcomes and (job.due() or len(jobs) == 1):
                    outcomes[name] = job.result()
            time.sleep(0.05)
    finally:                                    # the solvers still running are not needed (or Ctrl-C came)
        for name, job in jobs.items():
            if name not in outcomes:
                job.cancel()
    return outcomes


def _d0_heuristics(ctx: BoundContext, deadline: Deadline) -> None:
    greedy = greedy_d0(ctx.enc, tightened(ctx.gamma, HEURISTIC_MARGIN), deadline)
    if greedy is not None:
        ctx.accept(greedy.policy, "greedy d0 heuristic" + ctx.label)
    best = ctx.start("d0")
    if best is not None and not deadline.expired:
        _d0_local_search(ctx, deadline, best)


def _d0_local_search(ctx: BoundContext, deadline: Deadline, best: np.ndarray) -> None:
    threshold = tightened(ctx.gamma, HEURISTIC_MARGIN)
    improved = improve_d0(ctx.enc, changes(ctx.enc, best) > 0, threshold, deadline)
    if improved.settled and improved.value <= threshold and _d0(ctx.enc, improved.policy) < _d0(ctx.enc, best):
        ctx.accept(improved.policy, "d0 local search" + ctx.label)


def _d0_solution(ctx: BoundContext, deadline: Deadline, out: SolverOutcome, program, backend_name: str,
                 name: str) -> None:
    """The MILP's bound (proven: it was solved at γ) and its switched set's optimal rows (policy iteration) as a
    candidate; when Storm rejects them, re-solves at γ·(1 - ρ) for a feasible point."""
    enc, gamma, cert = ctx.enc, ctx.gamma, ctx.certificate
    threshold = tightened(gamma, HEURISTIC_MARGIN)
    if out.note:
        ctx.note(f"{name}: {out.note}")
    if out.bound is not None and program.proves_bounds:
        cert.prove("d0", float(math.ceil(out.bound - 1e-6)), name)
    if out.x is None:
        stopped = out.status == "timeout" and deadline.interrupted
        ctx.note(f"{name} was stopped by {stopped_by(deadline)} before it found a solution" if stopped else
                 f"{name} ended with status {out.status} without a solution")
        return
    best = ctx.start("d0")
    changed = changes(enc, program.policy(enc, out.x)) > 0
    if best is not None and changed.sum() >= _d0(enc, best):
        return
    repaired = switched_optimum(enc, changed, deadline=deadline)
    if repaired.value <= threshold and ctx.accept(repaired.policy, name) is not None:
        return
    ctx.note(f"{name}: Storm rejected the solution at γ (value within the solver's tolerance); re-solving with "
             f"a relative margin")
    for rho in MARGINS:
        if deadline.expired:
            return
        program = d0_program(enc, tightened(gamma, rho), best)
        retry = backend(backend_name).solve(program.formulation, deadline.budget())
        if retry.x is not None:
            fixed = switched_optimum(enc, changes(enc, program.policy(enc, retry.x)) > 0, deadline=deadline)
            if fixed.value <= threshold and ctx.accept(fixed.policy, f"{name}, γ·(1 - {rho:g})") is not None:
                return


# ================================================================================================ MIQCQP
def miqcqp_stage(ctx: RunContext, deadline: Deadline, backend_name: str, weights: Weights,
                 epsilon: float | None = None, diversity=None, name: str | None = None) -> SolverOutcome | None:
    """The MIQCQP (1)-(13) of every bound at its γ, warm-started with the best candidate and cut by the proven
    bounds; its bound is proven (when there is no diversity term and its boxes are exact) and cross-checked; a
    rejected solution is repaired or re-solved."""
    cert = ctx.certificate
    name = name or f"MIQCQP ({backend_name})"
    cuts = cert.norm_bounds()
    start = (cert.best.probs if diversity is None else diversity.previous_strategy) if cert.best else None

    def program_at(gammas, start):
        return miqcqp_program(ctx.region, ctx.encodings, gammas, weights, cuts, start, epsilon, diversity,
                              ctx.box_values())

    program = program_at(ctx.gammas, start)
    ctx.sizes["encoded"] = program.formulation.sizes()
    if program.formulation.sizes()["bilinear_terms"] > MIQCQP_LIMIT:
        ctx.note(f"{name} was not run: its {program.formulation.sizes()['bilinear_terms']} bilinear terms are beyond "
                 f"what spatial branch-and-bound solves in a time limit (over {MIQCQP_LIMIT}); the answer is the best "
                 f"strategy of the other stages")
        return None
    if deadline.expired:
        ctx.note(f"{name} was not run: {stopped_by(deadline)} ended the stage while the programme was built")
        return None
    out = backend(backend_name).solve(program.formulation, _solver_budget(deadline))
    if out.note:
        ctx.note(f"{name}: {out.note}")
    if diversity is None and out.bound is not None and out.status != "infeasible":
        if program.proves_bounds:
            cert.prove("weighted", out.bound, name)
        else:
            ctx.note(f"{name}: some strategy has an infinite expected reward where σ has one too, so the programme "
                     f"caps the values and its bound is not used")
    if out.x is None:
        return out
    probs = program.strategy(ctx.sigma, out.x)
    if ctx.accept_strategy(probs, name) is not None:
        return out
    if repair(ctx, probs, weights, deadline, f"{name}, repaired") is not None:
        return out
    for rho in MARGINS:
        if deadline.expired:
            break
        program = program_at([tightened(g, rho) for g in ctx.gammas], probs)
        retry = backend(backend_name).solve(program.formulation, deadline.budget())
        if retry.x is not None and \
                ctx.accept_strategy(program.strategy(ctx.sigma, retry.x), f"{name}, γ·(1 - {rho:g})") is not None:
            return retry
    ctx.note(f"{name}: Storm rejected its solutions (values within the solver's tolerance of γ)")
    return out
