"""The exact definition of the counterfactual bounds: one small linear programme per pair (s, a) (spec §3).

A causal model compatible with the observation (s_t, a_t) -> s_{t+1} and the interventional distribution of (s, a)
is, for this pair, a coupling θ of the observed distribution o = P(. | s_t, a_t) and p = P(. | s, a):

    θ(j, c) >= 0,   Σ_c θ(j, c) = o(j)  (j ∈ supp o),   Σ_j θ(j, c) = p(c)  (c ∈ supp p)

and the counterfactual probability is P_t(c | s, a) = θ(s_{t+1}, c) / q with q = o(s_{t+1}). The assumptions are
linear constraints on θ (k = s_{t+1}):

- Mon1 (``cs+m``): θ(k, k) / q >= p(k) when p(k) > 0;
- Mon2 (``cs+m``): θ(k, c) / q <= p(c) for c ≠ k with o(c) > 0 and p(c) > 0;
- CS (``cs+m`` and ``cs``): θ(k, c) = 0 when p(k) / q >= p(c) / o(c), c ≠ k, o(c) > 0.

LB / UB of P_t(c | s, a) are the minimum / maximum of θ(k, c) / q over this polytope (one programme per pair,
solved for each objective by the solver chosen by name, :func:`stormcf.solvers.solve`). The observed pair itself is
the identity: [1, 1] at k, [0, 0] elsewhere. These LP values are the definition the closed forms of :mod:`.bounds`
are tested against.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from ..run import Run
from ..solvers import Formulation, solve
from .bounds import check_assumptions


def pair_bounds(o: np.ndarray, k: int, p: np.ndarray, assumptions: str = "cs+m",
                solver: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """LP bounds of P_t(c | s, a) for every c in supp p (dense vectors over the states; 0 outside supp p), on the
    solver chosen by name.

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
    lower, upper = np.zeros(nO * nC), np.full(nO * nC, np.inf)
    jk = int(np.searchsorted(O, k))
    if assumptions != "none":
        for c, state in enumerate(C):
            if state == k:
                if assumptions == "cs+m":
                    lower[var(jk, c)] = p[k] * q                            # Mon1
            elif o[state] > 0:
                if p[k] / q >= p[state] / o[state]:
                    upper[var(jk, c)] = 0.0                                 # CS
                elif assumptions == "cs+m":
                    upper[var(jk, c)] = p[state] * q                        # Mon2
    polytope = Formulation(lb=lower, ub=upper, integer=np.zeros(nO * nC, dtype=bool), A=sp.csr_matrix(A_eq),
                           lhs=b_eq, rhs=b_eq, quadratic=(), c=np.zeros(nO * nC))
    lb, ub = np.zeros_like(p), np.zeros_like(p)
    for c, state in enumerate(C):
        cost = np.zeros(nO * nC)
        cost[var(jk, c)] = 1.0
        lb[state] = _optimum(replace(polytope, c=cost), solver) / q
        ub[state] = -_optimum(replace(polytope, c=-cost), solver) / q
    return lb, ub


def _optimum(programme: Formulation, solver: str) -> float:
    out = solve(programme, solver).proven("a counterfactual-bound LP")
    if not out.optimal:
        raise SolverError(f"{out.backend} finds a counterfactual-bound LP infeasible")
    return out.objective


def lp_step_bounds(P, observed_row: int, observed_next: int, assumptions: str = "cs+m",
                   observed: np.ndarray | None = None, solver: str = "auto",
                   run: Run | None = None) -> tuple[np.ndarray, np.ndarray]:
    """LP bounds of every transition of the CSR matrix ``P`` (aligned with ``P.data``) for one observation: row
    ``observed_row`` of ``P`` led to ``observed_next``. When the observed choice is not a row of ``P``, pass -1 and
    its distribution as ``observed``. ``solver``: see :func:`pair_bounds`; ``run`` (default: unlimited) is checked
    between rows."""
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
        lb, ub = pair_bounds(o, observed_next, p, assumptions, solver)
        lower[lo:hi], upper[lo:hi] = lb[cols], ub[cols]
    return lower, upper
