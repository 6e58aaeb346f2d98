"""Vectorised Bellman kernels on the pruned encoding: policy evaluation and the TV-ball operator of d∞.

Notation (seed 000, Section 4): p_s is the probability of reaching the target from s; for a row r = (s, a),
Q_r = Σ_s' δ(s, a, s') p_s' + b_r, with b_r the mass of r into the states with p = 1 and ``leak_r`` its mass into
the states with p = 0. A policy gives every row a probability.
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
    """p^π on the maybe states, the least solution of p = P_π p + b_π, with the 0/1 cases decided on the graph of π
    (as Storm does before it solves): states that cannot reach the target get 0; states that reach it surely (no
    path to a state with p = 0 or to one that cannot reach the target) get 1; one sparse LU solve for the rest.

    The graph analysis makes the result exact where floating-point solves fail: a policy that leaves an end
    component with probability 1e-7 per step has a nearly singular linear system, but its qualitative structure
    (every state reaches the target surely) is decided exactly."""
    S = policy_matrix(enc, probs)
    P_pi = (S @ enc.P).tocsr()
    P_pi.eliminate_zeros()
    b_pi = S @ enc.b
    k = enc.n_maybe
    values = np.zeros(k)
    sources = np.flatnonzero(b_pi > 0)
    if sources.size == 0:
        return values
    back = P_pi.T.tocsr()
    live = _reached(back, sources)                                   # can reach the target
    leaking = (policy_matrix(enc, (probs > 0) & (enc.leak > 0)) @ np.ones(enc.rows.size)) > 0
    missing = _reached(back, np.flatnonzero(leaking | ~live))        # can reach a state with p = 0
    sure = live & ~missing
    values[sure] = 1.0
    rest = np.flatnonzero(live & missing)
    if rest.size:
        sub = P_pi[rest]
        A = (sp.identity(rest.size, format="csc") - sub[:, rest]).tocsc()
        rhs = b_pi[rest] + sub @ values
        values[rest] = np.clip(np.atleast_1d(spsolve(A, rhs)), 0.0, 1.0)
    return values


def q_values(enc: Encoding, values: np.ndarray) -> np.ndarray:
    """Q_r = Σ_s' P(r, s') p_s' + b_r for every row."""
    return enc.P @ values + enc.b


def radii(enc: Encoding, delta: float | np.ndarray) -> np.ndarray:
    """The radius δ_s of every maybe state (a scalar applies to all)."""
    return np.broadcast_to(np.asarray(delta, dtype=float), (enc.n_maybe,))


def tv_ball_step(enc: Encoding, values: np.ndarray, delta: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of min-reachability value iteration over total-variation balls (Δ_s <= δ_s).

    In a changeable state the best distribution within TV distance δ_s of σ(s) (keeping σ on uncontrollable rows)
    moves up to δ_s probability mass from the controllable rows with the highest Q to the one with the lowest Q
    (greedy; exact for a linear objective over the ball). Other states play σ. ``delta`` is one radius for all
    states or one per maybe state (δ_s = 1 frees a state completely: Pmin over those states). Returns the new
    values and the greedy policy (one probability per row).
    """
    Q = q_values(enc, values)
    probs = enc.sigma.copy()
    free = np.flatnonzero(enc.free)
    delta = radii(enc, delta)
    if free.size and np.any(delta > 0):
        state = enc.row_state[free]
        order = np.lexsort((-Q[free], state))          # by state, then Q descending
        rows, state = free[order], state[order]
        last = np.r_[state[1:] != state[:-1], True]    # the lowest-Q row of each state receives the mass
        receiver = rows[last]
        mass = enc.free_mass[state[last]]
        moved = np.minimum(delta[state[last]], mass - enc.sigma[receiver])
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
