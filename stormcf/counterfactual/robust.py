"""The exact d∞ special case: bisection on δ with robust policy iteration over total-variation balls.

For a radius δ, the strategies with d∞(σ, σ') <= δ are, state by state, the distributions in the TV ball
B_δ(σ(s)) (intersected with what the user controls). The least reachability probability over them,

    V_δ = least fixed point of  p_s = min_{μ ∈ B_δ(σ(s))} Σ_a μ(a)·Q(s, a),

is non-increasing in δ, and the optimal d∞ is δ* = min{δ : V_δ(s0) <= γ}. Each radius is decided exactly:

1. **avoid set** Z_δ: the states from which some strategy of the ball avoids the target surely (a greatest fixed
   point on the graph: a state stays in Z if, dropping controllable rows that leave Z costs at most δ of mass and
   a controllable row staying in Z can take it, all its remaining rows stay in Z). They get p = 0 and play that
   avoiding distribution.
2. With Z_δ fixed to 0 every policy of the ball reaches the target or Z_δ almost surely, so the Bellman operator
   has a unique fixed point and **policy iteration** (exact sparse solves; the greedy step moves up to δ mass to
   the lowest-Q row) converges to V_δ: end components cannot fool it.

Bisection keeps the best feasible policy (its d∞ is the upper end); the largest radius found infeasible is a lower
bound on δ*. Everything is vectorised numpy (no loop over states or transitions).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .analysis import Encoding
from .bellman import evaluate, tv_ball_step

#: policy-iteration rounds per radius before the radius counts as undecided
MAX_ROUNDS = 500


@dataclass
class DinfOutcome:
    """``probs``: the best valid policy found (rows of the encoding), ``dinf`` its d∞; ``lower``: no strategy with
    d∞ < lower meets the bound."""

    probs: np.ndarray | None
    dinf: float
    lower: float
    radii: int
    time: float
    timed_out: bool = False


def changes(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """Δ_s (total variation to σ) of every maybe state under a policy."""
    return np.bincount(enc.row_state, weights=np.maximum(enc.sigma - probs, 0.0), minlength=enc.n_maybe)


def avoid_set(enc: Encoding, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Z_δ (mask over maybe states) and a policy of the ball that never leaves it (rows of Z states)."""
    k = enc.n_maybe
    inside = np.ones(k, dtype=bool)
    has_mass = enc.sigma > 0
    while True:
        bad = (enc.b > 0) | (enc.P @ (~inside).astype(float) > 0)
        fixed_bad = np.bincount(enc.row_state, weights=(bad & ~enc.free & has_mass).astype(float), minlength=k)
        removed = np.bincount(enc.row_state, weights=np.where(bad & enc.free, enc.sigma, 0.0), minlength=k)
        receivers = np.bincount(enc.row_state, weights=(~bad & enc.free).astype(float), minlength=k)
        ok = inside & (fixed_bad == 0) & (removed <= delta + 1e-12) & ((removed == 0) | (receivers > 0))
        if np.array_equal(ok, inside):
            break
        inside = ok
    probs = enc.sigma.copy()
    rows_in = inside[enc.row_state]
    drop = rows_in & bad & enc.free
    probs[drop] = 0.0
    good = np.flatnonzero(rows_in & ~bad & enc.free)
    states, first = np.unique(enc.row_state[good], return_index=True)
    moved = np.bincount(enc.row_state, weights=np.where(drop, enc.sigma, 0.0), minlength=k)
    probs[good[first]] += moved[states]
    return inside, probs


def decide_radius(enc: Encoding, delta: float, gamma: float, deadline: float | None = None) \
        -> tuple[bool | None, np.ndarray | None]:
    """Is min over the δ-ball of Pr(F target) at s0 <= γ?  (True, optimal policy) / (False, None), or (None, None)
    when policy iteration did not settle (round limit or deadline)."""
    avoid, avoiding = avoid_set(enc, delta)
    if avoid[enc.s0]:
        return True, avoiding
    keep = avoid[enc.row_state]
    values = np.zeros(enc.n_maybe)
    policy = None
    for _ in range(MAX_ROUNDS):
        _, candidate = tv_ball_step(enc, values, delta)
        candidate[keep] = avoiding[keep]
        new = evaluate(enc, candidate)
        settled = policy is not None and float(np.max(values - new)) <= 1e-14
        policy, values = candidate, new
        if values[enc.s0] <= gamma:
            return True, policy
        if settled:
            return False, None
        if deadline is not None and time.perf_counter() > deadline:
            break
    return None, None


def dinf_bisection(enc: Encoding, gamma: float, tolerance: float = 1e-7,
                   time_limit: float | None = None) -> DinfOutcome:
    """The optimal d∞ within ``tolerance`` (see the module docstring)."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    ok, probs = decide_radius(enc, 1.0, gamma, deadline=deadline)
    if not ok:
        return DinfOutcome(None, np.inf, 1.0 if ok is False else 0.0, 1, time.perf_counter() - t0)
    lo, hi, best, radii = 0.0, float(changes(enc, probs).max(initial=0.0)), probs, 1
    lower = 0.0
    while hi - lo > tolerance:
        if deadline is not None and time.perf_counter() > deadline:
            return DinfOutcome(best, hi, lower, radii, time.perf_counter() - t0, timed_out=True)
        mid = 0.5 * (lo + hi)
        ok, probs = decide_radius(enc, mid, gamma, deadline=deadline)
        radii += 1
        if ok:
            best, hi = probs, min(mid, float(changes(enc, probs).max(initial=0.0)))
        else:
            lo = mid
            if ok is False:
                lower = mid
    return DinfOutcome(best, hi, lower, radii, time.perf_counter() - t0)
