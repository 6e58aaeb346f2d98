"""The d∞ special case: bisection on δ with robust policy iteration over total-variation balls.

For a radius δ, the strategies with d∞(σ, σ') <= δ are, state by state, the distributions in the TV ball
B_δ(σ(s)) (intersected with what the user controls). The least reachability probability over them,

    V_δ = least fixed point of  p_s = min_{μ ∈ B_δ(σ(s))} Σ_a μ(a)·Q(s, a),

is non-increasing in δ (and jumps where a larger ball lets a strategy close an end component that avoids the
target), and the optimal d∞ is δ* = min{δ : V_δ(s0) <= γ}. Each radius is decided as follows:

1. **avoid set** Z_δ: the states from which some strategy of the ball avoids the target surely (a greatest fixed
   point on the graph: a state stays in Z if, dropping controllable rows that leave Z costs at most δ of mass and
   a controllable row staying in Z can take it, all its remaining rows stay in Z). They get p = 0 and play that
   avoiding distribution: at the jumps of V_δ the optimal strategy is this vertex of the ball, which leaves the
   end component with probability exactly 0.
2. With Z_δ fixed to 0 every policy of the ball reaches the target or a state with p = 0 almost surely, so the
   Bellman operator has a unique fixed point and **policy iteration** (the greedy step moves up to δ mass to the
   lowest-Q row; each policy is evaluated with its 0/1 states decided on its graph, :func:`bellman.evaluate`)
   converges to V_δ: end components cannot fool it.

The bisection keeps two brackets: ``upper``, the d∞ of the best policy Storm accepted, and ``lower``, the largest
radius *proven* infeasible (policy iteration converged with V_δ(s0) above γ by more than its numerical slack).
Radii with a value within that slack of γ are neither: the bisection moves past them without claiming a bound.
A policy is only a candidate if Storm accepts it (the caller's ``accept``); when Storm rejects the policy at the
smallest feasible radius (its value is within Storm's precision of γ), the bisection is repeated with the
feasibility threshold γ·(1 - ρ) for growing relative margins ρ. Everything is vectorised numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..deadline import Deadline
from .analysis import Encoding
from .bellman import evaluate, radii, tv_ball_step

#: policy-iteration rounds per radius before the radius counts as undecided
MAX_ROUNDS = 500
#: relative slack a computed value must exceed γ by before a radius counts as proven infeasible
PROOF_SLACK = 1e-8
#: relative margins of the feasibility threshold γ·(1 - ρ), tried in turn while Storm rejects the policy found
MARGINS = (0.0, 1e-9, 1e-7, 1e-5)
#: the bisection stops when upper - lower <= RELATIVE_TOLERANCE·upper (+ 1e-12)
RELATIVE_TOLERANCE = 1e-6


@dataclass
class Radius:
    """What policy iteration found for one radius: ``value`` = V_δ(s0) (exact up to floating point when
    ``settled``, else the value of the best policy found: an upper bound), ``policy`` that policy."""

    delta: float | np.ndarray
    value: float
    policy: np.ndarray
    values: np.ndarray
    settled: bool


@dataclass
class DinfOutcome:
    """``probs``: the best policy Storm accepted (rows of the encoding), ``dinf`` its d∞; ``lower``: no strategy with
    d∞ < lower meets the bound (proven); ``radii``: radii decided; ``timed_out``: the deadline stopped it."""

    probs: np.ndarray | None
    dinf: float
    lower: float
    radii: int
    timed_out: bool = False


def changes(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    """Δ_s (total variation to σ) of every maybe state under a policy."""
    return np.bincount(enc.row_state, weights=np.maximum(enc.sigma - probs, 0.0), minlength=enc.n_maybe)


def dinf_of(enc: Encoding, probs: np.ndarray) -> float:
    return float(changes(enc, probs).max(initial=0.0))


def avoid_set(enc: Encoding, delta: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Z_δ (mask over maybe states) and a policy of the ball that never leaves it (rows of Z states); ``delta`` is
    one radius or one per maybe state."""
    k = enc.n_maybe
    delta = radii(enc, delta)
    inside = np.ones(k, dtype=bool)
    has_mass = enc.sigma > 0
    while True:
        bad = (enc.b > 0) | (enc.P @ (~inside).astype(float) > 0)
        fixed_bad = np.bincount(enc.row_state, weights=(bad & ~enc.free & has_mass).astype(float), minlength=k)
        removed = np.bincount(enc.row_state, weights=np.where(bad & enc.free, enc.sigma, 0.0), minlength=k)
        receivers = np.bincount(enc.row_state, weights=(~bad & enc.free).astype(float), minlength=k)
        ok = inside & (fixed_bad == 0) & (removed <= delta + 1e-15) & ((removed == 0) | (receivers > 0))
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


