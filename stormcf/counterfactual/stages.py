"""The stages of a counterfactual run, each a function of the run's :class:`Context` and a time budget.

- :func:`dinf_stage`: d∞, exact (bisection + robust policy iteration; no optimisation solver); restricted to a set
  of states it polishes another candidate (the least d∞ among strategies changing only those states);
- :func:`d0_stage`: d0, exact: the d0 MILP on SCIP and HiGHS side by side (or on the back end asked for, while
  greedy heuristics and Storm-checked local search look for small switched sets), then local search from the best
  one while time is left (an anytime loop: the MILP proves the bound, the searches tighten the incumbent);
- :func:`miqcqp_stage`: the weighted objective, the non-convex MIQCQP of seed 000 on Gurobi or SCIP, warm-started
  with the best candidate and cut by the proven bounds of the other stages.

Every policy a stage finds goes through ``context.accept`` (Storm checks it; only accepted ones are candidates),
and every lower bound through ``context.certificate.prove`` (kept only when the solve was a relaxation of the
problem and agrees with every checked candidate). Solvers are run at the bound γ itself, so that their bounds are
valid; when Storm rejects a solution (its value is within the solver's tolerance of γ), the policy is repaired
exactly (d0: the optimal rows of its switched states; mixed: a small extra move towards the lowest-value rows in
its changed states) or the programme is re-solved for a feasible point at γ·(1 - ρ) with growing relative margins
ρ, whose bounds are then not used.
"""
from __future__ import annotations

import math
import time
from typing import Protocol

import numpy as np

from ..deadline import Deadline
from .analysis import Encoding
from ..solvers import SolverOutcome, available, backend
from .bellman import evaluate, q_values
from .certify import Candidate, Certificate
from .greedy import greedy_d0, improve_d0
from .programs import Bounds, d0_program, miqcqp_program
from .robust import changes, dinf_bisection, switched_optimum

#: relative margins γ·(1 - ρ) of the re-solves for a feasible point after Storm rejected the solution at γ
MARGINS = (1e-9, 1e-7, 1e-5)
#: the back ends of the d0 MILP with ``auto``, run side by side
PORTFOLIO = ("scip", "highs")


class Context(Protocol):
    """What a stage needs from the run."""

    enc: Encoding
    gamma: float
    certificate: Certificate
    sizes: dict

    def accept(self, probs: np.ndarray, source: str) -> Candidate | None:
        """Storm's verdict on a policy (a checked, valid candidate or None)."""

    def note(self, text: str) -> None:
        """A remark for the result's notes."""


# ================================================================================================ d∞
DINF_NAME = "d∞ bisection (robust policy iteration)"


def dinf_stage(ctx: Context, deadline: Deadline, scope: np.ndarray | None = None) -> None:
    """The optimal d∞ (``scope`` None: proves the lower bound ``dinf``) or, with ``scope`` (mask over maybe states),
    the least d∞ among strategies that change only those states (a polish of a sparse candidate; no bound)."""
    enc = ctx.enc
    if scope is None:
        start = ctx.certificate.best_by("dinf")
        out = dinf_bisection(enc, ctx.gamma, start and start.probs, lambda p: ctx.accept(p, DINF_NAME) is not None,
                             deadline=deadline)
        ctx.sizes["value_iteration"] = {"rows": int(enc.rows.size), "transitions": int(enc.P.nnz)}
        ctx.certificate.prove("dinf", out.lower, DINF_NAME)
        if out.timed_out:
            ctx.note(f"{DINF_NAME}: the time limit stopped the bisection at d∞ in [{out.lower:.6g}, {out.dinf:.6g}]")
        return
    start = ctx.certificate.best
    name = "d∞ polish of the changed states"
    dinf_bisection(enc, ctx.gamma, start and start.probs, lambda p: ctx.accept(p, name) is not None,
                   deadline=deadline, scope=scope)


