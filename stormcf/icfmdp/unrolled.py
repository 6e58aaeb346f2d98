"""The time-unrolled counterfactual MDP, checked by Storm (standard 2: every reported value is Storm's).

States are pairs (t, s), t = 0..T, reachable from (0, s_0); a choice (s, a) at layer t < T leads to (t+1, s') with
the interval [LB_t, UB_t] (or the point probability of a CFMDP; transitions with UB = 0 are left out); layer T is
absorbing with reward 0. The state-action reward of (s, a) at every layer is R(s, a), so Storm's
``R{"r"}max=? [C<=T]`` from (0, s_0) is the finite-horizon value. It is built as a ``stormpy.Interval`` MDP and
checked with ``UncertaintyResolutionMode.ROBUST`` (nature against the maximiser: the worst case) or ``COOPERATIVE``
(the best case); point CFMDPs are point intervals. Restricted to the choices of a policy, the same check gives that
policy's worst-case (or expected) value.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import storm
from ..model import ExplicitModel
from .problem import CounterfactualMDP, IntervalCFMDP
from .robust import CounterfactualPolicy


@dataclass(frozen=True)
class UnrolledModel:
    """The reachable part of the time-unrolled model as arrays (rows = choices, grouped by ``row_groups``)."""

    lower: sp.csr_matrix
    upper: sp.csr_matrix
    row_groups: np.ndarray
    choice: np.ndarray         # the model's choice of every row (-1 for the self-loops of layer T)
    layer: np.ndarray          # t of every unrolled state
    state: np.ndarray          # s of every unrolled state

    @property
    def n_states(self) -> int:
        return int(self.layer.size)


@dataclass(frozen=True)
class StormCheck:
    """Storm's value of the unrolled model at (0, s_0)."""

    value: float
    formula: str
    resolution: str
    states: int
    transitions: int
    seconds: float             # unrolling, building in Storm and checking
    check_seconds: float       # Storm's model checking alone

    def to_dict(self) -> dict:
        return {"value": self.value, "formula": self.formula, "uncertainty_resolution": self.resolution,
                "unrolled_states": self.states, "unrolled_transitions": self.transitions,
                "seconds": self.seconds, "check_seconds": self.check_seconds, "checked_by": storm.storm_version()}


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of range(starts[i], starts[i] + counts[i])."""
    total = int(counts.sum())
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + np.arange(total) - offsets


def unroll(model: ExplicitModel, lower: np.ndarray, upper: np.ndarray, start: int,
           policy_rows: np.ndarray | None = None) -> UnrolledModel:
    """Unroll T = len(lower) steps from ``start``; with ``policy_rows`` (T, n) only the policy's choices."""
    P, rg = model.transitions, model.row_groups
    T = lower.shape[0]
    layers = [np.array([start], dtype=np.int64)]
    pieces = []                                  # per layer: rows, entries, counts of entries per row
    for t in range(T):
        S = layers[-1]
        if policy_rows is None:
            counts = model.choice_counts[S]
            rows = _ranges(rg[S], counts)
        else:
            counts = np.ones(S.size, dtype=np.int64)
            rows = policy_rows[t, S]
        entries = _ranges(P.indptr[rows], np.diff(P.indptr)[rows])
        per_row = np.repeat(np.arange(rows.size), np.diff(P.indptr)[rows])
        keep = upper[t, entries] > 0
        entries, per_row = entries[keep], per_row[keep]
        pieces.append((counts, entries, np.bincount(per_row, minlength=rows.size), rows))
        layers.append(np.unique(P.indices[entries]))
    offsets = np.cumsum([0] + [S.size for S in layers])
    lo, hi, cols, row_len, group_sizes, choice = [], [], [], [], [], []
    for t, (counts, entries, n_entries, rows) in enumerate(pieces):
        lo.append(lower[t, entries])
        hi.append(upper[t, entries])
        cols.append(offsets[t + 1] + np.searchsorted(layers[t + 1], P.indices[entries]))
        row_len.append(n_entries)
        group_sizes.append(counts)
        choice.append(rows)
    last = layers[T].size
    lo.append(np.ones(last))
    hi.append(np.ones(last))
    cols.append(offsets[T] + np.arange(last))
    row_len.append(np.ones(last, dtype=np.int64))
    group_sizes.append(np.ones(last, dtype=np.int64))
    choice.append(np.full(last, -1, dtype=np.int64))
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(row_len))])
    n = int(offsets[-1])
    make = lambda v: sp.csr_matrix((np.concatenate(v), np.concatenate(cols), indptr), shape=(indptr.size - 1, n))  # noqa
    return UnrolledModel(make(lo), make(hi), np.concatenate([[0], np.cumsum(np.concatenate(group_sizes))]),
                         np.concatenate(choice), np.repeat(np.arange(T + 1), [S.size for S in layers]),
                         np.concatenate(layers))


def storm_value(cf: IntervalCFMDP | CounterfactualMDP, reward: str | None = None,
                policy: CounterfactualPolicy | None = None, optimistic: bool = False) -> StormCheck:
    """Storm's finite-horizon value at (0, s_0) of the unrolled counterfactual MDP (the robust or, with
    ``optimistic``, cooperative value of an ICFMDP; the optimal expected value of a CFMDP), or of ``policy``
    on it."""
    start = time.perf_counter()
    model = cf.model
    if isinstance(cf, IntervalCFMDP):
        lower, upper = cf.lower, cf.upper
    else:
        lower = upper = cf.probabilities
    u = unroll(model, lower, upper, int(cf.path.states[0]), None if policy is None else policy.rows)
    r = model.step_rewards(reward)
    choice_rewards = np.where(u.choice >= 0, r[u.choice], 0.0)
    formula = f'R{{"r"}}max=? [C<={cf.horizon}]'
    resolution = "cooperative" if optimistic else "robust"
    imdp = storm.interval_mdp(u.lower, u.upper, u.row_groups, {"r": choice_rewards}, {}, 0)
    checking = time.perf_counter()
    values = storm.check_interval_mdp(imdp, formula, resolution)
    done = time.perf_counter()
    return StormCheck(float(values[0]), formula, resolution, u.n_states, int(u.lower.nnz), done - start,
                      done - checking)
