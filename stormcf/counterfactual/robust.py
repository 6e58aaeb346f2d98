"""The exact d∞ special case: bisection on δ with robust value iteration over total-variation balls.

For a radius δ, the strategies with d∞(σ, σ') <= δ are, state by state, the distributions in the TV ball
B_δ(σ(s)) (intersected with what the user controls). The least reachability probability over them,

    V_δ = least fixed point of  p_s = min_{μ ∈ B_δ(σ(s))} Σ_a μ(a)·Q(s, a),

is non-increasing in δ, and the optimal d∞ is δ* = min{δ : V_δ(s0) <= γ}. Each radius is decided soundly:

- **infeasible** when value iteration *from below* (p = 0 on the maybe states; it converges to the least fixed
  point from under it, so end components cannot fool it) exceeds γ at s0;
- **feasible** when a concrete policy of the ball, improved by policy iteration from the greedy one, has
  p^π(s0) <= γ by an exact sparse solve.

Bisection keeps the best feasible policy; its d∞ is the upper end, and the largest radius proven infeasible is a
certified lower bound on δ*. Everything is vectorised numpy (no loop over states or transitions).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .analysis import Encoding
from .bellman import evaluate, tv_ball_step

#: stop value iteration when no value moves by more than this
VI_TOLERANCE = 1e-13


@dataclass
class DinfOutcome:
    """``probs``: the best valid policy found (rows of the encoding), ``dinf`` its d∞; ``lower``: no strategy with
    d∞ < lower meets the bound (certified by value iteration from below)."""

    probs: np.ndarray | None
    dinf: float
    lower: float
    radii: int
    time: float
    timed_out: bool = False


def changes(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """Δ_s (total variation to σ) of every maybe state under a policy."""
    return np.bincount(enc.row_state, weights=np.maximum(enc.sigma - probs, 0.0), minlength=enc.n_maybe)


def decide_radius(enc: Encoding, delta: float, gamma: float, max_iterations: int = 100_000,
                  deadline: float | None = None) -> tuple[bool | None, np.ndarray | None]:
    """Is min over the δ-ball of Pr(F target) at s0 <= γ?  (True, policy) / (False, None) / (None, None) when
    the two bounds meet within floating-point precision around γ or the deadline passes."""
    lower = np.zeros(enc.n_maybe)
    upper_policy = None
    upper = None
    check = 1
    for it in range(1, max_iterations + 1):
        new, greedy = tv_ball_step(enc, lower, delta)
        new = np.maximum(new, lower)
        if new[enc.s0] > gamma:
            return False, None
        converged = float(np.max(new - lower, initial=0.0)) <= VI_TOLERANCE
        lower = new
        if it == check or converged:
            check *= 2
            upper_policy, upper = _improve(enc, greedy, delta, upper_policy, upper)
            if upper[enc.s0] <= gamma:
                return True, upper_policy
            if converged or (deadline is not None and time.perf_counter() > deadline):
                return None, None
    return None, None


def _improve(enc: Encoding, policy: np.ndarray, delta: float, best: np.ndarray | None, best_values: np.ndarray | None,
             rounds: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Policy iteration from ``policy`` (min-reachability improvement is monotone: p^π' <= p^π)."""
    values = evaluate(enc, policy)
    if best_values is not None and best_values[enc.s0] < values[enc.s0]:
        policy, values = best, best_values
    for _ in range(rounds):
        _, candidate = tv_ball_step(enc, values, delta)
        new = evaluate(enc, candidate)
        if new[enc.s0] >= values[enc.s0] - 1e-15:
            break
        policy, values = candidate, new
    return policy, values


def dinf_bisection(enc: Encoding, gamma: float, tolerance: float = 1e-7,
                   time_limit: float | None = None) -> DinfOutcome:
    """The optimal d∞ within ``tolerance`` (see the module docstring)."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    ok, probs = decide_radius(enc, 1.0, gamma, deadline=deadline)
    if not ok:
        return DinfOutcome(None, np.inf, 1.0 if ok is False else 0.0, 1, time.perf_counter() - t0)
    lo, hi, best, radii = 0.0, float(changes(enc, probs).max(initial=0.0)), probs, 1
    certified = 0.0
    while hi - lo > tolerance:
        if deadline is not None and time.perf_counter() > deadline:
            return DinfOutcome(best, hi, certified, radii, time.perf_counter() - t0, timed_out=True)
        mid = 0.5 * (lo + hi)
        ok, probs = decide_radius(enc, mid, gamma, deadline=deadline)
        radii += 1
        if ok:
            best, hi = probs, min(mid, float(changes(enc, probs).max(initial=0.0)))
        else:
            lo = mid
            if ok is False:
                certified = mid
    return DinfOutcome(best, hi, certified, radii, time.perf_counter() - t0)
