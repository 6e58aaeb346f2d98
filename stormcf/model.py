"""stormcf's own explicit model: the state graph of a Storm model as immutable numpy/scipy arrays.

Layout (the same as Storm's sparse models): the transition matrix has one **row per choice** and one column per state.
The choices of state ``s`` are the rows ``row_groups[s] .. row_groups[s+1]-1``. Every choice carries one action name
(the PRISM action label; ``""`` for the self-loop Storm adds to deadlock states). A DTMC is a model with exactly one
choice per state.

Choice names: PRISM synchronisation can give a state several choices with one action name (QVBS zeroconf's
``rec``). Such choices are named ``rec#0``, ``rec#1``, ... by their order in Storm's build (Storm orders the choices
of a state by the PRISM commands that make them, so the order is stable for a model file and its constants); a
choice whose action name is unique in its state keeps the plain name. :meth:`ExplicitModel.choice_name` is the name
every file format (strategies, observed paths) and every printed result uses.

Nothing in this module imports stormpy; :mod:`stormcf.storm` builds these objects from Storm models.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from . import naming as _naming
from .errors import ModelError, PropertyError, StateError
from .naming import user_labels


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False, repr=False)
class RewardModel:
    """A PRISM reward structure. Any of the three parts may be absent (``None``).

    - ``state``: one reward per state, collected when the state is left (Storm's state rewards);
    - ``choice``: one reward per choice (Storm's state-action rewards);
    - ``transition``: one reward per transition, aligned with ``ExplicitModel.transitions.data``.
    """

    name: str
    state: np.ndarray | None = None
    choice: np.ndarray | None = None
    transition: np.ndarray | None = None

    def __post_init__(self) -> None:
        for part in ("state", "choice", "transition"):
            v = getattr(self, part)
            if v is not None:
                object.__setattr__(self, part, _frozen(np.asarray(v, dtype=float)))

    @property
    def has_transition_rewards(self) -> bool:
        return self.transition is not None and bool(np.any(self.transition != 0))

    def __repr__(self) -> str:
        parts = [part for part in ("state", "choice", "transition") if getattr(self, part) is not None]
        return f'<RewardModel "{self.name}": {", ".join(parts) or "no"} rewards>'


@dataclass(frozen=True, eq=False, repr=False)
class ExplicitModel:
    """The explicit state graph of an MDP or DTMC.

    Attributes:
        transitions: CSR matrix of shape (n_choices, n_states); row = choice, column = successor state.
        row_groups: int64 array of length n_states + 1; the choices of state s are rows row_groups[s]:row_groups[s+1].
        choice_actions: int array of length n_choices, index into ``action_names``.
        action_names: the distinct action names; index 0 may be ``""`` (unlabelled choice).
        labels: state label name -> boolean mask over states (Storm's labels, incl. expression labels of properties).
        valuations: PRISM variable name -> array of its value in every state.
        rewards: reward model name -> :class:`RewardModel`.
        initial_state: the unique initial state.
        model_type: ``"mdp"`` or ``"dtmc"``.
        source: where the model came from (file name and constants), for messages.
        naming: how states are named in output: ``"valuation"`` (``s=3 & d=0``), ``"labels"``, ``"index"``,
            or a format template such as ``"{s}/{d}"``.
    """

    transitions: sp.csr_matrix
    row_groups: np.ndarray
    choice_actions: np.ndarray
    action_names: tuple[str, ...]
    labels: Mapping[str, np.ndarray]
    valuations: Mapping[str, np.ndarray]
    rewards: Mapping[str, RewardModel]
    initial_state: int
    model_type: str = "mdp"
    source: str = "<arrays>"
    naming: str = "valuation"
    storm: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        P = sp.csr_matrix(self.transitions)
        P.sort_indices()
        for a in (P.data, P.indices, P.indptr):
            a.flags.writeable = False
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        set_("transitions", P)
        set_("row_groups", _frozen(np.asarray(self.row_groups, dtype=np.int64)))
        set_("choice_actions", _frozen(np.asarray(self.choice_actions, dtype=np.int64)))
        set_("action_names", tuple(self.action_names))
        set_("labels", MappingProxyType({k: _frozen(np.asarray(v, dtype=bool)) for k, v in self.labels.items()}))
        set_("valuations", MappingProxyType({k: _frozen(np.asarray(v)) for k, v in self.valuations.items()}))
        set_("rewards", MappingProxyType(dict(self.rewards)))
        set_("initial_state", int(self.initial_state))
        self._check_shapes()

    def _check_shapes(self) -> None:
        n, rg = self.transitions.shape[1], self.row_groups
        if rg.ndim != 1 or rg.shape != (n + 1,) or rg[0] != 0 or rg[-1] != self.transitions.shape[0] \
                or np.any(np.diff(rg) < 1):
            raise ModelError(f"{self.source}: row groups do not match the transition matrix of shape "
                             f"{self.transitions.shape} (need n_states + 1 = {n + 1} ascending offsets from 0 to the "
                             f"number of rows, every state with a choice)")
        if self.choice_actions.shape != (self.transitions.shape[0],):
            raise ModelError(f"{self.source}: need one action per choice ({self.transitions.shape[0]}), "
                             f"got shape {self.choice_actions.shape}")
        if np.any((self.choice_actions < 0) | (self.choice_actions >= len(self.action_names))):
            raise ModelError(f"{self.source}: choice actions must index the {len(self.action_names)} action names")
        if not 0 <= self.initial_state < n:
            raise ModelError(f"{self.source}: initial state {self.initial_state} out of range")
        for name, mask in self.labels.items():
            if mask.shape != (n,):
                raise ModelError(f"{self.source}: label '{name}' has {mask.shape[0]} entries, expected {n}")
        for name, column in self.valuations.items():
            if column.shape != (n,):
                raise ModelError(f"{self.source}: variable '{name}' has {column.shape[0]} values, expected {n}")
        for rm in self.rewards.values():
            for part, size in (("state", n), ("choice", self.transitions.shape[0]), ("transition", self.n_transitions)):
                vector = getattr(rm, part)
                if vector is not None and vector.shape != (size,):
                    raise ModelError(f"{self.source}: reward model \"{rm.name}\" has {vector.size} {part} rewards, "
                                     f"expected {size}")
        self._check_distributions()

    def _check_distributions(self) -> None:
        """Every choice is a probability distribution: entries finite, in [0, 1], summing to 1 (within 1e-9). Two
        vectorised passes over the entries (a model has up to 10^8 of them: min and max, then the row sums); the
        offending entry is looked up only when there is one."""
        P = self.transitions
        if P.nnz and not (P.data.min() >= 0 and P.data.max() <= 1):   # a NaN makes both NaN, which fails both
            k = int(np.flatnonzero(~((P.data >= 0) & (P.data <= 1)))[0])
            row = int(np.searchsorted(P.indptr, k, side="right") - 1)
            raise ModelError(f"{self.source}: action '{self.choice_name(row)}' in state {self._state_text(row)} has "
                             f"probability {float(P.data[k])!r} to go to state {int(P.indices[k])}; probabilities "
                             f"must be in [0, 1]")
        sums = P @ np.ones(P.shape[1])
        bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-9)
        if bad.size:
            row = int(bad[0])
            raise ModelError(f"{self.source}: the probabilities of action '{self.choice_name(row)}'"
                             f" in state {self._state_text(row)} sum to {sums[row]:.12g}, not 1")

    def _state_text(self, row: int) -> str:
        return self.valuation_text(int(np.searchsorted(self.row_groups, row, side="right") - 1))

    # ----------------------------------------------------------------------------------------------- sizes
    @property
    def n_states(self) -> int:
        return self.transitions.shape[1]

    @property
    def n_choices(self) -> int:
        return self.transitions.shape[0]

    @property
    def n_transitions(self) -> int:
        return self.transitions.nnz

    @cached_property
    def choice_counts(self) -> np.ndarray:
        """Number of enabled choices of every state."""
        return _frozen(np.diff(self.row_groups))

    @cached_property
    def state_of_choice(self) -> np.ndarray:
        """The state every choice (row) belongs to."""
        return _frozen(np.repeat(np.arange(self.n_states), self.choice_counts))

    @cached_property
    def decision_states(self) -> np.ndarray:
        """Boolean mask of the states with two or more enabled choices (the |S| of the distances d1)."""
        return _frozen(self.choice_counts >= 2)

    @property
    def n_decision_states(self) -> int:
        return int(self.decision_states.sum())

    def choices(self, state: int) -> range:
        return range(int(self.row_groups[state]), int(self.row_groups[state + 1]))

    def action(self, choice: int) -> str:
        """The PRISM action name of a choice (row); several choices of a state can share it (see
        :meth:`choice_name`)."""
        return self.action_names[self.choice_actions[choice]]

    def _name_parts(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The choices of ``states`` (distinct, ascending), state by state: their rows, the position of their state in
        ``states``, their action, and their name's suffix (0 for the plain action name, k + 1 for ``action#k``: the
        k-th choice, in row order, of a state with several choices of that action). Costs O(choices of ``states``),
        so a path's choices are named without naming the model's."""
        starts = self.row_groups[states]
        counts = self.row_groups[states + 1] - starts
        owner = np.repeat(np.arange(len(states)), counts)
        rows = np.repeat(starts, counts) + np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
        actions = self.choice_actions[rows]
        order = np.lexsort((rows, actions, owner))
        key = owner[order] * (len(self.action_names) + 1) + actions[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        size = np.diff(np.r_[first, len(order)])
        suffix = np.empty(len(rows), dtype=np.int64)
        suffix[order] = np.where(np.repeat(size, size) > 1, np.arange(len(order)) - np.repeat(first, size) + 1, 0)
        return rows, owner, actions, suffix

    def _name(self, action: int, suffix: int) -> str:
        return self.action_names[action] + (f"#{suffix - 1}" if suffix else "")

    @cached_property
    def choice_names(self) -> tuple[str, ...]:
        """The name of every choice (row): its action name, or ``action#k`` when its state has several choices of
        that action (k = 0, 1, ... in Storm's order of the choices within the state). For many choices at once;
        :meth:`choice_name` names one without naming all."""
        _, _, actions, suffix = self._name_parts(np.arange(self.n_states))
        names = [self.action_names[a] for a in actions.tolist()]
        for r in np.flatnonzero(suffix).tolist():
            names[r] = f"{names[r]}#{suffix[r] - 1}"
        return tuple(names)

    def choice_name(self, choice: int) -> str:
        """The name of a choice (row) in files and output: its action name, ``action#k`` when the state has
        several choices of that action (see the module docstring)."""
        return self.choice_names_of([choice])[0]

    def choice_names_of(self, choices: Sequence[int] | np.ndarray) -> list[str]:
        """The names of the given choices (rows), naming only the choices of their states (:meth:`_name_parts`)."""
        if "choice_names" in self.__dict__:
            return [self.choice_names[r] for r in np.asarray(choices, dtype=np.int64).tolist()]
        rows = np.asarray(choices, dtype=np.int64).reshape(-1)
        states = np.unique(np.searchsorted(self.row_groups, rows, side="right") - 1)
        named, _, actions, suffix = self._name_parts(states)
        at = np.searchsorted(named, rows)                          # the rows of ascending states ascend
        return [self._name(a, k) for a, k in zip(actions[at].tolist(), suffix[at].tolist())]

    @cached_property
    def shared_action_states(self) -> np.ndarray:
        """Mask of the states with two or more choices of one action name (their choices are named ``a#k``)."""
        shared = np.zeros(self.n_states, dtype=bool)
        _, owner, _, suffix = self._name_parts(np.arange(self.n_states))
        shared[owner[suffix > 0]] = True
        return _frozen(shared)

    def enabled_actions(self, state: int) -> list[str]:
        """The names of the choices of a state (:meth:`choice_name`)."""
        rows = self.choices(state)
        return _naming.choice_names([self.action_names[a] for a in self.choice_actions[rows.start:rows.stop].tolist()])

    def choice_of(self, state: int, name: str) -> int:
        """The row of the choice named ``name`` (:meth:`choice_name`) in ``state``; raises :class:`StateError`
        naming the state and its choices."""
        row = int(self.choices_named(np.array([state]), [name])[0])
        if row >= 0:
            return row
        enabled = self.enabled_actions(state)
        shared = [n for r, n in zip(self.choices(state), enabled) if self.action(r) == name]
        if shared:
            raise StateError(f"state {self.state_name(state)} has {len(shared)} choices of action '{name}': name "
                             f"them {', '.join(repr(a) for a in shared)}")
        raise StateError(f"action '{name}' is not enabled in state {self.state_name(state)} "
                         f"(enabled: {', '.join(repr(a) for a in enabled)})")

    @cached_property
    def _action_index(self) -> dict[str, int]:
        index: dict[str, int] = {}
        for a, name in enumerate(self.action_names):
            index.setdefault(name, a)
        return index

    def _parse_choice_name(self, name: str) -> tuple[int, int]:
        """(action, suffix) of a choice name (see :meth:`_name_parts`); (-1, -1) for no action's name."""
        if name in self._action_index:
            return self._action_index[name], 0
        base, sep, k = name.rpartition("#")
        if sep and base in self._action_index and k.isdigit() and str(int(k)) == k:
            return self._action_index[base], int(k) + 1
        return -1, -1

    def choices_named(self, states: np.ndarray, names: Sequence[str]) -> np.ndarray:
        """The rows of the choices named ``names[k]`` (:meth:`choice_name`) in ``states[k]``, all at once; -1 where
        the state has no such choice (:meth:`choice_of` says why). Costs O(choices of the distinct states asked)."""
        states = np.asarray(states, dtype=np.int64)
        parsed = {name: self._parse_choice_name(name) for name in set(names)}
        action = np.array([parsed[n][0] for n in names], dtype=np.int64).reshape(-1)
        wanted_suffix = np.array([parsed[n][1] for n in names], dtype=np.int64).reshape(-1)
        distinct = np.unique(states)
        rows, owner, actions, suffix = self._name_parts(distinct)
        width, n_actions = int(suffix.max(initial=0)) + 2, len(self.action_names) + 1
        keys = (owner * n_actions + actions) * width + suffix
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        wanted = (np.searchsorted(distinct, states) * n_actions + action) * width + np.minimum(wanted_suffix, width - 1)
        if not keys.size:
            return np.full(len(names), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        return np.where((action >= 0) & (keys[at] == wanted), rows[order][at], -1)

    # -------------------------------------------------------------------------------------------- states
    @cached_property
    def variables(self) -> tuple[str, ...]:
        return tuple(self.valuations)

    def valuation(self, state: int) -> dict[str, Any]:
        """The PRISM variable values of a state, as plain Python values."""
        return {v: self.valuations[v][state].item() for v in self.variables}

    def find_states(self, columns: Mapping[str, Any]) -> np.ndarray:
        """The first state of each full valuation, given as one column of values per variable (valuation k is
        ``{v: columns[v][k]}``), or -1 where no state has it; all at once, without an index of every state.

        One pass over the valuation arrays: each variable's value is coded by its rank among the values wanted of
        that variable (the states with a value nobody wants drop out), the codes of the states left are combined into
        one integer key (mixed radix; re-numbered densely before it could overflow), and the wanted keys are found
        among the sorted state keys (a stable sort: the first state of a valuation wins)."""
        wanted = [np.asarray(columns[v]) for v in self.variables]
        size = wanted[0].size if wanted else 0
        if size == 0:
            return np.zeros(0, dtype=np.int64)
        candidates = np.zeros(0, dtype=np.int64)
        state_key, wanted_key, radix = np.zeros(0, dtype=np.int64), np.zeros(size, dtype=np.int64), 1
        for i, (v, values) in enumerate(zip(self.variables, wanted)):
            distinct = np.unique(values)
            column = self.valuations[v] if i == 0 else self.valuations[v][candidates]      # no copy of all states
            code = np.minimum(np.searchsorted(distinct, column), distinct.size - 1)
            hit = np.flatnonzero(distinct[code] == column)
            candidates, code = (hit if i == 0 else candidates[hit]), code[hit]
            state_key = np.zeros(hit.size, dtype=np.int64) if i == 0 else state_key[hit]
            if radix * distinct.size >= 2 ** 62:
                _, dense = np.unique(np.concatenate([state_key, wanted_key]), return_inverse=True)
                state_key, wanted_key, radix = dense[:state_key.size], dense[state_key.size:], int(dense.max()) + 1
            state_key = state_key * distinct.size + code
            wanted_key = wanted_key * distinct.size + np.searchsorted(distinct, values)
            radix *= distinct.size
        if candidates.size == 0:
            return np.full(size, -1, dtype=np.int64)
        order = np.argsort(state_key, kind="stable")
        keys = state_key[order]
        at = np.minimum(np.searchsorted(keys, wanted_key), keys.size - 1)
        return np.where(keys[at] == wanted_key, candidates[order[at]], -1).astype(np.int64)

    def state_indices(self, valuations: Sequence[Any]) -> np.ndarray:
        """The state of each full, well-typed valuation (:meth:`find_states`, all at once); -1 for anything else (a
        partial valuation, an unknown variable, a value of the wrong type, no such state: :meth:`state_index` says
        which)."""
        variables, ok = self.variables, np.zeros(len(valuations), dtype=bool)
        columns: list[list[Any]] = [[] for _ in variables]
        for k, valuation in enumerate(valuations):
            if isinstance(valuation, Mapping) and len(valuation) == len(variables) and variables and all(
                    v in valuation and _fits(valuation[v], self.valuations[v]) for v in variables):
                ok[k] = True
                for column, v in zip(columns, variables):
                    column.append(valuation[v])
        states = np.full(len(valuations), -1, dtype=np.int64)
        if ok.any():
            states[ok] = self.find_states(dict(zip(variables, columns)))
        return states

    def __repr__(self) -> str:
        return (f"<ExplicitModel {self.source}: {self.model_type.upper()}, {self.n_states} states, {self.n_choices} "
                f"choices, {self.n_transitions} transitions>")

    def state_index(self, valuation: Mapping[str, Any]) -> int:
        """Look up a state from a (full or partial) valuation such as ``{"s": 3, "d": 0}``.

        Raises :class:`StateError` if a variable is unknown, a value has the wrong type, no state matches, or a
        partial valuation matches several states.
        """
        if not isinstance(valuation, Mapping) or not valuation:
            raise StateError(f"a state must be given as a non-empty valuation object, got {valuation!r}")
        if not self.variables:
            raise StateError(f"{self.source} has no state valuations (e.g. a DRN file); states cannot be named")
        for var, value in valuation.items():
            if var not in self.valuations:
                raise StateError(f"unknown variable '{var}' in state {_fmt(valuation)} "
                                 f"(variables: {', '.join(self.variables)})")
            _check_value_type(var, value, self.valuations[var])
        if set(valuation) == set(self.variables):
            s = int(self.find_states({v: [valuation[v]] for v in self.variables})[0])
            if s < 0:
                raise StateError(f"no reachable state {_fmt(valuation)} in {self.source}")
            return s
        mask = np.ones(self.n_states, dtype=bool)
        for var, value in valuation.items():
            mask &= self.valuations[var] == value
        hits = np.flatnonzero(mask)
        if hits.size == 0:
            raise StateError(f"no reachable state {_fmt(valuation)} in {self.source}")
        if hits.size > 1:
            raise StateError(f"valuation {_fmt(valuation)} matches {hits.size} states; give all variables "
                             f"({', '.join(self.variables)})")
        return int(hits[0])

    def state_name(self, state: int) -> str:
        """A human-readable name of a state, following ``self.naming`` (:func:`stormcf.naming.state_name`)."""
        labels = (k for k, m in self.labels.items() if m[state]) if self.naming == "labels" else ()
        return _naming.state_name(self.naming, state, self.valuation(state), labels)

    def valuation_text(self, state: int) -> str:
        """PRISM-style valuation text ``s=3 & d=0`` (Booleans as ``b`` / ``!b``)."""
        return _naming.valuation_text(state, self.valuation(state))

    def with_naming(self, naming: str) -> "ExplicitModel":
        """The same model (arrays shared) with another state-naming scheme (:func:`stormcf.naming.check_naming`)."""
        _naming.check_naming(naming, self.variables, self.valuation(self.initial_state))
        return dataclasses.replace(self, naming=naming)

    # -------------------------------------------------------------------------------------------- labels
    def label(self, name: str) -> np.ndarray:
        """The mask of a state label; raises :class:`PropertyError` for unknown labels."""
        if name == "init":
            mask = np.zeros(self.n_states, dtype=bool)
            mask[self.initial_state] = True
            return _frozen(mask)
        try:
            return self.labels[name]
        except KeyError:
            raise PropertyError(f"unknown label \"{name}\" in {self.source} "
                                f"(labels: {', '.join(self.user_labels) or 'none'})") from None

    @property
    def user_labels(self) -> list[str]:
        """The labels a model author wrote (no ``init``/``deadlock``, no expression labels of properties)."""
        return user_labels(self.labels)

    def reward_model(self, name: str | None = None) -> RewardModel:
        if name is None:
            if len(self.rewards) != 1:
                raise PropertyError(f"{self.source} has {len(self.rewards)} reward models "
                                    f"({', '.join(self.rewards) or 'none'}); name one")
            name = next(iter(self.rewards))
        try:
            rm = self.rewards[name]
        except KeyError:
            raise PropertyError(f"unknown reward model \"{name}\" in {self.source} "
                                f"(reward models: {', '.join(self.rewards) or 'none'})") from None
        self._require_finite(rm)
        return rm

    def _require_finite(self, rm: RewardModel) -> None:
        """Refuse a reward model with a NaN or infinite value (e.g. ``s/s`` or ``1/s`` where s = 0): every result on
        it would be NaN or meaningless; the message names the state and the choice."""
        if rm.name in self._finite_rewards:
            return
        for part in ("state", "choice", "transition"):
            values = getattr(rm, part)
            if values is None:
                continue
            bad = np.flatnonzero(~np.isfinite(values))
            if len(bad):
                k = int(bad[0])
                if part == "state":
                    where = f"state {self.valuation_text(k)}"
                else:
                    row = k if part == "choice" else int(np.searchsorted(self.transitions.indptr, k, side="right") - 1)
                    where = f"action '{self.choice_name(row)}' in state {self._state_text(row)}"
                raise ModelError(f"{self.source}: reward model \"{rm.name}\" is {float(values[k])!r} at {where}; "
                                 "rewards must be finite numbers")
        self._finite_rewards.add(rm.name)

    @cached_property
    def _finite_rewards(self) -> set[str]:
        """The reward models checked finite so far."""
        return set()

    def expected_choice_rewards(self, name: str | None = None) -> np.ndarray:
        """Per choice: state-action reward plus the expected transition reward Σ_s' P(s,a,s')·r(s,a,s')."""
        rm = self.reward_model(name)
        r = np.zeros(self.n_choices) if rm.choice is None else np.array(rm.choice, dtype=float)
        if rm.transition is not None:
            P = self.transitions
            r += sp.csr_matrix((P.data * rm.transition, P.indices, P.indptr), shape=P.shape).sum(axis=1).A1
        return r

    def step_rewards(self, name: str | None = None) -> np.ndarray:
        """R(s, a) per choice: the state reward of s plus the state-action reward of (s, a), i.e. what one step
        earns in Storm's cumulative-reward semantics (``R=? [C<=T]``).

        Transition rewards are rejected (:class:`PropertyError`): counterfactual analyses would need their
        expectation under counterfactual, not nominal, transition probabilities.
        """
        rm = self.reward_model(name)
        if rm.has_transition_rewards:
            raise PropertyError(f"reward model \"{rm.name}\" of {self.source} has transition rewards, which this "
                                f"analysis does not support; use state or state-action rewards")
        r = np.zeros(self.n_choices) if rm.choice is None else np.array(rm.choice, dtype=float)
        if rm.state is not None:
            r += rm.state[self.state_of_choice]
        return r

    def summary(self) -> dict[str, Any]:
        """Sizes and vocabulary of the model (what ``stormcf info`` prints)."""
        return {
            "source": self.source,
            "type": self.model_type,
            "states": self.n_states,
            "choices": self.n_choices,
            "transitions": self.n_transitions,
            "decision_states": self.n_decision_states,
            "initial_state": self.valuation(self.initial_state) if self.variables else self.initial_state,
            "labels": self.user_labels,
            "actions": sorted(a for a in self.action_names if a),
            "shared_action_states": int(self.shared_action_states.sum()),
            "reward_models": {k: [p for p in ("state", "choice", "transition") if getattr(v, p) is not None]
                              for k, v in self.rewards.items()},
            "variables": {v: [self.valuations[v].min().item(), self.valuations[v].max().item()]
                          for v in self.variables},
        }


def disjoint_union(models: Sequence[ExplicitModel], source: str = "disjoint union") -> tuple[ExplicitModel, np.ndarray]:
    """The models side by side as one model (no transitions between them), for one Storm call on all of them, and
    the offset of each model's states in it.

    Labels and reward models are those of any of the models (false / zero in the others); choices keep their
    action names; a transition reward becomes its expectation per choice (the same expected rewards); valuations
    are left out (the models may have different variables). The initial state is the first model's; the union is
    a DTMC when every model is one."""
    offsets = np.cumsum([0] + [m.n_states for m in models])
    row_offsets = np.cumsum([0] + [m.n_choices for m in models])
    entry_offsets = np.cumsum([0] + [m.n_transitions for m in models])
    P = sp.csr_matrix((np.concatenate([m.transitions.data for m in models]),
                       np.concatenate([m.transitions.indices + o for m, o in zip(models, offsets)]),
                       np.concatenate([[0]] + [m.transitions.indptr[1:] + o for m, o in zip(models, entry_offsets)])),
                      shape=(int(row_offsets[-1]), int(offsets[-1])))
    row_groups = np.concatenate([[0]] + [m.row_groups[1:] + o for m, o in zip(models, row_offsets)])
    codes: dict[str, int] = {}
    actions = np.concatenate([np.array([codes.setdefault(a, len(codes)) for a in m.action_names],
                                       dtype=np.int64)[m.choice_actions] for m in models])
    labels = {name: np.concatenate([m.labels.get(name, np.zeros(m.n_states, dtype=bool)) for m in models])
              for name in dict.fromkeys(k for m in models for k in m.labels)}
    rewards = {}
    for name in dict.fromkeys(k for m in models for k in m.rewards):
        parts = [m.rewards.get(name) for m in models]
        state = None
        if any(rm is not None and rm.state is not None for rm in parts):
            state = np.concatenate([rm.state if rm is not None and rm.state is not None else np.zeros(m.n_states)
                                    for m, rm in zip(models, parts)])
        choice = np.concatenate([m.expected_choice_rewards(name) if rm is not None else np.zeros(m.n_choices)
                                 for m, rm in zip(models, parts)])
        rewards[name] = RewardModel(name, state=state, choice=choice)
    model_type = "dtmc" if all(m.model_type == "dtmc" for m in models) else "mdp"
    union = ExplicitModel(P, row_groups, actions, tuple(codes), labels, {}, rewards, 0, model_type, source)
    return union, offsets[:-1]


def _fmt(valuation: Mapping[str, Any]) -> str:
    return " & ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in valuation.items())


def _fits(value: Any, column: np.ndarray) -> bool:
    """Whether a JSON value has the type of a variable's column (a Boolean is no number)."""
    if column.dtype == bool:
        return isinstance(value, bool)
    if np.issubdtype(column.dtype, np.integer):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_value_type(var: str, value: Any, column: np.ndarray) -> None:
    if not _fits(value, column):
        kind = "Boolean" if column.dtype == bool else "an integer" if np.issubdtype(column.dtype, np.integer) \
            else "numeric"
        raise StateError(f"variable '{var}' is {kind}; got {value!r}")
