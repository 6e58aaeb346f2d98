"""The time-unrolled counterfactual MDP, built explicitly and model-checked by Storm (every reported value is Storm's).

States are triples (t, s, l): step t = 0..T, counterfactual state s ∈ S_t, l changes used (l = 0 without a budget),
only those reachable from (0, s_0, 0) through usable choices and positive transitions. With a budget k, a choice of
(t, s, l) is usable when l + [it is a change] <= k and all its successors are feasible (some usable choice exists
there: a graph property computed here, independently of any values). Choice (s, a) of (t, s, l) moves to
(t+1, s', l + [change]) with P_t(s' | s, a) (an interval for interval rows); layer T is absorbing with reward 0; the
state-action reward of (s, a) at every layer is R(s, a). So Storm's ``R{"r"}max=? [C<=T]`` from (0, s_0, 0)
(``min`` when minimizing; robust or cooperative nature for interval rows) is the optimal counterfactual value, and
the same property on the model restricted to a policy's choices (point rows: the DTMC the policy induces) is the
policy's value. Point rows are checked on an explicit MDP (:func:`stormcf.verify.check_model` /
:func:`~stormcf.verify.check_strategy`), interval rows on a Storm interval MDP
(:func:`stormcf.verify.check_interval_model`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..errors import OptionError, VerificationFailure
from ..model import ExplicitModel, RewardModel
from ..modes import Nature, Optimization
from ..strategy import Strategy
from ..verify import TOLERANCE, Check, check_interval_model, check_model, check_strategy
from .backward import PolicyWeights, group_sum
from .model import CounterfactualMDP


@dataclass(frozen=True, eq=False)
class UnrolledModel:
    """The reachable part of the unrolled model as arrays (rows = choices, grouped by ``row_groups``).

    Attributes:
        cfmdp: the counterfactual MDP.
        rewards: R(s, a) per model choice.
        budget: the budget k (``None``: changes not counted).
        index: per layer t = 0..T, an array (|S_t|, k+1) of unrolled state ids (-1: unreachable or infeasible).
        lower, upper: CSR (rows x unrolled states); ``lower is upper`` for point rows.
        row_groups: offsets of every unrolled state's rows.
        step, position, used: per row, its step t (T for layer T's self-loops), its position in
            ``cfmdp.steps[t].choices`` (-1 for the self-loops) and the l of its state.
    """

    cfmdp: CounterfactualMDP
    rewards: np.ndarray
    budget: int | None
    index: tuple[np.ndarray, ...]
    lower: sp.csr_matrix
    upper: sp.csr_matrix
    row_groups: np.ndarray
    step: np.ndarray
    position: np.ndarray
    used: np.ndarray
    seconds: float

    @property
    def n_states(self) -> int:
        return int(self.row_groups.size - 1)

    @property
    def horizon(self) -> int:
        return self.cfmdp.T

    @cached_property
    def model_choices(self) -> np.ndarray:
        """The model's choice (row) of every unrolled row (-1 for the self-loops of layer T)."""
        out = np.full(self.position.size, -1, dtype=np.int64)
        inner = self.position >= 0
        for t, step in enumerate(self.cfmdp.steps):
            mine = inner & (self.step == t)
            out[mine] = step.choices[self.position[mine]]
        return out

    @cached_property
    def choice_rewards(self) -> np.ndarray:
        """R(s, a) of every unrolled row (0 for the self-loops of layer T)."""
        return np.where(self.model_choices >= 0, self.rewards[np.maximum(self.model_choices, 0)], 0.0)

    def policy_probabilities(self, weights: PolicyWeights) -> np.ndarray:
        """Per row, the probability a (possibly randomized) policy gives it; layer T's self-loops get 1."""
        k = 0 if self.budget is None else self.budget
        probabilities = np.zeros(self.position.size)
        inner = self.position >= 0
        probabilities[~inner] = 1.0
        for t in range(self.horizon):
            mine = np.flatnonzero(inner & (self.step == t))
            probabilities[mine] = weights(t, k)[self.position[mine], self.used[mine]]
        return probabilities

    # -------------------------------------------------------------------------------------------- Storm
    def optimum(self, optimization: Optimization | str, nature: Nature | str,
                expected: float | None = None, tolerance: float = TOLERANCE) -> Check:
        """Storm's optimal value ``R{"r"}max=? [C<=T]`` (``min`` when minimizing) at (0, s_0, 0)."""
        optimization = Optimization.parse(optimization)
        if self.lower is self.upper:
            prop = f'R{{"r"}}{optimization.value}=? [C<={self.horizon}]'
            return check_model(self.point_model, prop, expected=expected, tolerance=tolerance,
                               subject=self.subject())
        return check_interval_model(self.lower, self.upper, self.row_groups, self.choice_rewards,
                                    self.horizon, optimization, nature, expected=expected, tolerance=tolerance,
                                    subject=self.subject(), details=self.details())

    def policy_value(self, weights: PolicyWeights, optimization: Optimization | str,
                     nature: Nature | str, expected: float | None = None, tolerance: float = TOLERANCE) -> Check:
        """Storm's value of a policy at (0, s_0, 0): on the DTMC it induces (point rows; randomized policies
        allowed), or its worst/best case over the intervals (deterministic policies)."""
        probabilities = self.policy_probabilities(weights)
        states = np.repeat(np.arange(self.n_states), np.diff(self.row_groups))
        total = np.bincount(states, weights=probabilities, minlength=self.n_states)
        undefined = np.abs(total - 1.0) > 1e-9           # states the policy never reaches: play their first row
        probabilities[undefined[states]] = 0.0
        probabilities[self.row_groups[:-1][undefined]] = 1.0
        if self.lower is self.upper:
            return check_strategy(Strategy(self.point_model, probabilities), f'R{{"r"}}=? [C<={self.horizon}]',
                                  expected=expected, tolerance=tolerance,
                                  subject=f"DTMC the policy induces on the {self.subject()}")
        chosen = probabilities > 0
        if np.any(np.bincount(states[chosen], minlength=self.n_states) != 1):
            raise OptionError("the worst case of a randomized policy over interval rows is not supported; "
                              "give a deterministic policy")
        keep = np.flatnonzero(chosen)
        lower, upper = self.lower[keep], self.upper[keep]
        row_groups = np.arange(self.n_states + 1)
        return check_interval_model(lower, upper, row_groups, self.choice_rewards[keep], self.horizon,
                                    Optimization.parse(optimization), nature, expected=expected,
                                    tolerance=tolerance, subject=f"policy on the {self.subject()}",
                                    details=self.details())

    def subject(self) -> str:
        budget = "" if self.budget is None else f", at most {self.budget} changes"
        return f"time-unrolled {self.cfmdp.kind} counterfactual MDP (T = {self.horizon}{budget})"

    def details(self) -> dict:
        return {"unrolled_states": self.n_states, "unrolled_transitions": int(self.lower.nnz)}

    @cached_property
    def _layers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t, s, l) of every unrolled state."""
        t_of = np.empty(self.n_states, dtype=np.int64)
        s_of = np.empty(self.n_states, dtype=np.int64)
        l_of = np.empty(self.n_states, dtype=np.int64)
        for t, ids in enumerate(self.index):
            states = self.cfmdp.steps[t].states if t < self.horizon else self.cfmdp.steps[-1].next_states
            where = np.nonzero(ids >= 0)
            t_of[ids[where]], s_of[ids[where]], l_of[ids[where]] = t, states[where[0]], where[1]
        return t_of, s_of, l_of

    @cached_property
    def point_model(self) -> ExplicitModel:
        """The unrolled model of point rows as an explicit MDP with the reward model ``"r"`` (states valued by their
        t, model state and l)."""
        m = self.cfmdp.model
        names = m.action_names if "" in m.action_names else m.action_names + ("",)
        actions = np.where(self.model_choices >= 0, m.choice_actions[np.maximum(self.model_choices, 0)],
                           names.index(""))
        t_of, s_of, l_of = self._layers
        P = self.lower.copy()
        P.eliminate_zeros()
        return ExplicitModel(P, self.row_groups, actions, names, {}, {"t": t_of, "state": s_of, "l": l_of},
                             {"r": RewardModel("r", choice=self.choice_rewards)}, 0,
                             source=f"{self.subject()} of {m.source}")


def unroll(cfmdp: CounterfactualMDP, rewards: np.ndarray, budget: int | None = None) -> UnrolledModel:
    """Build the reachable, feasible part of the unrolled model (module docs); ``rewards`` is R(s, a) per model
    choice."""
    start = time.perf_counter()
    if budget is not None and budget < 0:
        raise OptionError(f"the change budget must be >= 0, got {budget}")
    width = 1 if budget is None else budget + 1
    usable = _usable_choices(cfmdp, budget, width)
    reach = _reachable(cfmdp, budget, width, usable)
    index, offset = [], 0
    for r in reach:
        ids = np.full(r.shape, -1, dtype=np.int64)
        ids[r] = offset + np.arange(int(r.sum()))
        offset += int(r.sum())
        index.append(ids)
    parts = [_rows_of_step(cfmdp, t, usable[t], index, budget) for t in range(cfmdp.T)]
    last = index[-1][index[-1] >= 0]
    lower, upper, row_groups, step, position, used = _assemble(parts, last, offset, cfmdp.T,
                                                               point=all(s.is_point for s in cfmdp.steps))
    return UnrolledModel(cfmdp, np.asarray(rewards, dtype=float), budget, tuple(index), lower, upper, row_groups,
                         step, position, used,
                         time.perf_counter() - start)


def _support(step) -> sp.csr_matrix:
    return step.matrix((step.upper > 0).astype(float))


def _columns(step, width: int, budget: int | None) -> np.ndarray:
    """Per choice, the l' = l + [change] column of every l = 0..width-1 (width = overflow)."""
    shift = step.change[:, None].astype(np.int64) if budget is not None else np.zeros((step.n_choices, 1), np.int64)
    return np.arange(width)[None, :] + shift


