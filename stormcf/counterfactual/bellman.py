"""Vectorised Bellman kernels on the pruned encoding: policy evaluation and the TV-ball operator of d∞.

Notation (seed 000, Section 4): p_s is the probability of reaching the target from s; for a row r = (s, a),
Q_r = Σ_s' δ(s, a, s') p_s' (+ the mass into states with p = 1). A policy gives every row a probability.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from ..reachability import _reached   # the foundation's one-BFS graph search (C loops)
from .analysis import Encoding


def policy_matrix(enc: Encoding, probs: np.ndarray) -> sp.csr_matrix:
    """S_π (k x rows) with S[s, r] = π(r) for the rows of maybe state s."""
    return sp.csr_matrix((probs, (enc.row_state, np.arange(enc.rows.size))), shape=(enc.n_maybe, enc.rows.size))


def evaluate(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """p^π on the maybe states: the least solution of p = P_π p + b_π (states that cannot reach b > 0 get 0),
    by one sparse LU solve."""
    S = policy_matrix(enc, probs)
    P_pi = (S @ enc.P).tocsr()
    P_pi.eliminate_zeros()
    b_pi = S @ enc.b
    k = enc.n_maybe
    sources = np.flatnonzero(b_pi > 0)
    values = np.zeros(k)
    if sources.size == 0:
        return values
    live = np.flatnonzero(_reached(P_pi.T.tocsr(), sources))   # states that can reach b > 0
    sub = P_pi[live][:, live]
    A = (sp.identity(live.size, format="csc") - sub).tocsc()
    values[live] = np.clip(np.atleast_1d(spsolve(A, b_pi[live])), 0.0, 1.0)
    return values


def q_values(enc: Encoding, values: np.ndarray) -> np.ndarray:
    """Q_r = Σ_s' P(r, s') p_s' + b_r for every row."""
    return enc.P @ values + enc.b


def tv_ball_step(enc: Encoding, values: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """One step of min-reachability value iteration over total-variation balls (d∞ <= δ).

    In a changeable state the best distribution within TV distance δ of σ(s) (keeping σ on uncontrollable rows)
    moves up to δ probability mass from the controllable rows with the highest Q to the one with the lowest Q
    (greedy; exact for a linear objective over the ball). Other states play σ. Returns the new values and the
    greedy policy (one probability per row).
    """
    Q = q_values(enc, values)
    probs = enc.sigma.copy()
    free = np.flatnonzero(enc.free)
    if free.size and delta > 0:
        state = enc.row_state[free]
        order = np.lexsort((-Q[free], state))          # by state, then Q descending
        rows, state = free[order], state[order]
        last = np.r_[state[1:] != state[:-1], True]    # the lowest-Q row of each state receives the mass
        receiver = rows[last]
        mass = enc.free_mass[state[last]]
        moved = np.minimum(delta, mass - enc.sigma[receiver])
        sigma = enc.sigma[rows]
        first = np.r_[True, state[1:] != state[:-1]]
        group = np.cumsum(first) - 1
        cum = np.cumsum(sigma)
        before = cum - sigma - (cum - sigma)[first][group]
        take = np.clip(moved[group] - before, 0.0, sigma)
        take[last] = 0.0
        probs[rows] -= take
        probs[receiver] += moved
    new = np.bincount(enc.row_state, weights=probs * Q, minlength=enc.n_maybe)
    return new, probs
