"""The biased random-key genetic algorithm with non-dominated sorting of seed 002 (notes §2.3-2.5), in numpy.

One generation:

1. **Survival**: duplicates are removed (equal objective vectors F, the authors' rule, or equal decoded plans); the
   **elites** are the first non-dominated front of the feasible members (minimization of F). When no member is
   feasible, the elites are the first front among the members of least constraint violation (feasibility first:
   notes §4 item 6; the authors' code ranked all members on F, constraints ignored).
2. **Mating**: each child takes every gene from a uniformly drawn elite parent with probability ``bias`` (ρ), else
   from a uniformly drawn non-elite parent (the elites when there are none). Children that repeat a genotype of the
   population or of the other children are drawn again, for at most 100 rounds (pymoo's rule).
3. **Mutants**: fresh uniform random keys.
4. The next population is elites ∪ children ∪ mutants; the previous non-elites are dropped. Elites are **on top**
   of ``n_offspring + n_mutants`` (the authors' population: 1 + 400 + 100 at first, then |elites| + 500).

``generations`` counts the random initial population as generation 1 (pymoo's count): the paper's 150 generations
are 149 rounds of mating and 75,001 evaluations. The result is the feasible elite set of the last generation (no
archive, as the paper). All randomness comes from one ``numpy.random.Generator`` (PCG64) seeded with ``seed``,
through ``Generator.random`` only (uniform doubles, a stream numpy keeps stable): a seed gives the same run on every
numpy version. The authors' pymoo 0.4.2.1 effectively used ρ = 0.3 (its crossover swapped the parents, notes §2.4
item 2); pass ``bias=0.3`` to replicate that.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from ..errors import RecourseError
from ..run import Run
from .decoder import Evaluation, Plans, concatenate, concatenate_plans, decode
from .domains import ValueDomain

DEDUPE = ("objectives", "phenotype")


class PlanSpace(Protocol):
    """What the GA needs from a problem: the actions' value domains and a batch evaluator."""

    @property
    def domains(self) -> tuple[ValueDomain, ...]: ...

    def evaluate(self, plans: Plans) -> Evaluation: ...