def _usable_choices(cfmdp: CounterfactualMDP, budget: int | None, width: int) -> list[np.ndarray]:
    """Per step, (|choices|, width): choice c is usable in (s, l) (budget and feasible successors), backwards."""
    usable: list[np.ndarray] = [None] * cfmdp.T        # type: ignore[list-item]  # every step is set below
    feasible_next = np.ones((cfmdp.steps[-1].next_states.size, width), dtype=bool)
    for t in reversed(range(cfmdp.T)):
        step = cfmdp.steps[t]
        infeasible = np.hstack([~feasible_next, np.ones((feasible_next.shape[0], 1), dtype=bool)])
        successors_ok = np.asarray(_support(step) @ infeasible.astype(float)) == 0
        usable[t] = np.take_along_axis(successors_ok, _columns(step, width, budget), axis=1)
        feasible_next = group_sum(usable[t].astype(float), step.groups) > 0
    return usable


def _reachable(cfmdp: CounterfactualMDP, budget: int | None, width: int, usable: list[np.ndarray]) -> list[np.ndarray]:
    """Per layer t = 0..T, (|S_t|, width): (t, s, l) reachable from (0, s_0, 0) through usable choices."""
    first = np.zeros((cfmdp.steps[0].states.size, width), dtype=bool)
    s0 = int(cfmdp.steps[0].local(np.array([cfmdp.start]))[0])
    first[s0, 0] = bool(usable[0][cfmdp.steps[0].owner == s0, 0].any())
    if not first[s0, 0]:
        raise OptionError(f"no counterfactual policy with at most {budget} changes exists")
    reach = [first]
    for t, step in enumerate(cfmdp.steps):
        flow = (reach[t][step.owner] & usable[t]).astype(float)
        S = _support(step).T
        if budget is None:
            nxt = np.asarray(S @ flow) > 0
        else:
            nxt = np.asarray(S @ np.where(step.change[:, None], 0.0, flow)) > 0
            nxt[:, 1:] |= np.asarray(S @ np.where(step.change[:, None], flow, 0.0))[:, :-1] > 0
        reach.append(nxt)
    return reach


