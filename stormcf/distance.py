"""Distances between strategies (seed 000, Section 3): one registry of norms over the per-state changes.

For strategies σ, σ' of the same model, Δ_s = TV(σ(s), σ'(s)) = ½ Σ_a |σ(s)(a) − σ'(s)(a)|, and every distance is a
*norm* of the vector Δ (an entry of :data:`NORMS`):

- d0 = #{s : Δ_s > 0}            (how many states change; sparsity)
- d1 = (1/|S|) Σ_s Δ_s           (average change; proximity)
- d∞ = max_s Δ_s                 (largest change)
- d  = r0·d0 + r1·d1 + r∞·d∞     (the paper's weighted objective; default weights 1, 1, 1)

|S| in d1 counts the **decision states** (two or more enabled actions): the paper's Example 3 gives d1 = 0.14 for a
change of 0.56 at one of the 4 decision states of the loan model. States with one action never change.

A norm knows its value, its block of a mathematical programme (:meth:`Norm.encode`: the variables and rows that
make its value an objective term, given linear expressions of the Δ_s), the lower bounds the others' proven bounds
imply for it, and its names (JSON key, symbol, weight). :class:`Weights` maps norms to weights. A new distance is a
new :class:`Norm` subclass registered in :data:`NORMS`: the pipeline, the certificate, the results, the JSON and
the command line's ``--weights`` read everything from the registry.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from .errors import PropertyError, StrategyError
from .solvers.formulation import FormulationBuilder
from .strategy import Strategy

#: a state counts as changed (d0) when Δ_s exceeds this
CHANGE_TOLERANCE = 1e-9


# ================================================================================================ programmes
@dataclass(frozen=True, eq=False)
class ChangeTerms:
    """The per-state changes as linear expressions of a programme's variables: Δ = ``matrix`` @ x[``cols``] (one
    row per state that may change; ``matrix`` has one column per entry of ``cols``)."""

    matrix: sp.csr_matrix
    cols: np.ndarray

    @property
    def n_states(self) -> int:
        return self.matrix.shape[0]


@dataclass(eq=False)
class NormBlock:
    """What :meth:`Norm.encode` added: objective coefficients (per unit weight) on variables, and how to give its own
    variables start values from the Δ of a known point."""

    objective_vars: np.ndarray
    objective_coefs: np.ndarray
    own: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    start: Callable[[np.ndarray], np.ndarray] | None = None     # Δ values -> the values of ``own``

    def fill(self, x0: np.ndarray, delta: np.ndarray) -> None:
        if self.own.size and self.start is not None:
            x0[self.own] = self.start(delta)


# ================================================================================================ norms
class Norm(ABC):
    """A distance between strategies as a function of the per-state changes Δ (see the module docstring)."""

    key: str = ""              # JSON key and name (``d0``)
    symbol: str = ""           # for people (``d∞``)
    weight_name: str = ""      # its weight (``r∞``)
    counts_states: bool = False  # integral, counts changed states (a bound on it rounds up)
    positional: bool = False   # one of seed 000's norms, weighted by position in ``--weights r0,r1,r∞``

    @abstractmethod
    def value(self, delta: np.ndarray, n_decision: int) -> float:
        """This norm of the per-state changes Δ over ``n_decision`` decision states."""

    @abstractmethod
    def encode(self, fb: FormulationBuilder, change: ChangeTerms, n_decision: int, lower: float = 0.0,
               relaxed: bool = False) -> NormBlock:
        """Add the variables and rows that make this norm of Δ an objective term (and the valid cut norm >= ``lower``);
        ``relaxed``: continuous variables only (a convex surrogate for linear programmes)."""

    def implied(self, bounds: Mapping[str, float], n_decision: int) -> float:
        """A lower bound on this norm implied by proven lower bounds of the norms (``bounds``: key -> value)."""
        return bounds.get(self.key, 0.0)

    def __repr__(self) -> str:
        return f"<Norm {self.symbol}>"


class SparsityNorm(Norm):
    key, symbol, weight_name, counts_states, positional = "d0", "d0", "r0", True, True

    def value(self, delta: np.ndarray, n_decision: int) -> float:
        return int(np.count_nonzero(delta > CHANGE_TOLERANCE))

    def encode(self, fb, change, n_decision, lower=0.0, relaxed=False) -> NormBlock:
        i = fb.variables(change.n_states, integer=not relaxed)                        # Δ_s <= i_s
        fb.rows(sp.hstack([change.matrix, -sp.identity(change.n_states)]), np.concatenate([change.cols, i]), rhs=0.0)
        if lower > 0:
            fb.rows(sp.csr_matrix(np.ones((1, i.size))), i, lhs=lower)
        return NormBlock(i, np.ones(i.size), i, lambda d: (d > CHANGE_TOLERANCE).astype(float))

    def implied(self, bounds, n_decision) -> float:
        some = 1.0 if max(bounds.get("dinf", 0.0), bounds.get("d1", 0.0)) > 0 else 0.0
        return max(bounds.get(self.key, 0.0), some)


class MeanNorm(Norm):
    key, symbol, weight_name, positional = "d1", "d1", "r1", True

    def value(self, delta: np.ndarray, n_decision: int) -> float:
        return float(delta.sum() / n_decision) if n_decision else 0.0

    def encode(self, fb, change, n_decision, lower=0.0, relaxed=False) -> NormBlock:
        weights = np.asarray(change.matrix.sum(axis=0)).ravel() / max(n_decision, 1)
        if lower > 0:
            fb.rows(sp.csr_matrix(weights[None, :]), change.cols, lhs=lower)
        return NormBlock(change.cols, weights)

    def implied(self, bounds, n_decision) -> float:           # d1 = Σ Δ_s / |S| >= max_s Δ_s / |S|
        return max(bounds.get(self.key, 0.0), bounds.get("dinf", 0.0) / max(n_decision, 1))


class MaximumNorm(Norm):
    key, symbol, weight_name, positional = "dinf", "d∞", "r∞", True

    def value(self, delta: np.ndarray, n_decision: int) -> float:
        return float(delta.max(initial=0.0))

    def encode(self, fb, change, n_decision, lower=0.0, relaxed=False) -> NormBlock:
        top = fb.variables(1, lb=lower)                                               # Δ_s <= D∞
        fb.rows(sp.hstack([change.matrix, sp.csr_matrix(-np.ones((change.n_states, 1)))]),
                np.concatenate([change.cols, top]), rhs=0.0)
        if lower > 0:                                                                 # Σ Δ_s >= D∞ >= lower
            fb.rows(sp.csr_matrix(np.asarray(change.matrix.sum(axis=0))), change.cols, lhs=lower)
        return NormBlock(top, np.ones(1), top, lambda d: np.array([d.max(initial=0.0)]))

    def implied(self, bounds, n_decision) -> float:           # the largest change is at least the average
        return max(bounds.get(self.key, 0.0), bounds.get("d1", 0.0))


#: every distance stormcf knows, in the order of ``--weights r0,r1,r∞``
NORMS: dict[str, Norm] = {n.key: n for n in (SparsityNorm(), MeanNorm(), MaximumNorm())}


def norm(key: str) -> Norm:
    try:
        return NORMS[key]
    except KeyError:
        raise PropertyError(f"unknown distance '{key}' (distances: {', '.join(NORMS)})") from None


# ================================================================================================ weights
class Weights(Mapping[str, float]):
    """The weights of d = Σ_norm r_norm·norm (paper default: 1 for each of its three norms), a mapping norm key ->
    weight.

    ``Weights.parse`` reads ``"1,1,1"`` (r0,r1,r∞: one number per norm of seed 000, in the order of :data:`NORMS`),
    ``"d0=1,dinf=2"`` (named; missing norms weigh 0), both (``"1,1,1,dsum=2"``), a sequence of numbers, a mapping,
    or a :class:`Weights`."""

    def __init__(self, weights: Mapping[str, float] | None = None) -> None:
        given = dict(weights) if weights is not None else {k: 1.0 for k, n in NORMS.items() if n.positional}
        for key in given:
            norm(key)
        values = {k: given.get(k, 0.0) for k in NORMS}
        if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and np.isfinite(w) and w >= 0
                   for w in values.values()):
            raise PropertyError(f"weights must be non-negative numbers, got {self.text_of(values)}")
        if not any(values.values()):
            raise PropertyError(f"at least one of the weights {', '.join(n.weight_name for n in NORMS.values())} "
                                f"must be positive")
        self._values = {k: float(v) for k, v in values.items()}

    @staticmethod
    def text_of(values: Mapping[str, float]) -> str:
        return ",".join(f"{values[k]:g}" if isinstance(values[k], (int, float)) else str(values[k]) for k in NORMS)

    @classmethod
    def parse(cls, text: "str | Sequence[float] | Mapping[str, float] | Weights") -> "Weights":
        if isinstance(text, Weights):
            return text
        if isinstance(text, Mapping):
            return cls(text)
        positional = [k for k, n in NORMS.items() if n.positional]
        names = ",".join(NORMS[k].weight_name for k in positional)
        example = ",".join("1" for _ in positional)
        parts = [p.strip() for p in text.split(",")] if isinstance(text, str) else list(text)
        named = [p for p in parts if isinstance(p, str) and "=" in p]
        numbers = [p for p in parts if not (isinstance(p, str) and "=" in p)]
        if numbers and len(numbers) != len(positional) or not parts:
            raise PropertyError(f"weights must be {len(positional)} numbers {names} like {example}; got {text!r}")
        values = {k: _number(p, text, names, example) for k, p in zip(positional, numbers)}
        for p in named:
            key, _, value = p.partition("=")
            values[key.strip()] = _number(value, text, names, example)
        return cls(values)

    def __getitem__(self, key: str) -> float:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Weights({self.text()})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Weights) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(self._values.items()))

    def text(self) -> str:
        """``1,1,1``: the weights as ``--weights`` takes them (seed 000's by position, other norms by name when
        they weigh)."""
        text = ",".join(f"{self._values[k]:g}" for k, n in NORMS.items() if n.positional)
        return ",".join([text] + [f"{k}={w:g}" for k, w in self._values.items() if w and not NORMS[k].positional])

    def as_list(self) -> list[float]:
        return [self._values[k] for k in NORMS]

    def positive(self) -> list[Norm]:
        return [NORMS[k] for k, w in self._values.items() if w > 0]

    @property
    def kind(self) -> str:
        """The key of the only norm that counts (a single-norm objective, e.g. ``"d0"``), else ``"mixed"``."""
        used = self.positive()
        return used[0].key if len(used) == 1 else "mixed"

    def combine(self, values: Mapping[str, float]) -> float:
        """Σ_norm r_norm · values[norm] (norms of weight 0 are not looked up)."""
        return float(sum(w * values[k] for k, w in self._values.items() if w))


def _number(text, whole, names: str, example: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise PropertyError(f"weights must be numbers {names} like {example}; got {whole!r}") from None


# ================================================================================================ distances
@dataclass(frozen=True)
class StrategyDistance:
    """Δ per state and the value of every norm of :data:`NORMS` (``distance.d0``, ``distance["dinf"]``)."""

    per_state: np.ndarray
    values: Mapping[str, float]

    def __getattr__(self, key: str):
        values = self.__dict__.get("values")
        if values is not None and key in values:
            return values[key]
        raise AttributeError(key)

    def __getitem__(self, key: str) -> float:
        return self.values[key]

    def weighted(self, *weights) -> float:
        """d = Σ r_norm·norm for weights given as :meth:`Weights.parse` reads them (default: all 1), e.g.
        ``weighted()``, ``weighted("1,0,0")``, ``weighted(1, 1, 1)``, ``weighted(Weights(...))``."""
        if not weights:
            w = Weights()
        else:
            w = Weights.parse(weights[0] if len(weights) == 1 else list(weights))
        return w.combine(self.values)

    @property
    def changed_states(self) -> np.ndarray:
        return np.flatnonzero(self.per_state > CHANGE_TOLERANCE)

    def to_dict(self, weights: "Weights | str | Sequence[float] | None" = None) -> dict:
        w = Weights() if weights is None else Weights.parse(weights)
        return {**{k: self.values[k] for k in NORMS}, "weights": w.as_list(), "weighted": w.combine(self.values)}

    def text(self) -> str:
        """``d0 = 1, d1 = 0.138816, d∞ = 0.555263``."""
        return ", ".join(f"{n.symbol} = {self.values[k]:.6g}" for k, n in NORMS.items())


def distance_of(per_state: np.ndarray, n_decision: int) -> StrategyDistance:
    """Every norm of the per-state changes ``per_state``."""
    return StrategyDistance(per_state, {k: n.value(per_state, n_decision) for k, n in NORMS.items()})


def state_changes(a: Strategy, b: Strategy) -> np.ndarray:
    """Δ_s = total variation distance between a(s) and b(s), for every state."""
    if a.model is not b.model:
        raise StrategyError("strategies of different models cannot be compared")
    m = a.model
    return 0.5 * np.bincount(m.state_of_choice, weights=np.abs(a.probabilities - b.probabilities), minlength=m.n_states)


def strategy_distance(a: Strategy, b: Strategy) -> StrategyDistance:
    """Every norm between two strategies (d1 averages over the decision states)."""
    return distance_of(state_changes(a, b), int(a.model.decision_states.sum()))
