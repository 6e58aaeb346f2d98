"""A fast primal heuristic for sparse counterfactuals (few changed states): the warm start of the d0 MILP.

Forward selection by first-order gains: with the current policy's values V and expected visits from s0 (visits
discounted by 0.9999 so that the linear system stays regular when σ has end components), switching state s to
its best controllable row lowers p(s0) by about visits(s) · (Σ_r π(r) Q_r(V) - min_r Q_r(V)) (performance
difference). The best-scoring states are switched until their estimated gain covers the excess p(s0) - γ, the
values are recomputed, and this repeats; finally switched states are reverted one by one (least useful first)
while the bound still holds. Each step is one or two exact sparse solves.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from .analysis import Encoding
from .bellman import evaluate, policy_matrix, q_values

#: discount of the expected-visits estimate (only ranks states; validity is checked exactly)
VISIT_DISCOUNT = 0.9999


def _switch(enc: Encoding, probs: np.ndarray, best_row: np.ndarray, states: np.ndarray) -> np.ndarray:
    """``probs`` with the controllable mass of ``states`` moved to ``best_row``."""
    probs = probs.copy()
    switched = np.zeros(enc.n_maybe, dtype=bool)
    switched[states] = True
    probs[enc.free & switched[enc.row_state]] = 0.0
    probs[best_row[states]] += enc.free_mass[states]
    return probs


def _best_rows(enc: Encoding, Q: np.ndarray) -> np.ndarray:
    free = np.flatnonzero(enc.free)
    order = np.lexsort((Q[free], enc.row_state[free]))
    rows, states = free[order], enc.row_state[free[order]]
    first = np.r_[True, states[1:] != states[:-1]]
    best = -np.ones(enc.n_maybe, dtype=np.int64)
    best[states[first]] = rows[first]
    return best


def _visits(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    P = (policy_matrix(enc, probs) @ enc.P).tocsc()
    e = np.zeros(enc.n_maybe)
    e[enc.s0] = 1.0
    return np.maximum(spsolve((sp.identity(enc.n_maybe, format="csc") - VISIT_DISCOUNT * P.T).tocsc(), e), 0.0)


def greedy_d0(enc: Encoding, gamma: float, time_limit: float = 10.0) -> np.ndarray | None:
    """A policy switching few states deterministically with p(s0) <= γ (None if none was found in time)."""
    t0 = time.perf_counter()
    probs = enc.sigma.copy()
    chosen = np.zeros(enc.n_maybe, dtype=bool)
    best_row = np.zeros(enc.n_maybe, dtype=np.int64)
    values = evaluate(enc, probs)
    while values[enc.s0] > gamma:
        if time.perf_counter() - t0 > time_limit:
            return None
        Q = q_values(enc, values)
        best = _best_rows(enc, Q)
        current = np.bincount(enc.row_state, weights=probs * Q, minlength=enc.n_maybe)
        fixed = np.bincount(enc.row_state, weights=np.where(enc.free, 0.0, probs) * Q, minlength=enc.n_maybe)
        open_ = np.flatnonzero(enc.changeable & ~chosen)
        gain = (current[open_] - fixed[open_] - enc.free_mass[open_] * Q[best[open_]]) * _visits(enc, probs)[open_]
        useful = gain > 1e-15
        if not useful.any():
            return None
        order = np.argsort(-gain[useful], kind="stable")
        states, gains = open_[useful][order], gain[useful][order]
        take = max(1, int(np.searchsorted(np.cumsum(gains), values[enc.s0] - gamma)) + 1)
        picked = states[:take]
        best_row[picked] = best[picked]
        chosen[picked] = True
        probs = _switch(enc, probs, best_row, picked)
        values = evaluate(enc, probs)
    for s in np.flatnonzero(chosen)[::-1]:
        if time.perf_counter() - t0 > time_limit:
            break
        trial = chosen.copy()
        trial[s] = False
        candidate = _switch(enc, enc.sigma, best_row, np.flatnonzero(trial))
        if evaluate(enc, candidate)[enc.s0] <= gamma:
            chosen, probs = trial, candidate
    return probs
