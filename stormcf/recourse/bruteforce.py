"""The brute-force reference of notes §6.1: every ordered subset of distinct actions of length 1..N, times every
combination of the chosen actions' values (finite domains), evaluated in one batch; the answer is the non-dominated
set of the feasible plans (all plans of equal objective vectors kept). Meant for small problems and tests: the
number of plans is Σ_T Σ_{ordered T-tuples} Π |D_i| (N = 7 single-valued actions: 13,699)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .brkga import PlanSpace, non_dominated_plans
from .decoder import Evaluation, Plans
from .problem import RecourseError

#: refuse to enumerate more plans than this
LIMIT = 2_000_000


@dataclass(frozen=True, eq=False)
class BruteForce:
    """Every plan, its evaluation and the Pareto set (indices of the feasible non-dominated plans)."""

    plans: Plans
    evaluation: Evaluation
    front: np.ndarray

    @property
    def n_feasible(self) -> int:
        return int(self.evaluation.feasible.sum())


def count_plans(space: PlanSpace, max_length: int | None = None) -> int:
    sizes = [_size(d, a) for a, d in enumerate(space.domains)]
    n = len(sizes)
    total = 0
    for T in range(1, (max_length or n) + 1):
        for subset in itertools.combinations(range(n), T):
            total += int(np.prod([sizes[i] for i in subset])) * _factorial(T)
    return total


def _factorial(T: int) -> int:
    out = 1
    for k in range(2, T + 1):
        out *= k
    return out


def _size(domain, action: int) -> int:
    if not domain.is_finite:
        raise RecourseError(f"brute force needs finite value domains; action {action} has an interval "
                            f"(discretise it with a grid)")
    return domain.size


def all_plans(space: PlanSpace, max_length: int | None = None) -> Plans:
    """Every plan of at most ``max_length`` steps (default: all N actions)."""
    total = count_plans(space, max_length)
    if total > LIMIT:
        raise RecourseError(f"brute force would enumerate {total:,} plans (limit {LIMIT:,})")
    domains = space.domains
    n = len(domains)
    sequences = []
    for T in range(1, (max_length or n) + 1):
        for permutation in itertools.permutations(range(n), T):
            for values in itertools.product(*[domains[i].finite_values for i in permutation]):
                sequences.append(list(zip(permutation, values)))
    return Plans.from_steps(sequences, n)


def brute_force(space: PlanSpace, max_length: int | None = None) -> BruteForce:
    """Evaluate every plan and return the Pareto set of the feasible ones."""
    plans = all_plans(space, max_length)
    evaluation = space.evaluate(plans)
    return BruteForce(plans, evaluation, non_dominated_plans(evaluation))
