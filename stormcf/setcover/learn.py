"""Learned CFE generators (notes §2) and the validity guarantees stormcf adds to them (notes §5.5).

Generators map an agent x ∈ {0,1}^n to a CFE without solving anything; they see what the paper's settings give:

- ``mc`` (named CFE, multi-class): softmax over the K distinct training CFEs, ``L_MC = −(1/m) Σ_i Σ_k I_i^(k) log Î_i^(k)``;
  closed world: a CFE not seen in training cannot be predicted;
- ``na`` (named action, multi-label): one sigmoid per action, ``Î = {a : σ(z^(a)) > 0.5}`` (argmax if empty);
- ``fa`` (full action, multi-label on the padded 3·n-bit effect vectors in ascending catalogue order); the decoded
  effect vectors are snapped to the nearest catalogue action (Hamming) where the catalogue is known;
- ``knn``: the paper's baseline, majority vote of the k nearest training agents in Hamming distance
  ``d_H(x, y) = Σ_j [x_j ≠ y_j]`` (ties: smaller total distance of the voters, then the smaller class id).

The networks are scikit-learn MLPs (ReLU, Adam, early stopping on 10% of the training set); their weights are
saved as ``.npz`` and inference is a few numpy matrix products. Augmentation is Algorithm 1 with a budget.

**Guarantees** (not in the paper): with the instance known, every prediction is validated (``x + Σ e_i >= t``);
an invalid one is repaired (greedy completion from it, then reverse delete), MC's top-k candidates are filtered by
validity and cost, and the result can be certified against the LP bound or an exact engine, so a user always gets a
valid explanation and its optimality gap.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..console import progress
from ..errors import StormcfError
from ..examples import readable_file
from ..report import write_npz
from .data import LabelledAgents
from .engines import greedy_completion, lp_bound, run_engine
from .problem import TIE_TOLERANCE, SetCoverInstance, SetCoverProblem

GENERATORS = ("mc", "na", "fa", "knn")
#: the paper's k of the Hamming baseline for n = 20 / 50 / 100
PAPER_K = {20: 5, 50: 10, 100: 15}
#: FA decodes at most this many effect vectors (the paper's CFEs have 1 to 3 actions)
FA_SLOTS = 3


class GeneratorError(StormcfError):
    """A generator file is malformed or does not fit the instance."""


# ==================================================================================================== networks
@dataclass(frozen=True, eq=False)
class Network:
    """An MLP for inference in numpy: ReLU hidden layers, softmax or sigmoid outputs."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    output: str

    @classmethod
    def from_sklearn(cls, mlp) -> "Network":
        output = "softmax" if mlp.out_activation_ == "softmax" else "sigmoid"
        return cls(tuple(np.asarray(w, dtype=np.float32) for w in mlp.coefs_),
                   tuple(np.asarray(b, dtype=np.float32) for b in mlp.intercepts_), output)

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Output probabilities (N, outputs)."""
        h = np.asarray(X, dtype=np.float32)
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = np.maximum(h @ w + b, 0.0)
        z = h @ self.weights[-1] + self.biases[-1]
        if self.output == "softmax":
            z = np.exp(z - z.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        return 1.0 / (1.0 + np.exp(-z))

    def arrays(self) -> dict[str, np.ndarray]:
        out = {f"w{k}": w for k, w in enumerate(self.weights)}
        out.update({f"b{k}": b for k, b in enumerate(self.biases)})
        return out

    @classmethod
    def from_arrays(cls, data, layers: int, output: str) -> "Network":
        return cls(tuple(data[f"w{k}"] for k in range(layers)), tuple(data[f"b{k}"] for k in range(layers)), output)


def top_classes(scores: np.ndarray, k: int) -> np.ndarray:
    """The k best classes of every row, best first: the highest score, then the smallest class id; the same as
    ``np.argsort(-scores, axis=1, kind="stable")[:, :k]``, by a partial selection (``argpartition``, linear in the
    number of classes) and a sort of the k selected. Rows where another class ties with the k-th score take the
    full stable sort (which of the tied classes is in depends on their ids)."""
    k = min(k, scores.shape[1])
    if k == 1:
        return scores.argmax(axis=1)[:, None]                 # the first maximum: the smallest id among ties
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    best = np.take_along_axis(scores, part, axis=1)
    top = np.take_along_axis(part, np.lexsort((part, -best), axis=1), axis=1)
    tied = (scores >= best.min(axis=1, keepdims=True)).sum(axis=1) > k
    if tied.any():
        top[tied] = np.argsort(-scores[tied], axis=1, kind="stable")[:, :k]
    return top


# ==================================================================================================== generators
@dataclass(eq=False)
class Generator:
    """A trained generator: ``kind`` in mc / na / fa / knn.

    Attributes:
        kind: the formulation.
        n_features, n_actions: sizes of the instance it was trained on.
        classes: (mc, knn) the training CFEs, class k = ``classes[k]``.
        network: (mc, na, fa) the MLP.
        train_X, train_y: (knn) the training agents and their class ids.
        k: (knn) neighbours.
        info: training facts (epochs, seconds, sizes, hyper-parameters).
    """

    kind: str
    n_features: int
    n_actions: int
    classes: list[tuple[int, ...]] = field(default_factory=list)
    network: Network | None = None
    train_X: np.ndarray | None = None
    train_y: np.ndarray | None = None
    k: int = 5
    info: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------------------ inference
    def class_scores(self, X: np.ndarray) -> np.ndarray:
        """(mc) softmax over the training CFEs; (knn) vote shares."""
        if self.kind == "mc":
            scores = self.network.scores(X)
            return np.hstack([1 - scores, scores]) if scores.shape[1] == 1 else scores   # two classes: one logit
        if self.kind == "knn":
            return self._votes(np.asarray(X))
        raise GeneratorError(f"a {self.kind} generator has no CFE classes")

    def predict(self, X: np.ndarray, instance: SetCoverInstance | None = None, top_k: int = 1
                ) -> list[list[tuple[int, ...]]]:
        """Candidate CFEs per agent, best first (``top_k`` of them for mc/knn; one for na/fa). FA snaps decoded
        effect vectors to catalogue actions and needs the instance."""
        X = np.asarray(X)
        if self.kind in ("mc", "knn"):
            top = top_classes(self.class_scores(X), top_k)
            return [[self.classes[c] for c in row] for row in top]
        out = self.network.scores(X)
        if self.kind == "na":
            chosen = out > 0.5
            empty = ~chosen.any(axis=1)
            chosen[empty, out[empty].argmax(axis=1)] = True
            return [[tuple(np.flatnonzero(row).tolist())] for row in chosen]
        if instance is None:
            raise GeneratorError("the full-action generator predicts effect vectors; snapping them to actions "
                                 "needs the instance")
        bits = (out > 0.5).reshape(len(X), FA_SLOTS, self.n_features)
        effects = (instance.effects >= 1).astype(np.int8)
        out_sets = []
        for rows in bits:
            rows = rows[rows.any(axis=1)]
            nearest = np.abs(rows[:, None, :].astype(np.int8) - effects[None]).sum(axis=2).argmin(axis=1)
            out_sets.append([tuple(sorted(set(nearest.tolist())))])
        return out_sets

    def _votes(self, X: np.ndarray, chunk: int = 2048) -> np.ndarray:
        """Vote shares of the k nearest training agents (Hamming; ties by total distance, then class id)."""
        T = self.train_X.astype(np.float32)
        norms = T.sum(axis=1)
        K = len(self.classes)
        out = np.zeros((len(X), K))
        for start in range(0, len(X), chunk):
            x = X[start:start + chunk].astype(np.float32)
            d = x.sum(axis=1)[:, None] + norms[None, :] - 2 * x @ T.T          # d_H for 0/1 vectors
            near = np.argpartition(d, self.k - 1, axis=1)[:, :self.k]
            labels = self.train_y[near]
            dist = np.take_along_axis(d, near, axis=1)
            rows = np.repeat(np.arange(len(x)), self.k)
            votes = np.zeros((len(x), K))
            np.add.at(votes, (rows, labels.ravel()), 1.0)
            total = np.zeros((len(x), K))
            np.add.at(total, (rows, labels.ravel()), dist.ravel())
            # more votes first, then the smaller total distance, then the smaller class id (stable argsort)
            out[start:start + chunk] = votes - 1e-6 * total / (1 + total.max())
        return out

    # ------------------------------------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> None:
        meta = {"kind": self.kind, "n_features": self.n_features, "n_actions": self.n_actions, "k": self.k,
                "classes": [list(c) for c in self.classes], "info": self.info}
        arrays: dict[str, Any] = {}
        if self.network is not None:
            arrays.update(self.network.arrays())
            meta.update(layers=len(self.network.weights), output=self.network.output)
        if self.train_X is not None:
            arrays.update(train_X=np.packbits(self.train_X.astype(bool), axis=1), train_y=self.train_y)
        write_npz(path, meta=json.dumps(meta), **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Generator":
        readable_file(path, GeneratorError)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                network = (Network.from_arrays(data, meta["layers"], meta["output"]) if "layers" in meta else None)
                train_X = (np.unpackbits(data["train_X"], axis=1)[:, :meta["n_features"]].astype(np.int8)
                           if "train_X" in data else None)
                train_y = data["train_y"] if "train_y" in data else None
        except (OSError, KeyError, ValueError) as err:
            raise GeneratorError(f"{path}: not a generator file (.npz from setcover-learn): {err}") from None
        return cls(meta["kind"], meta["n_features"], meta["n_actions"], [tuple(c) for c in meta["classes"]],
                   network, train_X, train_y, meta["k"], meta["info"])

    def check_fits(self, instance: SetCoverInstance) -> None:
        if (self.n_features, self.n_actions) != (instance.n_features, instance.n_actions):
            raise GeneratorError(f"the generator was trained on {self.n_features} features and {self.n_actions} "
                                 f"actions; {instance.source} has {instance.n_features} and {instance.n_actions}")


# ==================================================================================================== training
def train(kind: str, data: LabelledAgents, hidden: tuple[int, ...] = (256, 256), seed: int = 0,
          max_iter: int = 200, patience: int = 10, batch_size: int = 512, k: int | None = None) -> Generator:
    """Train a generator on labelled agents (scikit-learn MLP; early stopping on 10% of the data)."""
    if kind not in GENERATORS:
        raise GeneratorError(f"unknown generator '{kind}': use {', '.join(GENERATORS)}")
    inst = data.instance
    start = time.perf_counter()
    classes = sorted(set(data.actions))
    index = {c: i for i, c in enumerate(classes)}
    gen = Generator(kind, inst.n_features, inst.n_actions)
    if kind == "knn":
        gen.classes, gen.k = classes, k or PAPER_K.get(inst.n_features, 5)
        gen.train_X, gen.train_y = data.X.astype(np.int8), np.array([index[a] for a in data.actions])
    else:
        from sklearn.neural_network import MLPClassifier
        if kind == "mc":
            gen.classes = classes
            y = np.array([index[a] for a in data.actions])
        elif kind == "na":
            y = np.zeros((len(data), inst.n_actions), dtype=np.int8)
            for r, a in enumerate(data.actions):
                y[r, list(a)] = 1
        else:
            y = fa_targets(inst, data.actions)
        mlp = MLPClassifier(hidden_layer_sizes=hidden, early_stopping=True, validation_fraction=0.1,
                            n_iter_no_change=patience, batch_size=min(batch_size, len(data)), max_iter=max_iter,
                            random_state=seed)
        mlp.fit(data.X.astype(np.float32), y)
        gen.network = Network.from_sklearn(mlp)
        if kind == "mc" and len(mlp.classes_) != len(classes):
            raise GeneratorError("scikit-learn dropped CFE classes")
        gen.info["epochs"] = int(mlp.n_iter_)
    gen.info.update({"hidden": list(hidden), "seed": seed, "train_agents": len(data), "classes": len(classes),
                     "seconds": time.perf_counter() - start})
    return gen


def fa_targets(instance: SetCoverInstance, actions: list[tuple[int, ...]]) -> np.ndarray:
    """The padded {0,1}^{3n} targets of the full-action generator (effect vectors in ascending order)."""
    n = instance.n_features
    y = np.zeros((len(actions), FA_SLOTS * n), dtype=np.int8)
    for r, a in enumerate(actions):
        for slot, i in enumerate(a[:FA_SLOTS]):
            y[r, slot * n:(slot + 1) * n] = instance.effects[i] >= 1
    return y


# ==================================================================================================== augmentation
def augment(data: LabelledAgents, target: int = 20, per_agent: int = 8, seed: int = 0) -> LabelledAgents:
    """Algorithm 1 with a budget (notes §2.4): for every CFE I seen fewer than ``target`` times, derive up to
    ``per_agent`` worse-off agents from each of its agents by lowering features I over-covers,

        ids = {j : x_j > 0 and x_j + Σ_{i∈I} e_ij > t_j},     aug = x − z,   0 <= z_j <= min(x_j, x*_j − t_j),

    (in the 0/1 case: switching features of ids off). I stays valid for aug, and any CFE valid for aug is valid
    for x >= aug, so a (unique) optimum of x stays the (unique) optimum of aug. New agents already in the data
    are skipped. Apply it to training data only."""
    inst = data.instance
    rng = np.random.default_rng(seed)
    keys = [",".join(map(str, a)) for a in data.actions]
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    seen = {x.tobytes() for x in data.X.astype(np.int64)}
    new_X, new_actions, new_cost = [], [], []
    for r in np.flatnonzero([counts[key] < target for key in keys]):
        x, I = data.X[r].astype(np.int64), data.actions[r]
        excess = np.minimum(x, np.maximum(inst.final_state(x, I) - inst.thresholds, 0))
        ids = np.flatnonzero(excess > 0)
        if ids.size == 0:
            continue
        for _ in range(per_agent):
            if counts[keys[r]] >= target:
                break
            z = np.zeros_like(x)
            pick = ids[rng.random(ids.size) < 0.5]
            z[pick] = rng.integers(1, excess[pick] + 1)
            aug = x - z
            if not pick.size or aug.tobytes() in seen or not inst.is_valid(aug, I):
                continue
            seen.add(aug.tobytes())
            counts[keys[r]] += 1
            new_X.append(aug)
            new_actions.append(I)
            new_cost.append(data.cost[r])
    if not new_X:
        return data
    info = dict(data.info, augmented=len(new_X))
    return LabelledAgents(inst, np.vstack([data.X, np.array(new_X)]), data.actions + new_actions,
                          np.concatenate([data.cost, new_cost]), info)


# ==================================================================================================== guarantees
@dataclass(frozen=True)
class Guaranteed:
    """A prediction after validation, repair and (optionally) certification.

    Attributes:
        actions: the explanation returned (always valid when a cover exists).
        cost: its (expected) cost.
        raw: the generator's first candidate.
        raw_valid: whether that candidate was valid.
        repaired: whether the explanation came from the repair.
        bound: a proven lower bound on the optimum (LP relaxation or the exact optimum), if certified.
        gap: cost / bound − 1 (an upper bound on the optimality gap; exact with an exact engine).
    """

    actions: tuple[int, ...]
    cost: float
    raw: tuple[int, ...]
    raw_valid: bool
    repaired: bool
    bound: float | None = None
    gap: float | None = None


def guarantee(problem: SetCoverProblem, candidates: list[tuple[int, ...]], certify: str | None = None) -> Guaranteed:
    """The cheapest valid candidate; if none is valid, the first one repaired (greedy completion from it, then
    reverse delete). ``certify``: ``"lp"`` (LP relaxation bound) or an exact engine name (exact gap)."""
    inst = problem.instance
    usable = [c for c in candidates if all(problem.available[list(c)])] if candidates else []
    valid = [c for c in usable if inst.is_valid(problem.agent, c)]
    raw = tuple(candidates[0]) if candidates else ()
    raw_valid = bool(candidates) and inst.is_valid(problem.agent, raw) and all(problem.available[list(raw)])
    if valid:
        actions, repaired = min(valid, key=lambda c: (inst.cost(c), len(c), c)), False
    else:
        start = usable[0] if usable else ()
        actions, repaired = greedy_completion(problem, start), True
        if actions is None:
            return Guaranteed((), math.inf, raw, raw_valid, True)
    cost = inst.cost(actions)
    bound = gap = None
    if certify is not None:
        bound = lp_bound(problem) if certify == "lp" else run_engine(problem, certify).value
        gap = 0.0 if cost <= bound + TIE_TOLERANCE * max(1.0, bound) else (cost / bound - 1 if bound > 0 else math.inf)
    return Guaranteed(tuple(actions), cost, raw, raw_valid, repaired, bound, gap)


# ==================================================================================================== evaluation
def evaluate(generator: Generator, test: LabelledAgents, top_k: int = 1, certify: str | None = None
             ) -> dict[str, Any]:
    """The paper's exact match with its 95% interval, and what the paper does not report (notes §5.5.1): valid
    rate, the share of feasible mistakes, cost ratios of the valid predictions, the optimal rate and cost ratios
    after the guarantees (validate, top-k by validity and cost, repair), and the inference latency."""
    inst = test.instance
    generator.check_fits(inst)
    start = time.perf_counter()
    candidates = generator.predict(test.X, inst, top_k=max(1, top_k))
    latency = (time.perf_counter() - start) / max(1, len(test))
    raw = [c[0] for c in candidates]
    exact = np.array([r == a for r, a in zip(raw, test.actions)])
    valid = np.array([inst.is_valid(x, r) for x, r in zip(test.X, raw)])
    raw_cost = np.array([inst.cost(r) for r in raw])
    ratio = raw_cost[valid] / np.maximum(test.cost[valid], 1e-300)
    start = time.perf_counter()
    kept = [guarantee(SetCoverProblem(inst, x), c, certify)
            for x, c in progress(zip(test.X, candidates), total=len(test.X), desc="guarantees", unit="agent")]
    wrap = (time.perf_counter() - start) / max(1, len(test))
    cost = np.array([g.cost for g in kept])
    after = cost / np.maximum(test.cost, 1e-300)
    optimal = np.abs(cost - test.cost) <= TIE_TOLERANCE * np.maximum(1.0, test.cost)
    accuracy = float(exact.mean()) if len(test) else math.nan
    mistakes = ~exact
    out = {"generator": generator.kind, "agents": len(test), "exact_match": accuracy,
           "ci95": 1.96 * math.sqrt(accuracy * (1 - accuracy) / max(1, len(test))),
           "valid_rate": float(valid.mean()), "feasible_mistakes": float(valid[mistakes].mean()) if mistakes.any()
           else None, "cost_ratio_valid_mean": float(ratio.mean()) if ratio.size else None,
           "top_k": top_k, "guaranteed_valid_rate": float(np.isfinite(cost).mean()),
           "guaranteed_optimal_rate": float(optimal.mean()), "guaranteed_cost_ratio_mean": float(after.mean()),
           "guaranteed_cost_ratio_max": float(after.max()), "repaired": int(sum(g.repaired for g in kept)),
           "latency_us": 1e6 * latency, "guarantee_us": 1e6 * wrap,
           "unseen_test_cfes": len(set(test.actions) - set(generator.classes)) if generator.classes else None}
    if certify is not None:
        gaps = np.array([g.gap for g in kept], dtype=float)
        out["certified"] = certify
        out["certified_gap_max"] = float(np.nanmax(gaps)) if gaps.size else None
    return out
