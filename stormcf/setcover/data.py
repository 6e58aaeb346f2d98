"""Data sets as the paper generates them (notes §1.10, §2.6, §6.4), seeded, and labelled by the exact engines.

GENERATE-DATASET(n, A=100, p_f=0.68, p_a=0.5, N=100,000, t=1^n, costs "real"):

1. effects ``D ~ Bernoulli(p_a)^{A x n}``; coordinate costs ``w_j`` "in the range n" (``real``: U(0, n), the default,
   almost surely without ties; ``int0``: {0..n−1}; ``int1``: {1..n}); action costs ``c = D·w``;
2. agents ``x ~ Bernoulli(p_f)^n``, N draws, de-duplicated, negatives only;
3. labels: the canonical optimal set of every agent (one Storm call for the whole family by default);
4. exclusions: tied optima (the paper assumes one optimal CFE per agent) and sets of more than ``max_size``
   actions (the paper drops 4-action CFEs);
5. frequency variants ``all``/``>10``/``>40`` (:func:`frequency_filter`) and an 80/20 split (:func:`split`).

Sparse classifiers ``first5``, ``last5``, ``first10``, ``last10``, ``mid5`` (0-based features 7..11 for n = 20) are
:func:`sparse_thresholds`. The grouped data sets of Table 4 (:func:`grouped_instance`): ``manual`` (one catalogue
with p_a = 0.5, each of 5 groups may take a random half of it) and ``probabilistic`` (group g has its own A actions
with p_a = 0.4, 0.5, 0.6, 0.7, 0.8); the coordinate costs w are shared, every agent of the pool is assigned a group
uniformly at random and labelled with its group's actions (the generators are not told the group). A labelled data
set is saved as one ``.npz`` with the instance inside.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, InstanceError, OptionError
from ..examples import parse_json, read_npz
from ..limits import require_memory
from ..report import write_npz
from ..run import Run
from .engines import EXACT
from .family import label_agents
from .problem import TIE_TOLERANCE, VALUE_LIMIT, SetCoverInstance

COST_MODES = ("real", "int0", "int1")
THRESHOLDS = ("ones", "first5", "last5", "first10", "last10", "mid5")
GROUPINGS = ("manual", "probabilistic")
#: the probabilistic groups' effect probabilities (notes §1.10 item 7)
GROUP_P_A = (0.4, 0.5, 0.6, 0.7, 0.8)


def paper_instance(n: int, actions: int = 100, p_a: float = 0.5, costs: str = "real", thresholds: str = "ones",
                   seed: int = 0) -> SetCoverInstance:
    """A random instance of the paper's distribution: effects Bernoulli(p_a), ``c_i = Σ_j D_ij w_j``."""
    if costs not in COST_MODES:
        raise InstanceError(f"unknown cost mode '{costs}': use {', '.join(COST_MODES)}")
    rng = np.random.default_rng(seed)
    D = (rng.random((actions, n)) < p_a).astype(np.int64)
    w = _coordinate_costs(rng, n, costs)
    return SetCoverInstance.from_arrays(sparse_thresholds(n, thresholds), D, D @ w,
                                        source=f"paper instance n={n} A={actions} p_a={p_a} costs={costs} seed={seed}")


def grouped_instance(n: int, grouping: str, actions: int = 100, costs: str = "real", thresholds: str = "ones",
                     seed: int = 0, keep: float = 0.5) -> SetCoverInstance:
    """The instance of Table 4's grouped data sets with 5 groups ``g0`` .. ``g4`` and shared coordinate costs w:
    ``manual``: one catalogue (p_a = 0.5), each group may take each action with probability ``keep`` (the paper
    does not say how many: [R] a random half); ``probabilistic``: group g has its own ``actions`` actions with
    p_a = 0.4 + 0.1 g (5 x ``actions`` in the catalogue)."""
    if grouping not in GROUPINGS:
        raise InstanceError(f"unknown grouping '{grouping}': use {', '.join(GROUPINGS)}")
    rng = np.random.default_rng(seed)
    if grouping == "manual":
        base = paper_instance(n, actions, 0.5, costs, thresholds, seed)
        masks = rng.random((len(GROUP_P_A), actions)) < keep
        D, c = base.effects, base.costs
    else:
        w = _coordinate_costs(rng, n, costs)
        D = np.vstack([(rng.random((actions, n)) < p).astype(np.int64) for p in GROUP_P_A])
        c = D @ w
        masks = np.kron(np.eye(len(GROUP_P_A), dtype=bool), np.ones(actions, dtype=bool))
    names = [f"a{i}" for i in range(len(D))]
    groups = {f"g{g}": [names[i] for i in np.flatnonzero(m)] for g, m in enumerate(masks)}
    return SetCoverInstance.from_arrays(sparse_thresholds(n, thresholds), D, c, groups=groups,
                                        source=f"{grouping} groups n={n} A={actions} costs={costs} seed={seed}")


