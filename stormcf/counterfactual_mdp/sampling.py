"""Sampling from counterfactual MDPs: ONE path sampler (counterfactual paths under a policy, vectorised over paths),
and point counterfactual MDPs drawn from an interval one.

**Paths** (:func:`sample_paths`; seed 001's Algorithm 1, seed 004's evaluation): every path starts in (s_0, l = 0);
at step t it plays the policy's choice for (s'_t, l_t), collects R(s'_t, a'_t), moves to s'_{t+1} ~ P_t(. | s'_t,
a'_t) by inverse CDF (:func:`stormcf.paths.draw_successors`) and sets l_{t+1} = l_t + [a'_t is a change].

**Counterfactual MDPs from an interval one** (:func:`sample_cfmdp`; seed 004 §6): for every step t and choice (s, a)
independently, P = LB + (1 - Σ LB)·w with w drawn from the flat Dirichlet distribution on the choice's successors
with UB > LB; mass above an upper bound is cut off and handed to the successors still below their upper bounds in
proportion to w, until none is above ("Dirichlet with capped redistribution"). Every sample is entailed by the
intervals (LB <= P <= UB, Σ P = 1); it is not exactly uniform on the polytope when upper bounds bind.

Both are Monte Carlo: their results are estimates and are labelled as such.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..paths import draw_successors
from .backward import Policy
from .model import CounterfactualMDP


@dataclass(frozen=True, eq=False)
class SampledPaths:
    """N counterfactual paths: model state ids and choices (N, T), changes used before each step, whether each
    step is a change, and the outcomes Σ_t R(s'_t, a'_t)."""

    cfmdp: CounterfactualMDP
    k: int | None
    states: np.ndarray
    choices: np.ndarray
    changes_used: np.ndarray
    change: np.ndarray
    outcomes: np.ndarray
    seconds: float

    @property
    def n(self) -> int:
        return int(self.outcomes.size)


def sample_paths(cfmdp: CounterfactualMDP, policy: Policy, n: int, rng: np.random.Generator,
                 k: int | None = None, rewards: np.ndarray | None = None) -> SampledPaths:
    """``n`` counterfactual paths of ``policy`` (budget k) in the point counterfactual MDP ``cfmdp``, which must have
    the policy's layers (the policy may come from another counterfactual MDP of the same path)."""
    start = time.perf_counter()
    if not cfmdp.same_layers(policy.cfmdp):
        raise OptionError("the policy was computed on a counterfactual MDP with other layers or choices")
    if not policy.feasible(k):
        raise OptionError(f"no policy with at most {k} changes exists; nothing to sample")
    r = cfmdp.model.step_rewards(policy.reward) if rewards is None else rewards
    T = cfmdp.T
    states = np.empty((n, T), dtype=np.int64)
    choices = np.empty((n, T), dtype=np.int64)
    used = np.zeros((n, T), dtype=np.int64)
    change = np.zeros((n, T), dtype=bool)
    s = np.full(n, cfmdp.start)
    l = np.zeros(n, dtype=np.int64)
    for t, step in enumerate(cfmdp.steps):
        pos = policy.choice_positions(t, k)[step.local(s), l]
        states[:, t], choices[:, t], used[:, t] = s, step.choices[pos], l
        change[:, t] = step.change[pos]
        s = step.next_states[draw_successors(step.rows, pos, rng.random(n))]
        if k is not None:
            l = l + change[:, t]
    return SampledPaths(cfmdp, k, states, choices, used, change, r[choices].sum(axis=1),
                        time.perf_counter() - start)


def sample_cfmdp(icfmdp: CounterfactualMDP, rng: np.random.Generator) -> CounterfactualMDP:
    """One point counterfactual MDP drawn from an interval one (module docs: Dirichlet with capped
    redistribution), with the same layers and choices."""
    values = []
    for step in icfmdp.steps:
        probabilities = np.empty_like(step.lower)
        lengths = np.diff(step.indptr)
        for m in np.unique(lengths):
            rows = np.flatnonzero(lengths == m)
            E = step.indptr[rows][:, None] + np.arange(m)
            L, U = step.lower[E], step.upper[E]
            g = np.where(U > L, rng.exponential(size=E.shape), 0.0)
            total = g.sum(axis=1, keepdims=True)
            w = np.divide(g, total, out=np.zeros_like(g), where=total > 0)
            probabilities[E] = _capped_fill(L, U, w)
        values.append(probabilities)
    return icfmdp.with_rows(values, "point", f"sampled from the {icfmdp.method} intervals", approximate=True)


def _capped_fill(L: np.ndarray, U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rows of L + extra with Σ = 1 and L <= result <= U, extra proportional to w with overflow redistributed."""
    x = L + np.maximum(1.0 - L.sum(axis=1), 0.0)[:, None] * w
    for _ in range(L.shape[1]):
        over = x > U
        if not over.any():
            break
        excess = np.where(over, x - U, 0.0).sum(axis=1)
        x = np.minimum(x, U)
        room = np.where(x < U, w, 0.0)
        total = room.sum(axis=1)
        share = np.divide(room, total[:, None], out=np.zeros_like(room), where=total[:, None] > 0)
        x = x + excess[:, None] * share
    return x
