"""Set-cover counterfactual explanations (seed 003, Naggita, Walter, Blum): the instance and the agents.

An **instance** is a classifier and a catalogue of actions:

- features ``f_1..f_n`` with thresholds ``t ∈ N^n``: an agent ``x ∈ N^n`` is positive iff ``x_j >= t_j`` for all j;
- actions ``i = 1..A`` with effects ``e_i ∈ N^n`` and costs ``c_i >= 0``; a set I of actions moves x to the
  counterfactual state ``x* = x + Σ_{i∈I} e_i`` (the paper's additive state, notes §1.3);
- optional **groups**: which actions the agents of each group may take (the paper's "varied action access");
- two generalisations the paper leaves as future work (notes §5.7): ``requires`` (an action is enabled only in
  states ``s >= requires_i``, so the order of actions matters) and ``success`` (the effect happens with probability
  ``p_i``, otherwise nothing changes; the cost is paid on every attempt).

An optimal counterfactual explanation (CFE) of a negative agent x is a cheapest I with ``x + Σ_{i∈I} e_i >= t``
(weighted set cover over the missing features ``M(x) = {j : x_j < t_j}``; multicover when thresholds exceed 1).

The instance file is JSON::

    {"features": ["f0", ...], "thresholds": [1, ...],
     "actions": [{"name": "a0", "effect": [0, 0, 1, 0, 1], "cost": 6.0,
                  "requires": [...] (optional), "success": 0.8 (optional)}, ...],
     "groups": {"g0": ["a0", "a3"], ...} (optional)}

Everything is validated once, here; the messages name the file, the action and the field.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InstanceError, StateError
from ..examples import read_json

#: optimal-cost ties and optimality are decided within this relative tolerance (of max(1, |cost|))
TIE_TOLERANCE = 1e-9
#: the largest feature value, threshold, effect or precondition (sums of thousands of them stay within int64)
VALUE_LIMIT = 2 ** 31 - 1
#: the most units an agent may miss, Σ_j max(t_j − x_j, 0): a minimal plan takes at most one action per unit, and
#: the engines, the canonical choice among ties and Storm's check of the plan grow with it
DEFICIT_LIMIT = 10_000


def _int_vector(value: Any, n: int | None, where: str, minimum: int = 0) -> np.ndarray:
    """A vector of non-negative integers (Booleans and integral floats are accepted)."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise InstanceError(f"{where}: expected a list of integers, got {type(value).__name__}")
    out = []
    for k, v in enumerate(value):
        if isinstance(v, (bool, np.bool_)):
            v = int(v)
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            v = int(v)
        if not isinstance(v, (int, np.integer)) or not minimum <= v <= VALUE_LIMIT:
            raise InstanceError(f"{where}[{k}]: expected an integer in [{minimum}, 2^31 - 1], got {v!r}")
        out.append(int(v))
    if n is not None and len(out) != n:
        raise InstanceError(f"{where}: expected {n} entries (one per feature), got {len(out)}")
    return np.asarray(out, dtype=np.int64)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class SetCoverInstance:
    """A validated set-cover CFE instance (classifier t, catalogue of actions, optional groups).

    Attributes:
        features: the feature names (n).
        thresholds: t (n,), integers >= 0.
        action_names: the action names (A), distinct PRISM identifiers.
        effects: e (A, n), integers >= 0.
        costs: c (A,), finite and >= 0.
        requires: (A, n) preconditions ``s >= requires_i`` or None (order-independent instance).
        success: (A,) success probabilities in (0, 1] or None (deterministic effects).
        groups: group name -> boolean mask over actions (the actions available to the group), or empty.
        source: where the instance came from, for messages.
    """

    features: tuple[str, ...]
    thresholds: np.ndarray
    action_names: tuple[str, ...]
    effects: np.ndarray
    costs: np.ndarray
    requires: np.ndarray | None = None
    success: np.ndarray | None = None
    groups: Mapping[str, np.ndarray] | None = None
    source: str = "<instance>"

    # ------------------------------------------------------------------------------------------------ building
    @classmethod
    def from_arrays(cls, thresholds: Sequence[int] | np.ndarray, effects: np.ndarray,
                    costs: Sequence[float] | np.ndarray, *,
                    features: Sequence[str] | None = None, action_names: Sequence[str] | None = None,
                    requires: np.ndarray | None = None, success: Sequence[float] | None = None,
                    groups: Mapping[str, Sequence[str]] | None = None, source: str = "<arrays>"
                    ) -> "SetCoverInstance":
        """An instance from arrays (names default to ``f0..`` and ``a0..``)."""
        effects = np.asarray(effects)
        if effects.ndim != 2:
            raise InstanceError(f"{source}: effects must be a matrix (actions x features), got shape {effects.shape}")
        A, n = effects.shape
        actions = []
        for i in range(A):
            action = {"name": action_names[i] if action_names is not None else f"a{i}",
                      "effect": effects[i].tolist(), "cost": float(np.asarray(costs)[i])}
            if requires is not None:
                action["requires"] = np.asarray(requires)[i].tolist()
            if success is not None:
                action["success"] = float(np.asarray(success)[i])
            actions.append(action)
        data = {"features": list(features) if features is not None else [f"f{j}" for j in range(n)],
                "thresholds": np.asarray(thresholds).tolist(), "actions": actions}
        if groups:
            data["groups"] = {g: list(names) for g, names in groups.items()}
        return cls.from_dict(data, source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<instance>") -> "SetCoverInstance":
        """Validate a JSON-shaped dictionary (see the module docstring)."""
        if not isinstance(data, Mapping):
            raise InstanceError(f"{source}: expected a JSON object with features, thresholds and actions")
        unknown = sorted(set(data) - {"features", "thresholds", "actions", "groups", "description"})
        if unknown:
            raise InstanceError(f"{source}: unknown key '{unknown[0]}' (keys: features, thresholds, actions, groups)")
        for key in ("features", "thresholds", "actions"):
            if key not in data:
                raise InstanceError(f"{source}: missing key '{key}'")
        features = data["features"]
        if not isinstance(features, list) or not features or not all(_identifier(f) for f in features):
            raise InstanceError(f"{source}: features must be a non-empty list of identifiers, got {features!r}")
        if len(set(features)) != len(features):
            raise InstanceError(f"{source}: feature names must be distinct")
        n = len(features)
        thresholds = _int_vector(data["thresholds"], n, f"{source}: thresholds")
        actions = data["actions"]
        if not isinstance(actions, list) or not actions:
            raise InstanceError(f"{source}: actions must be a non-empty list")
        names, effects, costs, requires, success = [], [], [], [], []
        for i, action in enumerate(actions):
            names.append(_action_name(action, i, source))
            where = f"{source}: action '{names[-1]}'"
            extra = sorted(set(action) - {"name", "effect", "cost", "requires", "success", "description"})
            if extra:
                raise InstanceError(f"{where}: unknown key '{extra[0]}' (keys: name, effect, cost, requires, success)")
            if "effect" not in action or "cost" not in action:
                raise InstanceError(f"{where}: needs 'effect' and 'cost'")
            effects.append(_int_vector(action["effect"], n, f"{where}: effect"))
            costs.append(_cost(action["cost"], where))
            requires.append(_int_vector(action["requires"], n, f"{where}: requires") if "requires" in action
                            else None)
            success.append(_probability(action["success"], where) if "success" in action else None)
        if len(set(names)) != len(names):
            dup = next(a for a in names if names.count(a) > 1)
            raise InstanceError(f"{source}: action name '{dup}' is given twice")
        req = None
        if any(r is not None for r in requires):
            req = np.stack([r if r is not None else np.zeros(n, dtype=np.int64) for r in requires])
        suc = None
        if any(p is not None for p in success):
            suc = np.array([1.0 if p is None else p for p in success])
        groups = _groups(data.get("groups"), names, source)
        return cls(tuple(features), _frozen(thresholds), tuple(names), _frozen(np.stack(effects)),
                   _frozen(np.asarray(costs, dtype=float)), None if req is None else _frozen(req),
                   None if suc is None else _frozen(suc), groups, source)

    @classmethod
    def load(cls, path: str | Path) -> "SetCoverInstance":
        """Read an instance file (JSON)."""
        return cls.from_dict(read_json(path, InstanceError), str(path))

    def to_dict(self) -> dict[str, Any]:
        """The instance as the JSON object of an instance file."""
        actions = []
        for i, name in enumerate(self.action_names):
            action: dict[str, Any] = {"name": name, "effect": self.effects[i].tolist(), "cost": float(self.costs[i])}
            if self.requires is not None:
                action["requires"] = self.requires[i].tolist()
            if self.success is not None:
                action["success"] = float(self.success[i])
            actions.append(action)
        out: dict[str, Any] = {"features": list(self.features), "thresholds": self.thresholds.tolist(),
                               "actions": actions}
        if self.groups:
            out["groups"] = {g: [self.action_names[i] for i in np.flatnonzero(m)] for g, m in self.groups.items()}
        return out

    def save(self, path: str | os.PathLike) -> None:
        from ..report import write_json
        write_json(self.to_dict(), path)

    # ------------------------------------------------------------------------------------------------ facts
    @property
    def n_features(self) -> int:
        return len(self.features)

    @property
    def n_actions(self) -> int:
        return len(self.action_names)

    @property
    def ordered(self) -> bool:
        """Whether some action has a precondition (then a CFE is an ordered plan, not a set)."""
        return self.requires is not None and bool(np.any(self.requires > 0))

    @property
    def stochastic(self) -> bool:
        """Whether some action succeeds with probability < 1."""
        return self.success is not None and bool(np.any(self.success < 1))

    @property
    def binary(self) -> bool:
        """Whether thresholds are 0/1 (the paper's setting; effects are then capped at 1 as well)."""
        return bool(np.all(self.thresholds <= 1))

    @cached_property
    def expected_costs(self) -> np.ndarray:
        """c_i / p_i: the expected cost of repeating action i until it succeeds (c_i for deterministic actions).

        Without preconditions the optimal policy of the stochastic instance repeats each action of a cheapest set
        under these costs until it succeeds, so the set engines solve it exactly with them."""
        return _frozen(self.costs / self.success if self.success is not None else self.costs.copy())

    def with_actions(self, keep: np.ndarray) -> "SetCoverInstance":
        """The same classifier with the catalogue cut down to the actions ``keep`` (ascending indices), no groups."""
        keep = np.asarray(keep, dtype=np.int64)

        def cut(rows: np.ndarray) -> np.ndarray:
            return _frozen(rows[keep])

        return replace(self, action_names=tuple(self.action_names[i] for i in keep), effects=cut(self.effects),
                       costs=cut(self.costs), requires=None if self.requires is None else cut(self.requires),
                       success=None if self.success is None else cut(self.success), groups=None)

    def action_index(self, name: str) -> int:
        try:
            return self.action_names.index(name)
        except ValueError:
            raise InstanceError(f"{self.source}: unknown action '{name}'") from None

    def available(self, group: str | None = None) -> np.ndarray:
        """Boolean mask of the actions an agent of ``group`` may take (all actions without a group)."""
        if group is None:
            return np.ones(self.n_actions, dtype=bool)
        if not self.groups or group not in self.groups:
            known = ", ".join(self.groups) if self.groups else "none"
            raise StateError(f"{self.source}: unknown group '{group}' (groups: {known})")
        return np.array(self.groups[group], dtype=bool)

    # ------------------------------------------------------------------------------------------------ agents
    def agent(self, value: str | Sequence[int] | np.ndarray, where: str = "agent") -> np.ndarray:
        """A validated agent vector from ``"0,0,1"``, ``"f2"``-free text or a sequence of integers >= 0."""
        if isinstance(value, str):
            parts = [p.strip() for p in value.replace(" ", ",").split(",") if p.strip()]
            try:
                value = [int(p) for p in parts]
            except ValueError:
                raise StateError(f"{where} {value!r}: expected {self.n_features} comma-separated integers") from None
        try:
            x = _int_vector(list(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else value,
                            self.n_features, where)
        except InstanceError as err:
            raise StateError(str(err)) from None
        return x

    def agents(self, X: np.ndarray, where: str = "agents") -> np.ndarray:
        """A validated matrix of agents (one row each)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise StateError(f"{where}: expected a matrix with {self.n_features} columns, got shape {X.shape}")
        if not np.issubdtype(X.dtype, np.integer) and not np.issubdtype(X.dtype, np.bool_):
            if not np.all(np.mod(X, 1) == 0):
                raise StateError(f"{where}: agents must be integer vectors")
        X = X.astype(np.int64)
        if X.size and X.min() < 0:
            row = int(np.argwhere(X < 0)[0, 0])
            raise StateError(f"{where}[{row}]: features must be >= 0")
        return X

    def is_positive(self, x: np.ndarray) -> np.ndarray | bool:
        """Whether agent(s) meet the thresholds: ``x_j >= t_j`` for all j."""
        return np.all(np.asarray(x) >= self.thresholds, axis=-1)

    def final_state(self, x: np.ndarray, actions: Sequence[int] | np.ndarray) -> np.ndarray:
        """x* = x + Σ_{i∈I} e_i (the additive counterfactual state)."""
        return np.asarray(x, dtype=np.int64) + self.effects[list(actions)].sum(axis=0)

    def is_valid(self, x: np.ndarray, actions: Sequence[int] | np.ndarray) -> bool:
        """Whether the action set I turns x positive: ``x + Σ_{i∈I} e_i >= t``."""
        return bool(self.is_positive(self.final_state(x, actions)))

    def cost(self, actions: Sequence[int] | np.ndarray) -> float:
        """Σ_{i∈I} c_i (expected cost with stochastic effects: Σ c_i / p_i)."""
        return float(self.expected_costs[list(actions)].sum())

    def names(self, actions: Sequence[int]) -> list[str]:
        return [self.action_names[i] for i in actions]


@dataclass(frozen=True, eq=False)
class SetCoverProblem:
    """One negative (or positive) agent of an instance, validated: the problem every engine solves.

    Attributes:
        instance: the instance.
        agent: x (n,).
        group: the agent's group (its available actions), or None.
    """

    instance: SetCoverInstance
    agent: np.ndarray
    group: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "agent", _frozen(self.instance.agent(self.agent).copy()))
        self.available      # noqa: B018 (an unknown group fails here, when the problem is built)
        missing = int(self.deficit().sum())
        if missing > DEFICIT_LIMIT:
            raise StateError(f"{self.instance.source}: the agent misses {missing:,} units of its features "
                             f"(Σ_j max(t_j − x_j, 0), thresholds up to {int(self.instance.thresholds.max()):,}); "
                             f"stormcf explains at most {DEFICIT_LIMIT:,} (a plan takes up to one action per unit)")

    @cached_property
    def available(self) -> np.ndarray:
        """Mask of the actions the agent's group may take."""
        return _frozen(self.instance.available(self.group))

    @property
    def missing(self) -> np.ndarray:
        """M(x) = {j : x_j < t_j}."""
        return np.flatnonzero(self.agent < self.instance.thresholds)

    @property
    def positive(self) -> bool:
        return bool(self.instance.is_positive(self.agent))

    def deficit(self) -> np.ndarray:
        """t_j − x_j on the missing features (what the actions must provide)."""
        return (self.instance.thresholds - self.agent)[self.missing]

    def coverage(self) -> np.ndarray:
        """min(e_ij, t_j − x_j) on the missing features, for every action (A, |M|)."""
        return np.minimum(self.instance.effects[:, self.missing], self.deficit())

    def effective(self) -> np.ndarray:
        """Mask of the available actions that provide something the agent misses."""
        return self.available & (self.coverage().sum(axis=1) > 0)

    def agent_text(self) -> str:
        return ",".join(str(v) for v in self.agent.tolist())


def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier()


def _action_name(action: Any, i: int, source: str) -> str:
    if not isinstance(action, Mapping):
        raise InstanceError(f"{source}: actions[{i}] must be an object with name, effect and cost")
    name = action.get("name", f"a{i}")
    if not _identifier(name):
        raise InstanceError(f"{source}: actions[{i}]: the name must be an identifier (PRISM action), got {name!r}")
    return name


def _cost(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InstanceError(f"{where}: cost must be a finite number >= 0, got {value!r}")
    return float(value)


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InstanceError(f"{where}: success must be a probability in (0, 1], got {value!r}")
    return float(value)


def _groups(groups: Any, names: list[str], source: str) -> dict[str, np.ndarray]:
    if groups is None:
        return {}
    if not isinstance(groups, Mapping):
        raise InstanceError(f"{source}: groups must be an object mapping group names to lists of action names")
    out = {}
    for g, members in groups.items():
        if not isinstance(members, list):
            raise InstanceError(f"{source}: group '{g}': expected a list of action names")
        mask = np.zeros(len(names), dtype=bool)
        for a in members:
            if a not in names:
                raise InstanceError(f"{source}: group '{g}': unknown action '{a}'")
            mask[names.index(a)] = True
        out[str(g)] = _frozen(mask)
    return out