def _coordinate_costs(rng: np.random.Generator, n: int, costs: str) -> np.ndarray:
    if costs not in COST_MODES:
        raise InstanceError(f"unknown cost mode '{costs}': use {', '.join(COST_MODES)}")
    return {"real": lambda: rng.uniform(0, n, n), "int0": lambda: rng.integers(0, n, n).astype(float),
            "int1": lambda: rng.integers(1, n + 1, n).astype(float)}[costs]()


def group_names(instance: SetCoverInstance) -> list[str]:
    """The instance's groups in file order (a labelled agent's group is an index into this list)."""
    return list(instance.groups or {})


def sparse_thresholds(n: int, kind: str = "ones") -> np.ndarray:
    """t = 1^n (``ones``) or the paper's sparse classifiers (5 or 10 ones)."""
    if kind not in THRESHOLDS:
        raise InstanceError(f"unknown classifier '{kind}': use {', '.join(THRESHOLDS)}")
    width = {"ones": 1, "first10": 10, "last10": 10}.get(kind, 5)
    if n < width:
        raise InstanceError(f"the classifier '{kind}' needs at least {width} features, got {n}")
    t = np.zeros(n, dtype=np.int64)
    span = {"ones": slice(0, n), "first5": slice(0, 5), "last5": slice(n - 5, n), "first10": slice(0, 10),
            "last10": slice(n - 10, n), "mid5": slice((n - 5) // 2, (n - 5) // 2 + 5)}[kind]
    t[span] = 1
    return t


def distinct_agents(n: int, draws: int = 100_000, p_f: float = 0.68, seed: int = 0) -> np.ndarray:
    """``draws`` agents of ``n`` features Bernoulli(p_f), de-duplicated (sorted)."""
    rng = np.random.default_rng(seed)
    return np.unique((rng.random((draws, n)) < p_f).astype(np.int8), axis=0)


def agent_pool(instance: SetCoverInstance, draws: int = 100_000, p_f: float = 0.68, seed: int = 0) -> np.ndarray:
    """The negative agents among :func:`distinct_agents` (those the classifier rejects)."""
    return _drawn_pool(instance, draws, p_f, seed)[0]


def _drawn_pool(instance: SetCoverInstance, draws: int, p_f: float, seed: int) -> tuple[np.ndarray, int]:
    """:func:`agent_pool` and the number of distinct agents drawn (Table 5 counts its sizes from it)."""
    X = distinct_agents(instance.n_features, draws, p_f, seed)
    return X[~instance.is_positive(X)], len(X)


def expected_pool_size(n: int, draws: int, p_f: float) -> float:
    """E[number of distinct vectors among ``draws`` Bernoulli(p_f)^n draws] = Σ_k C(n,k)·(1 − (1 − p_k)^draws)."""
    from math import comb
    return sum(comb(n, k) * (1 - (1 - p_f ** k * (1 - p_f) ** (n - k)) ** draws) for k in range(n + 1))


@dataclass(eq=False)
class LabelledAgents:
    """Agents with their canonical optimal CFEs.

    Attributes:
        instance: the instance they belong to.
        X: agents (N, n).
        actions: canonical optimal sets (ascending indices).
        cost: OPT per agent.
        info: how the data were made (generator parameters, exclusion counts, timings).
        groups: (grouped data) each agent's group, an index into :func:`group_names`; None without groups.
    """

    instance: SetCoverInstance
    X: np.ndarray
    actions: list[tuple[int, ...]]
    cost: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)
    groups: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.X)

    def subset(self, rows: np.ndarray) -> "LabelledAgents":
        rows = np.asarray(rows)
        return LabelledAgents(self.instance, self.X[rows], [self.actions[k] for k in rows], self.cost[rows],
                              dict(self.info), None if self.groups is None else self.groups[rows])

    def sizes(self) -> dict[int, int]:
        """Number of agents per CFE size."""
        values, counts = np.unique([len(a) for a in self.actions], return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts)}

    def save(self, path: str | os.PathLike) -> None:
        width = max((len(a) for a in self.actions), default=0)
        index = np.int16 if self.instance.n_actions < 2 ** 15 else np.int32
        padded = np.full((len(self), max(width, 1)), -1, dtype=index)
        for k, a in enumerate(self.actions):
            padded[k, :len(a)] = a
        X = self.X.astype(np.int8 if self.X.size == 0 or self.X.max() <= 127 else np.int64)
        grouped = {} if self.groups is None else {"groups": self.groups.astype(np.int16)}
        write_npz(path, X=X, actions=padded, cost=np.asarray(self.cost, dtype=float),
                  instance=json.dumps(self.instance.to_dict()), info=json.dumps(self.info), **grouped)

    @classmethod
    def load(cls, path: str | Path) -> "LabelledAgents":
        """Read a labelled data set (``.npz`` from setcover-data or setcover-learn) and validate every part: the
        instance, the agents (integers >= 0, negative), the labels (action indices of the instance, in ascending
        order, each a cover of its agent) and their costs (finite, the labels' costs). One line naming the file
        and the array for anything else."""
        arrays = read_npz(path, DataError, "a labelled set-cover data set (.npz from setcover-data)")
        for key in ("X", "actions", "cost", "instance", "info"):
            if key not in arrays:
                raise DataError(f"{path}: not a labelled set-cover data set: the array '{key}' is missing")
        instance = SetCoverInstance.from_dict(_json_array(arrays, "instance", path), str(path))
        info = _json_array(arrays, "info", path)
        if not isinstance(info, dict):
            raise DataError(f"{path}: 'info' must be a JSON object, got {type(info).__name__}")
        X = _integer_matrix(arrays["X"], "X", path, low=0, high=VALUE_LIMIT)
        labels = _integer_matrix(arrays["actions"], "actions", path, low=-1, high=instance.n_actions - 1)
        cost = np.asarray(arrays["cost"])
        if cost.ndim != 1 or cost.dtype.kind not in "iuf":
            raise DataError(f"{path}: 'cost' must be a vector of numbers, got {cost.dtype} of shape {cost.shape}")
        cost = cost.astype(float)
        if X.shape[1] != instance.n_features:
            raise DataError(f"{path}: agents (X) have {X.shape[1]} features, the instance {instance.n_features}")
        if not len(X) == len(labels) == len(cost):
            raise DataError(f"{path}: {len(X)} agents (X), {len(labels)} labels (actions) and {len(cost)} costs "
                            "(cost); they must match")
        if len(X) == 0:
            raise DataError(f"{path}: the data set has no agents")
        bad = np.flatnonzero(~np.isfinite(cost) | (cost < 0))
        if bad.size:
            raise DataError(f"{path}: cost[{bad[0]}] = {float(cost[bad[0]])!r}; costs must be finite and >= 0")
        actions = _label_sets(labels, instance, path)
        _require_consistent(instance, X, labels, cost, path)
        groups = None
        if "groups" in arrays:
            groups = _integer_matrix(np.asarray(arrays["groups"])[:, None], "groups", path, low=0,
                                     high=len(group_names(instance)) - 1)[:, 0]
            if len(groups) != len(X):
                raise DataError(f"{path}: {len(groups)} groups for {len(X)} agents; they must match")
        return cls(instance, X, actions, cost, info, groups)


