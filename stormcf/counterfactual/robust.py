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

Expected rewards (upper bounds, see :mod:`preanalysis`) replace step 1 by its dual: the states from which some strategy
of the ball reaches the target almost surely without forbidden rows (:func:`proper_set`, a nested fixed point on
the graph, as Storm's prob1 of Pmax) keep finite values, the others are infinite; policy iteration starts from a
*proper* policy of the ball there (every state moves towards the target with positive probability) and changes a
state only when that strictly improves it, so it stays proper (a policy that loops forever earns infinite reward:
there are no zero-reward end components) and converges to V_δ.
A policy is only a candidate if Storm accepts it (the caller's ``accept``); when Storm rejects the policy at the
smallest feasible radius (its value is within Storm's precision of γ), the bisection is repeated with the
feasibility threshold γ·(1 - ρ) for growing relative margins ρ. Everything is vectorised numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..deadline import Deadline
from ..reachability import reached_from
from .bellman import evaluate, leaves_surely, radii, state_sums, tightened, tv_ball_step
from .preanalysis import Encoding, Region

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


def changes(enc: Encoding | Region, probs: np.ndarray) -> np.ndarray:
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
    if enc.is_reward:
        return _decide_reward_radius(enc, radii(enc, delta), threshold, start, deadline)
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
    assert policy is not None           # set by the first of the MAX_ROUNDS >= 1 rounds
    return Radius(delta, float(values[enc.s0]), policy, values, False)


def _decide_reward_radius(enc: Encoding, delta: np.ndarray, threshold: float, start: np.ndarray | None,
                          deadline: Deadline | None) -> Radius:
    """Policy iteration over the ball for expected rewards, from a proper policy (the greedy policy of the values
    ``start`` of a nearby radius when it is proper, else :func:`proper_set`'s), with strict improvements only."""
    proper, policy = proper_set(enc, delta)
    if not proper[enc.s0]:
        return Radius(delta, np.inf, policy, np.full(enc.n_maybe, np.inf), True)
    if start is not None:
        _, greedy = tv_ball_step(enc, np.where(proper, start, np.inf), delta)
        greedy = np.where(proper[enc.row_state], greedy, policy)
        if leaves_surely(enc, greedy)[proper].all() and not (enc.forbidden & (greedy > 0) &
                                                             proper[enc.row_state]).any():
            policy = greedy
    values = np.where(proper, evaluate(enc, policy), np.inf)
    for _ in range(MAX_ROUNDS):
        if values[enc.s0] <= threshold or (deadline is not None and deadline.expired):
            break
        bellman, candidate = tv_ball_step(enc, values, delta)
        gain = np.where(proper, values - bellman, 0.0)
        scale = float(np.abs(values[proper]).max(initial=0.0))
        better = gain > 1e-12 * scale + 1e-16
        if not better.any():
            return Radius(delta, float(values[enc.s0]), policy, values, True)
        policy = np.where(better[enc.row_state], candidate, policy)
        values = np.where(proper, evaluate(enc, policy), np.inf)
    return Radius(delta, float(values[enc.s0]), policy, values, False)


def proper_set(enc: Encoding, delta: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maybe states from which some strategy of the ball (radius ``delta``, one or per state) leaves the maybe
    states almost surely without a forbidden row, and a proper policy of the ball on them (σ elsewhere).

    A greatest fixed point U: a state stays if its uncontrollable rows stay in U, the σ-mass of its controllable rows
    that leave U fits within its radius (and a controllable row staying in U can take it), and it can reach an exit
    through rows that can carry mass; the policy moves towards an exit along a breadth-first tree."""
    k = enc.n_maybe
    delta = radii(enc, delta)
    fixed = ~enc.free & (enc.sigma > 0)
    inside = np.ones(k, dtype=bool)
    while True:
        stay = ~enc.forbidden & ~(enc.P @ (~inside).astype(float) > 0)
        leaving = state_sums(enc, np.where(enc.free & ~stay, enc.sigma, 0.0))
        receivers = state_sums(enc, (enc.free & stay).astype(float)) > 0
        ok = inside & (state_sums(enc, (fixed & ~stay).astype(float)) == 0) & (leaving <= delta + 1e-15) & \
            ((leaving == 0) | receivers)
        usable = stay & ok[enc.row_state] & (fixed | (enc.free & ((enc.sigma > 0) | (delta[enc.row_state] > 0))))
        exits = np.flatnonzero(state_sums(enc, (usable & (enc.exit > 0)).astype(float)) > 0)
        back = _usable_graph(enc, usable).T.tocsr()
        new = ok & reached_from(back, exits)
        if np.array_equal(new, inside):
            break
        inside = new
    return inside, _proper_policy(enc, inside, usable, stay, back, exits, delta)


def _usable_graph(enc: Encoding, usable: np.ndarray) -> sp.csr_matrix:
    entry_row = np.repeat(np.arange(enc.rows.size), np.diff(enc.P.indptr))
    keep = usable[entry_row]
    return sp.csr_matrix((np.ones(int(keep.sum())), (enc.row_state[entry_row[keep]], enc.P.indices[keep])),
                         shape=(enc.n_maybe, enc.n_maybe))


def _proper_policy(enc: Encoding, inside: np.ndarray, usable: np.ndarray, stay: np.ndarray, back, exits: np.ndarray,
                   delta: np.ndarray) -> np.ndarray:
    """σ with the controllable rows that leave ``inside`` emptied and, in every state of ``inside``, probability on a
    *progress* row (an exit, or a step to the state's parent in a breadth-first tree towards the exits)."""
    k = enc.n_maybe
    root = sp.csr_matrix((np.ones(exits.size), (np.zeros(exits.size, dtype=np.int64), exits)), shape=(1, k))
    tree = sp.bmat([[back, sp.csr_matrix((k, 1))], [root, sp.csr_matrix((1, 1))]], format="csr")
    _, parent = breadth_first_order(tree, k, directed=True, return_predecessors=True)
    parent = parent[:k]
    entry_row = np.repeat(np.arange(enc.rows.size), np.diff(enc.P.indptr))
    to_parent = np.zeros(enc.rows.size, dtype=bool)
    hit = usable[entry_row] & (enc.P.indices == parent[enc.row_state[entry_row]])
    to_parent[entry_row[hit]] = True
    progress_rows = usable & np.where(parent[enc.row_state] == k, enc.exit > 0, to_parent)
    progress = -np.ones(k, dtype=np.int64)
    candidates = np.flatnonzero(progress_rows)
    progress[enc.row_state[candidates[::-1]]] = candidates[::-1]          # the first progress row of each state
    probs = enc.sigma.copy()
    states = inside[enc.row_state]
    drop = enc.free & ~stay & states
    removed = state_sums(enc, np.where(drop, enc.sigma, 0.0))
    probs[drop] = 0.0
    has = np.flatnonzero(inside & (progress >= 0))
    target = progress[has]
    controllable = enc.free[target]
    receiver = np.where(controllable, target, -1)
    other = np.flatnonzero(enc.free & stay & states)                       # any controllable row that stays
    fallback = -np.ones(k, dtype=np.int64)
    fallback[enc.row_state[other[::-1]]] = other[::-1]
    receiver = np.where(receiver >= 0, receiver, fallback[has])
    give = (removed[has] > 0) & (receiver >= 0)
    np.add.at(probs, receiver[give], removed[has][give])
    empty = controllable & (probs[target] == 0)                          # progress row still without mass
    if empty.any():
        donor_mass = np.where(enc.free & stay & (probs > 0), probs, -1.0)
        donor = -np.ones(k, dtype=np.int64)
        order = np.lexsort((donor_mass, enc.row_state))
        last = np.r_[enc.row_state[order][1:] != enc.row_state[order][:-1], True]
        donor[enc.row_state[order[last]]] = np.where(donor_mass[order[last]] > 0, order[last], -1)
        s = has[empty]
        d = donor[s]
        move = np.where(d >= 0, np.minimum(delta[s], np.where(d >= 0, probs[np.maximum(d, 0)], 0.0)), 0.0)
        np.subtract.at(probs, d[d >= 0], move[d >= 0])
        np.add.at(probs, target[empty][d >= 0], move[d >= 0])
    return probs


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
    at_sigma = float(evaluate(enc, enc.sigma)[enc.s0])
    for margin in MARGINS:
        threshold = tightened(gamma, margin)
        lo, hi, policy = lower, upper, None
        v_lo, v_hi, side = at_sigma if lo == 0 else np.inf, float(evaluate(enc, start)[enc.s0]), None
        while hi - lo > RELATIVE_TOLERANCE * hi + 1e-12:
            if deadline.expired:
                if policy is not None and hi < upper and accept(policy):
                    upper, best = hi, policy
                return DinfOutcome(best, upper, lower, radii, timed_out=True)
            mid = _next_radius(lo, hi, v_lo, v_hi, threshold, side)
            r = decide_radius(enc, mid * unit, threshold, values, deadline)
            radii, values = radii + 1, r.values
            if r.value <= threshold:
                hi, policy, v_hi = dinf_of(enc, r.policy), r.policy, r.value
                side = "hi" if side != "hi" else "hi again"
            else:
                lo, v_lo = mid, (r.value if r.settled else np.inf)
                side = "lo" if side != "lo" else "lo again"
                if r.settled and r.value > gamma + PROOF_SLACK * abs(gamma) + 1e-15:
                    lower = max(lower, mid)
        lower, radii = _prove_below(enc, gamma, unit, hi, lower, radii, values, deadline)
        if policy is None or hi >= upper:
            break
        if accept(policy):
            upper, best = hi, policy
            break
    return DinfOutcome(best, upper, min(lower, upper), radii)


def _prove_below(enc: Encoding, gamma: float, unit: np.ndarray, hi: float, lower: float, radii: int,
                 values: np.ndarray | None, deadline: Deadline) -> tuple[float, int]:
    """Radii just below ``hi`` whose value exceeds γ by more than the numerical slack, when the search ended with
    its proven lower bound farther below ``hi`` than its tolerance (its last points were within the slack of γ):
    hi·(1 − f) for f = 1e-6, 1e-5, 1e-4, 1e-3; the first proven one raises ``lower``."""
    for fraction in (RELATIVE_TOLERANCE, 1e-5, 1e-4, 1e-3):
        radius = hi * (1 - fraction)
        if lower >= hi * (1 - RELATIVE_TOLERANCE) or radius <= lower or deadline.expired:
            break
        r = decide_radius(enc, radius * unit, -np.inf, values, deadline)
        radii += 1
        if r.settled and r.value > gamma + PROOF_SLACK * abs(gamma) + 1e-15:
            return radius, radii
    return lower, radii


def _next_radius(lo: float, hi: float, v_lo: float, v_hi: float, threshold: float, side: str | None) -> float:
    """The next radius of the search for V_δ(s0) = threshold in [lo, hi]: where the secant through (lo, V_lo) and
    (hi, V_hi) meets the threshold (V_δ is monotone and mostly smooth, so this converges in a few steps), kept 1%
    inside the bracket; the midpoint when a value is not known or after two steps that moved the same end."""
    width = hi - lo
    if side not in ("lo again", "hi again") and np.isfinite(v_lo) and np.isfinite(v_hi) and v_lo > v_hi:
        guess = lo + width * (v_lo - threshold) / (v_lo - v_hi)
        return float(np.clip(guess, lo + 0.01 * width, hi - 0.01 * width))
    return 0.5 * (lo + hi)


def switched_optimum(enc: Encoding, changed: np.ndarray, start: np.ndarray | None = None,
                     deadline: Deadline | None = None) -> Radius:
    """The least value (reachability probability, expected reward) when exactly the states ``changed`` (mask over
    maybe states) may change their controllable choices freely and every other state keeps σ: policy iteration with
    radius 1 on ``changed`` and 0 elsewhere. The optimal policy is deterministic on the controllable choices of
    ``changed`` (the greedy step moves all their mass to one row), so it is a d0 candidate with d0 <= |changed|."""
    return decide_radius(enc, changed.astype(float), -np.inf, start, deadline)
