"""Vectorised Bellman kernels on the pruned encoding: policy evaluation and the TV-ball operator of d∞.

Notation (seed 000, Section 4): v_s is the value of maybe state s (the probability of the target, or the expected
reward until it; see :mod:`preanalysis`); for a row r = (s, a), Q_r = Σ_s' δ(s, a, s') v_s' + b_r, with b_r the
constant part (the mass of r into the states with v = 1, or the reward of one step of r). A policy gives every row a
probability. Forbidden rows (into states of infinite value) have Q_r = ∞.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import spsolve

from ..reachability import reached_from  # the foundation's one-BFS graph search (C loops)
from .preanalysis import Encoding


#: systems from this size are solved in the order of their strongly connected components when those are all small
BLOCK_ORDER_SIZE, BLOCK_LIMIT = 20_000, 200


def tightened(gamma: float, rho: float) -> float:
    """γ moved by the relative margin ρ towards meeting the bound v <= γ: γ − ρ·|γ| (γ·(1 − ρ) for γ >= 0)."""
    return gamma - rho * abs(gamma)


def policy_matrix(enc: Encoding, probs: np.ndarray) -> sp.csr_matrix:
    """S_π (k x rows) with S[s, r] = π(r) for the rows of maybe state s."""
    return sp.csr_matrix((probs, (enc.row_state, np.arange(enc.rows.size))), shape=(enc.n_maybe, enc.rows.size))


def state_sums(enc: Encoding, per_row: np.ndarray) -> np.ndarray:
    """Σ over the rows of every maybe state."""
    return np.bincount(enc.row_state, weights=per_row, minlength=enc.n_maybe)


def expectation(enc: Encoding, probs: np.ndarray, per_row: np.ndarray) -> np.ndarray:
    """Σ_r π(r)·x_r per maybe state, where rows without probability count 0 even if x_r is infinite."""
    return state_sums(enc, np.where(probs > 0, probs * np.where(probs > 0, per_row, 0.0), 0.0))


def evaluate(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """v^π on the maybe states (see :func:`_probabilities` and :func:`_rewards`)."""
    return _rewards(enc, probs) if enc.is_reward else _probabilities(enc, probs)


def _probabilities(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """The least solution of p = P_π p + b_π, with the 0/1 cases decided on the graph of π (as Storm does before it
    solves): states that cannot reach the target get 0; states that reach it surely (no path to a state with p = 0
    or to one that cannot reach the target) get 1; one sparse LU solve for the rest.

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
    live = reached_from(back, sources)                               # can reach the target
    leaking = (policy_matrix(enc, (probs > 0) & (enc.leak > 0)) @ np.ones(enc.rows.size)) > 0
    missing = reached_from(back, np.flatnonzero(leaking | ~live))    # can reach a state with p = 0
    sure = live & ~missing
    values[sure] = 1.0
    rest = np.flatnonzero(live & missing)
    if rest.size:
        values[rest] = np.clip(_solve(P_pi, b_pi, values, rest), 0.0, 1.0)
    return values


def _rewards(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """The expected total reward until the maybe states are left, with Storm's convention: infinite from every
    state that does not leave them almost surely (it can reach a closed set of states without an exit) or that
    reaches a forbidden row with positive probability. The rest is one sparse LU solve."""
    S = policy_matrix(enc, probs)
    P_pi = (S @ enc.P).tocsr()
    P_pi.eliminate_zeros()
    back = P_pi.T.tocsr()
    exits = (S @ enc.exit) > 0
    doomed = ~reached_from(back, np.flatnonzero(exits)) | ((S @ (enc.forbidden & (probs > 0)).astype(float)) > 0)
    infinite = reached_from(back, np.flatnonzero(doomed))
    values = np.full(enc.n_maybe, np.inf)
    rest = np.flatnonzero(~infinite)
    if rest.size:
        values[rest] = _solve(P_pi, S @ enc.b, np.zeros(enc.n_maybe), rest)
    return values


def _solve(P_pi: sp.csr_matrix, b_pi: np.ndarray, known: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """v on ``rest`` from v = P_π v + b_π, the other states' values ``known``: one sparse LU solve. Large systems
    whose strongly connected components are all small (process models: almost every state is its own component)
    are ordered by component first (scipy numbers them in reverse topological order), which makes the matrix block
    triangular, and factorised in that order: about twice as fast as a fill-reducing ordering there."""
    sub = P_pi[rest]
    inner = sub[:, rest]
    outside = known.copy()
    outside[rest] = 0.0
    rhs = b_pi[rest] + sub @ outside
    if rest.size >= BLOCK_ORDER_SIZE:
        _, component = connected_components(inner, directed=True, connection="strong")
        if np.bincount(component).max() <= BLOCK_LIMIT:
            order = np.argsort(component, kind="stable")
            A = (sp.identity(rest.size, format="csr") - inner[order][:, order]).tocsc()
            out = np.empty(rest.size)
            out[order] = spsolve(A, rhs[order], permc_spec="NATURAL")
            return out
    A = (sp.identity(rest.size, format="csc") - inner).tocsc()
    return np.atleast_1d(spsolve(A, rhs))


def leaves_surely(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """Per maybe state: whether the policy leaves the maybe states almost surely from there (it is *proper*: no
    closed set of maybe states; then its Bellman operator has a unique fixed point)."""
    S = policy_matrix(enc, probs)
    P_pi = (S @ enc.P).tocsr()
    P_pi.eliminate_zeros()
    back = P_pi.T.tocsr()
    out = (S @ enc.exit) > 0
    stuck = ~reached_from(back, np.flatnonzero(out))
    return ~reached_from(back, np.flatnonzero(stuck))


def q_values(enc: Encoding, values: np.ndarray) -> np.ndarray:
    """Q_r = Σ_s' P(r, s') v_s' + b_r for every row (∞ for forbidden rows and rows into states of value ∞)."""
    finite = np.isfinite(values)
    Q = enc.P @ np.where(finite, values, 0.0) + enc.b
    if not finite.all():
        Q[(enc.P @ (~finite).astype(float)) > 0] = np.inf
    Q[enc.forbidden] = np.inf
    return Q


def radii(enc: Encoding, delta: float | np.ndarray) -> np.ndarray:
    """The radius δ_s of every maybe state (a scalar applies to all)."""
    return np.broadcast_to(np.asarray(delta, dtype=float), (enc.n_maybe,))


def tv_ball_step(enc: Encoding, values: np.ndarray, delta: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of min value iteration over total-variation balls (Δ_s <= δ_s).

    In a changeable state the best distribution within TV distance δ_s of σ(s) (keeping σ on uncontrollable rows)
    moves up to δ_s probability mass from the controllable rows with the highest Q to the one with the lowest Q
    (greedy; exact for a linear objective over the ball). Other states play σ. ``delta`` is one radius for all
    states or one per maybe state (δ_s = 1 frees a state completely: the optimum over those states). Returns the new
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
    return expectation(enc, probs, Q), probs