def _json_array(arrays: dict[str, np.ndarray], key: str, path: str | os.PathLike) -> Any:
    value = arrays[key]
    if value.ndim != 0 or value.dtype.kind != "U":
        raise DataError(f"{path}: '{key}' must be a JSON text, got {value.dtype} of shape {value.shape}")
    try:
        return parse_json(str(value))
    except ValueError as err:
        raise DataError(f"{path}: '{key}' is not valid JSON ({err})") from None


def _integer_matrix(value: np.ndarray, key: str, path: str | os.PathLike, low: int, high: int) -> np.ndarray:
    """A 2-D integer array with entries in [low, high] (as int64)."""
    if value.ndim != 2 or value.dtype.kind not in "iub":
        raise DataError(f"{path}: '{key}' must be a matrix of integers, got {value.dtype} of shape {value.shape}")
    out = value.astype(np.int64)
    bad = np.argwhere((out < low) | (out > high))
    if bad.size:
        r, c = (int(v) for v in bad[0])
        raise DataError(f"{path}: {key}[{r}, {c}] = {out[r, c]}; expected an integer in [{low}, {high}]"
                        + (f" (the instance has {high + 1} actions)" if key == "actions" else ""))
    return out


def _label_sets(labels: np.ndarray, instance: SetCoverInstance, path: str | os.PathLike) -> list[tuple[int, ...]]:
    """The CFE of every row: action indices padded with -1 at the end, at least one action, ascending (strictly
    for 0/1 instances, where a CFE is a set)."""
    padding = labels < 0
    if labels.shape[1] == 0 or padding[:, 0].any():
        r = int(np.flatnonzero(padding[:, 0])[0]) if labels.shape[1] else 0
        raise DataError(f"{path}: actions[{r}] is empty; every agent's label has at least one action")
    holes = padding[:, :-1] & ~padding[:, 1:]
    steps = np.diff(labels, axis=1)
    descending = ~padding[:, 1:] & ((steps <= 0) if instance.binary else (steps < 0))
    for bad, why in ((holes, "an action after the padding -1"),
                     (descending, "actions not in ascending order" + (" (or repeated)" if instance.binary else ""))):
        if bad.any():
            raise DataError(f"{path}: actions[{int(np.argwhere(bad)[0, 0])}]: {why}")
    return [tuple(int(i) for i in row[row >= 0]) for row in labels]


