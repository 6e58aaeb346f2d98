"""The explanation summary of seed 001 (the paper's Fig. 5): counterfactual paths sampled from π*_τ (Algorithm 1,
:func:`stormcf.counterfactual_mdp.sample_paths`) summarised as the distinct action sequences other than the observed
one, with their frequency, mean outcome and changes (t: from -> to), and the per-step change frequency. Frequencies
and means are Monte Carlo estimates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..counterfactual_mdp import SampledPaths


@dataclass(frozen=True)
class Explanation:
    """One distinct counterfactual action sequence among the samples."""

    actions: tuple[str, ...]
    frequency: float
    count: int
    mean_outcome: float
    changes: tuple[tuple[int, str, str], ...]      # (t, observed action, counterfactual action)

    def to_dict(self) -> dict[str, Any]:
        return {"actions": list(self.actions), "frequency": self.frequency, "count": self.count,
                "mean_outcome": self.mean_outcome,
                "changes": [{"t": t, "from": a, "to": b} for t, a, b in self.changes]}

    def changes_text(self) -> str:
        return ", ".join(f"{t}: {a} -> {b}" for t, a, b in self.changes) or "(none)"


@dataclass(frozen=True)
class ExplanationSummary:
    """The summary of N sampled counterfactual paths (Monte Carlo: frequencies and means are sample estimates)."""

    n: int
    seed: int | None
    explanations: tuple[Explanation, ...]       # distinct sequences other than the observed one, most frequent first
    observed_frequency: float                   # fraction of samples that repeat the observed action sequence
    mean_outcome: float                         # sample mean of o(τ'), an estimate of h(s_0, T, k)
    standard_error: float
    change_frequency: tuple[float, ...]         # per step t: fraction of samples that change the action at t
    max_changes: int

    def to_dict(self) -> dict[str, Any]:
        return {"samples": self.n, "seed": self.seed, "unique": len(self.explanations),
                "observed_sequence_frequency": self.observed_frequency, "mean_outcome": self.mean_outcome,
                "standard_error": self.standard_error, "max_changes": self.max_changes,
                "change_frequency": list(self.change_frequency),
                "explanations": [e.to_dict() for e in self.explanations]}


def summarize(paths: SampledPaths, seed: int | None = None) -> ExplanationSummary:
    """Distinct action sequences (by action name) other than the observed one, with frequency, mean outcome and
    changes; per-step change frequencies."""
    m = paths.cfmdp.model
    observed = m.choice_actions[paths.cfmdp.path.choices]
    names = m.choice_actions[paths.choices]
    unique, inverse, counts = np.unique(names, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    sums = np.bincount(inverse, weights=paths.outcomes, minlength=len(unique))
    explanations = []
    observed_count = 0
    for i in np.argsort(-counts, kind="stable"):
        if np.array_equal(unique[i], observed):
            observed_count = int(counts[i])
            continue
        diff = np.flatnonzero(unique[i] != observed)
        changes = tuple((int(t), m.action_names[observed[t]], m.action_names[unique[i][t]]) for t in diff)
        explanations.append(Explanation(tuple(m.action_names[a] for a in unique[i]), float(counts[i] / paths.n),
                                        int(counts[i]), float(sums[i] / counts[i]), changes))
    spread = float(paths.outcomes.std(ddof=1) / np.sqrt(paths.n)) if paths.n > 1 else float("nan")
    return ExplanationSummary(paths.n, seed, tuple(explanations), observed_count / paths.n,
                              float(paths.outcomes.mean()), spread, tuple(paths.change.mean(axis=0).tolist()),
                              int(paths.change.sum(axis=1).max()))
