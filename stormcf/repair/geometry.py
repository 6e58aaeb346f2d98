"""Valuations, boxes of valuations and the distance to the nominal valuation.

A valuation is a tuple of exact fractions, one per parameter (in the problem's order). The distance between two
valuations is a norm of their per-parameter differences, each multiplied by the parameter's weight: 1 (the plain
difference, ``scale="none"``) or one over the width of the region along it (``scale="width"``: a change of the
whole width counts 1)::

    linf:  max_i w_i |x_i - y_i|        l1:  Σ_i w_i |x_i - y_i|        l2:  (Σ_i (w_i |x_i - y_i|)²)^½

The distance from a valuation to a box is the distance to the box's closest valuation (the valuation clipped to the
box): the lower bound of every valuation in the box, which orders the boxes of the branch and bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

Point = tuple[Fraction, ...]

#: the norms, with their names for people
NORMS = {"linf": "l∞", "l1": "l1", "l2": "l2"}
#: how per-parameter differences are weighted: none (as they are) or by the region's width along the parameter
SCALES = ("none", "width")


@dataclass(frozen=True)
class Box:
    """The valuations with lo[i] <= x_i <= hi[i] for every parameter i."""

    lo: Point
    hi: Point

    def closest(self, x: Point) -> Point:
        """The valuation of the box closest to ``x`` under every weighted norm: ``x`` clipped to the box."""
        return tuple(min(max(xi, lo), hi) for xi, lo, hi in zip(x, self.lo, self.hi))

    def center(self) -> Point:
        return tuple((lo + hi) / 2 for lo, hi in zip(self.lo, self.hi))

    def contains(self, x: Point) -> bool:
        return all(lo <= xi <= hi for xi, lo, hi in zip(x, self.lo, self.hi))

    def split(self, weights: Sequence[Fraction]) -> tuple["Box", "Box"]:
        """The two halves of the box along its widest side (widths weighted as the distance weighs them)."""
        widths = [(hi - lo) * w for lo, hi, w in zip(self.lo, self.hi, weights)]
        i = max(range(len(widths)), key=widths.__getitem__)
        middle = (self.lo[i] + self.hi[i]) / 2
        return (Box(self.lo, self.hi[:i] + (middle,) + self.hi[i + 1:]),
                Box(self.lo[:i] + (middle,) + self.lo[i + 1:], self.hi))

    def width(self, weights: Sequence[Fraction]) -> Fraction:
        """The widest side, weighted."""
        return max((hi - lo) * w for lo, hi, w in zip(self.lo, self.hi, weights))

    def around(self, x: Point, radius: Fraction, weights: Sequence[Fraction]) -> "Box":
        """The valuations of this box within weighted l∞ distance ``radius`` of ``x``: they contain every valuation of
        the box within that l1 or l2 distance too."""
        return Box(tuple(max(lo, xi - radius / w) for xi, lo, w in zip(x, self.lo, weights)),
                   tuple(min(hi, xi + radius / w) for xi, hi, w in zip(x, self.hi, weights)))


@dataclass(frozen=True)
class Distance:
    """A weighted norm (module docstring)."""

    norm: str
    weights: tuple[Fraction, ...]

    def differences(self, x: Point, y: Point) -> list[Fraction]:
        return [w * abs(a - b) for a, b, w in zip(x, y, self.weights)]

    def between(self, x: Point, y: Point) -> float:
        return self._norm(self.differences(x, y))

    def exact(self, x: Point, y: Point) -> Fraction | None:
        """The distance as a fraction (l∞ and l1); None for l2 (a square root)."""
        d = self.differences(x, y)
        if self.norm == "l2":
            return None
        return max(d, default=Fraction(0)) if self.norm == "linf" else sum(d, Fraction(0))

    def to_box(self, x: Point, box: Box) -> float:
        """The distance from ``x`` to the closest valuation of ``box``."""
        return self.between(x, box.closest(x))

    def _norm(self, d: Sequence[Fraction]) -> float:
        if self.norm == "linf":
            return float(max(d, default=0))
        if self.norm == "l1":
            return float(sum(d, Fraction(0)))
        return math.sqrt(float(sum((x * x for x in d), Fraction(0))))

    @property
    def name(self) -> str:
        return NORMS[self.norm]
