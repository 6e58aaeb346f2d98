"""The figure of a path explanation (matplotlib, the ``plot`` extra; imported only when a plot is asked for): the
best expected outcome for every change budget k' = 0..k_max, the observed outcome, Storm's optimum of the unrolled
model where it was checked, and the baselines."""
from __future__ import annotations

from pathlib import Path

from ..plotting import pyplot, save_figure
from .result import ExplanationResult


def plot_values_by_k(result: ExplanationResult, out: str | Path) -> str:
    """Value per change budget into ``out``; returns the image format written."""
    return save_figure(values_by_k_figure(result), out)


def values_by_k_figure(result: ExplanationResult):
    """The matplotlib figure of :func:`plot_values_by_k` (its first line is the values by budget)."""
    p = result.problem
    fig, ax = pyplot().subplots(figsize=(6.4, 4.2))
    feasible = {k: v for k, v in result.values_by_k().items() if v is not None}
    ax.plot(list(feasible), list(feasible.values()), "o-", color="tab:blue", label="best policy (dynamic program)")
    optima = {int(c.name[len("optimum_k"):]): c.value for c in result.checks if c.name.startswith("optimum_k")}
    if optima:
        ax.plot(list(optima), list(optima.values()), "x", color="tab:green", markersize=10,
                label="Storm's optimum of the unrolled model")
    ax.plot([p.k], [result.value], "*", color="tab:red", markersize=14,
            label=f"Storm's value of the policy for k = {p.k}")
    ax.axhline(result.observed_outcome, color="gray", linestyle="--", label="observed outcome")
    for (name, value), marker in zip(result.baselines.items(), "sD^v"):
        if value is not None:
            ax.plot([p.k], [value], marker, linestyle="none", label=f"baseline {name} (k = {p.k})")
    assert p.k_max is not None                          # set by ExplanationProblem.__post_init__
    ax.set_xticks(range(p.k_max + 1))
    ax.set_xlabel("change budget k (actions that may differ from the observed path)")
    ax.set_ylabel(f'expected outcome (reward model "{p.reward_name}", {p.optimization.word}d)')
    ax.set_title(f"counterfactual explanations of a {p.T}-step path of {p.model.source}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
