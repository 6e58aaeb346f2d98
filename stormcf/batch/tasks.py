"""The task of every analysis command, one item each, for single runs and batches alike (the CLI calls these for its
single input too), with the columns of the batch summary table.

=================  =====================  ==============================================================
command            source (shared)        one item
=================  =====================  ==============================================================
``icfmdp``         :class:`ModelFile`     an observed path (the JSON of a path file)
``explain-path``   :class:`ModelFile`     an observed path
``check``          :class:`ModelFile`     a strategy (the JSON of a strategy file; ``None``: the model)
``strategy``       :class:`ModelFile`     ``{"strategy": <strategy JSON>, "property": "P<=0.2 [...]"}``
``setcover``       :class:`InstanceFile`  an agent: ``[0, 0, 1, ...]`` or ``{"agent": [...], "group": "g"}``
``recourse``       :class:`RecourseData`  a rejected instance of a data set: ``3`` or ``{"instance": 3}``
=================  =====================  ==============================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, Sequence

from ..deadline import Deadline
from ..errors import RecourseError, StateError, StormcfError
from ..model import ExplicitModel
from ..recourse.brkga import BRKGASettings
from ..recourse.problem import OBJECTIVES, RecourseProblem, Rounding
from ..report import Report
from ..setcover.problem import SetCoverInstance, SetCoverProblem
from .run import Columns, Item, Task

# Each task imports its analysis when it runs (in the worker that runs it): a command imports only its own.


# ================================================================================================ path analyses
def icfmdp_task(**options: Any) -> Task:
    """``stormcf icfmdp`` on one observed path per item; ``options`` are the fields of
    :class:`~stormcf.icfmdp.ICFMDPProblem` after ``path`` (reward, optimization, assumptions, ...)."""
    return Task("icfmdp", _icfmdp, options)


def _icfmdp(model: ExplicitModel, data: Any, where: str, **options: Any) -> Report:
    from ..icfmdp import ICFMDPProblem, solve_icfmdp
    from ..paths import ObservedPath
    return solve_icfmdp(ICFMDPProblem(ObservedPath.from_dict(model, data, where), **options))


def explain_task(explanations: int = 1000, cross_check: bool = False, baselines: bool = False,
                 **problem: Any) -> Task:
    """``stormcf explain-path`` on one observed path per item; ``problem`` are the fields of
    :class:`~stormcf.explain.ExplanationProblem` after ``path``, the others :func:`~stormcf.explain.explain_path`'s."""
    return Task("explain-path", _explain, {"problem": problem, "explanations": explanations,
                                           "cross_check": cross_check, "baselines": baselines})


def _explain(model: ExplicitModel, data: Any, where: str, problem: Mapping[str, Any], **solve: Any) -> Report:
    from ..explain import ExplanationProblem, explain_path
    from ..paths import ObservedPath
    return explain_path(ExplanationProblem(ObservedPath.from_dict(model, data, where), **problem), **solve)


# ================================================================================================ strategies
def check_task(properties: Sequence[str], exact: bool = False) -> Task:
    """``stormcf check``: every property on the DTMC one strategy per item induces (item ``None``: on the model)."""
    return Task("check", _check, {"properties": tuple(properties), "exact": exact})


def _check(model: ExplicitModel, data: Any, where: str | None, properties: Sequence[str], exact: bool) -> Report:
    from ..modelcheck import check_properties
    from ..strategy import Strategy
    strategy = None if data is None else Strategy.from_dict(model, data, where)
    return check_properties(model, properties, strategy, exact, where)


def counterfactual_task(**options: Any) -> Task:
    """``stormcf strategy``: the counterfactual strategy of one (strategy, bound) pair per item; ``options``:
    ``weights``, ``controllable_actions``, ``controllable_states``, ``epsilon`` (the problem's) and ``diverse``,
    ``diversity_weight``, ``solver``, ``time_limit``, ``exact`` (the solver's). ``time_limit`` in seconds is each
    item's budget, counted from the item's start; a :class:`~stormcf.deadline.Deadline` (a single run's, started
    before the model was loaded) is used as it is."""
    return Task("strategy", _counterfactual, options)


def _counterfactual(model: ExplicitModel, data: Mapping[str, Any], where: str, *, weights: Any,
                    controllable_actions: Sequence[str] | None, controllable_states: str | None,
                    epsilon: float | None, diverse: int, diversity_weight: float, solver: str,
                    time_limit: Deadline | float | None, exact: bool) -> Report:
    from ..counterfactual import CounterfactualProblem, diverse_counterfactuals
    from ..strategy import Strategy
    deadline = Deadline.of(time_limit)
    sigma = Strategy.from_dict(model, data["strategy"], where)
    problem = CounterfactualProblem(sigma, data["property"], weights, controllable_actions=controllable_actions,
                                    controllable_states=controllable_states, epsilon=epsilon)
    return diverse_counterfactuals(problem, diverse, diversity_weight, solver, exact=exact, deadline=deadline)


