"""The enhanced (time-expanded) counterfactual MDP for a budget k, built explicitly and checked by Storm (oracle O8).

States (t, s, l): step t, counterfactual state s, l changes used; only those reachable from (0, s_0, 0) and
feasible (some allowed action keeps every continuation within the budget: a graph property computed here,
independently of the DP values), plus an absorbing sink labelled ``"done"``. Choices of (t, s, l): the allowed
actions a of s at step t with l + [a is a change] <= k whose successors are feasible; choice a moves to
(t+1, s', l + [a is a change]) with probability P_τ,t(s' | s, a), and from t = T-1 to the sink. The state-action
reward is R(s, a), so Storm's ``R{"r"}max=? [F "done"]`` (``Rmin`` when minimizing) is h(s_0, T, k) and the value of
a policy is Storm's ``R{"r"}=? [F "done"]`` on the DTMC it induces.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..model import ExplicitModel, RewardModel
from ..strategy import Strategy
from ..verify import Check, check_model, check_strategy
from .cfmdp import CounterfactualMDP
from .dp import PolicyWeights, group_sum
from .problem import ExplanationError

DONE = "done"


@dataclass(frozen=True, eq=False)
class EnhancedMDP:
    """The explicit enhanced MDP of budget k.

    Attributes:
        model: the MDP (states in the order t, s, l; the sink last; initial state (0, s_0, 0)).
        k: the budget.
        index: per step t, an array (|S_t|, k+1) of enhanced state ids (-1: unreachable or infeasible).
        position: per enhanced choice, its position in the choices of its step (-1 for the sink's loop).
        step: per enhanced choice, its step t (T for the sink's loop).
        changes_used: per enhanced choice, the l of its state.
    """

    cfmdp: CounterfactualMDP
    model: ExplicitModel
    k: int
    index: tuple[np.ndarray, ...]
    position: np.ndarray
    step: np.ndarray
    changes_used: np.ndarray
    seconds: float

    @property
    def reward_property(self) -> str:
        return f'R{{"{self.model.reward_model().name}"}}'

    def optimum(self) -> Check:
        """Storm's Rmax=? [F "done"] (Rmin when minimizing) from (0, s_0, 0)."""
        direction = "min" if self.cfmdp.problem.minimize else "max"
        return check_model(self.model, f'{self.reward_property}{direction}=? [F "{DONE}"]')

    def policy_value(self, weights: PolicyWeights) -> Check:
        """Storm's value R=? [F "done"] of a (possibly randomized) budget-k policy on the DTMC it induces.

        States the policy gives no mass on enhanced choices (states it never reaches with a finite value) play their
        first choice."""
        probabilities = np.zeros(self.model.n_choices)
        inner = self.position >= 0
        for t in range(self.cfmdp.T):
            mine = np.flatnonzero(inner & (self.step == t))
            probabilities[mine] = weights(t, self.k)[self.position[mine], self.changes_used[mine]]
        m = self.model
        total = np.bincount(m.state_of_choice, weights=probabilities, minlength=m.n_states)
        undefined = np.abs(total - 1.0) > 1e-9
        probabilities[undefined[m.state_of_choice]] = 0.0
        probabilities[m.row_groups[:-1][undefined]] = 1.0
        return check_strategy(Strategy(m, probabilities), f'{self.reward_property}=? [F "{DONE}"]')


def enhanced_mdp(cfmdp: CounterfactualMDP, k: int) -> EnhancedMDP:
    """Build the enhanced MDP of budget k (module docs)."""
    start = time.perf_counter()
    if k < 0:
        raise ExplanationError(f"the change budget k must be >= 0, got {k}")
    ok = _feasible_choices(cfmdp, k)
    reach = _reachable(cfmdp, k, ok)
    index, offset = [], 0
    for r in reach:
        ids = np.full(r.shape, -1, dtype=np.int64)
        ids[r] = offset + np.arange(int(r.sum()))
        offset += int(r.sum())
        index.append(ids)
    sink = offset
    parts = [_rows_of_step(cfmdp, t, ok[t], index) for t in range(cfmdp.T)]
    model = _assemble(cfmdp, parts, index, sink)
    position = np.concatenate([p["position"] for p in parts] + [[-1]])
    step = np.concatenate([np.full(p["position"].size, t) for t, p in enumerate(parts)] + [[cfmdp.T]])
    used = np.concatenate([p["l"] for p in parts] + [[0]])
    return EnhancedMDP(cfmdp, model, k, tuple(index), position, step, used, time.perf_counter() - start)


def _pattern(rows: sp.csr_matrix) -> sp.csr_matrix:
    return sp.csr_matrix((np.ones(rows.nnz), rows.indices, rows.indptr), shape=rows.shape)


def _feasible_choices(cfmdp: CounterfactualMDP, k: int) -> list[np.ndarray]:
    """Per step, (|choices|, k+1): choice c is usable in (s, l) (budget and feasible successors), backwards."""
    ok: list[np.ndarray] = [None] * cfmdp.T          # type: ignore[list-item]
    feasible_next = None
    for t in reversed(range(cfmdp.T)):
        step = cfmdp.steps[t]
        succ_ok = np.ones((step.choices.size, k + 2), dtype=bool)
        if feasible_next is not None:
            infeasible = np.hstack([~feasible_next, np.ones((feasible_next.shape[0], 1), dtype=bool)])
            succ_ok = (_pattern(step.rows) @ infeasible.astype(float)) == 0
        succ_ok[:, k + 1] = False
        columns = np.arange(k + 1)[None, :] + step.change[:, None].astype(np.int64)
        ok[t] = np.take_along_axis(np.asarray(succ_ok), columns, axis=1)
        feasible_next = group_sum(ok[t].astype(float), step.groups) > 0
    return ok


def _reachable(cfmdp: CounterfactualMDP, k: int, ok: list[np.ndarray]) -> list[np.ndarray]:
    """Per step, (|S_t|, k+1): (t, s, l) reachable from (0, s_0, 0) through usable choices."""
    first = np.zeros((1, k + 1), dtype=bool)
    first[0, 0] = bool(ok[0][:, 0].any())
    if not first[0, 0]:
        raise ExplanationError(f"no counterfactual policy with at most {k} changes exists")
    reach = [first]
    for t in range(cfmdp.T - 1):
        step = cfmdp.steps[t]
        used = (reach[t][step.owner] & ok[t]).astype(float)
        P = _pattern(step.rows).T
        same = P @ np.where(step.change[:, None], 0.0, used)
        moved = P @ np.where(step.change[:, None], used, 0.0)
        nxt = np.asarray(same) > 0
        nxt[:, 1:] |= np.asarray(moved)[:, :-1] > 0
        reach.append(nxt)
    return reach


def _rows_of_step(cfmdp: CounterfactualMDP, t: int, ok: np.ndarray, index: list[np.ndarray]) -> dict:
    """The enhanced choices of step t, ordered by enhanced state then choice, with their transitions."""
    step = cfmdp.steps[t]
    c, l = np.nonzero(ok & (index[t][step.owner] >= 0))
    state = index[t][step.owner[c], l]
    order = np.lexsort((c, state))
    c, l, state = c[order], l[order], state[order]
    if step.rows is None:                                    # the last step: to the sink
        return {"position": c, "l": l, "state": state, "indptr": np.arange(c.size + 1), "columns": None,
                "data": np.ones(c.size)}
    sub = step.rows[c]
    target_l = np.repeat(l + step.change[c], np.diff(sub.indptr))
    columns = index[t + 1][sub.indices, target_l]
    if np.any(columns < 0):
        raise AssertionError("an enhanced choice leads to an infeasible state")
    return {"position": c, "l": l, "state": state, "indptr": sub.indptr, "columns": columns, "data": sub.data}


def _assemble(cfmdp: CounterfactualMDP, parts: list[dict], index: list[np.ndarray], sink: int) -> ExplicitModel:
    problem = cfmdp.problem
    m = problem.model
    n = sink + 1
    indptr, columns, data, actions, states, rewards = [np.array([0])], [], [], [], [], []
    for t, part in enumerate(parts):
        step = cfmdp.steps[t]
        cols = part["columns"] if part["columns"] is not None else np.full(part["position"].size, sink)
        indptr.append(part["indptr"][1:] + indptr[-1][-1])
        columns.append(cols)
        data.append(part["data"])
        actions.append(m.choice_actions[step.choices[part["position"]]])
        states.append(part["state"])
        rewards.append(step.reward[part["position"]])
    names = m.action_names if "" in m.action_names else m.action_names + ("",)
    indptr.append(np.array([indptr[-1][-1] + 1]))
    columns.append([sink])
    data.append([1.0])
    actions.append([names.index("")])
    states.append([sink])
    rewards.append([0.0])
    n_rows = sum(len(a) for a in actions)
    P = sp.csr_matrix((np.concatenate(data), np.concatenate(columns).astype(np.int64), np.concatenate(indptr)),
                      shape=(n_rows, n))
    owner = np.concatenate(states).astype(np.int64)
    row_groups = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))])
    t_of, s_of, l_of = np.full(n, len(parts)), np.full(n, -1), np.full(n, -1)
    for t, ids in enumerate(index):
        where = np.nonzero(ids >= 0)
        t_of[ids[where]], s_of[ids[where]], l_of[ids[where]] = t, cfmdp.steps[t].states[where[0]], where[1]
    done = np.zeros(n, dtype=bool)
    done[sink] = True
    name = problem.reward_name
    return ExplicitModel(P, row_groups, np.concatenate(actions), names, {DONE: done},
                         {"t": t_of, "state": s_of, "l": l_of},
                         {name: RewardModel(name, choice=np.concatenate(rewards))}, 0,
                         source=f"enhanced counterfactual MDP of {m.source} (k = {index[0].shape[1] - 1})")
