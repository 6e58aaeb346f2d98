"""The interval counterfactual MDP (ICFMDP) of an observed path, and the point counterfactual MDP of the Gumbel-max
SCM (the baseline).

Both are **non-stationary**: at step t their transition function depends on the observation (s_t, a_t) -> s_{t+1}.
They share the model's sparsity: step t is stored as arrays aligned with ``model.transitions.data`` (interval
bounds ``lower[t]``, ``upper[t]``; Gumbel-max probabilities ``probabilities[t]``), so memory is linear in T·nnz and
the time-unrolled model (states (t, s), horizon T) is never materialised except for Storm.

A path without ``final_state`` has no observation at its last step: that step carries no information about the
exogenous noise, so its counterfactual transition function is the nominal one (point intervals [P, P]).
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import gumbel
from ..errors import PathError, SolverError
from ..model import ExplicitModel
from ..paths import ObservedPath
from .bounds import SparseRows, check_assumptions, step_bounds
from .lp import lp_step_bounds

#: bound computations: the closed forms (default) or one LP per pair and successor (small models)
BOUNDS_METHODS = ("closed", "lp")
#: the LP mode solves 2 LPs per transition and step; beyond this many it refuses (minutes of HiGHS calls)
LP_LIMIT = 20_000

_ROWS: "weakref.WeakKeyDictionary[ExplicitModel, SparseRows]" = weakref.WeakKeyDictionary()


def sparse_rows(model: ExplicitModel) -> SparseRows:
    """The per-entry index arrays of the model's transition matrix (computed once per model)."""
    rows = _ROWS.get(model)
    if rows is None:
        rows = _ROWS[model] = SparseRows(model.transitions)
    return rows


def _observed_steps(path: ObservedPath) -> list[tuple[int, int] | None]:
    """(observed row, observed successor) of every step; ``None`` for a last step without final state."""
    nxt = path.next_states
    return [(int(r), int(k)) if k >= 0 else None for r, k in zip(path.choices, nxt)]


class _OnPath:
    """The model and horizon of a counterfactual MDP built from an observed path."""

    path: ObservedPath

    @property
    def model(self) -> ExplicitModel:
        return self.path.model

    @property
    def horizon(self) -> int:
        return self.path.T


