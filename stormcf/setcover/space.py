"""The deterministic-MDP view of set-cover CFEs (notes §1.8, §5.1-5.2), as arrays.

States are capped capability vectors ``s ∈ Π_j {0..cap_j}`` projected on the features that can still change
(``cap_j = t_j``, or the largest precondition on j when actions have ``requires``); an action i moves s to

    δ(s, i) = min(s + e_i, cap)            (with probability p_i; otherwise s stays)        cost c_i

and the goal is ``G = {s : s >= t}``. The optimal cost of an agent x is ``V*(min(x, cap)) = Rmin=? [F "goal"]``.

A state is one int64 code in mixed radix (``code = Σ_j s_j · mult_j``, ``mult_j = Π_{k<j} (cap_k + 1)``); for 0/1
caps the code is a bitmask and δ is ``code | cover_i``. Only the states reachable from the agents are built, by a
breadth-first search over whole frontiers (numpy), and :func:`state_values` solves the Bellman equations

    V*(s) = 0 on G,     V*(s) = min_{i enabled, δ(s,i) ≠ s} c_i / p_i + V*(δ(s, i))

level by level: effective actions strictly increase Σ_j s_j, so the levels are processed from the top down, each
level in one vectorised step (the failure self-loop of a stochastic action only divides its cost by p_i).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from ..model import ExplicitModel, RewardModel
from .problem import SetCoverInstance

#: largest number of states built for one space (DP or Storm); beyond it the engines refuse (use the MILP)
STATE_LIMIT = 2_000_000
#: largest product of radices a code may take (int64 with room for the successor arithmetic)
CODE_LIMIT = 2 ** 62


@dataclass(frozen=True, eq=False)
class StateSpace:
    """The capped, projected state space of an instance for some actions.

    Attributes:
        instance: the instance.
        features: indices of the projected features (the others are constant).
        available: mask of the actions that may be taken.
    """

    instance: SetCoverInstance
    features: np.ndarray
    available: np.ndarray

    @classmethod
    def for_agents(cls, instance: SetCoverInstance, X: np.ndarray, available: np.ndarray) -> "StateSpace":
        """The space of the agents X: the features some agent can still change."""
        caps = _caps(instance)
        low = np.minimum(np.asarray(X, dtype=np.int64), caps).min(axis=0)
        space = cls(instance, np.flatnonzero(low < caps), np.asarray(available, dtype=bool))
        if float(np.prod(space.radix.astype(float))) >= CODE_LIMIT:
            raise SolverError(f"the projected state space has {np.prod(space.radix.astype(float)):.3g} states, "
                              f"too many to encode; use the MILP engine (method milp)")
        return space

    # ------------------------------------------------------------------------------------------------ encoding
    @cached_property
    def caps(self) -> np.ndarray:
        return _caps(self.instance)[self.features]

    @cached_property
    def thresholds(self) -> np.ndarray:
        return self.instance.thresholds[self.features]

    @cached_property
    def radix(self) -> np.ndarray:
        return self.caps + 1

    @cached_property
    def mult(self) -> np.ndarray:
        return np.concatenate([[1], np.cumprod(self.radix)])[:self.radix.size].astype(np.int64)

    @cached_property
    def binary(self) -> bool:
        return bool(np.all(self.caps == 1))

    @cached_property
    def effects(self) -> np.ndarray:
        """min(e_i, cap) on the projected features (A, k)."""
        return np.minimum(self.instance.effects[:, self.features], self.caps)

    @cached_property
    def covers(self) -> np.ndarray:
        """For 0/1 caps: the bitmask of the features every action provides."""
        return (self.effects >= 1).astype(np.int64) @ self.mult

    def encode(self, X: np.ndarray) -> np.ndarray:
        """Codes of full agent vectors (n,) or (N, n), capped and projected."""
        X = np.minimum(np.asarray(X, dtype=np.int64)[..., self.features], self.caps)
        return X @ self.mult

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The projected digits (S, k) of codes."""
        return (np.asarray(codes, dtype=np.int64)[:, None] // self.mult) % self.radix

    def goal(self, codes: np.ndarray) -> np.ndarray:
        return np.all(self.decode(codes) >= self.thresholds, axis=1)

    def enabled(self, codes: np.ndarray) -> np.ndarray:
        """(S, A): the available actions whose preconditions hold, ``s >= requires_i`` (the features left out of the
        projection sit at their cap, which meets every precondition)."""
        mask = np.broadcast_to(self.available, (len(codes), len(self.available)))
        if not self.instance.ordered:
            return mask
        req = np.minimum(self.instance.requires[:, self.features], self.caps)
        digits = self.decode(codes)
        return mask & np.all(digits[:, None, :] >= req[None, :, :], axis=2)

    def successors(self, codes: np.ndarray) -> np.ndarray:
        """δ(s, i) for every state and action (S, A), ignoring preconditions."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.binary:
            return codes[:, None] | self.covers[None, :]
        digits = self.decode(codes)
        out = np.empty((len(codes), self.effects.shape[0]), dtype=np.int64)
        for start in range(0, len(codes), 4096):     # chunks bound the (chunk, A, k) temporary
            d = digits[start:start + 4096, None, :] + self.effects[None, :, :]
            out[start:start + 4096] = np.minimum(d, self.caps) @ self.mult
        return out

    # ------------------------------------------------------------------------------------------------ graph
    def reachable(self, sources: np.ndarray, limit: int = STATE_LIMIT) -> "Transitions":
        """The states reachable from the codes ``sources`` and the successor table (breadth-first, by frontier)."""
        seen = np.unique(np.asarray(sources, dtype=np.int64))
        frontier = seen
        while frontier.size:
            nxt = np.where(self.enabled(frontier), self.successors(frontier), frontier[:, None])
            frontier = np.setdiff1d(np.unique(nxt), seen, assume_unique=True)
            seen = np.union1d(seen, frontier)
            if seen.size > limit:
                raise SolverError(f"the projected MDP has more than {limit:,} reachable states; "
                                  f"use the MILP engine (method milp)")
        return Transitions(self, seen)


@dataclass(frozen=True, eq=False)
class Transitions:
    """The reachable states (sorted codes) of a space with their successor table."""

    space: StateSpace
    codes: np.ndarray

    @property
    def n_states(self) -> int:
        return len(self.codes)

    def index(self, codes: np.ndarray) -> np.ndarray:
        """Positions of (reachable) codes."""
        return np.searchsorted(self.codes, codes)

    @cached_property
    def enabled(self) -> np.ndarray:
        return self.space.enabled(self.codes)

    @cached_property
    def successor(self) -> np.ndarray:
        """(S, A) index of δ(s, i); the state itself where i is disabled."""
        own = np.arange(self.n_states)[:, None]
        return np.where(self.enabled, self.index(self.space.successors(self.codes)), own).astype(np.int64)

    @cached_property
    def effective(self) -> np.ndarray:
        """(S, A): enabled and changes the state."""
        return self.enabled & (self.successor != np.arange(self.n_states)[:, None])

    @cached_property
    def goal(self) -> np.ndarray:
        return self.space.goal(self.codes)

    @cached_property
    def level(self) -> np.ndarray:
        return self.space.decode(self.codes).sum(axis=1)

    def q_values(self, values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Q(s, i) = c_i / p_i + V*(δ(s, i)) for effective actions, inf otherwise (rows: a subset of states)."""
        rows = np.arange(self.n_states) if rows is None else np.asarray(rows)
        q = self.space.instance.expected_costs[None, :] + values[self.successor[rows]]
        return np.where(self.effective[rows], q, np.inf)

    # ------------------------------------------------------------------------------------------------ values
    def state_values(self) -> np.ndarray:
        """V* of every state by backward induction over the levels (the DP engine)."""
        values = np.full(self.n_states, np.inf)
        values[self.goal] = 0.0
        order = np.argsort(-self.level, kind="stable")
        bounds = np.flatnonzero(np.diff(-self.level[order])) + 1
        for rows in np.split(order, bounds):
            rows = rows[~self.goal[rows]]
            if rows.size:
                values[rows] = self.q_values(values, rows).min(axis=1)
        return values

    # ------------------------------------------------------------------------------------------------ Storm
    def explicit_model(self, initial: int, merge: bool = True, source: str = "set-cover MDP") -> ExplicitModel:
        """The MDP as an :class:`~stormcf.model.ExplicitModel` for Storm (reward model ``"cost"``, label
        ``"goal"``).

        Every effective action of a non-goal state is a choice (success: δ(s, i) with p_i, failure: s with 1 − p_i),
        labelled with the action's name and rewarded c_i. With ``merge``, parallel choices leading to the same
        successor keep only the one of least c_i / p_i (lowest index on ties): ``Rmin`` is unchanged, as the other
        choices can only cost more. States without effective action (the goal, dead ends) get one unlabelled
        self-loop of cost 0.
        """
        instance = self.space.instance
        S = self.n_states
        keep = self.effective & ~self.goal[:, None]
        state, action = np.nonzero(keep)
        succ = self.successor[state, action]
        if merge:
            order = np.lexsort((action, instance.expected_costs[action], succ, state))
            state, action, succ = state[order], action[order], succ[order]
            first = np.ones(state.size, dtype=bool)
            first[1:] = (state[1:] != state[:-1]) | (succ[1:] != succ[:-1])
            state, action, succ = state[first], action[first], succ[first]
        loops = np.flatnonzero(np.bincount(state, minlength=S) == 0)
        state = np.concatenate([state, loops])
        action_label = np.concatenate([action + 1, np.zeros(loops.size, dtype=np.int64)])
        succ = np.concatenate([succ, loops])
        order = np.argsort(state, kind="stable")
        state, action_label, succ = state[order], action_label[order], succ[order]
        p = np.ones(state.size) if instance.success is None else \
            np.concatenate([[1.0], instance.success])[action_label]
        rows = np.arange(state.size)
        fail = np.flatnonzero(p < 1)
        P = sp.csr_matrix((np.concatenate([p, 1 - p[fail]]),
                           (np.concatenate([rows, fail]), np.concatenate([succ, state[fail]]))),
                          shape=(state.size, S))
        P.sum_duplicates()
        reward = np.concatenate([[0.0], instance.costs])[action_label]
        row_groups = np.concatenate([[0], np.cumsum(np.bincount(state, minlength=S))])
        digits = self.space.decode(self.codes)
        valuations = {instance.features[j]: (digits[:, k] == 1 if self.space.binary else digits[:, k])
                      for k, j in enumerate(self.space.features)}
        return ExplicitModel(P, row_groups, action_label, ("",) + instance.action_names, {"goal": self.goal},
                             valuations, {"cost": RewardModel("cost", choice=reward)}, initial,
                             source=source)


def _caps(instance: SetCoverInstance) -> np.ndarray:
    """cap_j: the largest value of feature j that matters (t_j, or a precondition on j)."""
    caps = instance.thresholds.copy()
    if instance.requires is not None:
        caps = np.maximum(caps, instance.requires.max(axis=0))
    return caps
