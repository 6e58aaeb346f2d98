"""Primal heuristics for sparse counterfactuals (few changed states): the d0 incumbents the MILP starts from.

All of them rank states by the performance difference of min-reachability: with the values V and the expected
visits ν of the current policy (visits discounted by 0.9999 so that the linear system stays regular when a policy
has end components), switching state s to its best controllable row lowers p(s0) by about ν(s)·(Σ_r π(r) Q_r(V) -
min_r Q_r(V)), and reverting a switched state to σ raises it by about ν(s)·(Σ_r σ(r) Q_r(V) - V(s)). Every move is
then decided exactly: the candidate set C of switched states is evaluated by :func:`robust.switched_optimum` (policy
iteration with C free, which also picks the best rows in C).

- :func:`greedy_d0`: forward selection (switch the best-scoring states until their estimated gain covers the excess
  p(s0) - γ, recompute, repeat), then :func:`exchange`;
- :func:`rounded_d0`: the same forward selection started from the states the d0 MILP's LP relaxation switches;
- :func:`exchange`: bulk moves, each decided by one exact evaluation: drop the switched states of least loss whose
  summed loss fits the slack γ - p(s0), or swap the j switched states of least loss for the j unswitched states of
  largest gain where gain exceeds loss (j adapts: doubled after a success, halved after a failure). On the 10^5-state
  process model this reaches 3,308 switched states in 4 s, where one-at-a-time deletion needed 250 s for 3,348;
- :func:`improve_d0`: local search on a valid C: :func:`exchange`, then drop a state, or swap two states for one,
  while p(s0) <= γ.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from ..deadline import Deadline
from .bellman import expectation, policy_matrix, q_values
from .preanalysis import Encoding
from .robust import Radius, switched_optimum

#: discount of the expected-visits estimate (only ranks states; validity is checked exactly)
VISIT_DISCOUNT = 0.9999
#: how many of the best-ranked removals the local search evaluates before giving up
TRIALS = 8
#: swaps tried per round: pairs of cheap switched states x promising unswitched states
SWAP_PAIRS, SWAP_ENTRIES = 3, 4
#: bulk moves: the share of the slack the dropped states' estimated losses may use, the first share of the
#: promising swaps tried, and how much an entering state's gain must exceed the leaving state's loss
DROP_SHARE, SWAP_SHARE, SWAP_MARGIN = 0.9, 0.2, 1.05
#: LP rounding: the states the relaxation switches at least this much start switched (0.3-0.7 end within 1 of
#: each other on the 10^5-state process model)
ROUNDING_THRESHOLD = 0.5


def _visits(enc: Encoding, probs: np.ndarray) -> np.ndarray:
    P = (policy_matrix(enc, probs) @ enc.P).tocsc()
    e = np.zeros(enc.n_maybe)
    e[enc.s0] = 1.0
    return np.maximum(spsolve((sp.identity(enc.n_maybe, format="csc") - VISIT_DISCOUNT * P.T).tocsc(), e), 0.0)


def _scores(enc: Encoding, probs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per maybe state: the estimated gain of switching it to its best row and the estimated loss of reverting it
    to σ, both first-order (visits times the one-step difference)."""
    Q = q_values(enc, values)
    visits = _visits(enc, probs)
    current = expectation(enc, probs, Q)
    fixed = expectation(enc, np.where(enc.free, 0.0, enc.sigma), Q)
    best_q = np.full(enc.n_maybe, np.inf)
    np.minimum.at(best_q, enc.row_state[enc.free], Q[enc.free])
    with np.errstate(invalid="ignore"):
        gain = np.where(enc.changeable, current - fixed - enc.free_mass * np.where(np.isfinite(best_q), best_q, 0.0),
                        0.0)
        loss = expectation(enc, enc.sigma, Q) - current
    gain = np.where(np.isfinite(gain), gain, 0.0)                 # infinite values (rewards): no estimate
    loss = np.where(np.isnan(loss), np.inf, loss)
    return gain * visits, loss * visits


def greedy_d0(enc: Encoding, gamma: float, deadline: Deadline | None = None,
              chosen: np.ndarray | None = None) -> Radius | None:
    """A small set of switched states with p(s0) <= γ (its optimal policy), or None if none was found in time.
    ``chosen``: the states switched from the start (mask over maybe states; default none)."""
    deadline = deadline or Deadline()
    chosen = np.zeros(enc.n_maybe, dtype=bool) if chosen is None else chosen & enc.changeable
    result = switched_optimum(enc, chosen, deadline=deadline)
    while result.value > gamma:
        if deadline.expired:
            return None
        gain, _ = _scores(enc, result.policy, result.values)
        open_ = np.flatnonzero(enc.changeable & ~chosen & (gain > 1e-15))
        if open_.size == 0:
            return None
        order = open_[np.argsort(-gain[open_], kind="stable")]
        take = max(1, int(np.searchsorted(np.cumsum(gain[order]), result.value - gamma)) + 1)
        chosen[order[:take]] = True
        result = switched_optimum(enc, chosen, result.values, deadline)
    return exchange(enc, chosen, result, gamma, deadline)


