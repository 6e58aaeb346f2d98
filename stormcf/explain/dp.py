"""Algorithm 2 of the paper: the dynamic program over (s, l, t), vectorized over states and choices per step.

With r = T - t steps to go and c = k - l changes left (Eqs. 8-9)::

    h(s, 0, c) = 0
    h(s, r, 0) = R(s, a_t) + Σ_s' P_τ,t(s'|s, a_t) h(s', r-1, 0)
    h(s, r, c) = max( R(s, a_t) + Σ_s' P_τ,t(s'|s, a_t) h(s', r-1, c),                      (keep a_t)
                      max_{a ≠ a_t} R(s, a) + Σ_s' P_τ,t(s'|s, a) h(s', r-1, c-1) )          (change)

Tie rule (the paper's Algorithm 2, line 12): the observed action is kept unless an alternative is strictly better,
by more than ``TIE_TOLERANCE`` relative to the kept value; so a tie never spends a change. Among equally good
alternatives the first allowed choice of the state (Storm's choice order) wins. h(., ., c) does not depend on the
budget k, so one run with budget K gives h(s_0, T, k) for every k <= K; the argmax is stored indexed by c, and the
policy for budget k plays ``actions[t][s, k - l]`` (notes §2.4). States where no allowed action fits the budget have
value -inf (+inf when minimizing) and action -1. ``--minimize`` maximizes -R.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .cfmdp import CounterfactualMDP, Step
from .problem import ExplanationError

#: relative tolerance of the tie rule: an alternative replaces the observed action only if it is better by more
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True, eq=False)
class KChangePolicy:
    """The optimal counterfactual policy π*_τ for every budget k <= K, and the values h.

    Attributes:
        cfmdp: the counterfactual MDP.
        K: the largest budget.
        values: per step t, an array (|S_t|, K+1): ``values[t][i, c]`` = h(S_t[i], T - t, c) (the problem's sense:
            maximal reward, or minimal cost when minimizing; ∓inf where infeasible).
        actions: per step t, an array (|S_t|, K+1) of positions into ``cfmdp.steps[t].choices`` (-1: infeasible),
            indexed by the remaining budget c.
        seconds: time of the DP.
    """

    cfmdp: CounterfactualMDP
    K: int
    values: tuple[np.ndarray, ...]
    actions: tuple[np.ndarray, ...]
    seconds: float

    def value(self, k: int) -> float:
        """h(s_0, T, k); ∓inf if no policy with at most k changes exists."""
        self._check_budget(k)
        return float(self.values[0][0, k])

    def feasible(self, k: int) -> bool:
        """Whether some policy keeps every counterfactual path within k changes and allowed actions."""
        return bool(np.isfinite(self.value(k)))

    def values_by_k(self) -> dict[int, float]:
        return {k: self.value(k) for k in range(self.K + 1)}

    def choice_positions(self, t: int, k: int) -> np.ndarray:
        """For budget k at step t: an array (|S_t|, k+1) of the chosen positions in ``steps[t].choices`` for each
        state and number of changes used l = 0..k (-1 where infeasible)."""
        self._check_budget(k)
        return self.actions[t][:, k::-1]

    def weights(self, t: int, k: int) -> np.ndarray:
        """The policy for budget k at step t as probabilities (|choices of step t|, k+1) over (choice, l)."""
        step = self.cfmdp.steps[t]
        chosen = self.choice_positions(t, k)[step.owner]
        return (chosen == np.arange(step.choices.size)[:, None]).astype(float)

    def _check_budget(self, k: int) -> None:
        if not 0 <= k <= self.K:
            raise ExplanationError(f"budget k = {k} outside the computed range 0..{self.K}")


def k_change_dp(cfmdp: CounterfactualMDP, K: int | None = None) -> KChangePolicy:
    """Algorithm 2 for all budgets 0..K (default: the problem's k_max) in one backward pass."""
    start = time.perf_counter()
    problem = cfmdp.problem
    K = problem.k_max if K is None else K
    if K < 0:
        raise ExplanationError(f"the change budget must be >= 0, got {K}")
    sign = -1.0 if problem.minimize else 1.0
    values: list[np.ndarray] = []
    actions: list[np.ndarray] = []
    H = None
    for step in reversed(cfmdp.steps):
        H, A = _bellman_step(step, H, K, sign)
        values.append(sign * H + 0.0)                          # + 0.0: no -0.0 when minimizing
        actions.append(A)
    return KChangePolicy(cfmdp, K, tuple(reversed(values)), tuple(reversed(actions)), time.perf_counter() - start)


def action_values(step: Step, next_values: np.ndarray | None, sign: float, width: int) -> np.ndarray:
    """Q_t = sign·R(s, a) + Σ_s' P_τ,t(s'|s, a) V_{t+1}(s', ·) per choice, shape (|choices|, width)."""
    q = np.repeat(sign * step.reward[:, None], width, axis=1)
    if next_values is not None:
        q += step.rows @ next_values
    return q


def _bellman_step(step: Step, H_next: np.ndarray | None, K: int, sign: float) -> tuple[np.ndarray, np.ndarray]:
    Q = action_values(step, H_next, sign, K + 1)
    keep = step.keep
    kept = np.where(keep[:, None] >= 0, Q[np.maximum(keep, 0)], -np.inf)        # keep a_t with c changes left
    H = kept.copy()
    A = np.repeat(keep[:, None], K + 1, axis=1)
    if K > 0 and step.choices.size:
        alternative = np.where(step.change[:, None], Q[:, :K], -np.inf)         # change: c-1 left afterwards
        best, arg = group_argmax(alternative, step.groups)
        base = kept[:, 1:]
        with np.errstate(invalid="ignore"):
            threshold = np.where(np.isfinite(base), base + TIE_TOLERANCE * np.maximum(1.0, np.abs(base)), base)
        better = best > threshold
        H[:, 1:] = np.where(better, best, base)
        A[:, 1:] = np.where(better, arg, A[:, 1:])
    A[np.isneginf(H)] = -1
    return H, A


# ============================================================================================ policy evaluation
PolicyWeights = Callable[[int, int], np.ndarray]


def evaluate_policy(cfmdp: CounterfactualMDP, k: int, weights: PolicyWeights) -> np.ndarray:
    """Expected counterfactual outcome of a (possibly randomized) policy with budget k, exactly, by backward
    recursion. ``weights(t, k)`` gives the probabilities (|choices of step t|, k+1) of every choice at (state, l).

    Returns V_0 (|S_0| = 1, k+1): the value from s_0 with l = 0..k changes used; ∓inf if the policy can exceed the
    budget or reach a state without an allowed action.
    """
    sign = -1.0 if cfmdp.problem.minimize else 1.0
    V = None
    for t in reversed(range(cfmdp.T)):
        step = cfmdp.steps[t]
        padded = None if V is None else np.hstack([V, np.full((V.shape[0], 1), -np.inf)])
        Q = action_values(step, padded, sign, k + 2)
        if V is None:
            Q[:, k + 1] = -np.inf
        columns = np.arange(k + 1)[None, :] + step.change[:, None].astype(np.int64)
        value = np.take_along_axis(Q, columns, axis=1)
        W = weights(t, k)
        used = W > 0
        V = group_sum(W * np.where(used, value, 0.0), step.groups)           # -inf if a used choice is infeasible
        V[group_sum(used.astype(float), step.groups) == 0] = -np.inf
    return sign * V + 0.0


def occupancy(cfmdp: CounterfactualMDP, k: int, weights: PolicyWeights) -> list[np.ndarray]:
    """Per step t, the probability (|S_t|, k+1) that the counterfactual path under the policy is in (s, l)."""
    mass = np.zeros((1, k + 1))
    mass[0, 0] = 1.0
    out = [mass]
    for t in range(cfmdp.T - 1):
        step = cfmdp.steps[t]
        flow = mass[step.owner] * weights(t, k)                   # probability of (choice, l)
        moved = step.rows.T @ np.where(step.change[:, None], flow, 0.0)
        mass = step.rows.T @ np.where(step.change[:, None], 0.0, flow)
        mass[:, 1:] += moved[:, :-1]
        out.append(np.asarray(mass))
    return out


# ============================================================================================ grouped reductions
def group_argmax(values: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group (rows ``groups[i]:groups[i+1]``) and column: the maximum and the first row attaining it
    (-inf and -1 for empty groups and all -inf columns)."""
    n, width = groups.size - 1, values.shape[1]
    counts = np.diff(groups)
    best = np.full((n, width), -np.inf)
    arg = np.full((n, width), -1, dtype=np.int64)
    filled = counts > 0
    if values.shape[0] and width:
        starts = groups[:-1][filled]
        best[filled] = np.maximum.reduceat(values, starts, axis=0)
        owner = np.repeat(np.arange(n), counts)
        rows = np.where(values == best[owner], np.arange(values.shape[0])[:, None], values.shape[0])
        arg[filled] = np.minimum.reduceat(rows, starts, axis=0)
    arg[np.isneginf(best)] = -1
    return best, arg


def group_sum(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per group of rows, the column sums (0 for empty groups)."""
    n = groups.size - 1
    out = np.zeros((n,) + values.shape[1:])
    filled = np.diff(groups) > 0
    if values.shape[0]:
        out[filled] = np.add.reduceat(values, groups[:-1][filled], axis=0)
    return out
