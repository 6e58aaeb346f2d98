"""ONE finite-horizon backward induction for every counterfactual MDP of a path: point or interval rows, the
controller maximizing or minimizing, nature pessimistic or optimistic, with or without a budget of changes.

Values are kept in the controller's "maximize" sense (sign = +1 when maximizing, -1 when minimizing, applied to the
reward R(s, a) = state + state-action reward). With c changes left and r = T - t steps to go (seed 001, Eqs. 8-9,
and seed 004's robust value iteration, V_T = 0):

    Q_t(s, a, c) = sign·R(s, a) + E_{P ∈ I_t(s, a)} [ Σ_s' P(s') V_{t+1}(s', c) ]
    V_t(s, c)    = max( Q_t(s, a_t, c),  max_{a ≠ a_t} Q_t(s, a, c - 1) )          (with a budget)
    V_t(s)       = max( Q_t(s, a_t),     max_{a ≠ a_t} Q_t(s, a) )                 (without one)

where E over the interval I_t = {P : LB_t <= P <= UB_t, Σ P = 1} is the minimum (pessimistic nature) or maximum
(optimistic) and, for point rows, the plain expectation. The inner minimum is attained greedily: start from the
lower bounds and give the free mass 1 - Σ LB to the successors in increasing order of V_{t+1}, each up to its upper
bound (decreasing order for the maximum); vectorised here by sorting all rows of similar length at once.

**Tie rule** (seed 001's Algorithm 2, line 12, and the deviation rule of seed 004's policies): the observed action
a_t is kept unless another action is better by more than ``TIE_TOLERANCE`` relative to the kept value, so a tie
never spends a change or deviates from the observation; among equally good alternatives the first choice in Storm's
order wins. States where no usable action fits the budget have value -inf (the policy avoids them).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import OptionError
from ..modes import Nature, Optimization
from .model import CounterfactualMDP, Step, length_buckets

#: relative tolerance of the tie rule: an alternative replaces the observed action only if it is better by more
TIE_TOLERANCE = 1e-12

#: a (possibly randomized) policy as weights: (t, k) -> probabilities (|choices of step t|, k + 1) over the choices
#: and the number of changes l = 0..k used so far (k = 0 without a budget)
PolicyWeights = Callable[[int, int], np.ndarray]


@dataclass(frozen=True, eq=False, repr=False)
class Policy:
    """The optimal non-stationary policy of a counterfactual MDP, for every budget k <= K (or without a budget).

    Attributes:
        cfmdp: the counterfactual MDP.
        reward: the reward model's name.
        optimization: what the controller does with the reward.
        nature: how interval rows are resolved (irrelevant for point rows).
        budget: K, the largest budget computed (``None``: changes are not limited).
        values: per step t, an array (|S_t|, W): ``values[t][i, c]`` = V_t(S_t[i], c) in the reward's own sense
            (∓inf where infeasible); W = K + 1 (1 without a budget).
        actions: per step t, an array (|S_t|, W) of positions into ``cfmdp.steps[t].choices`` (-1: infeasible),
            indexed by the remaining budget c.
        seconds: time of the backward induction.
    """

    cfmdp: CounterfactualMDP
    reward: str
    optimization: Optimization
    nature: Nature
    budget: int | None
    values: tuple[np.ndarray, ...]
    actions: tuple[np.ndarray, ...]
    seconds: float = 0.0

    @property
    def K(self) -> int:
        return 0 if self.budget is None else self.budget

    def _start(self) -> int:
        return int(self.cfmdp.steps[0].local(np.array([self.cfmdp.start]))[0])

    def __repr__(self) -> str:
        budgets = "no budget" if self.budget is None else f"budgets 0..{self.budget}"
        return (f'<Policy {self.optimization.name.lower()}s "{self.reward}" over {self.cfmdp.horizon} steps of '
                f"{self.cfmdp.model.source}, {budgets}>")

    def value(self, k: int | None = None) -> float:
        """V_0(s_0) with budget k (ignored without a budget); ∓inf if no policy with at most k changes exists."""
        return float(self.values[0][self._start(), self._column(k)])

    def feasible(self, k: int | None = None) -> bool:
        return bool(np.isfinite(self.value(k)))

    def values_by_k(self) -> dict[int, float]:
        return {k: self.value(k) for k in range(self.K + 1)}

    def choice_positions(self, t: int, k: int | None = None) -> np.ndarray:
        """For budget k at step t: an array (|S_t|, k+1) of the chosen positions in ``steps[t].choices`` for each
        state and number of changes used l = 0..k (-1 where infeasible); (|S_t|, 1) without a budget."""
        c = self._column(k)
        return self.actions[t][:, c::-1]

    def weights(self, t: int, k: int | None = None) -> np.ndarray:
        """The policy for budget k at step t as probabilities (|choices of step t|, k+1) over (choice, l)."""
        step = self.cfmdp.steps[t]
        chosen = self.choice_positions(t, k)[step.owner]
        return (chosen == np.arange(step.n_choices)[:, None]).astype(float)

    def weight_function(self) -> PolicyWeights:
        return lambda t, k: self.weights(t, None if self.budget is None else k)

    def _column(self, k: int | None) -> int:
        if self.budget is None:
            return 0
        if k is None:
            k = self.budget
        if not 0 <= k <= self.budget:
            raise OptionError(f"budget k = {k} outside the computed range 0..{self.budget}")
        return int(k)


def optimal_policy(cfmdp: CounterfactualMDP, rewards: np.ndarray, reward_name: str,
                   optimization: Optimization | str = Optimization.MAXIMIZE,
                   nature: Nature | str = Nature.PESSIMISTIC, budget: int | None = None) -> Policy:
    """Backward induction (module docs) for every budget 0..``budget`` in one pass (``None``: no budget).

    ``rewards`` is R(s, a) per model choice (``model.step_rewards(name)``).
    """
    start = time.perf_counter()
    optimization, nature = Optimization.parse(optimization), Nature.parse(nature)
    if budget is not None and budget < 0:
        raise OptionError(f"the change budget must be >= 0, got {budget}")
    width = 1 if budget is None else budget + 1
    sign = optimization.sign
    values: list[np.ndarray] = []
    actions: list[np.ndarray] = []
    V = np.zeros((cfmdp.steps[-1].next_states.size, width))
    for step in reversed(cfmdp.steps):
        Q = action_values(step, rewards, V, sign, nature)
        V, A = _choose(step, Q, budgeted=budget is not None)
        values.append(sign * V + 0.0)                                    # + 0.0: no -0.0 when minimizing
        actions.append(A)
    return Policy(cfmdp, reward_name, optimization, nature, budget, tuple(reversed(values)),
                  tuple(reversed(actions)), time.perf_counter() - start)


def action_values(step: Step, rewards: np.ndarray, V_next: np.ndarray, sign: float, nature: Nature) -> np.ndarray:
    """Q_t = sign·R(s, a) + E[V_{t+1}] per choice and column, shape (|choices|, width) (module docs)."""
    Q = np.repeat(sign * rewards[step.choices][:, None], V_next.shape[1], axis=1)
    if step.is_point:
        return Q + step.rows @ V_next
    pessimistic = nature is Nature.PESSIMISTIC
    for w in range(V_next.shape[1]):
        Q[:, w] += interval_expectation(step, V_next[:, w], pessimistic)
    return Q


def interval_expectation(step: Step, v_next: np.ndarray, pessimistic: bool = True) -> np.ndarray:
    """min (pessimistic) or max over P ∈ [LB, UB], Σ P = 1 of Σ_s' P(s') v_next(s'), for every choice of the step.

    Rows are bucketed by length in (2^(j-1), 2^j] and padded, so each bucket is one dense sort.
    """
    lengths = np.diff(step.indptr)
    out = np.zeros(step.n_choices)
    order_sign = 1.0 if pessimistic else -1.0
    for rows in length_buckets(lengths):
        width = int(lengths[rows].max())
        pos = np.arange(width)
        E = np.where(pos >= lengths[rows][:, None], 0, step.indptr[rows][:, None] + pos)
        pad = (pos >= lengths[rows][:, None]) | (step.upper[E] <= 0)       # never reachable: no 0 · ∞
        V = np.where(pad, 0.0, v_next[step.successors[E]])
        order = np.argsort(np.where(pad, np.inf, order_sign * V), axis=1, kind="stable")
        E = np.take_along_axis(E, order, axis=1)
        V = np.take_along_axis(V, order, axis=1)
        live = ~np.take_along_axis(pad, order, axis=1)
        L = np.where(live, step.lower[E], 0.0)
        gap = np.where(live, step.upper[E], 0.0) - L
        budget = np.maximum(1.0 - L.sum(axis=1), 0.0)
        before = np.cumsum(gap, axis=1) - gap
        extra = np.clip(budget[:, None] - before, 0.0, gap)
        mass = L + extra
        product = np.multiply(mass, V, out=np.zeros_like(mass), where=mass > 0)    # no mass: no 0 · ∞
        out[rows] = product.sum(axis=1)
    return out


def _choose(step: Step, Q: np.ndarray, budgeted: bool) -> tuple[np.ndarray, np.ndarray]:
    """V_t and the chosen positions per state and column, by the tie rule (module docs)."""
    width = Q.shape[1]
    keep = step.keep
    kept = np.where(keep[:, None] >= 0, Q[np.maximum(keep, 0)], -np.inf)
    if budgeted:                     # a change leaves c - 1 changes: column c takes Q[:, c - 1]; none at c = 0
        alternative = np.full(Q.shape, -np.inf)
        alternative[:, 1:] = np.where(step.change[:, None], Q[:, :width - 1], -np.inf)
    else:
        not_kept = np.arange(step.n_choices) != keep[step.owner]
        alternative = np.where(not_kept[:, None], Q, -np.inf)
    best, arg = group_argmax(alternative, step.groups)
    with np.errstate(invalid="ignore"):
        threshold = np.where(np.isfinite(kept), kept + TIE_TOLERANCE * np.maximum(1.0, np.abs(kept)), kept)
    better = best > threshold
    V = np.where(better, best, kept)
    A = np.where(better, arg, np.repeat(keep[:, None], width, axis=1))
    A[np.isneginf(V)] = -1
    return V, A


# ================================================================================================ fixed policies
def evaluate(cfmdp: CounterfactualMDP, rewards: np.ndarray, weights: PolicyWeights, k: int | None = None,
             optimization: Optimization | str = Optimization.MAXIMIZE,
             nature: Nature | str = Nature.PESSIMISTIC) -> float:
    """The value at s_0 of a (possibly randomized) policy: its expectation on point rows, its worst case
    (pessimistic) or best case (optimistic) on interval rows. ``weights(t, k)`` gives the probabilities
    (|choices of step t|, k+1) of every choice at (state, l changes used); without a budget (``k=None``) l is
    always 0 and changes are free. ∓inf if the policy can exceed the budget or reaches a state it has no choice for.
    """
    optimization, nature = Optimization.parse(optimization), Nature.parse(nature)
    sign = optimization.sign
    budgeted = k is not None
    width = k + 1 if k is not None else 1
    V = np.zeros((cfmdp.steps[-1].next_states.size, width))
    for t in reversed(range(cfmdp.T)):
        step = cfmdp.steps[t]
        padded = np.hstack([V, np.full((V.shape[0], 1), -np.inf)]) if budgeted else V    # l = k + 1: over budget
        Q = action_values(step, rewards, padded, sign, nature)
        shift = step.change[:, None].astype(np.int64) if budgeted else np.zeros((step.n_choices, 1), dtype=np.int64)
        value = np.take_along_axis(Q, np.arange(width)[None, :] + shift, axis=1)
        W = weights(t, k if k is not None else 0)
        used = W > 0
        V = group_sum(W * np.where(used, value, 0.0), step.groups)         # -inf if a used choice is infeasible
        V[group_sum(used.astype(float), step.groups) == 0] = -np.inf
    start = int(cfmdp.steps[0].local(np.array([cfmdp.start]))[0])
    return float(sign * V[start, 0] + 0.0)


def occupancy(cfmdp: CounterfactualMDP, weights: PolicyWeights, k: int | None = None) -> list[np.ndarray]:
    """Per step t, the probability (|S_t|, k+1) that the counterfactual path under the policy is in (s, l) (point
    rows; for interval rows, the lower bounds are used and the masses are not probabilities)."""
    budgeted = k is not None
    width = k + 1 if k is not None else 1
    first = cfmdp.steps[0]
    mass = np.zeros((first.states.size, width))
    mass[first.local(np.array([cfmdp.start]))[0], 0] = 1.0
    out = [mass]
    for t in range(cfmdp.T - 1):
        step = cfmdp.steps[t]
        flow = mass[step.owner] * weights(t, k if k is not None else 0)
        rows_T = step.rows.T
        if budgeted:
            moved = rows_T @ np.where(step.change[:, None], flow, 0.0)
            mass = np.asarray(rows_T @ np.where(step.change[:, None], 0.0, flow))
            mass[:, 1:] += np.asarray(moved)[:, :-1]
        else:
            mass = np.asarray(rows_T @ flow)
        out.append(mass)
    return out


def reachable(cfmdp: CounterfactualMDP, weights: PolicyWeights, k: int | None = None) -> list[np.ndarray]:
    """Per step t, the (s, l) the policy can reach with positive probability (through entries with UB > 0)."""
    support = [s.matrix((s.upper > 0).astype(float)) for s in cfmdp.steps]
    budgeted = k is not None
    width = k + 1 if k is not None else 1
    first = cfmdp.steps[0]
    mass = np.zeros((first.states.size, width))
    mass[first.local(np.array([cfmdp.start]))[0], 0] = 1.0
    out = [mass > 0]
    for t in range(cfmdp.T - 1):
        step = cfmdp.steps[t]
        flow = (mass[step.owner] * weights(t, k if k is not None else 0) > 0).astype(float)
        S = support[t].T
        if budgeted:
            moved = np.asarray(S @ np.where(step.change[:, None], flow, 0.0))
            mass = np.asarray(S @ np.where(step.change[:, None], 0.0, flow))
            mass[:, 1:] += moved[:, :-1]
        else:
            mass = np.asarray(S @ flow)
        out.append(mass > 0)
    return out


# ================================================================================================ grouped reductions
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
