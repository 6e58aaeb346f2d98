"""The value spaces of recourse problems, shared by the problem, the decoder and the objectives: a batch of states
by feature name (:class:`Rows`) and the tweaking values of an action (:class:`ValueDomain`)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..errors import RecourseError


class Rows:
    """A batch of states seen by feature name: ``x["edu"]`` is the column of Education (a numpy array)."""

    __slots__ = ("values", "_index")

    def __init__(self, values: np.ndarray, index: Mapping[str, int]):
        self.values = values
        self._index = index

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[:, self._index[name]]

    def __len__(self) -> int:
        return self.values.shape[0]


@dataclass(frozen=True)
class ValueDomain:
    """The tweaking values V_i of an action: an interval [lower, upper] or a finite list (with display labels).

    The decoder maps a random key u in [0, 1] linearly onto an interval (l + u·(h - l)), or to the value
    ``values[min(floor(u·K), K - 1)]`` of a finite list of K values (notes §2.2, clamped at u = 1).
    """

    lower: float | None = None
    upper: float | None = None
    values: tuple[float, ...] | None = None
    labels: tuple[str, ...] | None = None

    @classmethod
    def interval(cls, lower: float, upper: float) -> "ValueDomain":
        if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
            raise RecourseError(f"a value interval needs finite bounds lower < upper, got [{lower}, {upper}]")
        return cls(float(lower), float(upper))

    @classmethod
    def finite(cls, values: Sequence[float], labels: Sequence[str] | None = None) -> "ValueDomain":
        if len(values) == 0:
            raise RecourseError("a finite value domain needs at least one value")
        if labels is not None and len(labels) != len(values):
            raise RecourseError(f"{len(labels)} labels for {len(values)} values")
        return cls(values=tuple(float(v) for v in values), labels=None if labels is None else tuple(labels))

    @classmethod
    def fixed(cls, value: float = 0.0, label: str | None = None) -> "ValueDomain":
        """A single value (e.g. the category a categorical action sets): the value gene is unused."""
        return cls.finite([value], None if label is None else [label])

    @property
    def is_finite(self) -> bool:
        return self.values is not None

    @property
    def size(self) -> int | None:
        """K for a finite domain, None for an interval."""
        return None if self.values is None else len(self.values)

    @property
    def finite_values(self) -> tuple[float, ...]:
        """The values of a finite domain; an interval has none (callers check :attr:`is_finite` or grid it first)."""
        if self.values is None:
            raise RecourseError(f"the value interval [{self.lower}, {self.upper}] has no finite list of values "
                                f"(discretise it with a grid)")
        return self.values

    def _bounds(self) -> tuple[float, float]:
        """[lower, upper] of an interval (both set by :meth:`interval`)."""
        if self.lower is None or self.upper is None:
            raise RecourseError("a finite value domain has no interval bounds")
        return self.lower, self.upper

    def index(self, keys: np.ndarray) -> np.ndarray:
        """The value indices of random keys u (finite domains): min(floor(u·K), K - 1)."""
        k = len(self.finite_values)
        return np.minimum((np.asarray(keys) * k).astype(np.int64), k - 1)

    def decode(self, keys: np.ndarray) -> np.ndarray:
        """The values of random keys u in [0, 1]."""
        if self.values is None:
            lower, upper = self._bounds()
            return lower + np.asarray(keys, dtype=float) * (upper - lower)
        return np.asarray(self.values)[self.index(keys)]

    def grid(self, points: int) -> "ValueDomain":
        """A finite domain: an interval discretised into ``points`` equally spaced values (finite domains stay)."""
        if self.values is not None:
            return self
        if points < 2:
            raise RecourseError(f"a value grid needs at least 2 points, got {points}")
        return ValueDomain.finite(np.linspace(*self._bounds(), points).tolist())

    def text(self, value: float) -> str:
        if self.labels is not None:
            return self.labels[self.finite_values.index(value)]
        return f"{value:.6g}"
