"""Random-key genotypes and the plans they decode to (notes §2.2), and the evaluation record both fronts return.

A genotype is G = [A_1..A_N, V_1..V_N] in [0, 1]^{2N} for N actions:

- action i is **active** iff A_i <= 0.5 (0.5 itself is active, as the authors' code);
- the active actions are applied in the order of argsort(A) (ascending, stable: equal keys keep index order), so the
  once-only rule holds by construction;
- the value of action i is V_i mapped onto its domain (:meth:`~.problem.ValueDomain.decode`).

Since every key <= 0.5 sorts before every key > 0.5, the active actions are exactly the first positions of the
stable argsort: a whole population decodes with two numpy calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .domains import ValueDomain

#: keys at or below this value make an action active
ACTIVE_KEY = 0.5


@dataclass(frozen=True, eq=False)
class Plans:
    """A batch of plans.

    Attributes:
        order: (n, N) action indices by position; -1 after the last step.
        values: (n, N) the tweaking value of every action, by action index (meaningless for inactive actions).
    """

    order: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return self.order.shape[0]

    @property
    def lengths(self) -> np.ndarray:
        """T per plan."""
        return (self.order >= 0).sum(axis=1)

    @property
    def max_length(self) -> int:
        return int(self.lengths.max(initial=0))

    def step_values(self) -> np.ndarray:
        """(n, N) the value of the action at each position (0 after the last step)."""
        gathered = np.take_along_axis(self.values, np.maximum(self.order, 0), axis=1)
        return np.where(self.order >= 0, gathered, 0.0)

    def keys(self) -> np.ndarray:
        """One row per plan that is equal exactly for equal plans (same actions, order and values): the phenotype."""
        return np.hstack([self.order.astype(float), self.step_values()])

    def steps(self, k: int) -> list[tuple[int, float]]:
        """The plan k as (action index, value) pairs."""
        return [(int(i), float(self.values[k, i])) for i in self.order[k] if i >= 0]

    def take(self, rows: np.ndarray) -> "Plans":
        return Plans(self.order[rows], self.values[rows])

    @classmethod
    def from_steps(cls, sequences: Sequence[Sequence[tuple[int, float]]], n_actions: int) -> "Plans":
        """Plans from explicit (action index, value) sequences (distinct actions in each)."""
        order = np.full((len(sequences), n_actions), -1, dtype=np.int64)
        values = np.zeros((len(sequences), n_actions))
        for k, seq in enumerate(sequences):
            for t, (i, v) in enumerate(seq):
                order[k, t] = i
                values[k, i] = v
        return cls(order, values)


def decode(genotypes: np.ndarray, domains: Sequence[ValueDomain]) -> Plans:
    """Decode random keys (n, 2N) to plans."""
    genotypes = np.atleast_2d(np.asarray(genotypes, dtype=float))
    n_actions = len(domains)
    keys, value_keys = genotypes[:, :n_actions], genotypes[:, n_actions:]
    permutation = np.argsort(keys, axis=1, kind="stable")
    active = np.take_along_axis(keys, permutation, axis=1) <= ACTIVE_KEY
    order = np.where(active, permutation, -1)
    values = np.column_stack([d.decode(value_keys[:, i]) for i, d in enumerate(domains)])
    return Plans(order, values)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The objectives and feasibility of a batch of plans.

    Attributes:
        cost: o_1, the minimized cost (Σ b·g, or Σ b when not discounted; expected values on stochastic models).
        effort: Σ b (the undiscounted effort; equal to cost without a relation graph).
        gower: o_2 = Gower(x_0, x_T) (expected over x_T on stochastic models).
        freq: (n, d) o_{2+h}: how many steps changed feature h (expected on stochastic models).
        p_accept: the probability that f(x_T) is the target (0 or 1 for a classifier).
        violations: how many steps were invalid (a condition failed, the action was not enabled, or nothing changed).
        threshold: θ, the P(accept) a feasible plan needs.
        objectives: the names of the minimized objectives (columns of :attr:`F`).
    """

    cost: np.ndarray
    effort: np.ndarray
    gower: np.ndarray
    freq: np.ndarray
    p_accept: np.ndarray
    violations: np.ndarray
    lengths: np.ndarray
    threshold: float
    objectives: tuple[str, ...]

    def __len__(self) -> int:
        return self.cost.shape[0]

    @property
    def feasible(self) -> np.ndarray:
        """Non-empty, every step valid, P(accept) >= θ."""
        return self.cv == 0

    @property
    def cv(self) -> np.ndarray:
        """Constraint violation (0 iff feasible): [empty] + invalid steps + (θ - P(accept))^+ (the authors' three
        constraints g1..g3, with g1 graded for stochastic models)."""
        shortfall = np.maximum(self.threshold - self.p_accept, 0.0)
        shortfall[shortfall < 1e-12] = 0.0
        return (self.lengths == 0) + self.violations + shortfall

    @property
    def F(self) -> np.ndarray:
        """(n, M) the objective vectors: cost, then Gower, then one frequency per feature (as selected). Empty plans
        get cost and frequencies +inf and Gower 1 (the authors' code)."""
        columns = [self.cost[:, None]]
        if "gower" in self.objectives:
            columns.append(self.gower[:, None])
        if "freq" in self.objectives:
            columns.append(self.freq)
        F = np.hstack(columns).astype(float)
        empty = self.lengths == 0
        F[empty] = np.inf
        if "gower" in self.objectives:
            F[empty, 1] = 1.0
        return F

    def take(self, rows: np.ndarray) -> "Evaluation":
        return Evaluation(self.cost[rows], self.effort[rows], self.gower[rows], self.freq[rows],
                          self.p_accept[rows], self.violations[rows], self.lengths[rows], self.threshold,
                          self.objectives)


def concatenate(evaluations: Sequence[Evaluation]) -> Evaluation:
    first = evaluations[0]
    joined = {name: np.concatenate([getattr(e, name) for e in evaluations])
              for name in ("cost", "effort", "gower", "freq", "p_accept", "violations", "lengths")}
    return Evaluation(**joined, threshold=first.threshold, objectives=first.objectives)


def concatenate_plans(plans: Sequence[Plans]) -> Plans:
    return Plans(np.vstack([p.order for p in plans]), np.vstack([p.values for p in plans]))
