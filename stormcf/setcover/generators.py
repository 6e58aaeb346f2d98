"""Learned CFE generators (notes §2) and the validity guarantees stormcf adds to them (notes §5.5).

Generators map an agent x ∈ {0,1}^n to a CFE without solving anything; they see what the paper's settings give:

- ``mc`` (named CFE, multi-class): softmax over the K distinct training CFEs, trained with the cross-entropy
  ``L_MC = −(1/m) Σ_i Σ_k I_i^(k) log Î_i^(k)``; closed world: a CFE not seen in training cannot be predicted;
- ``na`` (named action, multi-label): one sigmoid per action, ``Î = {a : σ(z^(a)) > 0.5}`` (argmax if empty), trained
  with the paper's weighted loss ``L_NA^w = p_w · BCE + α · (1/m) Σ_i ‖Î_i − I_i‖_1``;
- ``fa`` (full action, multi-label): the padded 3·n effect bits (ascending catalogue order), same loss;
- ``seq2seq`` (full action, the paper's encoder-decoder, Fig. 2): an MLP encoder gives the initial state of a GRU
  decoder that emits one effect vector per step with a "last action" bit (at most 3 steps), same loss per step;
- ``knn``: the paper's baseline, majority vote of the k nearest training agents in Hamming distance
  ``d_H(x, y) = Σ_j [x_j ≠ y_j]`` (ties: smaller total distance of the voters, then the smaller class id).

``mc``, ``na`` and ``fa`` can also be an ensemble (not in the paper): several networks trained with different
seeds whose output probabilities are averaged (:class:`Ensemble`).

The full-action generators predict effect vectors: their exact match is the paper's (the predicted effect vectors
equal the CFE's); where the catalogue is known, the decoded vectors are snapped to the nearest catalogue actions
(Hamming) for the guarantees.

Training the networks needs PyTorch (``pip install 'stormcf[learn]'``, :mod:`.training`); a saved generator is
weights as arrays in an ``.npz`` with JSON metadata (no pickle), and inference is numpy: batch normalisation is
folded into the dense layers when a generator is saved. ``knn`` needs no PyTorch at all.

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
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StormcfError
from ..examples import readable_file
from ..report import write_npz
from ..run import Run
from .data import LabelledAgents, group_names
from .engines import greedy_completion, lp_bound, run_engine
from .problem import TIE_TOLERANCE, SetCoverInstance, SetCoverProblem

GENERATORS = ("mc", "na", "fa", "seq2seq", "knn")
#: generators that are neural networks (training them needs PyTorch)
NETWORKS = ("mc", "na", "fa", "seq2seq")
#: the network generators that can be an :class:`Ensemble`
ENSEMBLE_KINDS = ("mc", "na", "fa")
#: generators that predict effect vectors (the full-action setting)
FULL_ACTION = ("fa", "seq2seq")
#: the paper's k of the Hamming baseline for n = 20 / 50 / 100
PAPER_K = {20: 5, 50: 10, 100: 15}
#: FA decodes at most this many effect vectors (the paper's CFEs have 1 to 3 actions)
FA_SLOTS = 3
#: what the first key of a generator file says
FILE_FORMAT = "stormcf set-cover generator"
FILE_VERSION = 1
OUTPUTS = ("softmax", "sigmoid", "tanh")


class GeneratorError(StormcfError):
    """A generator file is malformed or does not fit the instance; bad training options."""


# ==================================================================================================== settings
@dataclass(frozen=True)
class TrainingSettings:
    """Hyper-parameters of a network generator (notes §2; [R]: where the paper is silent).

    Attributes:
        hidden: widths of the hidden layers (paper: MC 2 x 2000, NA 3 x 2000; each Linear → batch norm → ReLU →
            dropout).
        epochs: epochs at most (the learning rate follows one cycle over them).
        batch_size: agents per gradient step (paper: MC 2000, NA 6000 "on average").
        patience: early stopping: epochs without a better validation exact match, counted from the end of the
            learning rate's warm-up at the earliest (the best epoch is kept).
        learning_rate: the peak of the one-cycle schedule (Adam).
        dropout: dropout rate after every hidden layer.
        l2: ℓ2 regularisation of the weights (Adam's weight decay).
        p_w, alpha: the weights of ``L^w = p_w · BCE + α · L1`` (na, fa, seq2seq; paper grid {0.05, 0.07, 0.1}).
        decoder: seq2seq: the GRU decoder's state size.
        validation: share of the training agents held out for early stopping.
        seed: seeds initialisation, shuffling, dropout and the validation split.
        threads: CPU threads of PyTorch (fixed: results are deterministic for a given number of threads).
        ensemble: (mc, na, fa) the single networks of the seeds ``seed``, ``seed + 1``, ... (each with its own
            validation split), trained one after the other, their output probabilities averaged
            (:class:`Ensemble`; not the paper's, which trains one network).
    """

    hidden: tuple[int, ...] = (2000, 2000)
    epochs: int = 60
    batch_size: int = 2000
    patience: int = 20
    learning_rate: float = 3e-3
    dropout: float = 0.1
    l2: float = 1e-5
    p_w: float = 0.1
    alpha: float = 0.1
    decoder: int = 512
    validation: float = 0.1
    seed: int = 0
    threads: int = 2
    ensemble: int = 1

    def check(self) -> None:
        """Raise :class:`GeneratorError` naming the first setting out of range."""
        positive = {"epochs": self.epochs, "batch_size": self.batch_size, "patience": self.patience,
                    "decoder": self.decoder, "threads": self.threads, "ensemble": self.ensemble}
        for name, value in positive.items():
            if not (isinstance(value, int) and value >= 1):
                raise GeneratorError(f"{name} must be a positive integer, got {value!r}")
        if not self.hidden or any(not (isinstance(h, int) and h >= 1) for h in self.hidden):
            raise GeneratorError(f"hidden layer widths must be positive integers, got {list(self.hidden)}")
        ranges = {"learning_rate": (self.learning_rate, "> 0", lambda v: v > 0),
                  "dropout": (self.dropout, "in [0, 1)", lambda v: 0 <= v < 1),
                  "l2": (self.l2, ">= 0", lambda v: v >= 0), "p_w": (self.p_w, ">= 0", lambda v: v >= 0),
                  "alpha": (self.alpha, ">= 0", lambda v: v >= 0),
                  "validation": (self.validation, "in (0, 1)", lambda v: 0 < v < 1)}
        for name, (number, want, ok) in ranges.items():
            if not (isinstance(number, (int, float)) and math.isfinite(number) and ok(number)):
                raise GeneratorError(f"{name} must be {want}, got {number!r}")
        if self.p_w == 0 and self.alpha == 0:
            raise GeneratorError("p_w and alpha are both 0: the multi-label loss would be 0")


#: defaults per generator: the paper's layers (notes §2.1, §2.3; FA as NA, the encoder-decoder as MC: the paper
#: gives no sizes for them), NA and FA 1,024 wide instead of 2,000 (measured on the n = 20 data, 60 epochs: 0.8339
#: against 0.8347 exact match, in a third of the time), with epochs, batches and learning rates for CPU minutes
#: instead of the paper's 3000-5000 epochs ([R], measured there, NA 3 x 1024 for 20 epochs: batches of 512 reach
#: 0.774 exact match, of 2,000 0.619, of 256 0.770; peak rates 1e-3 0.671, 2e-3 0.774, 1e-2 0.561), and for NA/FA
#: α = 0.05 of the paper's grid {0.05, 0.07, 0.1} (p_w = 0.1: with 90 epochs NA 0.8425, FA 0.8355;
#: docs/commands/setcover.md, Table 2); MC's cycle of 20 epochs ends where one of 60 does (0.9553 against 0.9551);
#: seq2seq's peak rate 1e-2 is the best of 1e-3 ... 2e-2 in 20-epoch runs with a 2 x 1024 encoder (0.708; 5e-3
#: 0.619, 2e-2 0.680), and with the defaults it reaches 0.825 in 18 minutes
DEFAULT_SETTINGS = {
    "mc": TrainingSettings(hidden=(2000, 2000), epochs=20, batch_size=2000, patience=20),
    "na": TrainingSettings(hidden=(1024, 1024, 1024), epochs=90, batch_size=512, patience=20, learning_rate=2e-3,
                           dropout=0.05, alpha=0.05),
    "fa": TrainingSettings(hidden=(1024, 1024, 1024), epochs=90, batch_size=512, patience=20, learning_rate=2e-3,
                           dropout=0.05, alpha=0.05),
    "seq2seq": TrainingSettings(hidden=(2000, 2000), epochs=60, batch_size=512, patience=20, learning_rate=1e-2,
                                dropout=0.05, decoder=512),
}


# ==================================================================================================== networks
@dataclass(frozen=True, eq=False)
class Network:
    """An MLP for inference in numpy: ReLU hidden layers (batch normalisation folded in), then the output
    activation (softmax, sigmoid, or tanh for the encoder of seq2seq)."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    output: str

    def logits(self, X: np.ndarray) -> np.ndarray:
        h = np.asarray(X, dtype=np.float32)
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = np.maximum(h @ w + b, 0.0)
        return h @ self.weights[-1] + self.biases[-1]

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Output activations (N, outputs)."""
        z = self.logits(X)
        if self.output == "softmax":
            z = np.exp(z - z.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        if self.output == "tanh":
            return np.tanh(z)
        return _sigmoid(z)

    @property
    def members(self) -> tuple["Network", ...]:
        return (self,)

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        out = {f"{prefix}w{k}": w for k, w in enumerate(self.weights)}
        out.update({f"{prefix}b{k}": b for k, b in enumerate(self.biases)})
        return out


@dataclass(frozen=True, eq=False)
class Ensemble:
    """Networks of one shape (``TrainingSettings.ensemble``; not the paper's) whose output probabilities are
    averaged, ``Î = (1/M) Σ_j Î_j`` (mc: the softmax; na, fa: each sigmoid), with the logits of that average
    (mc: ``log Î``, argmax unchanged; na, fa: ``log Î − log(1 − Î)``, positive iff ``Î > 1/2``), so that every
    decoding of a single network applies unchanged. Member j's arrays are saved with the prefix ``m{j}_`` (the
    first one's without, as a single network's)."""

    members: tuple[Network, ...]

    @property
    def output(self) -> str:
        return self.members[0].output

    def scores(self, X: np.ndarray) -> np.ndarray:
        total = self.members[0].scores(X)
        for member in self.members[1:]:
            total += member.scores(X)
        return total / len(self.members)

    def logits(self, X: np.ndarray) -> np.ndarray:
        p = self.scores(X)
        with np.errstate(divide="ignore"):
            return np.log(p) if self.output == "softmax" else np.log(p) - np.log1p(-p)

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for j, member in enumerate(self.members):
            out.update(member.arrays(prefix + (f"m{j}_" if j else "")))
        return out


@dataclass(frozen=True, eq=False)
class Decoder:
    """The GRU decoder of ``seq2seq`` (PyTorch's gate order r, z, n):

        r = σ(W_ir u + b_ir + W_hr h + b_hr),  z = σ(W_iz u + b_iz + W_hz h + b_hz),
        g = tanh(W_in u + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ g + z ⊙ h,

    then ``head`` gives n effect logits and one "last action" logit. The input u of the first step is the start
    flag (0^n, 1), then the previous step's effect bits (e, 0)."""

    w_ih: np.ndarray          # (3H, n + 1)
    w_hh: np.ndarray          # (3H, H)
    b_ih: np.ndarray          # (3H,)
    b_hh: np.ndarray          # (3H,)
    head_w: np.ndarray        # (H, n + 1)
    head_b: np.ndarray        # (n + 1,)

    NAMES = ("w_ih", "w_hh", "b_ih", "b_hh", "head_w", "head_b")

    def decode(self, h: np.ndarray, steps: int = FA_SLOTS) -> list[np.ndarray]:
        """Greedy decoding from the initial states ``h`` (N, H): per agent the effect vectors (s, n) as 0/1."""
        n = self.head_w.shape[1] - 1
        N = len(h)
        u = np.zeros((N, n + 1), dtype=np.float32)
        u[:, n] = 1.0
        bits = np.zeros((N, steps, n), dtype=np.int8)
        length = np.full(N, steps)
        active = np.ones(N, dtype=bool)
        for step in range(steps):
            h = self._cell(u, h)
            out = h @ self.head_w + self.head_b
            bits[active, step] = out[active, :n] > 0
            last = active & (out[:, n] > 0)
            length[last] = step + 1
            active &= ~last
            u = np.zeros_like(u)
            u[:, :n] = out[:, :n] > 0
        return [bits[k, :length[k]] for k in range(N)]

    def _cell(self, u: np.ndarray, h: np.ndarray) -> np.ndarray:
        gi = u @ self.w_ih.T + self.b_ih
        gh = h @ self.w_hh.T + self.b_hh
        H = h.shape[1]
        r = _sigmoid(gi[:, :H] + gh[:, :H])
        z = _sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
        g = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        return (1 - z) * g + z * h

    def arrays(self) -> dict[str, np.ndarray]:
        return {f"decoder_{name}": getattr(self, name) for name in self.NAMES}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))          # σ(z) without overflow in exp


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
    """A trained generator: ``kind`` in mc / na / fa / seq2seq / knn.

    Attributes:
        kind: the formulation.
        n_features, n_actions: sizes of the instance it was trained on.
        classes: (mc, knn) the training CFEs, class k = ``classes[k]``.
        network: (mc, na, fa) the MLP or an :class:`Ensemble` of them; (seq2seq) the encoder, whose tanh outputs
            are the decoder's first state.
        decoder: (seq2seq) the GRU decoder.
        train_X, train_y: (knn) the training agents and their class ids.
        k: (knn) neighbours.
        info: training facts (epochs, seconds, sizes, hyper-parameters, the learning curve).
    """

    kind: str
    n_features: int
    n_actions: int
    classes: list[tuple[int, ...]] = field(default_factory=list)
    network: Network | Ensemble | None = None
    decoder: Decoder | None = None
    train_X: np.ndarray | None = None
    train_y: np.ndarray | None = None
    k: int = 5
    info: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------------------ inference
    def _trained_network(self) -> Network | Ensemble:
        if self.network is None:
            raise GeneratorError(f"the {self.kind} generator has no network")
        return self.network

    def _neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """(knn) the training agents and their class ids."""
        if self.train_X is None or self.train_y is None:
            raise GeneratorError(f"the {self.kind} generator has no training agents")
        return self.train_X, self.train_y

    def class_scores(self, X: np.ndarray) -> np.ndarray:
        """(mc) softmax over the training CFEs; (knn) vote shares."""
        if self.kind == "mc":
            return self._trained_network().scores(X)
        if self.kind == "knn":
            return self._votes(np.asarray(X))
        raise GeneratorError(f"a {self.kind} generator has no CFE classes")

    def _chosen_actions(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(na) the logits z (N, A) and the predicted actions as a mask: ``{a : σ(z^(a)) > 0.5}``, the argmax if
        that is empty."""
        out = self._trained_network().logits(X)
        chosen = out > 0
        empty = ~chosen.any(axis=1)
        chosen[empty, out[empty].argmax(axis=1)] = True
        return out, chosen

    def action_sets(self, X: np.ndarray) -> list[tuple[int, ...]]:
        """(na) the predicted action names: ``{a : σ(z^(a)) > 0.5}``, the argmax if that is empty."""
        return [tuple(np.flatnonzero(row).tolist()) for row in self._chosen_actions(X)[1]]

    def action_confidence(self, X: np.ndarray) -> np.ndarray:
        """(na) per agent, the lowest sigmoid output ``σ(z^(a))`` among its predicted actions: the confidence of
        Fig. 7a (notes §2.1: "the sigmoid output"), taken over the whole predicted set; below 1/2 only where the
        argmax stands in for an empty set."""
        out, chosen = self._chosen_actions(X)
        return np.where(chosen, _sigmoid(out), np.inf).min(axis=1)

    def effect_vectors(self, X: np.ndarray) -> list[np.ndarray]:
        """(fa, seq2seq) the predicted effect vectors per agent, (s, n) 0/1 in the predicted order: fa's non-zero
        slots of the padded 3·n bits, seq2seq's decoded steps."""
        X = np.asarray(X)
        if self.kind == "seq2seq":
            if self.decoder is None:
                raise GeneratorError("the seq2seq generator has no decoder")
            return self.decoder.decode(self._trained_network().scores(X))
        if self.kind != "fa":
            raise GeneratorError(f"a {self.kind} generator does not predict effect vectors")
        bits = (self._trained_network().logits(X) > 0).reshape(len(X), FA_SLOTS, self.n_features).astype(np.int8)
        return [rows[rows.any(axis=1)] for rows in bits]

    def predict(self, X: np.ndarray, instance: SetCoverInstance | None = None, top_k: int = 1
                ) -> list[list[tuple[int, ...]]]:
        """Candidate CFEs per agent, best first (``top_k`` of them for mc/knn; one for na/fa/seq2seq). The
        full-action generators snap their effect vectors to catalogue actions and need the instance."""
        X = np.asarray(X)
        if self.kind in ("mc", "knn"):
            top = top_classes(self.class_scores(X), top_k)
            return [[self.classes[c] for c in row] for row in top]
        if self.kind == "na":
            return [[a] for a in self.action_sets(X)]
        if instance is None:
            raise GeneratorError("the full-action generators predict effect vectors; snapping them to actions "
                                 "needs the instance")
        effects = (instance.effects >= 1).astype(np.int8)
        out = []
        for rows in self.effect_vectors(X):
            nearest = np.abs(rows[:, None, :] - effects[None]).sum(axis=2).argmin(axis=1)
            out.append([tuple(sorted(set(nearest.tolist())))])
        return out

    def exact_matches(self, X: np.ndarray, actions: list[tuple[int, ...]], instance: SetCoverInstance
                      ) -> np.ndarray:
        """The paper's 0/1 loss per agent, as True where the prediction is exact: the same CFE (mc, knn), the same
        set of action names (na), the same effect vectors in the same order (fa, seq2seq; no snapping)."""
        if self.kind in FULL_ACTION:
            truth = [(instance.effects[list(a)] >= 1).astype(np.int8) for a in actions]
            return np.array([p.shape == t.shape and np.array_equal(p, t)
                             for p, t in zip(self.effect_vectors(X), truth)], dtype=bool)
        if self.kind == "na":
            return np.array([p == tuple(a) for p, a in zip(self.action_sets(X), actions)], dtype=bool)
        return np.array([c[0] == tuple(a) for c, a in zip(self.predict(X), actions)], dtype=bool)

    def _votes(self, X: np.ndarray, chunk: int = 2048) -> np.ndarray:
        """Vote shares of the k nearest training agents (Hamming; ties by total distance, then class id)."""
        train_X, train_y = self._neighbours()
        T = train_X.astype(np.float32)
        norms = T.sum(axis=1)
        K = len(self.classes)
        k = min(self.k, len(T))
        out = np.zeros((len(X), K))
        for start in range(0, len(X), chunk):
            x = X[start:start + chunk].astype(np.float32)
            d = x.sum(axis=1)[:, None] + norms[None, :] - 2 * x @ T.T          # d_H for 0/1 vectors
            near = np.argpartition(d, k - 1, axis=1)[:, :k]
            labels = train_y[near]
            dist = np.take_along_axis(d, near, axis=1)
            rows = np.repeat(np.arange(len(x)), k)
            votes = np.zeros((len(x), K))
            np.add.at(votes, (rows, labels.ravel()), 1.0)
            total = np.zeros((len(x), K))
            np.add.at(total, (rows, labels.ravel()), dist.ravel())
            # more votes first, then the smaller total distance, then the smaller class id (stable argsort)
            out[start:start + chunk] = votes - 1e-6 * total / (1 + total.max())
        return out

    # ------------------------------------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> None:
        """Weights as arrays and the metadata as JSON in one ``.npz`` (read back without pickle)."""
        meta = {"format": FILE_FORMAT, "version": FILE_VERSION, "kind": self.kind, "n_features": self.n_features,
                "n_actions": self.n_actions, "classes": [list(c) for c in self.classes], "info": self.info}
        arrays: dict[str, Any] = {}
        if self.network is not None:
            arrays.update(self.network.arrays())
            meta.update(layers=len(self.network.members[0].weights), output=self.network.output,
                        members=len(self.network.members))
        if self.decoder is not None:
            arrays.update(self.decoder.arrays())
        if self.kind == "knn":
            meta["k"] = self.k
            train_X, train_y = self._neighbours()
            arrays.update(train_X=np.packbits(train_X.astype(bool), axis=1), train_y=train_y.astype(np.int32))
        write_npz(path, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path: str | Path) -> "Generator":
        """A generator file from :meth:`save`, validated: a malformed or hostile file raises
        :class:`GeneratorError` with one line naming the file and the field."""
        readable_file(path, GeneratorError)
        try:
            data = np.load(path, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise GeneratorError(f"{path}: not a generator file (.npz from setcover-learn): a single array")
            with data:
                arrays = {name: data[name] for name in data.files}
        except GeneratorError:
            raise
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as err:
            raise GeneratorError(f"{path}: not a generator file (.npz from setcover-learn): {err}") from None
        return _GeneratorFile(str(path), arrays).generator()

    def check_fits(self, instance: SetCoverInstance) -> None:
        if (self.n_features, self.n_actions) != (instance.n_features, instance.n_actions):
            raise GeneratorError(f"the generator was trained on {self.n_features} features and {self.n_actions} "
                                 f"actions; {instance.source} has {instance.n_features} and {instance.n_actions}")


class _GeneratorFile:
    """The validation of a generator file's arrays and metadata: every failure names the file and the field."""

    def __init__(self, path: str, arrays: dict[str, np.ndarray]) -> None:
        self.path, self.arrays = path, arrays

    def fail(self, name: str, problem: str) -> GeneratorError:
        return GeneratorError(f"{self.path}: field '{name}': {problem}")

    def generator(self) -> Generator:
        meta = self.meta()
        kind, n, A = meta["kind"], meta["n_features"], meta["n_actions"]
        classes = self.classes(meta.get("classes"), A) if kind in ("mc", "knn") else []
        gen = Generator(kind, n, A, classes, info=meta["info"])
        if kind == "knn":
            gen.k = self.integer(meta, "k", 1)
            gen.train_X, gen.train_y = self.neighbours(n, len(classes))
            return gen
        outputs = {"mc": len(classes), "na": A, "fa": FA_SLOTS * n}
        layers = self.integer(meta, "layers", 1)
        output = meta.get("output")
        expected = {"mc": "softmax", "na": "sigmoid", "fa": "sigmoid", "seq2seq": "tanh"}[kind]
        if output != expected:
            raise self.fail("output", f"a {kind} generator has {expected} outputs, the file says {output!r}")
        if kind == "seq2seq":
            gen.decoder = self.decoder(n)
            outputs["seq2seq"] = gen.decoder.w_hh.shape[1]
        members = meta.get("members", 1)                  # files before ensembles: one network
        if isinstance(members, bool) or not isinstance(members, int) or members < 1:
            raise self.fail("members", f"expected an integer >= 1, got {members!r}")
        if kind not in ENSEMBLE_KINDS and members > 1:
            raise self.fail("members", f"a {kind} generator has one network, the file says {members}")
        networks = tuple(self.network(layers, n, outputs[kind], output, f"m{j}_" if j else "")
                         for j in range(members))
        gen.network = networks[0] if members == 1 else Ensemble(networks)
        return gen

    def meta(self) -> dict[str, Any]:
        raw = self.array("meta", ())
        if raw.dtype.kind != "U":
            raise self.fail("meta", f"expected a JSON string, got {raw.dtype}")
        try:
            meta = json.loads(str(raw))
        except ValueError as err:
            raise self.fail("meta", f"not JSON ({err})") from None
        if not isinstance(meta, dict):
            raise self.fail("meta", "expected a JSON object")
        if meta.get("format") != FILE_FORMAT or meta.get("version") != FILE_VERSION:
            raise self.fail("meta", f"not a generator file of this stormcf (format {meta.get('format')!r}, version "
                                    f"{meta.get('version')!r}; expected {FILE_FORMAT!r}, {FILE_VERSION})")
        if meta.get("kind") not in GENERATORS:
            raise self.fail("kind", f"unknown generator {meta.get('kind')!r} (known: {', '.join(GENERATORS)})")
        for name in ("n_features", "n_actions"):
            self.integer(meta, name, 1)
        if not isinstance(meta.get("info", {}), dict):
            raise self.fail("info", "expected a JSON object")
        meta.setdefault("info", {})
        return meta

    def integer(self, meta: dict, name: str, low: int) -> int:
        value = meta.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.fail(name, f"expected an integer >= {low}, got {value!r}")
        return value

    def classes(self, raw: Any, n_actions: int) -> list[tuple[int, ...]]:
        if not isinstance(raw, list) or not raw:
            raise self.fail("classes", "expected a non-empty list of CFEs (lists of action ids)")
        out = []
        for k, cfe in enumerate(raw):
            if (not isinstance(cfe, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in cfe)
                    or any(not 0 <= i < n_actions for i in cfe) or cfe != sorted(set(cfe))):
                raise self.fail("classes", f"class {k} is {cfe!r}: expected ascending distinct action ids in "
                                           f"0..{n_actions - 1}")
            out.append(tuple(cfe))
        if len(set(out)) != len(out):
            raise self.fail("classes", "a CFE appears twice")
        return out

    def array(self, name: str, shape: tuple[int | None, ...], kind: str | None = None) -> np.ndarray:
        """The array ``name`` of the given shape (None: any length) and dtype kind (``f`` floats, finite)."""
        if name not in self.arrays:
            raise self.fail(name, "missing")
        a = self.arrays[name]
        if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise self.fail(name, f"expected shape {want}, got {a.shape}")
        if kind == "f":
            if a.dtype not in (np.float32, np.float64):
                raise self.fail(name, f"expected float32 weights, got {a.dtype}")
            if not np.isfinite(a).all():
                raise self.fail(name, "weights are not finite (NaN or infinity)")
            return a.astype(np.float32)
        if kind is not None and a.dtype.kind != kind:
            raise self.fail(name, f"expected dtype kind {kind!r}, got {a.dtype}")
        return a

    def network(self, layers: int, inputs: int, outputs: int, output: str, prefix: str = "") -> Network:
        weights, biases = [], []
        width = inputs
        for k in range(layers):
            last = k == layers - 1
            w = self.array(f"{prefix}w{k}", (width, outputs if last else None), "f")
            if w.shape[1] < 1:
                raise self.fail(f"{prefix}w{k}", "a layer without units")
            weights.append(w)
            biases.append(self.array(f"{prefix}b{k}", (w.shape[1],), "f"))
            width = w.shape[1]
        return Network(tuple(weights), tuple(biases), output)

    def decoder(self, n: int) -> Decoder:
        w_hh = self.array("decoder_w_hh", (None, None), "f")
        H = w_hh.shape[1]
        if H < 1 or w_hh.shape[0] != 3 * H:
            raise self.fail("decoder_w_hh", f"expected shape (3H, H), got {w_hh.shape}")
        return Decoder(self.array("decoder_w_ih", (3 * H, n + 1), "f"), w_hh,
                       self.array("decoder_b_ih", (3 * H,), "f"), self.array("decoder_b_hh", (3 * H,), "f"),
                       self.array("decoder_head_w", (H, n + 1), "f"), self.array("decoder_head_b", (n + 1,), "f"))

    def neighbours(self, n: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
        packed = self.array("train_X", (None, (n + 7) // 8), "u")
        if packed.dtype != np.uint8 or len(packed) == 0:
            raise self.fail("train_X", f"expected packed bits (uint8) of at least one agent, got {packed.dtype} "
                                       f"{packed.shape}")
        y = self.array("train_y", (len(packed),), "i")
        if y.size and not (0 <= y.min() and y.max() < classes):
            raise self.fail("train_y", f"class ids must be in 0..{classes - 1}, found {int(y.min())}..{int(y.max())}")
        return np.unpackbits(packed, axis=1)[:, :n].astype(np.int8), y.astype(np.int64)


def best_epochs(info: dict, sep: str = ", ") -> str:
    """A network generator's best epoch (``info["best_epoch"]``), or an ensemble's, one per network."""
    best = info["best_epoch"]
    return sep.join(map(str, best)) if isinstance(best, list) else str(best)


# ==================================================================================================== training
def train(kind: str, data: LabelledAgents, settings: TrainingSettings | None = None, k: int | None = None,
          run: Run | None = None, watch: LabelledAgents | None = None) -> Generator:
    """Train a generator on labelled agents.

    The networks (``mc``, ``na``, ``fa``, ``seq2seq``) train with PyTorch (:func:`.training.fit`: early stopping on
    a validation split, the best epoch kept; the end of ``run`` (default: unlimited) and its stop request stop after
    the current batch with the best epoch so far, see ``info["stopped"]``); ``settings`` default to
    :data:`DEFAULT_SETTINGS`. ``knn`` stores the agents (``k``: the paper's 5/10/15 by default). ``watch``: agents
    whose exact match is recorded per epoch in the learning curve ``info["history"]`` (never used for training or
    selection)."""
    if kind not in GENERATORS:
        raise GeneratorError(f"unknown generator '{kind}': use {', '.join(GENERATORS)}")
    if len(data) == 0:
        raise GeneratorError("no agents to train on")
    inst = data.instance
    if kind == "knn":
        start = time.perf_counter()
        classes = sorted(set(data.actions))
        index = {c: i for i, c in enumerate(classes)}
        k = PAPER_K.get(inst.n_features, 5) if k is None else k
        if k < 1:
            raise GeneratorError(f"k must be at least 1, got {k}")
        gen = Generator(kind, inst.n_features, inst.n_actions, classes, k=k,
                        train_X=data.X.astype(np.int8), train_y=np.array([index[a] for a in data.actions]))
        gen.info.update(train_agents=len(data), classes=len(classes), seconds=time.perf_counter() - start,
                        stopped="stored")
        return gen
    settings = settings or DEFAULT_SETTINGS[kind]
    settings.check()
    if kind not in ENSEMBLE_KINDS and settings.ensemble > 1:
        raise GeneratorError(f"an ensemble ({settings.ensemble} networks) is for {', '.join(ENSEMBLE_KINDS)}, not "
                             f"{kind}")
    try:
        # import cycle: training.py fits this module's networks with PyTorch, an optional extra that only training
        # needs, so it is imported here and not at the top (inference and knn stay numpy)
        from . import training
    except ImportError as err:
        raise GeneratorError(f"training the {kind} generator needs PyTorch, the optional extra: "
                             f"pip install 'stormcf[learn]' ({err})") from None
    return training.fit(kind, data, settings, run if run is not None else Run(), watch)


def fa_targets(instance: SetCoverInstance, actions: list[tuple[int, ...]]) -> np.ndarray:
    """The padded {0,1}^{3n} targets of the full-action generator (effect vectors in ascending order)."""
    n = instance.n_features
    y = np.zeros((len(actions), FA_SLOTS * n), dtype=np.int8)
    for r, a in enumerate(actions):
        for slot, i in enumerate(a[:FA_SLOTS]):
            y[r, slot * n:(slot + 1) * n] = instance.effects[i] >= 1
    return y


# ==================================================================================================== augmentation
def augment(data: LabelledAgents, target: int = 20, seed: int = 0, run: Run | None = None) -> LabelledAgents:
    """Algorithm 1 with a target (notes §2.4): every CFE I seen fewer than ``target`` times gets worse-off agents,
    derived from its agents by lowering features I over-covers,

        ids = {j : x_j > 0 and x_j + Σ_{i∈I} e_ij > t_j},     aug = x − z,   0 <= z_j <= min(x_j, x*_j − t_j),

    (in the 0/1 case: switching features of ids off), until it is seen ``target`` times. Its agents take turns, one
    random draw each per round, for at most ``AUGMENT_ROUNDS`` rounds per agent it lacks (a CFE whose agents have
    few features to lower stays under the target). I stays valid for aug, and any CFE valid for aug is valid for
    x >= aug, so a (unique) optimum of x stays the (unique) optimum of aug. New agents already in the data are
    skipped. Apply it to training data only. ``run`` (default: unlimited) shows the progress over the rare CFEs and
    is checked between them."""
    inst = data.instance
    run = run if run is not None else Run()
    rng = np.random.default_rng(seed)
    X = data.X.astype(np.int64)
    rows_of: dict[tuple[int, ...], list[int]] = {}
    for r, cfe in enumerate(data.actions):
        rows_of.setdefault(tuple(cfe), []).append(r)
    rare = [(cfe, rows) for cfe, rows in rows_of.items() if len(rows) < target]
    seen = {x.tobytes() for x in X}
    new_rows: list[int] = []
    new_X: list[np.ndarray] = []
    for cfe, rows in run.progress(rare, desc=f"augmenting the CFEs seen fewer than {target} times", unit="CFE"):
        run.check("the augmentation")
        added = _worse_off_agents(inst, X[rows], cfe, target - len(rows), seen, rng)
        new_X.extend(agent for _, agent in added)
        new_rows.extend(rows[i] for i, _ in added)
    if not new_X:
        return data
    info = dict(data.info, augmented=len(new_X))
    groups = None if data.groups is None else np.concatenate([data.groups, data.groups[new_rows]])
    actions = data.actions + [data.actions[r] for r in new_rows]
    return LabelledAgents(inst, np.vstack([data.X, np.array(new_X)]), actions,
                          np.concatenate([data.cost, data.cost[new_rows]]), info, groups)


#: rounds of draws per agent a rare CFE lacks (draws repeat agents already in the data, or pick no feature)
AUGMENT_ROUNDS = 4


def _worse_off_agents(inst: SetCoverInstance, sources: np.ndarray, cfe: tuple[int, ...], wanted: int, seen: set[bytes],
                      rng: np.random.Generator) -> list[tuple[int, np.ndarray]]:
    """Up to ``wanted`` new worse-off agents of the CFE ``cfe`` from its agents ``sources``, as (source index,
    agent)."""
    final = inst.final_state(sources, cfe)
    excess = np.minimum(sources, np.maximum(final - inst.thresholds, 0))
    lowerable = excess > 0
    added: list[tuple[int, np.ndarray]] = []
    for _ in range(AUGMENT_ROUNDS * wanted if lowerable.any() else 0):
        pick = lowerable & (rng.random(excess.shape) < 0.5)
        z = np.where(pick, rng.integers(1, np.maximum(excess, 1) + 1), 0)
        valid = pick.any(axis=1) & inst.is_positive(final - z)
        for i in np.flatnonzero(valid):
            agent = sources[i] - z[i]
            if agent.tobytes() not in seen:
                seen.add(agent.tobytes())
                added.append((int(i), agent))
                if len(added) == wanted:
                    return added
    return added


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


def guarantee(problem: SetCoverProblem, candidates: list[tuple[int, ...]], certify: str | None = None,
              solver: str = "auto") -> Guaranteed:
    """The cheapest valid candidate; if none is valid, the first one repaired (greedy completion from it, then
    reverse delete). ``certify``: ``"lp"`` (LP relaxation bound) or an exact engine name (exact gap); ``solver``
    solves the LP or the ``milp`` engine's programmes."""
    inst = problem.instance
    usable = [c for c in candidates if all(problem.available[list(c)])] if candidates else []
    valid = [c for c in usable if inst.is_valid(problem.agent, c)]
    raw = tuple(candidates[0]) if candidates else ()
    raw_valid = bool(candidates) and inst.is_valid(problem.agent, raw) and all(problem.available[list(raw)])
    if valid:
        actions, repaired = min(valid, key=lambda c: (inst.cost(c), len(c), c)), False
    else:
        start = usable[0] if usable else ()
        completed = greedy_completion(problem, start)
        if completed is None:
            return Guaranteed((), math.inf, raw, raw_valid, True)
        actions, repaired = completed, True
    cost = inst.cost(actions)
    bound = gap = None
    if certify is not None:
        bound = lp_bound(problem, solver) if certify == "lp" else run_engine(problem, certify, solver).value
        gap = 0.0 if cost <= bound + TIE_TOLERANCE * max(1.0, bound) else (cost / bound - 1 if bound > 0 else math.inf)
    return Guaranteed(tuple(actions), cost, raw, raw_valid, repaired, bound, gap)


# ==================================================================================================== evaluation
def exact_match(generator: Generator, test: LabelledAgents) -> dict[str, Any]:
    """The paper's metric (§4.4): the share of agents whose prediction is exactly their CFE, its 95% interval
    ``1.96·sqrt(p(1 − p)/N)``, and the same per CFE size (Fig. 5, 6) and, for grouped data, per group (Table 4)."""
    inst = test.instance
    generator.check_fits(inst)
    exact = generator.exact_matches(test.X, test.actions, inst)
    return _exact_facts(exact, test)


def _exact_facts(exact: np.ndarray, test: LabelledAgents) -> dict[str, Any]:
    def rate(mask: np.ndarray) -> float | None:
        return float(exact[mask].mean()) if mask.any() else None

    accuracy = float(exact.mean()) if len(test) else math.nan
    sizes = np.array([len(a) for a in test.actions])
    out = {"agents": len(test), "exact_match": accuracy,
           "ci95": 1.96 * math.sqrt(accuracy * (1 - accuracy) / max(1, len(test))),
           "exact_match_by_size": {int(s): rate(sizes == s) for s in np.unique(sizes)}}
    if test.groups is not None:
        names = group_names(test.instance)
        out["exact_match_by_group"] = {names[g]: rate(test.groups == g) for g in range(len(names))}
    return out


#: the quantiles of :func:`_quantiles`, by name
QUANTILES = {"min": 0.0, "1%": 0.01, "10%": 0.1, "25%": 0.25, "50%": 0.5}


def _quantiles(values: np.ndarray) -> dict[str, float] | None:
    """The low quantiles of ``values`` (:data:`QUANTILES`, linear interpolation); None for no values."""
    if not values.size:
        return None
    return {name: float(np.quantile(values, q)) for name, q in QUANTILES.items()}


def evaluate(generator: Generator, test: LabelledAgents, top_k: int = 1, certify: str | None = None,
             solver: str = "auto", run: Run | None = None) -> dict[str, Any]:
    """The paper's exact match with its 95% interval (per CFE size and group too, :func:`exact_match`), and what
    the paper does not report (notes §5.5.1): valid rate, the share of feasible mistakes, cost ratios of the valid
    predictions, the optimal rate and cost ratios after the guarantees (validate, top-k by validity and cost,
    repair; ``run``, default unlimited, shows their progress and bounds them), and the inference latency. The
    full-action generators' exact match compares effect vectors (the paper's); ``snapped_exact_match`` compares the
    catalogue actions they snap to. The named-action generator's confidence (Fig. 7a, a plot only in the paper:
    :meth:`Generator.action_confidence`) is given by its low quantiles on the agents it gets right and on the others
    (``confidence_right``, ``confidence_wrong``). ``certify`` and ``solver``: see :func:`guarantee`."""
    inst = test.instance
    generator.check_fits(inst)
    run = run if run is not None else Run()
    with run.activity(f"the predictions for {len(test):,} agents"):
        start = time.perf_counter()
        candidates = generator.predict(test.X, inst, top_k=max(1, top_k))
        latency = (time.perf_counter() - start) / max(1, len(test))
        raw = [c[0] for c in candidates]
        snapped = np.array([r == a for r, a in zip(raw, test.actions)], dtype=bool)
        exact = generator.exact_matches(test.X, test.actions, inst) if generator.kind in FULL_ACTION else snapped
        names = group_names(inst)
        groups = [names[g] for g in test.groups] if test.groups is not None else [None] * len(test)
        valid = np.array([inst.is_valid(x, r) and bool(np.all(inst.available(g)[list(r)]))
                          for x, r, g in zip(test.X, raw, groups)], dtype=bool)
        raw_cost = np.array([inst.cost(r) for r in raw])
    run.check("the predictions")
    ratio = raw_cost[valid] / np.maximum(test.cost[valid], 1e-300)
    start = time.perf_counter()
    kept = []
    what = "guarantees" + (f", certified by {certify}" if certify is not None else "")
    for x, c, g in run.progress(zip(test.X, candidates, groups), total=len(test.X), desc=what, unit="agent"):
        run.check("the guarantees")
        kept.append(guarantee(SetCoverProblem(inst, x, g), c, certify, solver))
    wrap = (time.perf_counter() - start) / max(1, len(test))
    cost = np.array([g.cost for g in kept])
    after = cost / np.maximum(test.cost, 1e-300)
    optimal = np.abs(cost - test.cost) <= TIE_TOLERANCE * np.maximum(1.0, test.cost)
    mistakes = ~exact
    out = {"generator": generator.kind, **_exact_facts(exact, test)}
    if generator.kind in FULL_ACTION:
        out["snapped_exact_match"] = float(snapped.mean()) if len(test) else math.nan
    if generator.kind == "na":
        confidence = generator.action_confidence(test.X)
        out["confidence_right"] = _quantiles(confidence[exact])
        out["confidence_wrong"] = _quantiles(confidence[~exact])
    out.update({
        "valid_rate": float(valid.mean()), "feasible_mistakes": float(valid[mistakes].mean()) if mistakes.any()
        else None, "cost_ratio_valid_mean": float(ratio.mean()) if ratio.size else None,
        "top_k": top_k, "guaranteed_valid_rate": float(np.isfinite(cost).mean()),
        "guaranteed_optimal_rate": float(optimal.mean()), "guaranteed_cost_ratio_mean": float(after.mean()),
        "guaranteed_cost_ratio_max": float(after.max()), "repaired": int(sum(g.repaired for g in kept)),
        "latency_us": 1e6 * latency, "guarantee_us": 1e6 * wrap,
        "unseen_test_cfes": len(set(test.actions) - set(generator.classes)) if generator.classes else None})
    if certify is not None:
        gaps = np.array([g.gap for g in kept], dtype=float)
        out["certified"] = certify
        out["certified_gap_max"] = float(np.nanmax(gaps)) if gaps.size else None
    return out

