"""Finite-horizon value iteration on the non-stationary counterfactual MDPs: robust (pessimistic) and optimistic
value iteration on an ICFMDP, and plain value iteration on a point CFMDP (the Gumbel-max baseline).

Robust value iteration (spec §4; Lally et al. §5, after Givan et al. and Mathiesen et al.):

    V_T(s) = 0
    V_t(s) = max_a [ R(s, a) + min_{P ∈ I_t(s, a)} Σ_s' P(s') V_{t+1}(s') ],      π_t(s) = the maximising a

where I_t(s, a) = {P : LB_t <= P <= UB_t, Σ P = 1}. The inner minimum is attained by starting from the lower bounds
and giving the free mass 1 - Σ LB to the successors in increasing order of V_{t+1}, each up to its upper bound (the
optimistic variant uses decreasing order). Here this is vectorised: the successors of all rows with the same number
of successors are sorted at once (``numpy.argsort`` along rows), the greedy filling is a clipped cumulative sum.

R(s, a) is the state reward of s plus the state-action reward of (s, a) of a PRISM reward model (Storm's
cumulative-reward semantics); transition rewards are rejected. Ties between actions (within 1e-12 relative) go to
the observed action at the observed state of that step, else to the first enabled action, so a counterfactual
policy deviates from the observation only where that pays.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import ExplicitModel
from ..paths import ObservedPath
from .problem import CounterfactualMDP, IntervalCFMDP, sparse_rows

#: relative tolerance under which two action values count as tied
TIE_TOLERANCE = 1e-12
#: kinds of policies and what nature does in each
KINDS = {"robust": "worst case over the ICFMDP", "optimistic": "best case over the ICFMDP",
         "gumbel-max": "expected value in the Gumbel-max CFMDP"}


@dataclass(frozen=True, eq=False)
class CounterfactualPolicy:
    """A non-stationary deterministic policy π_t(s) (t = 0..T-1) with its value function.

    Attributes:
        path: the observed path the counterfactual MDP was built from (its first state is the start).
        kind: ``"robust"``, ``"optimistic"`` or ``"gumbel-max"``.
        reward: the reward model name.
        rows: int array (T, n_states): the chosen choice (row) of every state at every step.
        values: float array (T+1, n_states): V_t under the policy (worst case, best case or expectation).
        reachable: bool array (T+1, n_states): states the policy can reach at step t (transitions with UB > 0).
        seconds: solve time.
    """

    path: ObservedPath
    kind: str
    reward: str
    rows: np.ndarray
    values: np.ndarray
    reachable: np.ndarray
    seconds: float = field(default=0.0, compare=False)

    @property
    def model(self) -> ExplicitModel:
        return self.path.model

    @property
    def horizon(self) -> int:
        return int(self.rows.shape[0])

    @property
    def start(self) -> int:
        return int(self.path.states[0])

    @property
    def value(self) -> float:
        """V_0(s_0): the value at the observed start state."""
        return float(self.values[0, self.start])

    def table(self, t: int) -> dict[str, str]:
        """π_t as {state name: action name} for the states reachable at step t."""
        m = self.model
        return {m.state_name(int(s)): m.choice_name(int(self.rows[t, s])) for s in np.flatnonzero(self.reachable[t])}

    def changes(self) -> list[int]:
        """The steps at which the policy, in the observed state, chooses another action than the observation."""
        obs = self.path.choices
        return [t for t in range(self.horizon) if self.rows[t, self.path.states[t]] != obs[t]]

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        steps = []
        for t in range(self.horizon):
            states = np.flatnonzero(self.reachable[t])
            steps.append([{"state": m.valuation(int(s)) if m.variables else int(s), "action": m.choice_name(int(self.rows[t, s])),
                           "value": float(self.values[t, s])} for s in states])
        return {"kind": self.kind, "reward": self.reward, "value": self.value, "seconds": self.seconds,
                "changes_from_observation": self.changes(), "policy": steps}

    def __str__(self) -> str:
        m, lines = self.model, []
        obs_actions = self.path.actions
        for t in range(self.horizon):
            s = int(self.path.states[t])
            chosen = m.choice_name(int(self.rows[t, s]))
            mark = "" if chosen == obs_actions[t] else f"   (observed: {obs_actions[t]})"
            lines.append(f"  t={t:<3d} in observed state {m.state_name(s)}: {chosen}{mark}")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------------------ kernels
def interval_expectation(model: ExplicitModel, lower: np.ndarray, upper: np.ndarray, v_next: np.ndarray,
                         pessimistic: bool = True) -> np.ndarray:
    """min (pessimistic) or max over P ∈ [lower, upper], Σ P = 1 of Σ_s' P(s') v_next(s'), for every choice.

    ``lower``/``upper`` are aligned with ``model.transitions.data``; the row sums must satisfy Σ LB <= 1 <= Σ UB.
    """
    rows = sparse_rows(model)
    out = np.zeros(rows.n_rows)
    sign = 1.0 if pessimistic else -1.0
    for group, E in rows.buckets:
        pad = E < 0
        e = np.where(pad, 0, E)
        V = np.where(pad, 0.0, v_next[rows.cols[e]])
        order = np.argsort(np.where(pad, np.inf, sign * V), axis=1, kind="stable")
        e = np.take_along_axis(e, order, axis=1)
        V = np.take_along_axis(V, order, axis=1)
        live = ~np.take_along_axis(pad, order, axis=1)
        L = np.where(live, lower[e], 0.0)
        gap = np.where(live, upper[e], 0.0) - L
        budget = np.maximum(1.0 - L.sum(axis=1), 0.0)
        before = np.cumsum(gap, axis=1) - gap
        extra = np.clip(budget[:, None] - before, 0.0, gap)
        out[group] = ((L + extra) * V).sum(axis=1)
    return out


def _choose(model: ExplicitModel, q: np.ndarray, preferred_row: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Best choice of every state (ties: the preferred row, else the first row) and its value."""
    rg, soc = model.row_groups, model.state_of_choice
    best = np.maximum.reduceat(q, rg[:-1])
    tied = q >= best[soc] - TIE_TOLERANCE * np.maximum(1.0, np.abs(best[soc]))
    rows = np.minimum.reduceat(np.where(tied, np.arange(q.size), q.size), rg[:-1])
    if preferred_row is not None and tied[preferred_row]:
        rows[soc[preferred_row]] = preferred_row
    return rows, q[rows]


def _reachable(model: ExplicitModel, start: int, rows: np.ndarray, support: np.ndarray) -> np.ndarray:
    """States reachable at every step from ``start`` under the chosen rows, through entries with ``support``."""
    P = model.transitions
    T, n = rows.shape
    reach = np.zeros((T + 1, n), dtype=bool)
    reach[0, start] = True
    for t in range(T):
        chosen = np.zeros(P.shape[0], dtype=bool)
        chosen[rows[t, reach[t]]] = True
        live = chosen[sparse_rows(model).entry_rows] & support[t]
        reach[t + 1, P.indices[live]] = True
    return reach


# ------------------------------------------------------------------------------------------------------ solvers
def _action_values(cf: IntervalCFMDP | CounterfactualMDP, t: int, r: np.ndarray, v_next: np.ndarray,
                   optimistic: bool) -> np.ndarray:
    """Q_t = R + the expectation of V_{t+1} per choice: worst (best with ``optimistic``) case over the intervals of
    an ICFMDP, plain expectation in a point CFMDP."""
    if isinstance(cf, IntervalCFMDP):
        return r + interval_expectation(cf.model, cf.lower[t], cf.upper[t], v_next, not optimistic)
    return r + cf.step(t) @ v_next


def _backward(cf: IntervalCFMDP | CounterfactualMDP, r: np.ndarray, optimistic: bool,
              fixed_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Finite-horizon backward induction: (rows (T, n), values (T+1, n)). With ``fixed_rows`` the policy is given
    and only evaluated; otherwise every step picks the best choice (ties: the observed action)."""
    model, path = cf.model, cf.path
    T, n = cf.horizon, model.n_states
    values = np.zeros((T + 1, n))
    rows = np.zeros((T, n), dtype=np.int64) if fixed_rows is None else fixed_rows
    for t in range(T - 1, -1, -1):
        q = _action_values(cf, t, r, values[t + 1], optimistic)
        if fixed_rows is None:
            rows[t], values[t] = _choose(model, q, int(path.choices[t]))
        else:
            values[t] = q[rows[t]]
    return rows, values


def robust_value_iteration(icfmdp: IntervalCFMDP, reward: str | None = None,
                           optimistic: bool = False) -> CounterfactualPolicy:
    """The robust (pessimistic; ``optimistic=True``: optimistic) counterfactual policy of an ICFMDP and its
    worst-case (best-case) values V_t(s)."""
    start = time.perf_counter()
    model, path = icfmdp.model, icfmdp.path
    rows, values = _backward(icfmdp, model.step_rewards(reward), optimistic)
    reach = _reachable(model, int(path.states[0]), rows, icfmdp.upper > 0)
    return CounterfactualPolicy(path, "optimistic" if optimistic else "robust", _reward_name(model, reward),
                                rows, values, reach, time.perf_counter() - start)


def value_iteration(cfmdp: CounterfactualMDP, reward: str | None = None) -> CounterfactualPolicy:
    """The optimal policy of a point counterfactual MDP (finite-horizon VI): the Gumbel-max policy for the
    Gumbel-max CFMDP."""
    start = time.perf_counter()
    model, path = cfmdp.model, cfmdp.path
    rows, values = _backward(cfmdp, model.step_rewards(reward), optimistic=False)
    reach = _reachable(model, int(path.states[0]), rows, cfmdp.probabilities > 0)
    kind = "gumbel-max" if cfmdp.estimator.startswith("gumbel") else "optimal"
    return CounterfactualPolicy(path, kind, _reward_name(model, reward), rows, values, reach,
                                time.perf_counter() - start)


def policy_values(policy: CounterfactualPolicy, cfmdp: CounterfactualMDP | IntervalCFMDP, reward: str | None = None,
                  optimistic: bool = False) -> np.ndarray:
    """V_t(s) of a fixed policy: its expectation on a point CFMDP, or its worst case (best case with
    ``optimistic``) on an ICFMDP. Shape (T+1, n_states)."""
    r = cfmdp.model.step_rewards(reward if reward is not None else policy.reward)
    return _backward(cfmdp, r, optimistic, fixed_rows=policy.rows)[1]


def _reward_name(model: ExplicitModel, reward: str | None) -> str:
    return reward if reward is not None else model.reward_model(None).name