def strategy_items(strategies: Sequence[Item], properties: Sequence[str]) -> list[Item]:
    """The items of a ``strategy`` batch: every strategy with every property, strategy-major."""
    return [Item(k, item.where, {"strategy": item.content, "property": prop, "id": item.id}, item.error)
            for k, (item, prop) in enumerate((item, prop) for item in strategies for prop in properties)]


# ================================================================================================ set cover
@dataclass(frozen=True)
class InstanceFile:
    """A set-cover instance file (JSON, or a labelled data set ``.npz``)."""

    path: str

    def load(self) -> SetCoverInstance:
        from ..setcover.data import load_instance
        return load_instance(self.path)


def setcover_task(method: str | None = None, group: str | None = None) -> Task:
    """``stormcf setcover``: the optimal explanation of one agent per item by the engine ``method`` (default:
    :data:`stormcf.setcover.DEFAULT_METHOD`), ``group`` for items that name none; the agents of a chunk are
    certified together (one Storm call for their optima, one for their plans)."""
    if method is None:
        from ..setcover.engines import DEFAULT_METHOD as method
    return Task("setcover", _setcover, {"method": method, "group": group}, solve_many=_setcover_many)


def _setcover(instance: SetCoverInstance, data: Any, where: str, method: str, group: str | None) -> Report:
    from ..setcover.solve import solve_setcover
    return solve_setcover(_agent(instance, data, where, group), method)


def _setcover_many(instance: SetCoverInstance, items: Sequence[tuple[Any, str]], method: str, group: str | None
                   ) -> list[Report | BaseException]:
    from ..setcover.solve import solve_setcovers
    outcomes: list = [None] * len(items)
    problems = []
    for k, (data, where) in enumerate(items):
        try:
            problems.append((k, _agent(instance, data, where, group)))
        except StormcfError as err:
            outcomes[k] = err
    for (k, _), result in zip(problems, solve_setcovers([problem for _, problem in problems], method)):
        outcomes[k] = result
    return outcomes


def _agent(instance: SetCoverInstance, data: Any, where: str, group: str | None) -> SetCoverProblem:
    if isinstance(data, Mapping):
        if "agent" not in data:
            raise StateError(f'{where}: expected an agent [0, 1, ...] or {{"agent": [...], "group": "g"}}')
        data, group = data["agent"], data.get("group", group)
    return SetCoverProblem(instance, instance.agent(data, where), group)


# ================================================================================================ recourse
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
        from ..recourse.datasets import load_dataset, train_classifier
        return partial(self.problem, classifier=train_classifier(load_dataset(self.name)))

    def problem(self, instance: int, classifier: Any = None) -> RecourseProblem:
        from ..recourse.datasets import dataset_problem
        problem = dataset_problem(self.name, instance, discounted=self.discounted, objectives=self.objectives,
                                  rounding=self.rounding, classifier=classifier)
        return problem.with_grid(self.grid) if self.grid is not None else problem


def recourse_task(settings: BRKGASettings = BRKGASettings(), exact: bool = True, achievable: bool = False) -> Task:
    """``stormcf recourse --dataset``: the plans of one rejected instance per item."""
    return Task("recourse", _recourse, {"settings": settings, "exact": exact, "achievable": achievable})


def _recourse(problems: Callable[[int], RecourseProblem], data: Any, where: str, settings: BRKGASettings,
              exact: bool, achievable: bool) -> Report:
    from ..recourse import solve_recourse
    instance = data.get("instance") if isinstance(data, Mapping) else data
    if isinstance(instance, bool) or not isinstance(instance, int):
        raise RecourseError(f'{where}: expected an instance number or {{"instance": I}}, got {data!r}')
    try:
        problem = problems(instance)
    except RecourseError as err:
        raise RecourseError(f"{where}: {err}") from None
    return solve_recourse(problem, settings, exact=exact, achievable=achievable)


# ================================================================================================ summary tables
def _results(doc: Mapping[str, Any]) -> str:
    return "; ".join(f"{r['value']:.6g}" if isinstance(r.get("value"), float) else str(r.get("value"))
                     for r in doc["results"])


#: the columns of every command's batch summary table (heading -> value from the item's document)
COLUMNS: dict[str, Columns] = {
    "icfmdp": {"worst case": lambda d: d["worst_case_value"], "outcome": lambda d: d["path"]["outcome"],
               "changes at t": lambda d: ",".join(map(str, d["policy"]["changes_from_observation"])) or "-",
               "pairs": lambda d: d["icfmdp"]["pairs"]},
    "explain-path": {"value": lambda d: d["value"], "outcome": lambda d: d["path"]["outcome"],
                     "improvement": lambda d: d["improvement"]},
    "check": {"values": _results},
    "strategy": {"property": lambda d: d.get("property"), "P": lambda d: d.get("probability"),
                 "d": lambda d: (d.get("distance") or {}).get("weighted")},
    "setcover": {"cost": lambda d: d["cost"], "actions": lambda d: ",".join(d["actions"]) or "-"},
    "recourse": {"plans": lambda d: len(d["front"]), "least cost": lambda d: d["optimal_cost"],
                 "GA cost": lambda d: d["ga_cost"]},
}