def decide_radius(enc: Encoding, delta: float | np.ndarray, threshold: float, start: np.ndarray | None = None,
                  deadline: Deadline | None = None) -> Radius:
    """Policy iteration for V_δ, stopping early once a policy's value at s0 is <= ``threshold`` (feasible).

    ``start``: values to take the first greedy step from (the values of a nearby radius), else zeros."""
    avoid, avoiding = avoid_set(enc, delta)
    if avoid[enc.s0]:
        return Radius(delta, 0.0, avoiding, np.zeros(enc.n_maybe), True)
    keep = avoid[enc.row_state]
    values = np.zeros(enc.n_maybe) if start is None else np.where(avoid, 0.0, start)
    policy = None
    for _ in range(MAX_ROUNDS):
        bellman, candidate = tv_ball_step(enc, values, delta)
        candidate[keep] = avoiding[keep]
        if policy is not None:
            gain = np.where(avoid, 0.0, values - bellman)
            if float(gain.max(initial=0.0)) <= 1e-12 * float(values.max(initial=0.0)) + 1e-16:
                return Radius(delta, float(values[enc.s0]), policy, values, True)
        policy, values = candidate, evaluate(enc, candidate)
        if values[enc.s0] <= threshold or (deadline is not None and deadline.expired):
            break
    return Radius(delta, float(values[enc.s0]), policy, values, False)


def dinf_bisection(enc: Encoding, gamma: float, start: np.ndarray | None, accept: Callable[[np.ndarray], bool],
                   deadline: Deadline | None = None, scope: np.ndarray | None = None) -> DinfOutcome:
    """The optimal d∞ (see the module docstring). ``start``: a policy Storm accepted (the pre-analysis witness), or
    None; ``accept(policy)``: whether Storm accepts a policy (the caller records the accepted ones). With ``scope``
    (mask over maybe states) only those states may change (radius δ there, 0 elsewhere): the least d∞ among such
    strategies, and ``lower`` bounds only those."""
    deadline = deadline or Deadline()
    unit = np.ones(enc.n_maybe) if scope is None else scope.astype(float)
    if start is None:
        full = decide_radius(enc, unit, gamma, deadline=deadline)
        if full.value > gamma or not accept(full.policy):
            return DinfOutcome(None, np.inf, 0.0, 1, timed_out=deadline.expired)
        start = full.policy
    upper, best = dinf_of(enc, start), start
    lower, radii, values = 0.0, 0, None
    for margin in MARGINS:
        threshold = gamma * (1.0 - margin)
        lo, hi, policy = lower, upper, None
        while hi - lo > RELATIVE_TOLERANCE * hi + 1e-12:
            if deadline.expired:
                if policy is not None and hi < upper and accept(policy):
                    upper, best = hi, policy
                return DinfOutcome(best, upper, lower, radii, timed_out=True)
            mid = 0.5 * (lo + hi)
            r = decide_radius(enc, mid * unit, threshold, values, deadline)
            radii, values = radii + 1, r.values
            if r.value <= threshold:
                hi, policy = dinf_of(enc, r.policy), r.policy
            else:
                lo = mid
                if r.settled and r.value > gamma * (1.0 + PROOF_SLACK) + 1e-15:
                    lower = max(lower, mid)
        if policy is None or hi >= upper:
            break
        if accept(policy):
            upper, best = hi, policy
            break
    return DinfOutcome(best, upper, min(lower, upper), radii)


def switched_optimum(enc: Encoding, changed: np.ndarray, start: np.ndarray | None = None,
                     deadline: Deadline | None = None) -> Radius:
    """The least reachability probability when exactly the states ``changed`` (mask over maybe states) may change
    their controllable choices freely and every other state keeps σ: policy iteration with radius 1 on ``changed``
    and 0 elsewhere. The optimal policy is deterministic on the controllable choices of ``changed`` (the greedy
    step moves all their mass to one row), so it is a d0 candidate with d0 <= |changed|."""
    return decide_radius(enc, changed.astype(float), -np.inf, start, deadline)