# ================================================================================================ d0
def d0_stage(ctx: Context, deadline: Deadline, backend_name: str = "auto") -> None:
    """The optimal d0 (module docstring). ``auto`` runs SCIP and HiGHS side by side in child processes and stops the
    other when one proves optimality (SCIP solves the d0 MILPs of the 10k- and 30k-state process models in seconds,
    HiGHS the 15k one faster); a named back end runs alone. The greedy heuristic and local search work in this
    process until the first solver ends."""
    enc, gamma, cert = ctx.enc, ctx.gamma, ctx.certificate
    cert.prove("d0", 1.0, "Storm (σ violates the bound)")
    best = cert.best_by("d0")
    program = d0_program(enc, gamma, None if best is None else best.probs)
    ctx.sizes["encoded"] = program.formulation.sizes()
    names = tuple(n for n in PORTFOLIO if available(n)) if backend_name == "auto" else (backend_name,)
    jobs = {name: backend(name).start(program.formulation, deadline.budget(), child=len(names) > 1) for name in names}
    with deadline.phase("d0 heuristics", until=lambda: any(job.done() for job in jobs.values())) as budget:
        _d0_heuristics(ctx, budget)
    with deadline.phase("d0 MILP"):
        outcomes = _first_optimal(jobs)
    for name, out in outcomes.items():
        _d0_solution(ctx, deadline, out, program, name, f"d0 MILP ({name})")
    best = cert.best_by("d0")
    if best is not None and best.distance.d0 > cert.bound("d0") and not deadline.expired:
        with deadline.phase("d0 local search") as budget:
            _d0_local_search(ctx, budget, best)


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


def _d0_heuristics(ctx: Context, deadline: Deadline) -> None:
    greedy = greedy_d0(ctx.enc, ctx.gamma * (1 - 1e-10), deadline)
    if greedy is not None:
        ctx.accept(greedy.policy, "greedy d0 heuristic")
    best = ctx.certificate.best_by("d0")
    if best is not None and not deadline.expired:
        _d0_local_search(ctx, deadline, best)


def _d0_local_search(ctx: Context, deadline: Deadline, best: Candidate) -> None:
    threshold = ctx.gamma * (1 - 1e-10)
    improved = improve_d0(ctx.enc, changes(ctx.enc, best.probs) > 0, threshold, deadline)
    if improved.settled and improved.value <= threshold and \
            int((changes(ctx.enc, improved.policy) > 0).sum()) < best.distance.d0:
        ctx.accept(improved.policy, "d0 local search")


def _d0_solution(ctx: Context, deadline: Deadline, out: SolverOutcome, program, backend_name: str,
                 name: str) -> None:
    """The MILP's bound (proven: it was solved at γ) and its switched set's optimal rows (policy iteration) as a
    candidate; when Storm rejects them, re-solves at γ·(1 - ρ) for a feasible point."""
    enc, gamma, cert = ctx.enc, ctx.gamma, ctx.certificate
    threshold = gamma * (1 - 1e-10)
    if out.note:
        ctx.note(f"{name}: {out.note}")
    if out.bound is not None:
        cert.prove("d0", float(math.ceil(out.bound - 1e-6)), name)
    if out.x is None:
        ctx.note(f"{name} ended with status {out.status} without a solution")
        return
    best = cert.best_by("d0")
    changed = changes(enc, program.policy(enc, out.x)) > 0
    if best is not None and changed.sum() >= best.distance.d0:
        return
    repaired = switched_optimum(enc, changed, deadline=deadline)
    if repaired.value <= threshold and ctx.accept(repaired.policy, name) is not None:
        return
    ctx.note(f"{name}: Storm rejected the solution at γ (value within the solver's tolerance); re-solving with "
             f"a relative margin")
    start = None if best is None else best.probs
    for rho in MARGINS:
        if deadline.expired:
            return
        program = d0_program(enc, gamma * (1 - rho), start)
        retry = backend(backend_name).solve(program.formulation, deadline.budget())
        if retry.x is not None:
            fixed = switched_optimum(enc, changes(enc, program.policy(enc, retry.x)) > 0, deadline=deadline)
            if fixed.value <= threshold and ctx.accept(fixed.policy, f"{name}, γ·(1 - {rho:g})") is not None:
                return


