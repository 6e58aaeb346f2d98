"""The exact definition of the counterfactual bounds: one small linear programme per pair (s, a) (spec §3).

A causal model compatible with the observation (s_t, a_t) -> s_{t+1} and the interventional distribution of (s, a)
is, for this pair, a coupling θ of the observed distribution o = P(. | s_t, a_t) and p = P(. | s, a):

    θ(j, c) >= 0,   Σ_c θ(j, c) = o(j)  (j ∈ supp o),   Σ_j θ(j, c) = p(c)  (c ∈ supp p)

and the counterfactual probability is P_t(c | s, a) = θ(s_{t+1}, c) / q with q = o(s_{t+1}). The assumptions are
linear constraints on θ (k = s_{t+1}):

- Mon1 (``cs+m``): θ(k, k) / q >= p(k) when p(k) > 0;
- Mon2 (``cs+m``): θ(k, c) / q <= p(c) for c ≠ k with o(c) > 0 and p(c) > 0;
- CS (``cs+m`` and ``cs``): θ(k, c) = 0 when p(k) / q >= p(c) / o(c), c ≠ k, o(c) > 0.

LB / UB of P_t(c | s, a) are the minimum / maximum of θ(k, c) / q over this polytope (HiGHS through the solver
layer, :func:`stormcf.solvers.linear.linear_program`). The observed pair itself is the identity: [1, 1] at k, [0, 0]
elsewhere. These LP values are the definition the closed forms of :mod:`.bounds` are tested against.
"""
from __future__ import annotations

import numpy as np

from ..errors import SolverError
from ..run import Run
from ..solvers.linear import linear_program
from .bounds import check_assumptions


def pair_bounds(o: np.ndarray, k: int, p: np.ndarray, assumptions: str = "cs+m") -> tuple[np.ndarray, np.ndarray]:
    """LP bounds of P_t(c | s, a) for every c in supp p (dense vectors over the states; 0 outside supp p).

    ``o`` is the observed pair's distribution, ``k`` the observed successor, ``p`` the distribution of another pair
    (s, a); the observed pair itself is no LP but the identity (:func:`lp_step_bounds` handles it).
    """
    check_assumptions(assumptions)
    o, p = np.asarray(o, dtype=float), np.asarray(p, dtype=float)
    q = o[k]
    O, C = np.flatnonzero(o > 0), np.flatnonzero(p > 0)
    nO, nC = O.size, C.size
    var = lambda j, c: j * nC + c                                           # noqa: E731  θ(O[j], C[c])
    A_eq = np.zeros((nO + nC, nO * nC))
    for j in range(nO):
        A_eq[j, var(j, 0):var(j, 0) + nC] = 1.0
    for c in range(nC):
        A_eq[nO + c, [var(j, c) for j in range(nO)]] = 1.0
    b_eq = np.concatenate([o[O], p[C]])
    bounds = [(0.0, None)] * (nO * nC)
    jk = int(np.searchsorted(O, k))
    if assumptions != "none":
        for c, state in enumerate(C):
            if state == k:
                if assumptions == "cs+m":
                    bounds[var(jk, c)] = (p[k] * q, None)                   # Mon1
            elif o[state] > 0:
                if p[k] / q >= p[state] / o[state]:
                    bounds[var(jk, c)] = (0.0, 0.0)                         # CS
                elif assumptions == "cs+m":
                    bounds[var(jk, c)] = (0.0, p[state] * q)                # Mon2
    lb, ub = np.zeros_like(p), np.zeros_like(p)
    for c, state in enumerate(C):
        cost = np.zeros(nO * nC)
        cost[var(jk, c)] = 1.0
        lb[state] = _solve(cost, A_eq, b_eq, bounds) / q
        ub[state] = -_solve(-cost, A_eq, b_eq, bounds) / q
    return lb, ub


def _solve(cost, A_eq, b_eq, bounds) -> float:
    result = linear_program(cost, A_eq=A_eq, b_eq=b_eq, bounds=bounds)
    if not result.optimal:
        raise SolverError(f"HiGHS could not solve a counterfactual-bound LP: {result.message}")
    return result.objective


def lp_step_bounds(P, observed_row: int, observed_next: int, assumptions: str = "cs+m",
                   observed: np.ndarray | None = None, run: Run | None = None) -> tuple[np.ndarray, np.ndarray]:
    """LP bounds of every transition of the CSR matrix ``P`` (aligned with ``P.data``) for one observation: row
    ``observed_row`` of ``P`` led to ``observed_next``. When the observed choice is not a row of ``P``, pass -1 and
    its distribution as ``observed``. ``run`` (default: unlimited) is checked between rows."""
    o = P[observed_row].toarray().ravel() if observed is None else observed
    lower, upper = np.zeros(P.nnz), np.zeros(P.nnz)
    run = run if run is not None else Run()
    for row in run.progress(range(P.shape[0]), desc="LP bounds", unit="row"):
        run.check("the LP bounds")
        lo, hi = P.indptr[row], P.indptr[row + 1]
        cols = P.indices[lo:hi]
        if row == observed_row:
            lower[lo:hi] = upper[lo:hi] = (cols == observed_next).astype(float)
            continue
        p = np.zeros(P.shape[1])
        p[cols] = P.data[lo:hi]
        lb, ub = pair_bounds(o, observed_next, p, assumptions)
        lower[lo:hi], upper[lo:hi] = lb[cols], ub[cols]
    return lower, upper
