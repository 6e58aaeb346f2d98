"""``repair`` as an analysis (:mod:`stormcf.analysis`): one item is a nominal valuation with the bounds to meet,
``{"nominal": {"p": 0.3, ...}, "bounds": ["P<=0.01 [F \\"error\\"]", ...]}``, against the parametric model the items
share (:class:`ParametricFile`: the PRISM file with its constants, built by Storm once per set of bounds)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..analysis import Analysis
from ..items import FilePin
from ..errors import ParameterError
from ..run import Run
from ..storm.parametric import ParametricModel, load_parametric
from .problem import TOLERANCE, RepairProblem
from .result import RepairResult
from .solve import TIME_LIMIT, solve_repair


@dataclass(frozen=True)
class ParametricFile:
    """A parametric PRISM file with the constants the user gave: what a batch worker rebuilds the model from (the
    file pinned where the batch starts, :class:`~stormcf.batch.run.FilePin`)."""

    path: str
    constants: str | None = None
    pin: FilePin | None = None

    def __post_init__(self) -> None:
        if self.pin is None:
            object.__setattr__(self, "pin", FilePin.of(self.path))

    def load(self) -> ParametricModel:
        assert self.pin is not None                     # set by __post_init__
        return load_parametric(self.pin.readable(self.path), self.constants, shown_as=self.path)


@dataclass(frozen=True)
class RepairSettings:
    """What every item shares: the region, the distance, a strategy (MDPs), and how to answer: the gap allowed for
    a proven optimum, exact arithmetic (None: on small models)."""

    region: Any = None
    norm: str = "linf"
    scale: str = "none"
    strategy: Any = None
    strategy_source: str | None = None
    tolerance: float = TOLERANCE
    gap: float = 0.0
    exact: bool | None = None


class ModelRepair(Analysis):
    """The closest valuation of a parametric model's parameters that meets every bound, proven for up to three
    parameters, every reported value Storm's."""

    command = "repair"
    Settings = RepairSettings
    items = "nominal valuation with its bounds"
    stoppable = True            # the best valuation Storm confirmed so far
    time_limit = TIME_LIMIT     # the search is anytime
    columns = {"distance": lambda r: r.distance, "lower bound": lambda r: r.lower_bound,
               "valuation": lambda r: _valuation_cell(r)}

    def problem(self, model: ParametricModel, data: Mapping[str, Any], where: str | None) -> RepairProblem:
        if not isinstance(data, Mapping) or "nominal" not in data or not data.get("bounds"):
            raise ParameterError(f'{where}: expected {{"nominal": {{"p": 0.3, ...}}, "bounds": ["P<=0.01 [F ...]", '
                                 f'...]}}')
        bounds = data["bounds"]
        if isinstance(bounds, str) or not all(isinstance(b, str) for b in bounds):
            raise ParameterError(f'{where}: "bounds" must be a list of properties, got {bounds!r}')
        s = self.settings
        return RepairProblem(model, list(bounds), data["nominal"], s.region, s.norm, s.scale, s.strategy,
                             s.strategy_source, exact=bool(s.exact))

    def solve(self, problem: RepairProblem, run: Run) -> RepairResult:
        s = self.settings
        return solve_repair(problem, tolerance=s.tolerance, gap=s.gap, exact=s.exact, run=run)


def _valuation_cell(result: RepairResult) -> str | None:
    if result.answer is None:
        return None
    return ", ".join(f"{n}={float(x):.6g}" for n, x in zip(result.problem.parameters, result.answer.point))
