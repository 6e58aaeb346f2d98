"""Oracles of the closest valuation that meets a bound, independent of stormcf's search: grids of valuations whose
values come from Storm's solution function (a rational function, evaluated in 60-digit decimal arithmetic: its
expanded polynomials lose every digit in floating point near 1) or from a function of the test's own, refined
around the best feasible grid point."""
from __future__ import annotations

import itertools
import math
import re
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable, Mapping, Sequence

Valuation = Mapping[str, float]


def decimal_function(text: str, names: Sequence[str]) -> Callable[[Valuation], float]:
    """Storm's printed rational function (``(p^2*q+(-1)*p*q)/(p*q+(-1))``) as a function of a valuation, evaluated
    with 60 decimal digits."""
    code = re.sub(r"(?<![A-Za-z_0-9])(\d+)", r"D('\1')", text.replace("^", "**"))
    compiled = compile(code, "<solution function>", "eval")

    def f(valuation: Valuation) -> float:
        with localcontext() as context:
            context.prec = 60
            return float(eval(compiled, {"D": Decimal}, {n: Decimal(repr(float(valuation[n]))) for n in names}))
    return f


def distance(norm: str, x: Sequence[float], y: Sequence[float]) -> float:
    d = [abs(a - b) for a, b in zip(x, y)]
    return max(d) if norm == "linf" else (sum(d) if norm == "l1" else math.sqrt(sum(v * v for v in d)))


def grid_optimum(feasible: Callable[[Sequence[float]], bool], x0: Sequence[float], lo: Sequence[float],
                 hi: Sequence[float], norm: str, points: int = 21, keep: int = 4,
                 resolution: float = 1e-5) -> tuple[float, tuple] | None:
    """The closest feasible point of a grid over the box [lo, hi], the grid refined around its ``keep`` closest
    feasible points (to the four steps around each) until its step is below ``resolution``; None when no grid point
    is feasible. Its distance is an upper bound of the optimum, within a few of the finest grid's steps of it for
    these smooth models (several points are refined: under l∞ many valuations tie on a coarse grid)."""
    boxes = [(list(lo), list(hi))]
    best: list[tuple[float, tuple]] = []
    while True:
        found = set(best)
        for a, b in boxes:
            axes = [[u + (v - u) * j / (points - 1) for j in range(points)] for u, v in zip(a, b)]
            found |= {(distance(norm, point, x0), point) for point in itertools.product(*axes) if feasible(point)}
        if not found:
            return None
        best = sorted(found)[:keep]
        step = max(v - u for u, v in zip(*boxes[0])) / (points - 1)
        if step <= resolution / 4:
            return best[0]
        boxes = [([max(u, c - 2 * step) for u, c in zip(lo, point)], [min(v, c + 2 * step) for v, c in zip(hi, point)])
                 for _, point in best]


def infeasible_closer_than(feasible: Callable[[Sequence[float]], bool], x0: Sequence[float], lo: Sequence[float],
                           hi: Sequence[float], norm: str, radius: float, points: int = 41) -> bool:
    """Whether every point of a grid over the box closer than ``radius`` to ``x0`` is infeasible: a brute-force check
    of a proven lower bound."""
    axes = [[a + (b - a) * j / (points - 1) for j in range(points)] for a, b in zip(lo, hi)]
    return not any(distance(norm, p, x0) < radius and feasible(p) for p in itertools.product(*axes))


def knuth_yao_threshold(b: Fraction) -> float:
    """The bias p of the one-coin Knuth-Yao die with P(one) = p^2/(p+1) = b: p = (b + sqrt(b^2 + 4b)) / 2."""
    b = float(b)
    return (b + math.sqrt(b * b + 4 * b)) / 2