def _require_consistent(instance: SetCoverInstance, X: np.ndarray, labels: np.ndarray, cost: np.ndarray,
                        path: str | os.PathLike, chunk: int = 1 << 20) -> None:
    """Every agent is negative, its label covers it (x + Σ e_i >= t) and costs what the file says (Σ c_i / p_i)."""
    effects = np.vstack([instance.effects, np.zeros((1, instance.n_features), dtype=np.int64)])
    costs = np.append(instance.expected_costs, 0.0)
    rows = max(chunk // max(labels.shape[1] * instance.n_features, 1), 1)
    for start in range(0, len(X), rows):
        x, lab, c = X[start:start + rows], labels[start:start + rows], cost[start:start + rows]
        lab = np.where(lab < 0, instance.n_actions, lab)
        positive = np.flatnonzero(instance.is_positive(x))
        if positive.size:
            raise DataError(f"{path}: agent X[{start + positive[0]}] is already positive; a data set labels "
                            "negative agents")
        invalid = np.flatnonzero(~instance.is_positive(x + effects[lab].sum(axis=1)))
        if invalid.size:
            r = start + int(invalid[0])
            raise DataError(f"{path}: the label actions[{r}] does not turn agent X[{r}] positive (the labels "
                            "contradict the agents)")
        total = costs[lab].sum(axis=1)
        wrong = np.flatnonzero(np.abs(total - c) > TIE_TOLERANCE * np.maximum(1.0, np.abs(total)) * 10)
        if wrong.size:
            r = start + int(wrong[0])
            raise DataError(f"{path}: cost[{r}] = {float(c[wrong[0]])!r}, but its label's actions cost "
                            f"{float(total[wrong[0]])!r}")


def label(instance: SetCoverInstance, X: np.ndarray, method: str = "storm", max_size: int = 3,
          drop_ties: bool = True, group: str | None = None, solver: str = "auto",
          run: Run | None = None) -> LabelledAgents:
    """Label agents (of ``group``: with its actions) with their canonical optimum (``method`` ``milp`` on
    ``solver``) within ``run`` (default: unlimited; :func:`~.family.label_agents`); drop infeasible ones, ties (``drop_ties``) and sets larger than
    ``max_size``. ``info`` records how many were dropped and the timings."""
    labels = label_agents(instance, X, method, group, solver, run)
    sizes = np.array([len(a) for a in labels.actions])
    feasible = np.isfinite(labels.values)
    tied = labels.tied
    keep = feasible & (sizes >= 1) & (sizes <= max_size) & ~(tied & drop_ties)
    info = {"method": method, "agents": int(len(X)), "infeasible": int((~feasible).sum()),
            "tied": int(tied.sum()), "too_large": int((feasible & (sizes > max_size)).sum()),
            "kept": int(keep.sum()), "family_states": labels.states, "family_choices": labels.choices,
            "timings": labels.timings}
    rows = np.flatnonzero(keep)
    return LabelledAgents(instance, X[rows], [labels.actions[k] for k in rows], labels.values[rows], info)


def frequency_filter(data: LabelledAgents, more_than: int) -> LabelledAgents:
    """Keep agents whose CFE occurs more than ``more_than`` times in the whole data set (``>10``, ``>40``); refuse
    a filter that keeps no agent."""
    _, inverse, counts = np.unique(np.array([_key(a) for a in data.actions]), return_inverse=True,
                                   return_counts=True)
    kept = data.subset(np.flatnonzero(counts[inverse] > more_than))
    if len(kept) == 0:
        raise OptionError(f"no CFE occurs more than {more_than} times (the most frequent one: {int(counts.max())} "
                          f"times in {len(data)} agents): the frequency filter leaves no agent")
    return kept


def split(data: LabelledAgents, test: float = 0.2, seed: int = 0) -> tuple[LabelledAgents, LabelledAgents]:
    """A uniformly random train/test split (80/20 by default); the held-out share ``test`` is in (0, 1) and both
    parts get at least one agent."""
    if not 0 < test < 1:
        raise OptionError(f"the held-out share must be in (0, 1), got {test!r}")
    order = np.random.default_rng(seed).permutation(len(data))
    cut = int(round(len(data) * (1 - test)))
    if not 0 < cut < len(data):
        raise OptionError(f"a held-out share of {test:g} of {len(data)} agents leaves "
                          f"{'no agent to train on' if cut == 0 else 'no agent held out'}")
    return data.subset(np.sort(order[:cut])), data.subset(np.sort(order[cut:]))


def _key(actions: tuple[int, ...]) -> str:
    return ",".join(map(str, actions))


def check_parameters(n: int, actions: int, draws: int, p_f: float, p_a: float | None, costs: str, thresholds: str,
                     grouping: str | None, method: str, max_size: int, seed: int) -> None:
    """Refuse the parameters of a data set that cannot be generated (:func:`generate`, :func:`generate_grouped`;
    ``p_a`` None: the groupings' own): sizes that are not positive integers, a negative seed, probabilities outside
    [0, 1], unknown cost modes, classifiers, groupings or labelling engines, a sparse classifier wider than the
    features."""
    for name, value, least in (("number of features n", n, 1), ("number of actions", actions, 1),
                               ("number of draws", draws, 1), ("largest CFE size", max_size, 1), ("seed", seed, 0)):
        if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= least):
            raise OptionError(f"the {name} must be an integer >= {least}, got {value!r}")
    for name, p in (("feature probability p_f", p_f), ("effect probability p_a", p_a)):
        if p is not None and not 0 <= p <= 1:                  # also NaN
            raise OptionError(f"the {name} must be in [0, 1], got {p!r}")
    for name, choice, known in (("cost mode", costs, COST_MODES), ("classifier", thresholds, THRESHOLDS),
                                ("grouping", grouping, (None, *GROUPINGS)), ("labelling engine", method, EXACT)):
        if choice not in known:
            raise OptionError(f"unknown {name} '{choice}': use {', '.join(k for k in known if k is not None)}")
    sparse_thresholds(n, thresholds)                           # as wide as the features at most


