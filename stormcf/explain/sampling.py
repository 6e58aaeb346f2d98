"""Algorithm 1 of the paper: counterfactual paths τ' sampled from π*_τ, and their summary.

A sample starts in (s_0, l = 0); at step t it plays a'_t = π*((s'_t, l_t), t), collects R(s'_t, a'_t), moves to
s'_{t+1} ~ P_τ,t(. | s'_t, a'_t) and sets l_{t+1} = l_t + [a'_t is a change]. The explanation is the action sequence
a'_0..a'_{T-1}. The summary (the paper's Fig. 5c) lists the distinct sequences other than the observed one with
their frequency, mean outcome and changes (t: from -> to), and the per-step change frequency (Fig. 5b).
All samples are drawn at once, vectorized per step.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .dp import KChangePolicy
from .problem import ExplanationError


@dataclass(frozen=True, eq=False)
class SampledPaths:
    """N counterfactual paths: global state ids and choices (N, T), changes used before each step, outcomes."""

    policy: KChangePolicy
    k: int
    states: np.ndarray
    choices: np.ndarray
    changes_used: np.ndarray
    change: np.ndarray
    outcomes: np.ndarray
    seconds: float

    @property
    def n(self) -> int:
        return int(self.outcomes.size)


def sample_paths(policy: KChangePolicy, k: int, n: int, seed: int | None = 0) -> SampledPaths:
    """Algorithm 1, ``n`` times, with ``numpy.random.default_rng(seed)``."""
    start = time.perf_counter()
    cf = policy.cfmdp
    if not policy.feasible(k):
        raise ExplanationError(f"no policy with at most {k} changes exists; nothing to sample")
    rng = np.random.default_rng(seed)
    T = cf.T
    states = np.empty((n, T), dtype=np.int64)
    choices = np.empty((n, T), dtype=np.int64)
    used = np.zeros((n, T), dtype=np.int64)
    change = np.zeros((n, T), dtype=bool)
    s = np.full(n, cf.steps[0].states[0])
    l = np.zeros(n, dtype=np.int64)
    outcome = np.zeros(n)
    for t, step in enumerate(cf.steps):
        local = step.local(s)
        pos = policy.choice_positions(t, k)[local, l]
        states[:, t], choices[:, t], used[:, t] = s, step.choices[pos], l
        change[:, t] = step.change[pos]
        outcome += step.reward[pos]
        if step.rows is not None:
            s = cf.steps[t + 1].states[_draw_columns(step.rows, pos, rng.random(n))]
            l = l + change[:, t]
    return SampledPaths(policy, k, states, choices, used, change, outcome, time.perf_counter() - start)


def _draw_columns(rows, pos: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One column per requested CSR row, drawn by inverse CDF with the uniform numbers ``u``."""
    lo, hi = rows.indptr[pos], rows.indptr[pos + 1]
    cdf = np.cumsum(rows.data)
    base = np.where(lo > 0, cdf[np.maximum(lo - 1, 0)], 0.0)
    target = base + u * (cdf[hi - 1] - base)
    j = np.clip(np.searchsorted(cdf, target, side="right"), lo, hi - 1)
    return rows.indices[j]


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
    m = paths.policy.cfmdp.problem.model
    observed = paths.policy.cfmdp.problem.observed_action_ids
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
