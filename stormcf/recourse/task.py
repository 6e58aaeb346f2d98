"""``recourse --dataset`` as an analysis (:mod:`stormcf.analysis`): one item is a rejected instance of a data set,
``3`` or ``{"instance": 3}``; the items share the data set and its trained classifier (:class:`RecourseData`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping

from ..analysis import Analysis
from ..errors import RecourseError
from ..run import Run
from .brkga import BRKGASettings
from .datasets import dataset_problem, load_dataset, train_classifier
from .prism import PrismRecourse
from .problem import OBJECTIVES, RecourseProblem, Rounding
from .result import RecourseResult
from .solve import solve_recourse


@dataclass(frozen=True)
class RecourseData:
    """A data set of the recourse paper with the problem's settings; ``load()`` trains (or reads) its classifier once
    and gives the function instance -> problem."""

    name: str
    discounted: bool = True
    objectives: str | tuple[str, ...] = OBJECTIVES
    rounding: Rounding = Rounding()
    grid: int | None = None

    def load(self) -> Callable[[int], RecourseProblem]:
        return partial(self.problem, classifier=train_classifier(load_dataset(self.name)))

    def problem(self, instance: int, classifier: Any = None) -> RecourseProblem:
        problem = dataset_problem(self.name, instance, discounted=self.discounted, objectives=self.objectives,
                                  rounding=self.rounding, classifier=classifier)
        return problem.with_grid(self.grid) if self.grid is not None else problem


@dataclass(frozen=True)
class RecourseSettings:
    """The GA's settings, what Storm adds (the exact least cost, the achievable set), and the solver of the LPs
    that test the plans against the achievable set (:data:`stormcf.solvers.SOLVERS`)."""

    ga: BRKGASettings = BRKGASettings()
    exact: bool = True
    achievable: bool = False
    solver: str = "auto"


class SequentialRecourse(Analysis):
    """Ordered, consequence-aware action plans from a rejected instance to an accepted one (seed 002)."""

    command = "recourse"
    Settings = RecourseSettings
    items = "rejected instance of the data set"
    stoppable = True            # the front of the generations run so far
    columns = {"plans": lambda r: len(r.front), "least cost": lambda r: r.optimal_cost, "GA cost": lambda r: r.ga_cost}

    def problem(self, problems: Callable[[int], RecourseProblem] | PrismRecourse, data: Any,
                where: str | None) -> RecourseProblem | PrismRecourse:
        if isinstance(problems, PrismRecourse):           # the PRISM front: the model's initial state
            return problems
        instance = data.get("instance") if isinstance(data, Mapping) else data
        if isinstance(instance, bool) or not isinstance(instance, int):
            raise RecourseError(f'{where}: expected an instance number or {{"instance": I}}, got {data!r}')
        try:
            return problems(instance)
        except RecourseError as err:
            raise RecourseError(f"{where}: {err}") from None

    def solve(self, problem: RecourseProblem | PrismRecourse, run: Run) -> RecourseResult:
        s = self.settings
        return solve_recourse(problem, s.ga, exact=s.exact, achievable=s.achievable, solver=s.solver, run=run)