def generate(n: int = 20, actions: int = 100, p_f: float = 0.68, p_a: float = 0.5, draws: int = 100_000,
             costs: str = "real", thresholds: str = "ones", method: str = "storm", max_size: int = 3,
             seed: int = 0, solver: str = "auto", run: Run | None = None) -> LabelledAgents:
    """The paper's data set: instance, agent pool, labels (see the module docstring; ``method`` ``milp`` on
    ``solver``), labelled within ``run`` (default: unlimited). Refuses parameters :func:`check_parameters` refuses, an empty pool (no negative agent
    drawn) and a data set where no agent keeps a label."""
    check_parameters(n, actions, draws, p_f, p_a, costs, thresholds, None, method, max_size, seed)
    # the instance's effects (actions x n) and the pool's draws (draws x n), a few float64 copies of each
    require_memory(4 * 8 * n * (actions + draws), f"{draws} agents of {n} features and {actions} actions")
    instance = paper_instance(n, actions, p_a, costs, thresholds, seed)
    X, distinct = _drawn_pool(instance, draws, p_f, seed + 1)
    if len(X) == 0:
        raise OptionError(f"none of the {draws} agents drawn with p_f={p_f:g} is negative: nothing to label")
    data = label(instance, X, method, max_size, solver=solver, run=run)
    if len(data) == 0:
        info = data.info
        raise OptionError(f"no agent keeps a label: of {info['agents']} negative agents, {info['infeasible']} have no "
                          f"CFE (effect probability p_a={p_a:g}), {info['tied']} have tied optima and "
                          f"{info['too_large']} need more than {max_size} actions")
    data.info.update({"n": n, "actions": actions, "p_f": p_f, "p_a": p_a, "draws": draws, "distinct": distinct,
                      "costs": costs, "thresholds": thresholds, "seed": seed})
    return data