@dataclass(frozen=True, eq=False)
class IntervalCFMDP(_OnPath):
    """The ICFMDP of an observed path: P_t(s' | s, a) ∈ [lower[t, e], upper[t, e]] for the transition e = (s, a, s')
    (index into ``model.transitions.data``) at step t = 0..T-1.

    Attributes:
        path: the observation τ.
        assumptions: ``"cs+m"``, ``"cs"`` or ``"none"``.
        method: ``"closed"`` (closed forms) or ``"lp"`` (one LP per pair and successor).
        lower, upper: float arrays of shape (T, nnz).
        seconds: construction time.
    """

    path: ObservedPath
    assumptions: str
    method: str
    lower: np.ndarray
    upper: np.ndarray
    seconds: float = field(default=0.0, compare=False)

    def step(self, t: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """The bounds of step t as two CSR matrices with the model's sparsity (rows = choices)."""
        P = self.model.transitions
        make = lambda v: sp.csr_matrix((v, P.indices, P.indptr), shape=P.shape)   # noqa: E731
        return make(self.lower[t]), make(self.upper[t])

    def mean_bound_width(self) -> float:
        """Mean of UB - LB over all steps and the transitions with UB > 0 (the paper's Table 3)."""
        live = self.upper > 0
        return float((self.upper - self.lower)[live].mean()) if live.any() else 0.0

    def validity_violations(self, tolerance: float = 1e-9) -> list[str]:
        """What breaks the guarantees (empty when valid): LB <= UB, bounds in [0, 1], Σ LB <= 1 <= Σ UB per
        (t, s, a), and [1, 1] for the observed transition."""
        P, er = self.model.transitions, sparse_rows(self.model).entry_rows
        problems = []
        if np.any(self.lower > self.upper) or self.lower.min(initial=0) < 0 or self.upper.max(initial=0) > 1:
            problems.append("a bound lies outside 0 <= LB <= UB <= 1")
        for t in range(self.horizon):
            lo = np.bincount(er, weights=self.lower[t], minlength=P.shape[0])
            hi = np.bincount(er, weights=self.upper[t], minlength=P.shape[0])
            bad = np.flatnonzero((lo > 1 + tolerance) | (hi < 1 - tolerance))
            if bad.size:
                problems.append(f"step {t}: choice {int(bad[0])}: sum LB = {lo[bad[0]]:.17g}, sum UB = {hi[bad[0]]:.17g}")
        for t, obs in enumerate(_observed_steps(self.path)):
            if obs is not None:
                row, k = obs
                e = P.indptr[row] + int(np.searchsorted(P.indices[P.indptr[row]:P.indptr[row + 1]], k))
                if self.lower[t, e] != 1 or self.upper[t, e] != 1:
                    problems.append(f"step {t}: the observed transition has [{self.lower[t, e]}, {self.upper[t, e]}]")
        return problems

    def to_dict(self) -> dict[str, Any]:
        return {"horizon": self.horizon, "assumptions": self.assumptions, "bounds": self.method,
                "transitions_per_step": int(self.model.n_transitions), "mean_bound_width": self.mean_bound_width(),
                "seconds": self.seconds}


def interval_cfmdp(path: ObservedPath, assumptions: str = "cs+m", bounds: str = "closed") -> IntervalCFMDP:
    """Build the ICFMDP of ``path``: the counterfactual bounds of every transition at every step.

    ``bounds="closed"`` evaluates the closed forms (vectorised, any model size); ``bounds="lp"`` solves the exact LPs
    (2 per transition and step; refused beyond :data:`LP_LIMIT` LPs with a :class:`SolverError`).
    """
    check_assumptions(assumptions)
    if bounds not in BOUNDS_METHODS:
        raise ValueError(f"unknown bounds method {bounds!r}: use one of {', '.join(BOUNDS_METHODS)}")
    model = path.model
    P = model.transitions
    if bounds == "lp" and 2 * path.T * P.nnz > LP_LIMIT:
        raise SolverError(f"--bounds lp would solve {2 * path.T * P.nnz} LPs (limit {LP_LIMIT}); "
                          f"use the closed forms (they equal the LP optimum)")
    start = time.perf_counter()
    rows = sparse_rows(model)
    lower, upper = np.empty((path.T, P.nnz)), np.empty((path.T, P.nnz))
    for t, obs in enumerate(_observed_steps(path)):
        if obs is None:
            lower[t] = upper[t] = P.data
        elif bounds == "closed":
            lower[t], upper[t] = step_bounds(rows, *obs, assumptions)
        else:
            lower[t], upper[t] = lp_step_bounds(P, *obs, assumptions)
    return IntervalCFMDP(path, assumptions, bounds, lower, upper, time.perf_counter() - start)


@dataclass(frozen=True, eq=False)
class CounterfactualMDP(_OnPath):
    """A point counterfactual MDP: P_t(s' | s, a) = ``probabilities[t, e]`` for the transition e at step t.

    ``estimator`` says where the numbers come from: ``"gumbel-exact"`` (closed form), ``"gumbel-mc"`` (Monte Carlo
    with ``samples`` draws per (t, s, a): approximate), or ``"sampled"`` (drawn from an ICFMDP).
    """

    path: ObservedPath
    probabilities: np.ndarray
    estimator: str
    samples: int | None = None
    seconds: float = field(default=0.0, compare=False)

    def step(self, t: int) -> sp.csr_matrix:
        P = self.model.transitions
        return sp.csr_matrix((self.probabilities[t], P.indices, P.indptr), shape=P.shape)

    def to_dict(self) -> dict[str, Any]:
        out = {"estimator": self.estimator, "seconds": self.seconds}
        if self.samples is not None:
            out["samples_per_pair"] = self.samples
        return out


def gumbel_cfmdp(path: ObservedPath, estimator: str = "exact", samples: int = 10_000, seed: int = 0) -> CounterfactualMDP:
    """The Gumbel-max SCM counterfactual MDP of ``path`` (Oberst & Sontag), via :mod:`stormcf.gumbel`.

    ``estimator="exact"``: the closed-form probabilities; ``"mc"``: ``samples`` posterior draws per (t, s, a), step t
    seeded with ``[seed, t]``.
    """
    if estimator not in ("exact", "mc"):
        raise ValueError(f"unknown Gumbel-max estimator {estimator!r}: use 'exact' or 'mc'")
    model = path.model
    P = model.transitions
    start = time.perf_counter()
    probs = np.empty((path.T, P.nnz))
    for t, obs in enumerate(_observed_steps(path)):
        if obs is None:
            probs[t] = P.data
            continue
        rows = gumbel.counterfactual_transitions(model, *obs, estimator=estimator, samples=samples, seed=[seed, t])
        probs[t] = _aligned(rows, P)
    return CounterfactualMDP(path, probs, f"gumbel-{estimator}", samples if estimator == "mc" else None,
                             time.perf_counter() - start)


def _aligned(rows: sp.csr_matrix, P: sp.csr_matrix) -> np.ndarray:
    """The values of ``rows`` (same shape as P, support within P's) at P's entries, aligned with ``P.data``."""
    rows = sp.csr_matrix(rows)
    rows.sort_indices()
    key = lambda M: np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr)) * M.shape[1] + M.indices  # noqa
    p_keys, r_keys = key(P), key(rows)
    at = np.searchsorted(p_keys, r_keys)
    if np.any(at >= p_keys.size) or np.any(p_keys[np.minimum(at, p_keys.size - 1)] != r_keys):
        raise PathError("Gumbel-max counterfactual rows leave the support of the model")
    out = np.zeros(P.nnz)
    out[at] = rows.data
    return out
