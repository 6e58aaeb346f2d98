"""``check`` as an analysis (:mod:`stormcf.analysis`): one item is a strategy (the JSON of a strategy file) under
which every property is checked; the item ``None`` checks the model itself."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Sequence

from ..analysis import Analysis
from ..model import ExplicitModel
from ..properties import split_name
from ..run import Run
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
    items = "strategy"

    @property
    def columns(self) -> dict[str, Callable[[PropertyChecks], str]]:   # type: ignore[override]  # per property
        """One column per property, headed by its name (``"name": ...``) or its text."""
        columns: dict[str, Callable[[PropertyChecks], str]] = {}
        for k, text in enumerate(self.settings.properties):
            name, written = split_name(text)
            heading = name or written
            if heading in columns:
                heading = f"{heading} (#{k + 1})"
            columns[heading] = partial(_result_cell, k)
        return columns

    def problem(self, model: ExplicitModel, data: Any, where: str | None) -> CheckProblem:
        strategy = None if data is None else Strategy.from_dict(model, data, where or "strategy")
        return CheckProblem(model, strategy, where)

    def solve(self, problem: CheckProblem, run: Run) -> PropertyChecks:
        return check_properties(problem.model, self.settings.properties, problem.strategy, self.settings.exact,
                                problem.source)


def _result_cell(k: int, result: PropertyChecks) -> str:
    """The k-th property's answer: the value (and the verdict of a bound: holds, violated or undecided), whether a
    multi-objective query is achievable or its Pareto points, or the number of states of a values filter."""
    r = result.payload()["results"][k]
    if "states" in r and "values" in r:
        return f"{len(r['states'])} states"
    if r.get("kind") == "pareto":
        return f"{len(r['points'])} points"
    if r.get("kind") == "achievability":
        return "achievable" if r["holds"] else "not achievable"
    value = r.get("value")
    text = f"{value:.6g}" if isinstance(value, float) else str(value)
    if r.get("holds") is None:
        return f"{text} (undecided)" if r.get("undecided") else text
    return f"{text} ({'holds' if r['holds'] else 'violated'})"