def generate_grouped(grouping: str, n: int = 20, actions: int = 100, p_f: float = 0.68, draws: int = 100_000,
                     costs: str = "real", thresholds: str = "ones", method: str = "storm", max_size: int = 3,
                     seed: int = 0, solver: str = "auto", run: Run | None = None) -> LabelledAgents:
    """Table 4's grouped data set (:func:`grouped_instance`): the agent pool, each agent in a group drawn
    uniformly, labelled with its group's actions within ``run`` (default: unlimited); ``info["per_group"]`` has
    each group's counts."""
    check_parameters(n, actions, draws, p_f, None, costs, thresholds, grouping, method, max_size, seed)
    require_memory(4 * 8 * n * (len(GROUP_P_A) * actions + draws), f"{draws} agents of {n} features")
    instance = grouped_instance(n, grouping, actions, costs, thresholds, seed)
    X, distinct = _drawn_pool(instance, draws, p_f, seed + 1)
    assigned = np.random.default_rng(seed + 2).integers(0, len(GROUP_P_A), len(X))
    parts = [label(instance, X[assigned == g], method, max_size, group=name, solver=solver, run=run)
             for g, name in enumerate(group_names(instance))]
    keys = ("agents", "infeasible", "tied", "too_large", "kept", "family_states", "family_choices")
    info = {key: sum(p.info[key] for p in parts) for key in keys}
    info.update(method=method, per_group={name: {key: p.info[key] for key in keys[:5]}
                                          for name, p in zip(group_names(instance), parts)},
                timings={phase: sum(p.info["timings"].get(phase, 0.0) for p in parts)
                         for phase in parts[0].info["timings"]},
                n=n, actions=actions, p_f=p_f, p_a=list(GROUP_P_A) if grouping == "probabilistic" else 0.5,
                draws=draws, distinct=distinct, costs=costs, thresholds=thresholds, seed=seed, groups=grouping)
    return LabelledAgents(instance, np.vstack([p.X for p in parts]), [a for p in parts for a in p.actions],
                          np.concatenate([p.cost for p in parts]), info,
                          np.concatenate([np.full(len(p), g) for g, p in enumerate(parts)]))


def load_instance(path: str | Path) -> SetCoverInstance:
    """An instance from a JSON instance file or from a labelled data set (.npz)."""
    return LabelledAgents.load(path).instance if Path(path).suffix == ".npz" else SetCoverInstance.load(path)