# ================================================================================================ MIQCQP
def miqcqp_stage(ctx: Context, deadline: Deadline, backend_name: str, weights: tuple[float, float, float],
                 epsilon: float | None = None, diversity=None, name: str | None = None) -> SolverOutcome | None:
    """The MIQCQP (1)-(13) at γ, warm-started with the best candidate and cut by the proven bounds; its bound is
    proven (when there is no diversity term) and cross-checked; a rejected solution is repaired or re-solved."""
    enc, gamma, cert = ctx.enc, ctx.gamma, ctx.certificate
    name = name or f"MIQCQP ({backend_name})"
    cuts = Bounds(d0=cert.bound("d0") if weights[0] > 0 else 0.0, dinf=cert.bound("dinf"))
    start = (cert.best.probs if diversity is None else diversity.previous[-1]) if cert.best else None
    program = miqcqp_program(enc, gamma, weights, cuts, start, epsilon, diversity)
    ctx.sizes["encoded"] = program.formulation.sizes()
    if deadline.expired:
        ctx.note(f"{name}: the time limit ran out while the programme was built")
        return None
    out = backend(backend_name).solve(program.formulation, deadline.budget())
    if out.note:
        ctx.note(f"{name}: {out.note}")
    if diversity is None and out.bound is not None and out.status != "infeasible":
        cert.prove("weighted", out.bound, name)
    if out.x is None:
        return out
    probs = program.policy(enc, out.x)
    if ctx.accept(probs, name) is not None:
        return out
    pushed = push(enc, probs, gamma * (1 - 1e-10), deadline)
    if pushed is not None and ctx.accept(pushed, f"{name}, pushed below γ") is not None:
        return out
    for rho in MARGINS:
        if deadline.expired:
            break
        program = miqcqp_program(enc, gamma * (1 - rho), weights, cuts, probs, epsilon, diversity)
        retry = backend(backend_name).solve(program.formulation, deadline.budget())
        if retry.x is not None and ctx.accept(program.policy(enc, retry.x), f"{name}, γ·(1 - {rho:g})") is not None:
            return retry
    ctx.note(f"{name}: Storm rejected its solutions (values within the solver's tolerance of γ)")
    return out


def push(enc: Encoding, probs: np.ndarray, threshold: float, deadline: Deadline) -> np.ndarray | None:
    """Lower p(s0) of a policy below ``threshold`` by moving a little more mass (η = 1e-9 ... 1e-3 of each changed
    state's controllable mass) to the lowest-value row in the states it already changes: a policy-improvement step,
    so the value never rises; d0 is kept, d∞ and d1 grow by at most η."""
    changed = changes(enc, probs) > 0
    values = evaluate(enc, probs)
    if values[enc.s0] <= threshold:
        return probs
    Q = q_values(enc, values)
    rows = np.flatnonzero(enc.free & changed[enc.row_state])
    order = np.lexsort((Q[rows], enc.row_state[rows]))
    rows = rows[order]
    first = np.r_[True, enc.row_state[rows][1:] != enc.row_state[rows][:-1]]
    best = rows[first]
    others = rows[~first]
    for eta in (1e-9, 1e-7, 1e-5, 1e-3):
        if deadline.expired:
            return None
        trial = probs.copy()
        taken = np.minimum(trial[others], eta)
        trial[others] -= taken
        np.add.at(trial, best[np.searchsorted(enc.row_state[best], enc.row_state[others])], taken)
        if evaluate(enc, trial)[enc.s0] <= threshold:
            return trial
    return None
