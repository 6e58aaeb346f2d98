"""matplotlib figures of a counterfactual analysis (imported only when a plot is asked for)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..plotting import pyplot, save_figure
from .result import ICFMDPResult, values_on_path


def plot_analysis(analysis: ICFMDPResult, out: str | Path) -> str:
    """The figure of :func:`analysis_figure` into ``out``; returns the image format written
    (:func:`stormcf.plotting.save_figure`)."""
    return save_figure(analysis_figure(analysis), out)


def analysis_figure(analysis: ICFMDPResult):
    """Two panels per step t: the mean bound width of the ICFMDP (transitions with UB > 0), and the values
    V_t(s_t) in the observed states of the robust (worst case), optimistic and Gumbel-max policies, with the observed
    path's own reward from step t on as the reference (at t = 0 the observed outcome)."""
    plt = pyplot()
    ic = analysis.icfmdp
    steps = np.arange(ic.horizon)
    widths = [float((s.upper - s.lower)[s.upper > 0].mean()) if (s.upper > 0).any() else 0.0 for s in ic.steps]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.bar(steps, widths, color="tab:blue")
    left.set(xlabel="step t", ylabel="mean UB - LB", title=f"ICFMDP bound widths ({analysis.problem.assumptions})")
    for policy, style, label in ((analysis.robust, "o-", "robust"), (analysis.optimistic, "^--", "optimistic"),
                                 (analysis.gumbel_policy, "s-.", "gumbel-max")):
        if policy is not None:
            right.plot(steps, values_on_path(policy), style, label=label)
    path = analysis.problem.path
    observed = np.cumsum(np.asarray(analysis.problem.rewards)[path.choices][::-1])[::-1]    # reward from t on
    right.plot(steps, observed, ":", color="black", label=f"observed path (outcome {analysis.observed_reward:.6g})")
    right.set(xlabel="step t", ylabel="reward from the observed state s_t on", title="counterfactual values")
    right.legend(fontsize=8, loc="best", framealpha=0.9)
    fig.tight_layout()
    return fig
