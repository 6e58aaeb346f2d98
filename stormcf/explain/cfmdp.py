"""The counterfactual MDP M_τ of an observed path (paper §4, notes §1.3), restricted to what the start can reach.

For every step t = 0..T-2 the Gumbel-max counterfactual transition probabilities

    P_τ,t(s' | s, a) = E_{U_t ~ posterior(U_t | s_t, a_t -> s_{t+1})} [ 1[s' = argmax_x log P(x | s, a) + U_t,x] ]

are computed (exact closed form or Monte Carlo, :mod:`stormcf.gumbel`) only for the pairs (t, s) reachable from
(0, s_0) through their supports (supp P_τ,t ⊆ supp P) and only for the allowed choices of s at step t. The row of
the observed pair (s_t, a_t) is the point mass on s_{t+1} (the Gumbel-max SCM reproduces the observation with
probability 1). The last step's successor is never used. Everything is stored sparsely, one :class:`Step` per t.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..gumbel import counterfactual_transitions
from .problem import ExplanationProblem


@dataclass(frozen=True, eq=False)
class Step:
    """Step t of the counterfactual MDP.

    Attributes:
        states: the reachable states S_t (global ids, ascending); the start step has only s_0.
        groups: offsets (|S_t| + 1) of each state's allowed choices in ``choices``.
        choices: the allowed choices (global rows) of the states of S_t, grouped by state.
        change: per choice, whether it spends a change (its action differs from a_t and is not forced).
        reward: R(s, a) per choice.
        rows: P_τ,t as CSR (one row per choice, one column per state of S_{t+1}); ``None`` at the last step.
    """

    states: np.ndarray
    groups: np.ndarray
    choices: np.ndarray
    change: np.ndarray
    reward: np.ndarray
    rows: sp.csr_matrix | None

    @property
    def owner(self) -> np.ndarray:
        """Local index (into ``states``) of the state of every choice."""
        return np.repeat(np.arange(self.states.size), np.diff(self.groups))

    def local(self, states: np.ndarray) -> np.ndarray:
        """Local indices of global state ids (which must be in S_t)."""
        return np.searchsorted(self.states, states)

    @property
    def keep(self) -> np.ndarray:
        """Per state of S_t: the position in ``choices`` of the choice that spends no change, or -1."""
        keep = np.full(self.states.size, -1, dtype=np.int64)
        free = np.flatnonzero(~self.change)
        keep[self.owner[free]] = free
        return keep


@dataclass(frozen=True, eq=False)
class CounterfactualMDP:
    """M_τ: one :class:`Step` per step t = 0..T-1 (the steps' states are the reachable ones)."""

    problem: ExplanationProblem
    steps: tuple[Step, ...]
    seconds: float

    @property
    def T(self) -> int:
        return len(self.steps)

    @property
    def n_pairs(self) -> int:
        """Number of reachable (t, s) pairs."""
        return sum(step.states.size for step in self.steps)

    @property
    def n_rows(self) -> int:
        """Number of counterfactual rows P_τ,t(. | s, a) computed."""
        return sum(step.rows.shape[0] for step in self.steps if step.rows is not None)

    def transitions(self, t: int) -> sp.csr_matrix:
        """P_τ,t with global indices: one row per model choice, one column per model state (zero rows elsewhere)."""
        step = self.steps[t]
        if step.rows is None:
            raise ValueError(f"the last step {t} has no counterfactual transition probabilities")
        m = self.problem.model
        nxt = self.steps[t + 1].states
        coo = step.rows.tocoo()
        return sp.csr_matrix((coo.data, (step.choices[coo.row], nxt[coo.col])), shape=(m.n_choices, m.n_states))


def counterfactual_mdp(problem: ExplanationProblem) -> CounterfactualMDP:
    """Build M_τ forward from (0, s_0): allowed choices of S_t, their counterfactual rows, S_{t+1} = their support."""
    start = time.perf_counter()
    path, m = problem.path, problem.model
    rewards = problem.step_rewards
    states = path.states[:1].copy()
    steps = []
    for t in range(problem.T):
        candidates = _choices_of(m.row_groups, states)
        allowed, change = problem.allowed_and_changes(t, candidates)
        choices = candidates[allowed]
        owner = np.repeat(np.arange(states.size), m.choice_counts[states])[allowed]
        groups = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=states.size))])
        rows, successors = None, None
        if t < problem.T - 1:
            rows, successors = _counterfactual_rows(problem, t, choices)
        steps.append(Step(states, groups, choices, change[allowed], rewards[choices], rows))
        states = successors
    return CounterfactualMDP(problem, tuple(steps), time.perf_counter() - start)


def _choices_of(row_groups: np.ndarray, states: np.ndarray) -> np.ndarray:
    """All choices (rows) of the given states, grouped by state in the given order."""
    counts = row_groups[states + 1] - row_groups[states]
    offsets = np.repeat(row_groups[states] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return offsets + np.arange(counts.sum())


def _counterfactual_rows(problem: ExplanationProblem, t: int, choices: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """P_τ,t for ``choices`` with columns renumbered to the states they reach (returned, ascending)."""
    path = problem.path
    observed, successor = int(path.choices[t]), int(path.states[t + 1])
    Q = counterfactual_transitions(problem.model, observed, successor, choices, estimator=problem.estimator,
                                   samples=problem.samples, seed=[problem.seed, t])
    Q = sp.csr_matrix(Q, copy=True)
    for row in np.flatnonzero(choices == observed):   # the observed pair: exactly the point mass on s_{t+1}
        span = slice(Q.indptr[row], Q.indptr[row + 1])
        Q.data[span] = np.where(Q.indices[span] == successor, 1.0, 0.0)
    Q.eliminate_zeros()
    successors = np.unique(Q.indices)
    Q = sp.csr_matrix((Q.data, np.searchsorted(successors, Q.indices), Q.indptr), shape=(Q.shape[0], successors.size))
    Q.sort_indices()
    return Q, successors
