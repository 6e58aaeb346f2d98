"""Drawings of a recourse result (matplotlib, the ``all`` extra): the front in the (cost, Gower) plane, and a
Sankey-like chart of the actions by position in the plans (the paper's Fig. 5)."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence

import numpy as np

from ..plotting import pyplot, save_figure
from .result import RecourseResult


def action_flows(plans: Sequence[Sequence[str]]) -> tuple[list[Counter], list[Counter]]:
    """Per position t, how often each action is applied there, and per t how often action a at t is followed by b
    at t+1 (the paper's Sankey counts)."""
    length = max((len(p) for p in plans), default=0)
    at = [Counter(p[t] for p in plans if len(p) > t) for t in range(length)]
    flows = [Counter((p[t], p[t + 1]) for p in plans if len(p) > t + 1) for t in range(length - 1)]
    return at, flows


def plot_result(result: RecourseResult, out: str | Path) -> str:
    """The front (cost vs Gower, Storm's least cost and achievable set when known) and the action-by-position
    chart, side by side, into ``out`` (PNG, PDF, SVG by suffix); returns the image format written."""
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(12, 4.8))
    _front(left, result)
    _sankey(right, [p.actions for p in result.front])
    fig.suptitle(f"recourse for {result.problem_name}")
    fig.tight_layout()
    return save_figure(fig, out, dpi=130)


def _front(ax, result: RecourseResult) -> None:
    costs = [p.cost for p in result.front]
    gowers = [p.gower for p in result.front]
    ax.scatter(costs, gowers, color="tab:blue", zorder=3, label="front (BRKGA, checked by Storm)")
    for k, (c, g) in enumerate(zip(costs, gowers), 1):
        ax.annotate(str(k), (c, g), textcoords="offset points", xytext=(4, 4), fontsize=8)
    if result.optimal_cost is not None:
        ax.axvline(result.optimal_cost, color="tab:green", linestyle="--", label="Storm's least cost")
    if result.storm_front is not None:
        vertices = sorted(result.storm_front["vertices"])
        if vertices:
            xs, ys = zip(*vertices)
            ax.plot(xs, ys, color="tab:orange", marker=".", label="Storm's achievable set (convex hull)")
    ax.set_xlabel("cost o1")
    ax.set_ylabel("Gower distance o2")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def _sankey(ax, plans: Sequence[Sequence[str]]) -> None:
    at, flows = action_flows(plans)
    names = sorted({a for counter in at for a in counter})
    colours = {a: f"C{k % 10}" for k, a in enumerate(names)}
    total = max(len(plans), 1)
    bottoms: list[dict[str, float]] = []
    for t, counter in enumerate(at):
        y, place = 0.0, {}
        for a in names:
            if counter[a]:
                ax.bar(t, counter[a] / total, bottom=y, width=0.3, color=colours[a], edgecolor="white")
                ax.text(t, y + counter[a] / total / 2, a, ha="center", va="center", fontsize=7)
                place[a] = y
                y += counter[a] / total
        bottoms.append(place)
    for t, counter in enumerate(flows):
        used_out: defaultdict[str, float] = defaultdict(float)
        used_in: defaultdict[str, float] = defaultdict(float)
        for (a, b), count in sorted(counter.items()):
            width = count / total
            y0 = bottoms[t][a] + used_out[a]
            y1 = bottoms[t + 1][b] + used_in[b]
            used_out[a] += width
            used_in[b] += width
            x = np.linspace(t + 0.15, t + 0.85, 30)
            smooth = 3 * ((x - x[0]) / (x[-1] - x[0])) ** 2 - 2 * ((x - x[0]) / (x[-1] - x[0])) ** 3
            lower = y0 + (y1 - y0) * smooth
            ax.fill_between(x, lower, lower + width, color=colours[a], alpha=0.35, linewidth=0)
    ax.set_xticks(range(len(at)), [f"t={t + 1}" for t in range(len(at))])
    ax.set_ylabel("share of the front's plans")
    ax.set_title("actions by position (Sankey-like, paper Fig. 5)")
