"""The deterministic-MDP view of set-cover CFEs (notes §1.8, §5.1-5.2), as arrays.

States are capped capability vectors ``s ∈ Π_j {0..cap_j}`` projected on the features that can still change
(``cap_j = t_j``, or the largest precondition on j when actions have ``requires``); an action i moves s to

    δ(s, i) = min(s + e_i, cap)            (with probability p_i; otherwise s stays)        cost c_i

and the goal is ``G = {s : s >= t}``. The optimal cost of an agent x is ``V*(min(x, cap)) = Rmin=? [F "goal"]``.

A state is one int64 code in mixed radix (``code = Σ_j s_j · mult_j``, ``mult_j = Π_{k<j} (cap_k + 1)``); for 0/1
caps the code is a bitmask and δ is ``code | cover_i``. Only the states reachable from the agents are built, by a
breadth-first search over whole frontiers (numpy; with a dense seen mask and code -> position table when there are
at most :data:`DENSE_LIMIT` codes, sorted arrays otherwise), and :func:`state_values` solves the Bellman equations

    V*(s) = 0 on G,     V*(s) = min_{i enabled, δ(s,i) ≠ s} c_i / p_i + V*(δ(s, i))

level by level: effective actions strictly increase Σ_j s_j, so the levels are processed from the top down, each
level in one vectorised step (the failure self-loop of a stochastic action only divides its cost by p_i).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..deadline import Deadline
from ..errors import SolverError
from ..limits import require_memory
from ..model import ExplicitModel, RewardModel
from .problem import SetCoverInstance

#: largest number of states built for one space (DP or Storm); beyond it the engines refuse (use the MILP)
STATE_LIMIT = 2_000_000
#: largest number of state-action pairs of a space (its tables: successor, enabled, Q-values); the paper's n = 20
#: family has 163,512 states x 100 actions = 1.6e7
CHOICE_LIMIT = 50_000_000
#: state-action pairs expanded at once in the breadth-first search (bounds its temporaries to ~100 MB)
EXPANSION_CHUNK = 1 << 22
#: largest product of radices a code may take (int64 with room for the successor arithmetic)
CODE_LIMIT = 2 ** 62
#: spaces of at most this many codes are searched and indexed with dense tables (a mask and an int32 table)
DENSE_LIMIT = 2 ** 24
#: pairs of choices (times the projected features when they are not 0/1) compared at once for dominance
DOMINANCE_BLOCK = 1 << 18


class SpaceTooLarge(SolverError):
    """The projected state space of an instance has too many states to encode (:data:`CODE_LIMIT`); ``advice`` says
    what to do instead."""

    def __init__(self, space: StateSpace, advice: str) -> None:
        self.space = space
        digits = float(np.log10(space.radix.astype(float)).sum())           # the size may overflow a float
        super().__init__(f"the projected state space of {space.features.size} changeable features (of "
                         f"{space.instance.n_features}) has about 10^{digits:.0f} states, too many to encode; {advice}")


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
        if space.size >= CODE_LIMIT:
            raise SpaceTooLarge(space, "use fewer features or the branch-and-bound or MILP engine (method bnb or milp)")
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
    def size(self) -> float:
        """The number of codes Π_j (cap_j + 1) (a float: it may exceed int64)."""
        return float(np.prod(self.radix.astype(float)))

    @property
    def dense(self) -> bool:
        return self.size <= DENSE_LIMIT

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
        requires = self.instance.requires
        if requires is None or not self.instance.ordered:
            return mask
        req = np.minimum(requires[:, self.features], self.caps)
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

    def choices(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, action, successor code) of the choices of Storm's model at the states ``codes``, by row then rank
        (:meth:`Transitions.explicit_model`): the enabled actions that change a non-goal state and provide its
        pivot, but for those that an action of lower rank (c_i / p_i, then index) dominates, reaching a successor at
        least as high in every feature; ``DOMINANCE_BLOCK`` pairs of choices are compared at once."""
        codes = np.asarray(codes, dtype=np.int64)
        costs = self.instance.expected_costs
        by_cost = np.lexsort((np.arange(costs.size), costs))                   # rank -> action
        succ = self.successors(codes)[:, by_cost]
        keep = ((self.enabled(codes) & self.pivot_actions(codes))[:, by_cost] & (succ != codes[:, None])
                & ~self.goal(codes)[:, None])
        width = int(keep.sum(axis=1).max(initial=0))                         # the most choices of a state
        order = np.argsort(~keep, axis=1, kind="stable")[:, :width]          # per state: its candidates by rank
        succ, keep = np.take_along_axis(succ, order, axis=1), np.take_along_axis(keep, order, axis=1)
        lower = np.tri(width, k=-1, dtype=bool)                              # [i, j]: j ranks before i
        step = max(DOMINANCE_BLOCK // (width * width * (1 if self.binary else len(self.features)) or 1), 1)
        for start in range(0, len(codes), step):
            rows = slice(start, start + step)
            keep[rows] &= ~(self._below(self._heights(succ[rows], keep[rows])) & lower).any(axis=2)
        row, column = np.nonzero(keep)
        return row, by_cost[order[row, column]], succ[row, column]

    def _heights(self, codes: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """The candidates' successors as :meth:`_below` compares them, those not kept below no state: the codes as
        bitmasks (0 if not kept, in 32 bits where they fit) for 0/1 caps, else the digits (-1 if not kept)."""
        if self.binary:
            return np.where(keep, codes, 0).astype(np.uint32 if self.size <= 2 ** 32 else np.int64)
        digits = self.decode(codes.ravel()).reshape(*codes.shape, len(self.features))
        return np.where(keep[:, :, None], digits, -1)

    def _below(self, high: np.ndarray) -> np.ndarray:
        """(S, K, K): [s, i, j] whether the successor of candidate i is at most that of j in every feature."""
        if self.binary:                                                      # bitmasks: i a subset of j
            return (high[:, :, None] & ~high[:, None, :]) == 0
        return np.all(high[:, :, None, :] <= high[:, None, :, :], axis=3)

    def pivot_actions(self, codes: np.ndarray) -> np.ndarray | bool:
        """(S, A): the actions providing each state's pivot feature, its missing feature with the fewest available
        actions providing it (any feature at a goal state; True everywhere for ordered instances, and where nothing
        is projected: then every state is a goal)."""
        if self.instance.ordered or not self.features.size:
            return True
        provides = (self.effects > 0) & self.available[:, None]                   # (A, k)
        by_count = np.argsort(provides.sum(axis=0), kind="stable")
        missing = self.decode(codes) < self.thresholds
        pivot = by_count[np.argmax(missing[:, by_count], axis=1)]
        return provides[:, pivot].T

    # ------------------------------------------------------------------------------------------------ graph
    def reachable(self, sources: np.ndarray, limit: int = STATE_LIMIT, run: Deadline | None = None,
                  reduced: bool = False) -> "Transitions":
        """The states reachable from the codes ``sources`` and the successor table (breadth-first, by frontier;
        ``run``, when given, is checked between chunks).

        ``reduced``: only along the choices of Storm's model (:meth:`choices`), so the states that model reaches
        from the sources, where it keeps Rmin (a few times fewer than all reachable states); such transitions
        serve :meth:`Transitions.explicit_model` only, as their successor table leaves the set.

        At most ``limit`` states and :data:`CHOICE_LIMIT` state-action pairs (the tables of :class:`Transitions`
        hold about 26 bytes per pair); each frontier is expanded in chunks of :data:`EXPANSION_CHUNK` pairs, so the
        search stops as soon as a level passes the limit, before its successors are all allocated."""
        A = max(len(self.available), 1)
        limit = min(limit, max(CHOICE_LIMIT // A, 1))
        frontier = np.unique(np.asarray(sources, dtype=np.int64))
        if self.dense:
            seen = np.zeros(int(self.size), dtype=bool)
            seen[frontier] = True
        else:
            seen = frontier
        count = frontier.size
        rows = max(EXPANSION_CHUNK // A, 1)
        choices: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []     # reduced: (state code, action, successor)
        while frontier.size:
            found: list[np.ndarray] = []
            pending = 0                                   # new codes found in this level so far (an upper bound)
            for start in range(0, frontier.size, rows):
                if run is not None:
                    run.check("the search of reachable states")
                part = frontier[start:start + rows]
                if reduced:
                    row, action, succ = self.choices(part)
                    choices.append((part[row], action, succ))
                    nxt = np.unique(succ)
                else:
                    nxt = np.unique(np.where(self.enabled(part), self.successors(part), part[:, None]))
                if self.dense:
                    new = nxt[~seen[nxt]]
                    seen[new] = True
                else:
                    at = np.minimum(np.searchsorted(seen, nxt), seen.size - 1)
                    new = nxt[seen[at] != nxt]
                found.append(new)
                pending += new.size
                if count + pending > limit and not self.dense and len(found) > 1:
                    found = [np.unique(np.concatenate(found))]    # chunks of one level may overlap
                    pending = found[0].size
                if count + pending > limit:
                    raise SolverError(f"the projected MDP has more than {limit:,} reachable states ({A} actions: "
                                      f"at most {CHOICE_LIMIT:,} state-action pairs); use the branch-and-bound or "
                                      f"MILP engine (method bnb or milp)")
            frontier = np.unique(np.concatenate(found)) if found else frontier[:0]
            count += frontier.size
            if not self.dense:
                seen = np.union1d(seen, frontier)
        if reduced:
            return Transitions(self, np.flatnonzero(seen) if self.dense else seen,
                               tuple(np.concatenate(part) for part in zip(*choices)) if choices else None)
        require_memory(26.0 * count * A, f"the projected MDP's tables ({count:,} states x {A} actions)")
        return Transitions(self, np.flatnonzero(seen) if self.dense else seen)


@dataclass(frozen=True, eq=False)
class Transitions:
    """The reachable states (sorted codes) of a space with their successor table; ``found``: the model's choices
    (state code, action, successor code) when a reduced search found them (:meth:`StateSpace.reachable`)."""

    space: StateSpace
    codes: np.ndarray
    found: tuple[np.ndarray, ...] | None = None

    @property
    def n_states(self) -> int:
        return len(self.codes)

    def index(self, codes: np.ndarray) -> np.ndarray:
        """Positions of (reachable) codes."""
        if self.space.dense:
            return self._positions[codes]
        return np.searchsorted(self.codes, codes)

    @cached_property
    def _positions(self) -> np.ndarray:
        """code -> position of the state (dense spaces; -1 for codes not reached)."""
        table = np.full(int(self.space.size), -1, dtype=np.int32)
        table[self.codes] = np.arange(self.n_states, dtype=np.int32)
        return table

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
    def explicit_model(self, initial: int, source: str = "set-cover MDP") -> ExplicitModel:
        """The MDP as an :class:`~stormcf.model.ExplicitModel` for Storm (reward model ``"cost"``, label
        ``"goal"``).

        The choices of a non-goal state are its effective actions (success: δ(s, i) with p_i, failure: s with
        1 − p_i), labelled with the action's name and rewarded c_i, with two reductions that keep ``Rmin`` in every
        state:

        - **pivot** (instances without preconditions, where a plan is a set and its order is free): every cover
          of s takes an action providing the state's pivot feature, its missing feature with the fewest available
          actions providing it, and may take it first; so only those actions are choices (partial-order
          reduction; about 40% of the effective actions in the paper's instances);
        - **dominance**: a choice is dropped when one of lower c_i / p_i (lowest index on ties) reaches a successor
          at least as high in every feature, as V* can only fall when the state rises (a plan of s covers every
          s' >= s too), so the other can only cost more (parallel choices to the same successor keep the cheapest;
          about a fifth of the pivot's choices are left at n = 50).

        A state's choices are ordered by rank (c_i / p_i, then index). States without a choice (the goal, dead ends)
        get one unlabelled self-loop of cost 0. Built without a Python loop over states or a global sort
        (:meth:`StateSpace.choices`).
        """
        instance = self.space.instance
        state, action, succ = self._model_choices()
        S = self.n_states
        counts = np.bincount(state, minlength=S)
        loops = np.flatnonzero(counts == 0)
        row_groups = np.concatenate([[0], np.cumsum(np.maximum(counts, 1))])
        loop_rows = row_groups[loops]
        rows = np.ones(row_groups[-1], dtype=bool)
        rows[loop_rows] = False                           # the choices fill the other rows, in state order
        row_state = np.repeat(np.arange(S), np.diff(row_groups))
        row_succ = np.empty(row_groups[-1], dtype=np.int64)
        row_succ[rows], row_succ[loop_rows] = succ, loops
        labels = np.zeros(row_groups[-1], dtype=np.int64)  # 0: the unlabelled self-loop
        labels[rows] = action + 1
        p = np.ones(labels.size) if instance.success is None else np.concatenate([[1.0], instance.success])[labels]
        reward = np.concatenate([[0.0], instance.costs])[labels]
        digits = self.space.decode(self.codes)
        valuations = {instance.features[j]: (digits[:, k] == 1 if self.space.binary else digits[:, k])
                      for k, j in enumerate(self.space.features)}
        return ExplicitModel(_choice_matrix(row_state, row_succ, p, S), row_groups, labels,
                             ("",) + instance.action_names, {"goal": self.goal}, valuations,
                             {"cost": RewardModel("cost", choice=reward)}, initial, source=source)

    def _model_choices(self, chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(state, action, successor) of the model's choices (:meth:`StateSpace.choices`), sorted by state then
        rank; ``chunk`` states at a time, or those the reduced search found (each state was expanded once; its few
        states are looked up by binary search, not in a table as large as the space)."""
        if self.found is not None:
            state, action, succ = self.found
            state = np.searchsorted(self.codes, state)
            order = np.argsort(state, kind="stable")
            return state[order], action[order], np.searchsorted(self.codes, succ[order])
        parts = []
        for start in range(0, self.n_states, chunk):
            row, action, succ = self.space.choices(self.codes[start:start + chunk])
            parts.append((row + start, action, self.index(succ)))
        state, action, successor = (np.concatenate(part) for part in zip(*parts))   # n_states >= 1: parts
        return state, action, successor


def _choice_matrix(state: np.ndarray, succ: np.ndarray, p: np.ndarray, n_states: int) -> sp.csr_matrix:
    """One row per choice: δ with p, and the state itself with 1 − p when p < 1 (columns ascending)."""
    fail = p < 1
    if not fail.any():                                  # deterministic effects: one entry per row
        return sp.csr_matrix((p, succ, np.arange(len(state) + 1)), shape=(len(state), n_states))
    indptr = np.concatenate([[0], np.cumsum(1 + fail)])
    first = indptr[:-1]
    low, high = np.minimum(succ, state), np.maximum(succ, state)
    columns = np.empty(indptr[-1], dtype=np.int64)
    values = np.empty(indptr[-1])
    columns[first] = np.where(fail, low, succ)
    values[first] = np.where(fail & (succ > state), 1 - p, p)
    columns[first[fail] + 1] = high[fail]
    values[first[fail] + 1] = np.where(succ > state, p, 1 - p)[fail]
    return sp.csr_matrix((values, columns, indptr), shape=(len(state), n_states))


def _caps(instance: SetCoverInstance) -> np.ndarray:
    """cap_j: the largest value of feature j that matters (t_j, or a precondition on j)."""
    caps = instance.thresholds.copy()
    if instance.requires is not None:
        caps = np.maximum(caps, instance.requires.max(axis=0))
    return caps
