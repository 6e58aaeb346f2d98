"""``check`` as an analysis (:mod:`stormcf.analysis`): one item is a strategy (the JSON of a strategy file) under
which every property is checked; the item ``None`` checks the model itself."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..analysis import Analysis
from ..deadline import Deadline
from ..model import ExplicitModel
from ..strategy import Strategy
from . import PropertyChecks, check_properties


@dataclass(frozen=True)
class CheckSettings:
    """The properties to check (each item is checked against all of them) and whether in exact arithmetic."""

    properties: Sequence[str] = ()
    exact: bool = False


@dataclass(frozen=True)
class CheckProblem:
    """Properties under one strategy (``None``: on the model itself)."""

    model: ExplicitModel
    strategy: Strategy | None
    source: str | None


class PropertyCheck(Analysis):
    """Storm's values of properties on the DTMC a strategy induces (or on the model)."""

    command = "check"
    Settings = CheckSettings
    columns = {"values": lambda r: "; ".join(_value(x) for x in r.results)}

    def problem(self, model: ExplicitModel, data: Any, where: str | None) -> CheckProblem:
        return CheckProblem(model, None if data is None else Strategy.from_dict(model, data, where), where)

    def solve(self, problem: CheckProblem, deadline: Deadline) -> PropertyChecks:
        return check_properties(problem.model, self.settings.properties, problem.strategy, self.settings.exact,
                                problem.source)


def _value(result: Any) -> str:
    value = getattr(result, "value", None)
    return f"{value:.6g}" if isinstance(value, float) else str(value)
