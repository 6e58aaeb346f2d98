"""The figure of a counterfactual strategy (matplotlib, the ``plot`` extra; imported only when a plot is asked for):
every changed action of the changed states, its probability under the user's strategy σ and under the
counterfactual σ*, the states with the largest change first."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import OptionError
from ..plotting import pyplot, save_figure
from .result import CounterfactualResult

#: at most this many (state, action) rows are drawn: those of the states with the largest change
MAX_ROWS = 40


def plot_changes(result: CounterfactualResult, out: str | Path) -> str:
    """The changed probabilities into ``out``; returns the image format written."""
    return save_figure(changes_figure(result), out)


def changes_figure(result: CounterfactualResult):
    """The matplotlib figure of :func:`plot_changes`: one pair of bars (σ, σ*) per changed (state, action)."""
    changes = sorted(result.changes(), key=lambda c: -c["delta"])
    if not changes:
        raise OptionError(f"nothing to draw: the result has no changed state (status {result.status})")
    rows = [(c["name"], action, p["from"], p["to"]) for c in changes for action, p in c["actions"].items()]
    shown = rows[:MAX_ROWS]
    y = np.arange(len(shown))[::-1]
    fig, ax = pyplot().subplots(figsize=(7.0, 1.2 + 0.32 * len(shown)))
    ax.barh(y + 0.2, [r[2] for r in shown], height=0.4, color="tab:gray", label="σ (the given strategy)")
    ax.barh(y - 0.2, [r[3] for r in shown], height=0.4, color="tab:blue", label="σ* (the counterfactual)")
    ax.set_yticks(y, [f"{name}: {action}" for name, action, _, _ in shown], fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.6, len(shown) - 0.4)
    ax.set_xlabel("probability of the action")
    more = f"; {len(rows) - len(shown)} more rows not drawn" if len(rows) > len(shown) else ""
    states = f"{len(changes)} changed state" + ("s" if len(changes) != 1 else "")
    values = ", ".join(f"{c.value:.6g}" for c in result.verifications)
    ax.set_title(f"{states}: {result.problem.properties_text} holds with {values} (Storm){more}",
                 fontsize=9, pad=22)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)   # above the bars
    fig.tight_layout()
    return fig
