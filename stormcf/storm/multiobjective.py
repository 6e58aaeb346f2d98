"""Multi-objective queries ``multi(φ1, ..., φk)`` on MDPs, answered by Storm (at the initial state).

Storm answers three kinds of queries (PCAA, Forejt et al. 2012 / Quatmann et al.), over all (randomised,
history-dependent) schedulers:

- **achievability**: every objective has a bound (``multi(P>=0.5 [F "a"], R{"c"}<=20 [F "b"])``): whether one
  scheduler meets all bounds (a truth value);
- **numerical**: one objective asks ``=?``, the others have bounds: the best value of that objective among the
  schedulers that meet the bounds;
- **Pareto**: two or more objectives ask ``=?``: the Pareto front of their values. Storm refines an
  under-approximation (convex hull of points it achieved, downward closed) and an over-approximation until they are
  within ``precision`` (absolute); :attr:`MultiObjectiveResult.points` are the Pareto-optimal vertices of the
  under-approximation, all achievable, and :attr:`MultiObjectiveResult.over_approximation` bounds what any scheduler
  can achieve.

Numerical and Pareto answers are approximate within ``precision``; results say so. Storm computes them in floating
point (no exact mode) and on MDPs only.

Storm lists the vertices of its polytopes incompletely when they are unbounded (a downward-closed set is), so
the vertices are computed here from the polytopes' halfspaces: every point where ``k`` of the bounding hyperplanes
meet and all halfspaces hold.
"""
from __future__ import annotations

import builtins
import itertools
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import stormpy

from ..errors import PropertyError
from ..model import ExplicitModel
from ..properties import Property
from .build import handle_of
from .formulas import parse_property
from .handle import labelled_model, storm_message
from .isolate import isolated
from .rewards import refuse_unsound

#: default absolute precision of Storm's multi-objective answers (Storm's own default is 1e-4)
PRECISION = 1e-6


@dataclass(frozen=True)
class MultiObjectiveResult:
    """Storm's answer to a multi-objective query at the initial state.

    Attributes:
        property: the query as Storm prints it.
        kind: ``"pareto"``, ``"numerical"`` or ``"achievability"``.
        objectives: the ``=?`` objectives, as Storm prints them (the coordinates of the points, in this order).
        directions: ``"max"``/``"min"`` per coordinate.
        points: Pareto queries: the achievable Pareto-optimal points (one row per point, sorted), else None.
        over_approximation: Pareto queries: the Pareto-optimal vertices of Storm's over-approximation.
        value: numerical queries: the optimal value of the ``=?`` objective under the bounds (None when no
            scheduler meets the bounds).
        holds: achievability queries: whether one scheduler meets every bound; numerical queries: False when no
            scheduler meets the bounds (Storm then answers with a truth value), else None.
        precision: the absolute precision Storm was asked for.
        seconds: time in Storm.
    """

    property: str
    kind: str
    objectives: tuple[str, ...]
    directions: tuple[str, ...]
    points: np.ndarray | None = None
    over_approximation: np.ndarray | None = None
    value: float | None = None
    holds: bool | None = None
    precision: float = PRECISION
    seconds: float = 0.0

    @builtins.property          # the field ``property`` shadows the built-in in the class body, for mypy
    def approximate(self) -> bool:
        return self.kind != "achievability"

    @builtins.property
    def method(self) -> str:
        return f"Storm, multi-objective model checking (PCAA, absolute precision {self.precision:g})"

    def __str__(self) -> str:
        if self.kind == "achievability":
            return f"{self.property}: {'achievable' if self.holds else 'not achievable'}"
        if self.kind == "numerical" and self.value is None:
            return f"{self.property}: no scheduler meets its bounds"
        if self.kind == "numerical":
            return f"{self.property} = {self.value:.6g} (approximate, ±{self.precision:g})"
        assert self.points is not None                  # a Pareto result has its points
        lines = [f"{self.property}: {len(self.points)} Pareto-optimal point(s) "
                 f"(achievable; the front is within {self.precision:g} of them)",
                 "  " + " | ".join(self.objectives)]
        lines += ["  " + " | ".join(f"{x:.6g}" for x in point) for point in self.points]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"property": self.property, "kind": self.kind, "objectives": list(self.objectives),
                "directions": list(self.directions),
                "points": None if self.points is None else self.points.tolist(),
                "over_approximation": None if self.over_approximation is None else self.over_approximation.tolist(),
                "value": self.value, "holds": self.holds, "approximate": self.approximate,
                "precision": self.precision, "method": self.method, "seconds": self.seconds}


