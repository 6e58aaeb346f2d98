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

from ..errors import StormcfError
from ..examples import readable_file
from ..limits import require_memory
from ..report import write_npz
from .family import label_agents
from .problem import InstanceError, SetCoverInstance

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
    t = np.zeros(n, dtype=np.int64)
    span = {"ones": slice(0, n), "first5": slice(0, 5), "last5": slice(n - 5, n), "first10": slice(0, 10),
            "last10": slice(n - 10, n), "mid5": slice((n - 5) // 2, (n - 5) // 2 + 5)}[kind]
    t[span] = 1
    return t


def agent_pool(instance: SetCoverInstance, draws: int = 100_000, p_f: float = 0.68, seed: int = 0) -> np.ndarray:
    """``draws`` agents with features Bernoulli(p_f), de-duplicated (sorted), negatives only."""
    rng = np.random.default_rng(seed)
    X = np.unique((rng.random((draws, instance.n_features)) < p_f).astype(np.int8), axis=0)
    return X[~instance.is_positive(X)]


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
        padded = np.full((len(self), max(width, 1)), -1, dtype=np.int16)
        for k, a in enumerate(self.actions):
            padded[k, :len(a)] = a
        grouped = {} if self.groups is None else {"groups": self.groups.astype(np.int16)}
        write_npz(path, X=self.X.astype(np.int8), actions=padded, cost=self.cost,
                  instance=json.dumps(self.instance.to_dict()), info=json.dumps(self.info), **grouped)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "LabelledAgents":
        readable_file(path, StormcfError)
        try:
            with np.load(path, allow_pickle=False) as data:
                instance = SetCoverInstance.from_dict(json.loads(str(data["instance"])), str(path))
                actions = [tuple(int(i) for i in row if i >= 0) for row in data["actions"]]
                out = cls(instance, data["X"].astype(np.int64), actions, data["cost"], json.loads(str(data["info"])),
                          data["groups"].astype(np.int64) if "groups" in data.files else None)
        except (OSError, KeyError, ValueError) as err:
            raise StormcfError(f"{path}: not a labelled set-cover data set (.npz from setcover-data): {err}") from None
        if out.X.shape[1] != instance.n_features:
            raise StormcfError(f"{path}: agents have {out.X.shape[1]} features, the instance {instance.n_features}")
        return out


def label(instance: SetCoverInstance, X: np.ndarray, method: str = "storm", max_size: int = 3,
          drop_ties: bool = True, group: str | None = None) -> LabelledAgents:
    """Label agents (of ``group``: with its actions) with their canonical optimum; drop infeasible ones, ties
    (``drop_ties``) and sets larger than ``max_size``. ``info`` records how many were dropped and the timings."""
    labels = label_agents(instance, X, method, group)
    sizes = np.array([len(a) for a in labels.actions])
    feasible = np.isfinite(labels.values)
    tied = np.array([u is False for u in labels.unique])
    keep = feasible & (sizes >= 1) & (sizes <= max_size) & ~(tied & drop_ties)
    info = {"method": method, "agents": int(len(X)), "infeasible": int((~feasible).sum()),
            "tied": int(tied.sum()), "too_large": int((feasible & (sizes > max_size)).sum()),
            "kept": int(keep.sum()), "family_states": labels.states, "family_choices": labels.choices,
            "timings": labels.timings}
    rows = np.flatnonzero(keep)
    return LabelledAgents(instance, X[rows], [labels.actions[k] for k in rows], labels.values[rows], info)


def frequency_filter(data: LabelledAgents, more_than: int) -> LabelledAgents:
    """Keep agents whose CFE occurs more than ``more_than`` times in the whole data set (``>10``, ``>40``)."""
    _, inverse, counts = np.unique(np.array([_key(a) for a in data.actions]), return_inverse=True,
                                   return_counts=True)
    return data.subset(np.flatnonzero(counts[inverse] > more_than))


def split(data: LabelledAgents, test: float = 0.2, seed: int = 0) -> tuple[LabelledAgents, LabelledAgents]:
    """A uniformly random train/test split (80/20 by default)."""
    order = np.random.default_rng(seed).permutation(len(data))
    cut = int(round(len(data) * (1 - test)))
    return data.subset(np.sort(order[:cut])), data.subset(np.sort(order[cut:]))


def _key(actions: tuple[int, ...]) -> str:
    return ",".join(map(str, actions))


def generate(n: int = 20, actions: int = 100, p_f: float = 0.68, p_a: float = 0.5, draws: int = 100_000,
             costs: str = "real", thresholds: str = "ones", method: str = "storm", max_size: int = 3,
             seed: int = 0) -> LabelledAgents:
    """The paper's data set: instance, agent pool, labels (see the module docstring)."""
    # the instance's effects (actions x n) and the pool's draws (draws x n), a few float64 copies of each
    require_memory(4 * 8 * n * (actions + draws), f"{draws} agents of {n} features and {actions} actions")
    instance = paper_instance(n, actions, p_a, costs, thresholds, seed)
    X = agent_pool(instance, draws, p_f, seed + 1)
    data = label(instance, X, method, max_size)
    data.info.update({"n": n, "actions": actions, "p_f": p_f, "p_a": p_a, "draws": draws, "costs": costs,
                      "thresholds": thresholds, "seed": seed})
    return data


def generate_grouped(grouping: str, n: int = 20, actions: int = 100, p_f: float = 0.68, draws: int = 100_000,
                     costs: str = "real", thresholds: str = "ones", method: str = "storm", max_size: int = 3,
                     seed: int = 0) -> LabelledAgents:
    """Table 4's grouped data set (:func:`grouped_instance`): the agent pool, each agent in a group drawn
    uniformly, labelled with its group's actions; ``info["per_group"]`` has each group's counts."""
    require_memory(4 * 8 * n * (len(GROUP_P_A) * actions + draws), f"{draws} agents of {n} features")
    instance = grouped_instance(n, grouping, actions, costs, thresholds, seed)
    X = agent_pool(instance, draws, p_f, seed + 1)
    assigned = np.random.default_rng(seed + 2).integers(0, len(GROUP_P_A), len(X))
    parts = [label(instance, X[assigned == g], method, max_size, group=name)
             for g, name in enumerate(group_names(instance))]
    keys = ("agents", "infeasible", "tied", "too_large", "kept", "family_states", "family_choices")
    info = {key: sum(p.info[key] for p in parts) for key in keys}
    info.update(method=method, per_group={name: {key: p.info[key] for key in keys[:5]}
                                          for name, p in zip(group_names(instance), parts)},
                timings={phase: sum(p.info["timings"].get(phase, 0.0) for p in parts)
                         for phase in parts[0].info["timings"]},
                n=n, actions=actions, p_f=p_f, p_a=list(GROUP_P_A) if grouping == "probabilistic" else 0.5,
                draws=draws, costs=costs, thresholds=thresholds, seed=seed, groups=grouping)
    return LabelledAgents(instance, np.vstack([p.X for p in parts]), [a for p in parts for a in p.actions],
                          np.concatenate([p.cost for p in parts]), info,
                          np.concatenate([np.full(len(p), g) for g, p in enumerate(parts)]))


def load_instance(path: str | os.PathLike) -> SetCoverInstance:
    """An instance from a JSON instance file or from a labelled data set (.npz)."""
    return LabelledAgents.load(path).instance if Path(path).suffix == ".npz" else SetCoverInstance.load(path)
