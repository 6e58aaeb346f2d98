"""``strategy`` as an analysis (:mod:`stormcf.analysis`): one item is an initial strategy σ with the bounds to meet,
``{"strategy": <strategy JSON>, "property": "P<=0.2 [...]", "bounds": [...]}`` (``property`` or ``bounds`` may be
left out; all the bounds must hold at once), against the model the items share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..analysis import Analysis
from ..errors import StrategyError
from ..items import Item
from ..model import ExplicitModel
from ..run import Run
from ..strategy import Strategy
from .problem import CounterfactualProblem
from .result import CounterfactualResult
from .solve import TIME_LIMIT, diverse_counterfactuals


@dataclass(frozen=True)
class CounterfactualSettings:
    """The question's parameters that every item shares (weights, what is controllable, ε) and how to solve it."""

    weights: Any = "1,1,1"
    controllable_actions: Sequence[str] | None = None
    controllable_states: str | None = None
    epsilon: float | None = None
    diverse: int = 1
    diversity_weight: float = 2.0
    solver: str = "auto"
    exact: bool = False


class CounterfactualStrategies(Analysis):
    """The closest strategy σ* to σ that meets a bound (seed 000), certified by Storm."""

    command = "strategy"
    Settings = CounterfactualSettings
    items = "strategy with its bounds"
    stoppable = True            # the best strategy Storm accepted so far
    time_limit = TIME_LIMIT     # the MIQCQP is an anytime search with no natural end
    columns = {"property": lambda r: r.problem.property.text, "value": lambda r: r.value,
               "d": lambda r: r.weighted_distance}

    def problem(self, model: ExplicitModel, data: Mapping[str, Any], where: str | None) -> CounterfactualProblem:
        if not isinstance(data, Mapping) or "strategy" not in data or not (data.get("property") or data.get("bounds")):
            raise StrategyError(f'{where}: expected {{"strategy": {{...}}, "property": "P<=0.2 [...]"}} (or '
                                f'"bounds": [...])')
        s = self.settings
        sigma = Strategy.from_dict(model, data["strategy"], where or "strategy")
        return CounterfactualProblem(sigma, data.get("property"), s.weights,
                                     controllable_actions=s.controllable_actions,
                                     controllable_states=s.controllable_states, epsilon=s.epsilon,
                                     bounds=data.get("bounds") or ())

    def solve(self, problem: CounterfactualProblem, run: Run) -> CounterfactualResult:
        s = self.settings
        return diverse_counterfactuals(problem, s.diverse, s.diversity_weight, s.solver, exact=s.exact, run=run)


def strategy_items(strategies: Sequence[Item], properties: Sequence[str | None],
                   required: Sequence[str] = ()) -> list[Item]:
    """The items of a ``strategy`` batch: every strategy with every property (each with the ``required`` bounds
    too), strategy-major."""
    return [Item(k, item.where, {"strategy": item.content, "property": prop, "bounds": list(required),
                                 "id": item.id}, item.error)
            for k, (item, prop) in enumerate((item, prop) for item in strategies for prop in properties)]
