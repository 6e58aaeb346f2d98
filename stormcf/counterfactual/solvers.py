"""The stages of a counterfactual run, each a function of the run's :class:`Context` and a time budget.

- :func:`dinf_stage`: d∞, exact (bisection + robust policy iteration; no optimisation solver); restricted to a set
  of states it polishes another candidate (the least d∞ among strategies changing only those states);
- :func:`d0_stage`: d0, exact: heuristic incumbents and local search, then the d0 MILP on a back end (HiGHS by
  default) warm-started with the best of them;
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
from typing import Protocol

import numpy as np

from ..deadline import Deadline
from .analysis import Encoding
from .backends import SolverOutcome, backend
from .bellman import evaluate, q_values
from .certify import Candidate, Certificate
from .greedy import greedy_d0, improve_d0
from .programs import Bounds, d0_program, miqcqp_program
from .robust import changes, dinf_bisection, switched_optimum

#: relative margins γ·(1 - ρ) of the re-solves for a feasible point after Storm rejected the solution at γ
MARGINS = (1e-9, 1e-7, 1e-5)
#: share of a d0 stage's budget for the heuristics before the MILP
HEURISTIC_SHARE = 0.25


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
def d0_stage(ctx: Context, deadline: Deadline, backend_name: str = "highs") -> None:
    """The optimal d0: heuristics and local search (a quarter of the budget), then the MILP."""
    enc, gamma, cert = ctx.enc, ctx.gamma, ctx.certificate
    threshold = gamma * (1 - 1e-10)
    cert.prove("d0", 1.0, "Storm (σ violates the bound)")
    with_heuristics = deadline.sub(fraction=HEURISTIC_SHARE)
    greedy = greedy_d0(enc, threshold, with_heuristics)
    if greedy is not None:
        ctx.accept(greedy.policy, "greedy d0 heuristic")
    best = cert.best_by("d0")
    if best is not None:
        improved = improve_d0(enc, changes(enc, best.probs) > 0, threshold, with_heuristics)
        if improved.value <= threshold and improved.settled:
            ctx.accept(improved.policy, "d0 local search")
        best = cert.best_by("d0")
    name = f"d0 MILP ({backend_name})"
    if best is not None and best.distance.d0 <= cert.bound("d0"):
        return
    start = None if best is None else best.probs
    program = d0_program(enc, gamma, start)
    ctx.sizes["encoded"] = program.formulation.sizes()
    out = backend(backend_name).solve(program.formulation, deadline.budget())
    if out.bound is not None:
        cert.prove("d0", float(math.ceil(out.bound - 1e-6)), name)
    if out.x is None:
        ctx.note(f"{name} ended with status {out.status} without a new solution")
        return
    changed = changes(enc, program.policy(enc, out.x)) > 0
    if best is not None and changed.sum() >= best.distance.d0:
        return
    repaired = switched_optimum(enc, changed, deadline=deadline)
    if repaired.value <= threshold and ctx.accept(repaired.policy, name) is not None:
        return
    ctx.note(f"{name}: Storm rejected the solution at γ (value within the solver's tolerance); re-solving with "
             f"a relative margin")
    for rho in MARGINS:
        if deadline.expired:
            return
        program = d0_program(enc, gamma * (1 - rho), start)
        out = backend(backend_name).solve(program.formulation, deadline.budget())
        if out.x is not None:
            fixed = switched_optimum(enc, changes(enc, program.policy(enc, out.x)) > 0, deadline=deadline)
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
    out = backend(backend_name).solve(program.formulation, deadline.budget())
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