def check_multiobjective(model: ExplicitModel, prop: Property | str,
                         precision: float = PRECISION) -> MultiObjectiveResult:
    """Storm's answer to a ``multi(...)`` query on the MDP at its initial state (see the module docstring).

    Raises :class:`PropertyError` for other properties, DTMCs, and what Storm cannot answer (its message).
    """
    prop = parse_property(model, prop) if isinstance(prop, str) else prop
    if prop.operator != "multi":
        raise PropertyError(f"{prop.text} is not a multi-objective query multi(...)")
    if model.model_type != "mdp":
        raise PropertyError(f"{prop.text}: Storm answers multi-objective queries on MDPs, not on a DTMC "
                            f"(check each objective alone)")
    refuse_unsound(model, prop)
    quantitative = [o for o in prop.objectives if not o.has_bound]
    kind = {0: "achievability", 1: "numerical"}.get(len(quantitative), "pareto")
    env = stormpy.environments.Environment()
    env.modelchecker().multi().precision = stormpy.Rational(repr(float(precision)))
    storm_model = labelled_model(handle_of(model), prop.labels)
    directions = tuple(o.optimization or "max" for o in quantitative)
    answer = partial(MultiObjectiveResult, property=prop.text, kind=kind,
                     objectives=tuple(o.text for o in quantitative), directions=directions, precision=float(precision))

    def compute() -> MultiObjectiveResult:
        start = time.perf_counter()
        try:
            result = stormpy.model_checking(storm_model, prop.storm.get_raw_formula(), environment=env)
        except Exception as err:
            raise PropertyError(f"Storm cannot check {prop.text} here: {storm_message(err)}") from None
        seconds = time.perf_counter() - start
        s0 = model.initial_state
        if kind == "achievability":
            return answer(seconds=seconds, holds=bool(result[s0]))
        if kind == "numerical" and not result.is_quantitative():       # Storm's "false": the bounds cannot hold
            return answer(seconds=seconds, holds=False)
        if kind == "numerical":
            return answer(seconds=seconds, value=float(result.get_value(s0)))
        return answer(seconds=seconds, points=_pareto_vertices(result.get_under_approximation(), directions),
                      over_approximation=_pareto_vertices(result.get_over_approximation(), directions))
    return isolated(compute, f"checking {prop.text}")


def pareto_points(model: ExplicitModel, text: str | Property,
                  precision: float = PRECISION) -> tuple[np.ndarray, MultiObjectiveResult]:
    """The achievable Pareto-optimal points of a query with two or more ``=?`` objectives, e.g.
    ``multi(R{"cost"}min=? [F "done"], R{"gower"}min=? [F "done"])``: an array with one row per point and one
    column per ``=?`` objective (in the query's order), and Storm's whole answer (incl. the over-approximation).

    Raises :class:`PropertyError` when the query is not a Pareto query."""
    result = check_multiobjective(model, text, precision)
    if result.kind != "pareto":
        raise PropertyError(f"{result.property} has {len(result.objectives)} '=?' objective(s); a Pareto front "
                            f"needs two or more")
    assert result.points is not None                    # a Pareto result has its points
    return result.points, result


def _pareto_vertices(polytope, directions: tuple[str, ...], tolerance: float = 1e-9) -> np.ndarray:
    """The Pareto-optimal vertices of a Storm polytope {x : n_j·x <= c_j} (downward closed in the objectives'
    directions), sorted: the intersections of k bounding hyperplanes that satisfy all halfspaces (batched solves)."""
    normals = np.array([h.normal_vector for h in polytope.halfspaces], dtype=float)
    offsets = np.array([h.offset for h in polytope.halfspaces], dtype=float)
    k = len(directions)
    slack = tolerance * np.maximum(1.0, np.abs(offsets))
    vertices = [np.zeros((0, k))]
    combinations = itertools.combinations(range(len(offsets)), k)
    while len(chunk := np.array(list(itertools.islice(combinations, 20000)), dtype=np.int64).reshape(-1, k)):
        A, b = normals[chunk], offsets[chunk]
        regular = np.abs(np.linalg.det(A)) > 1e-12
        x = np.linalg.solve(A[regular], b[regular][..., None])[..., 0]
        vertices.append(x[np.all(x @ normals.T <= offsets + slack, axis=1)])
    return _non_dominated(np.concatenate(vertices), directions, tolerance)


def _non_dominated(points: np.ndarray, directions: tuple[str, ...], tolerance: float) -> np.ndarray:
    """The distinct points (within ``tolerance``, relative) that no other point dominates, sorted."""
    better = points * np.array([1.0 if d == "max" else -1.0 for d in directions])     # maximising orientation
    scale = tolerance * np.maximum(1.0, np.abs(better))
    keep: list[int] = []
    for i in np.lexsort(better.T[::-1]):
        if any(np.all(np.abs(better[j] - better[i]) <= scale[i]) for j in keep):
            continue
        dominated = np.all(better >= better[i] - scale[i], axis=1) & np.any(better > better[i] + scale[i], axis=1)
        if not dominated.any():
            keep.append(int(i))
    return points[sorted(keep, key=lambda i: tuple(points[i]))] + 0.0        # + 0.0: no -0