def rounded_d0(enc: Encoding, switch_share: np.ndarray, gamma: float,
               deadline: Deadline | None = None) -> Radius | None:
    """LP rounding: the states whose share of switched mass in the d0 MILP's LP relaxation (``switch_share``, per
    maybe state: Σ_r z_r) is at least :data:`ROUNDING_THRESHOLD`, completed by :func:`greedy_d0`'s forward
    selection and improved by :func:`exchange`. On the 10^5-state process model this finds 3,267 switched states in
    2 s where the greedy heuristic from no switched state stops at 3,309 (the relaxation's bound: 3,152)."""
    return greedy_d0(enc, gamma, deadline, chosen=switch_share >= ROUNDING_THRESHOLD)


def exchange(enc: Encoding, chosen: np.ndarray, result: Radius, gamma: float, deadline: Deadline) -> Radius:
    """Bulk drops and swaps (module docstring) from the valid switched set ``chosen`` (updated) with its optimum
    ``result``, until neither is estimated to help; returns the optimum of the final set."""
    drop, swap = DROP_SHARE, SWAP_SHARE
    while not deadline.expired:
        gain, loss = _scores(enc, result.policy, result.values)
        members = np.flatnonzero(chosen)
        members = members[np.argsort(loss[members], kind="stable")]
        outside = np.flatnonzero(enc.changeable & ~chosen & (gain > 0))
        outside = outside[np.argsort(-gain[outside], kind="stable")]
        k = int(np.searchsorted(np.cumsum(loss[members]), drop * (gamma - result.value)))
        if k >= 1:
            trial = switched_optimum(enc, _moved(chosen, members[:k], ()), result.values, deadline)
            if trial.settled and trial.value <= gamma:
                chosen[members[:k]] = False
                result, drop = trial, min(DROP_SHARE, 2 * drop)
                continue
            drop /= 2
        q = min(members.size, outside.size)
        better = int(np.count_nonzero(gain[outside[:q]] > SWAP_MARGIN * loss[members[:q]]))
        j = int(better * swap)
        if j < 1:
            if k < 1 and better * swap < 0.5:
                break
            swap /= 2
            continue
        trial = switched_optimum(enc, _moved(chosen, members[:j], outside[:j]), result.values, deadline)
        if trial.settled and trial.value < result.value:
            chosen[members[:j]], chosen[outside[:j]] = False, True
            result, swap = trial, min(1.0, 2 * swap)
        else:
            swap /= 2
    return result


def _moved(chosen: np.ndarray, out, into) -> np.ndarray:
    trial = chosen.copy()
    trial[np.asarray(out, dtype=np.int64)] = False
    trial[np.asarray(into, dtype=np.int64)] = True
    return trial


def improve_d0(enc: Encoding, changed: np.ndarray, gamma: float, deadline: Deadline | None = None) -> Radius:
    """Local search from the valid switched set ``changed``: bulk exchanges, then drop states and swap two for one,
    while p(s0) <= γ; returns the optimum of the smallest set found."""
    deadline = deadline or Deadline()
    chosen = changed.copy()
    result = switched_optimum(enc, chosen, deadline=deadline)
    if result.settled and result.value <= gamma:
        result = exchange(enc, chosen, result, gamma, deadline)
    while not deadline.expired:
        result = _drop(enc, chosen, result, gamma, deadline, TRIALS)
        swapped = _swap(enc, chosen, result, gamma, deadline)
        if swapped is None:
            break
        result = swapped
    return result


def _drop(enc: Encoding, chosen: np.ndarray, result: Radius, gamma: float, deadline: Deadline,
          trials: float) -> Radius:
    """Revert switched states to σ, least estimated loss first, while p(s0) stays <= γ (``chosen`` is updated)."""
    failures = 0
    while failures < trials and not deadline.expired:
        _, loss = _scores(enc, result.policy, result.values)
        members = np.flatnonzero(chosen)
        order = members[np.argsort(loss[members], kind="stable")]
        progress = False
        for s in order[failures:]:
            if deadline.expired or failures >= trials:
                break
            chosen[s] = False
            trial = switched_optimum(enc, chosen, result.values, deadline)
            if trial.settled and trial.value <= gamma:
                result, progress = trial, True
                break
            chosen[s] = True
            failures += 1
        if not progress:
            break
    return result


def _swap(enc: Encoding, chosen: np.ndarray, result: Radius, gamma: float, deadline: Deadline) -> Radius | None:
    """Replace the two switched states of least estimated loss by the unswitched state of largest estimated gain
    (the best of a few such swaps); None when no swap keeps p(s0) <= γ."""
    gain, loss = _scores(enc, result.policy, result.values)
    members = np.flatnonzero(chosen)
    if members.size < 2:
        return None
    cheap = members[np.argsort(loss[members], kind="stable")][:SWAP_PAIRS + 1]
    outside = np.flatnonzero(enc.changeable & ~chosen & (gain > 0))
    useful = outside[np.argsort(-gain[outside], kind="stable")][:SWAP_ENTRIES]
    for a, b in zip(cheap[:-1], cheap[1:]):
        for s in useful:
            if deadline.expired:
                return None
            chosen[[a, b]], chosen[s] = False, True
            trial = switched_optimum(enc, chosen, result.values, deadline)
            if trial.settled and trial.value <= gamma:
                return trial
            chosen[[a, b]], chosen[s] = True, False
    return None
