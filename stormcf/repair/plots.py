"""The figure of a repair (matplotlib, the ``plot`` extra; imported only when a plot is asked for): the feasible region
as the user sees it. For one parameter, each bound's quantity along the region with its threshold; for two, the
boundary of each bound (where its quantity equals the threshold) over the region, the valuations that violate a
bound shaded, the ball of the answer's distance around the nominal valuation, and the certified box; every value
drawn is Storm's at a grid of valuations. For more parameters, the change of each parameter."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

from ..plotting import pyplot, save_figure
from .result import RepairResult

#: grid points per parameter: on models of up to LARGE transitions, and beyond (each point is a Storm check)
GRID, COARSE_GRID, LARGE = 41, 9, 50_000


def plot_repair(result: RepairResult, out: str | Path) -> str:
    """The figure into ``out``; returns the image format written."""
    return save_figure(repair_figure(result), out)


def repair_figure(result: RepairResult):
    """The matplotlib figure of :func:`plot_repair`."""
    k = len(result.problem.parameters)
    fig, ax = pyplot().subplots(figsize=(6.4, 5.2 if k == 2 else 4.2))
    try:
        if k == 1:
            _one(ax, result)
        elif k == 2:
            _two(ax, result)
        else:
            _changes(ax, result)
    finally:
        result.problem.search_build.close()
    ax.set_title(_title(result), fontsize=9)
    fig.tight_layout()
    return fig


def _grid(result: RepairResult, i: int) -> list[Fraction]:
    p = result.problem
    n = GRID if p.search_build.n_transitions <= LARGE else COARSE_GRID
    lo, hi = p.box.lo[i], p.box.hi[i]
    return [lo + (hi - lo) * j / (n - 1) for j in range(n)]


def _values(result: RepairResult, point: tuple[Fraction, ...]) -> list[float]:
    values = result.problem.search_build.values(result.problem.valuation(point))
    return [float(v) for v in values]


def _one(ax, result: RepairResult) -> None:
    p = result.problem
    xs = _grid(result, 0)
    values = np.array([_values(result, (x,)) for x in xs])
    violated = np.array([[not prop.satisfied_by(Fraction(v)) for prop, v in zip(p.properties, row)]
                         for row in values]).any(axis=1)
    x = np.array([float(v) for v in xs])
    for j, prop in enumerate(p.properties):
        assert prop.threshold is not None               # repair's properties are bounds
        line, = ax.plot(x, values[:, j], label=prop.text)
        ax.axhline(float(prop.threshold), color=line.get_color(), linestyle=":", linewidth=1)
    low, high = ax.get_ylim()
    ax.fill_between(x, low, high, where=violated, color="tab:red", alpha=0.12, step="mid",
                    label="violates a bound")
    ax.set_ylim(low, high)
    ax.axvline(float(p.point[0]), color="black", linestyle="--", linewidth=1, label="nominal")
    if result.answer is not None:
        ax.axvline(float(result.answer.point[0]), color="tab:blue", linewidth=1.5, label="answer")
    ax.set_xlabel(p.parameters[0])
    ax.set_ylabel("Storm's value")
    ax.legend(fontsize=8)


def _two(ax, result: RepairResult) -> None:
    p = result.problem
    xs, ys = _grid(result, 0), _grid(result, 1)
    values = np.array([[_values(result, (x, y)) for x in xs] for y in ys])       # (y, x, bound)
    violated = np.zeros(values.shape[:2], dtype=bool)
    X, Y = np.meshgrid([float(v) for v in xs], [float(v) for v in ys])
    for j, prop in enumerate(p.properties):
        assert prop.threshold is not None               # repair's properties are bounds
        violated |= np.vectorize(lambda v, prop=prop: not prop.satisfied_by(Fraction(v)))(values[:, :, j])
        ax.contour(X, Y, values[:, :, j], levels=[float(prop.threshold)], colors=f"C{j}", linewidths=1.2)
        ax.plot([], [], color=f"C{j}", label=f"{prop.text}: its boundary")           # the contour's legend entry
    ax.contourf(X, Y, violated.astype(float), levels=[0.5, 1.5], colors=["tab:red"], alpha=0.12)
    x0 = [float(v) for v in p.point]
    ax.plot(*x0, "kx", markersize=8, label="nominal")
    if result.answer is not None:
        ax.plot(*[float(v) for v in result.answer.point], "o", color="tab:blue", label="answer")
        _ball(ax, result, x0)
        certified = result.answer.certified
        if certified is not None:
            lo, hi = [float(v) for v in certified.lo], [float(v) for v in certified.hi]
            ax.add_patch(pyplot().Rectangle(lo, hi[0] - lo[0], hi[1] - lo[1], fill=False, edgecolor="tab:green",
                                            label="certified box"))
    ax.set_xlabel(p.parameters[0])
    ax.set_ylabel(p.parameters[1])
    ax.set_xlim(X.min(), X.max())
    ax.set_ylim(Y.min(), Y.max())
    ax.legend(fontsize=8, loc="best")


def _ball(ax, result: RepairResult, x0: list[float]) -> None:
    """The valuations at the answer's distance from the nominal one (the norm's ball, weighted)."""
    assert result.answer is not None                    # drawn around an answer only
    p, d = result.problem, result.answer.distance
    wx, wy = (float(w) for w in p.distance.weights)
    t = np.linspace(0, 2 * np.pi, 241)
    if p.norm == "l2":
        u, v = np.cos(t), np.sin(t)
    else:
        c, s = np.cos(t), np.sin(t)
        scale = np.maximum(abs(c), abs(s)) if p.norm == "linf" else abs(c) + abs(s)
        u, v = c / scale, s / scale
    ax.plot(x0[0] + d * u / wx, x0[1] + d * v / wy, color="gray", linewidth=0.8, linestyle="--",
            label=f"{p.distance.name} distance {d:.4g}")


def _changes(ax, result: RepairResult) -> None:
    p = result.problem
    rows = result.changes() if result.answer is not None else []
    names = [r["parameter"] for r in rows]
    y = np.arange(len(rows))[::-1]
    ax.barh(y + 0.2, [r["nominal"] for r in rows], height=0.4, color="tab:gray", label="nominal")
    ax.barh(y - 0.2, [r["value"] for r in rows], height=0.4, color="tab:blue", label="answer")
    ax.set_yticks(y, names, fontsize=8)
    ax.set_xlabel("parameter value")
    ax.legend(fontsize=8)
    if not rows:
        ax.text(0.5, 0.5, f"no change ({result.status})", ha="center", transform=ax.transAxes)
    ax.set_xlim(min([float(v) for v in p.box.lo]), max([float(v) for v in p.box.hi]))


def _title(result: RepairResult) -> str:
    bounds = ", ".join(prop.text for prop in result.problem.properties)
    if result.answer is None:
        return f"{bounds}: {result.status}"
    return f"{bounds}: {result.status}, {result.problem.distance.name} distance {result.answer.distance:.4g}"