def _rows_of_step(cfmdp: CounterfactualMDP, t: int, usable: np.ndarray, index: list[np.ndarray],
                  budget: int | None) -> dict:
    """The unrolled rows of step t, ordered by unrolled state then choice, with their transitions."""
    step = cfmdp.steps[t]
    c, l = np.nonzero(usable & (index[t][step.owner] >= 0))
    state = index[t][step.owner[c], l]
    order = np.lexsort((c, state))
    c, l, state = c[order], l[order], state[order]
    lengths = step.indptr[c + 1] - step.indptr[c]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    at = np.repeat(step.indptr[c] - indptr[:-1], lengths) + np.arange(indptr[-1])
    target_l = np.repeat(l + (step.change[c] if budget is not None else 0), lengths)
    columns = index[t + 1][step.successors[at], target_l]
    positive = step.upper[at] > 0
    if np.any(columns[positive] < 0):
        raise VerificationFailure("an unrolled choice leads to an infeasible state")
    columns = np.where(positive, columns, 0)               # zero entries (point rows) are dropped below
    return {"position": c, "l": l, "state": state, "indptr": indptr, "columns": columns,
            "lower": step.lower[at], "upper": step.upper[at], "keep": positive}


def _assemble(parts: list[dict], last: np.ndarray, n: int, T: int, point: bool):
    """CSR arrays of the unrolled model: the rows of every step, then layer T's self-loops."""
    keep = np.concatenate([p["keep"] for p in parts] + [np.ones(last.size, dtype=bool)])
    lengths = np.concatenate([np.diff(p["indptr"]) for p in parts] + [np.ones(last.size, dtype=np.int64)])
    owner_row = np.repeat(np.arange(lengths.size), lengths)
    columns = np.concatenate([p["columns"] for p in parts] + [last])
    lower = np.concatenate([p["lower"] for p in parts] + [np.ones(last.size)])
    upper = np.concatenate([p["upper"] for p in parts] + [np.ones(last.size)])
    owner_row, columns, lower, upper = owner_row[keep], columns[keep], lower[keep], upper[keep]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(owner_row, minlength=lengths.size))])
    shape = (lengths.size, n)
    lo = sp.csr_matrix((lower, columns, indptr), shape=shape)
    lo.sort_indices()
    hi = lo if point else sp.csr_matrix((upper, columns, indptr), shape=shape)
    if not point:
        hi.sort_indices()
    states = np.concatenate([p["state"] for p in parts] + [last])
    row_groups = np.concatenate([[0], np.cumsum(np.bincount(states, minlength=n))])
    step = np.concatenate([np.full(p["position"].size, t) for t, p in enumerate(parts)] + [np.full(last.size, T)])
    position = np.concatenate([p["position"] for p in parts] + [np.full(last.size, -1)])
    used = np.concatenate([p["l"] for p in parts] + [np.zeros(last.size, dtype=np.int64)])
    return lo, hi, row_groups, step, position, used