@dataclass(frozen=True)
class BRKGASettings:
    """The GA's parameters; the defaults are the paper's (population 500 = 400 offspring (0.8) + 100 mutants (0.2),
    bias 0.7, 150 generations) and the authors' duplicate rule."""

    n_offspring: int = 400
    n_mutants: int = 100
    bias: float = 0.7
    generations: int = 150
    seed: int = 1
    dedupe: str = "objectives"
    mating_rounds: int = 100

    def __post_init__(self) -> None:
        for name in ("n_offspring", "n_mutants", "generations", "seed", "mating_rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (0 if name == "seed" else 1):
                raise RecourseError(f"GA setting {name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.bias <= 1.0:
            raise RecourseError(f"GA bias must lie in [0, 1], got {self.bias}")
        if self.dedupe not in DEDUPE:
            raise RecourseError(f"unknown duplicate rule {self.dedupe!r}: use objectives or phenotype")

    @property
    def evaluations(self) -> int:
        """Genotypes evaluated by a full run (without mating rounds that ran dry)."""
        return 1 + self.n_offspring + self.n_mutants + (self.generations - 1) * (self.n_offspring + self.n_mutants)


@dataclass(frozen=True, eq=False)
class Population:
    """Genotypes with their plans, evaluation and elite marks."""

    genotypes: np.ndarray
    plans: Plans
    evaluation: Evaluation
    elite: np.ndarray

    def take(self, rows: np.ndarray) -> "Population":
        return Population(self.genotypes[rows], self.plans.take(rows), self.evaluation.take(rows), self.elite[rows])


@dataclass(frozen=True, eq=False)
class GAResult:
    """The final population, its front (feasible elites, indices into it), and the run's counts."""

    population: Population
    front: np.ndarray
    generations: int
    evaluations: int
    seconds: float
    feasible_found: bool
    interrupted: bool = False                  # stopped by the user before the last generation
    timed_out: bool = False                    # stopped by the time limit before the last generation


# ================================================================================================ dominance
def dominates(u: np.ndarray, w: np.ndarray) -> bool:
    """u ≺ w (minimization): u <= w everywhere and u < w somewhere."""
    return bool(np.all(u <= w) and np.any(u < w))


def first_front(F: np.ndarray) -> np.ndarray:
    """The non-dominated members of F (n, M) under minimization, as a boolean mask.

    Members are visited in lexicographic order of F, so every dominator of a member comes before it; a member is
    checked against the front found so far (vectorised), which suffices by transitivity. Equal vectors do not
    dominate each other.
    """
    n = len(F)
    mask = np.zeros(n, dtype=bool)
    if n == 0:
        return mask
    order = np.lexsort(F.T[::-1])
    front = np.empty((n, F.shape[1]))
    size = 0
    for i in order.tolist():
        f = F[i]
        if size:
            G = front[:size]
            if np.any(np.all(G <= f, axis=1) & np.any(G < f, axis=1)):
                continue
        front[size] = f
        size += 1
        mask[i] = True
    return mask


def _first_occurrences(keys: np.ndarray) -> np.ndarray:
    """Indices of the first row of every distinct key row, in their original order."""
    _, first = np.unique(keys, axis=0, return_index=True)
    return np.sort(first)


# ================================================================================================ the algorithm
def survival(population: Population, dedupe: str) -> Population:
    """Remove duplicates and mark the elites (module docs, step 1)."""
    keys = population.evaluation.F if dedupe == "objectives" else population.plans.keys()
    population = population.take(_first_occurrences(keys))
    evaluation = population.evaluation
    cv = evaluation.cv
    feasible = cv == 0
    candidates = feasible if feasible.any() else cv == cv.min()
    rows = np.flatnonzero(candidates)
    elite = np.zeros(len(cv), dtype=bool)
    elite[rows[first_front(evaluation.F[rows])]] = True
    return Population(population.genotypes, population.plans, evaluation, elite)


def _evaluated(space: PlanSpace, genotypes: np.ndarray) -> tuple[Plans, Evaluation]:
    plans = decode(genotypes, space.domains)
    return plans, space.evaluate(plans)


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """One comparable item per row (its bytes)."""
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def _mate(rng: np.random.Generator, genotypes: np.ndarray, elite: np.ndarray, settings: BRKGASettings) -> np.ndarray:
    """Biased uniform crossover of elite x non-elite parents, without duplicate genotypes (module docs, step 2): each
    round draws the missing children at once and keeps those that repeat no genotype of the population, of an
    earlier child or of an earlier row of the round."""
    elites = np.flatnonzero(elite)
    others = np.flatnonzero(~elite)
    if others.size == 0:
        others = elites
    seen = _row_keys(genotypes)
    children = np.empty((0, genotypes.shape[1]))
    for _ in range(settings.mating_rounds):
        missing = settings.n_offspring - len(children)
        if missing == 0:
            break
        e = elites[(rng.random(missing) * elites.size).astype(np.int64)]
        o = others[(rng.random(missing) * others.size).astype(np.int64)]
        take_elite = rng.random((missing, genotypes.shape[1])) < settings.bias
        candidates = np.where(take_elite, genotypes[e], genotypes[o])
        keys = _row_keys(candidates)
        first = np.sort(np.unique(keys, return_index=True)[1])
        fresh = first[~np.isin(keys[first], seen)]
        children = np.vstack([children, candidates[fresh]])
        seen = np.concatenate([seen, keys[fresh]])
    return children


def brkga(space: PlanSpace, settings: BRKGASettings = BRKGASettings(), run: Run | None = None) -> GAResult:
    """Run the BRKGA with non-dominated sorting on a problem (module docs), until its last generation or until
    ``run`` (default: unlimited) expires or is asked to stop."""
    deadline = run if run is not None else Run()
    start = time.perf_counter()
    rng = np.random.default_rng(settings.seed)
    n_genes = 2 * len(space.domains)
    genotypes = rng.random((1 + settings.n_offspring + settings.n_mutants, n_genes))
    plans, evaluation = _evaluated(space, genotypes)
    population = survival(Population(genotypes, plans, evaluation, np.zeros(len(genotypes), dtype=bool)),
                          settings.dedupe)
    evaluations = len(genotypes)
    feasible_found = bool(population.evaluation.feasible.any())
    generations = 1
    for _ in deadline.progress(range(settings.generations - 1), desc="BRKGA generations", unit="generation"):
        if deadline.expired:
            break
        generations += 1
        elites = population.take(np.flatnonzero(population.elite))
        children = _mate(rng, population.genotypes, population.elite, settings)
        fresh = np.vstack([children, rng.random((settings.n_mutants, n_genes))])
        plans, evaluation = _evaluated(space, fresh)
        evaluations += len(fresh)
        population = survival(_joined(elites, Population(fresh, plans, evaluation, np.zeros(len(fresh), bool))),
                              settings.dedupe)
        feasible_found |= bool(population.evaluation.feasible.any())
    front = np.flatnonzero(population.elite & population.evaluation.feasible)
    stopped = generations < settings.generations
    return GAResult(population, front, generations, evaluations, time.perf_counter() - start, feasible_found,
                    stopped and deadline.interrupted, stopped and not deadline.interrupted)


def _joined(a: Population, b: Population) -> Population:
    return Population(np.vstack([a.genotypes, b.genotypes]), concatenate_plans([a.plans, b.plans]),
                      concatenate([a.evaluation, b.evaluation]), np.concatenate([a.elite, b.elite]))


def sorted_front(result: GAResult) -> np.ndarray:
    """The front's population indices, cheapest first (then by Gower, then shorter plans)."""
    evaluation = result.population.evaluation
    rows = result.front
    order = np.lexsort((evaluation.lengths[rows], evaluation.gower[rows], evaluation.cost[rows]))
    return rows[order]


def non_dominated_plans(evaluation: Evaluation, rows: Sequence[int] | None = None) -> np.ndarray:
    """Indices of the feasible, non-dominated plans of an evaluation (all plans of equal F are kept)."""
    candidates = np.flatnonzero(evaluation.feasible) if rows is None else np.asarray(rows)
    return candidates[first_front(evaluation.F[candidates])]
