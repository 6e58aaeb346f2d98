"""``setcover`` as an analysis (:mod:`stormcf.analysis`): one item is an agent, ``[0, 0, 1, ...]`` or
``{"agent": [...], "group": "g"}``, of the set-cover instance the items share (:class:`InstanceFile`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..analysis import Analysis
from ..batch.run import FilePin
from ..errors import StateError
from ..run import Run
from .data import load_instance
from .engines import DEFAULT_METHOD
from .problem import SetCoverInstance, SetCoverProblem
from .result import SetCoverResult
from .solve import solve_setcover, solve_setcovers


@dataclass(frozen=True)
class InstanceFile:
    """A set-cover instance file (JSON, or a labelled data set ``.npz``): what a batch worker loads once (the file
    pinned by :class:`~stormcf.batch.run.FilePin` where the batch starts)."""

    path: str
    pin: FilePin | None = None

    def __post_init__(self) -> None:
        if self.pin is None:
            object.__setattr__(self, "pin", FilePin.of(self.path))

    def load(self) -> SetCoverInstance:
        return load_instance(self.pin.readable(self.path))


@dataclass(frozen=True)
class SetCoverSettings:
    """The engine, the group of agents whose item names none, and the solver of the programmes (the ``milp``
    engine's, the LP bound of a greedy answer; :data:`stormcf.solvers.SOLVERS`)."""

    method: str = DEFAULT_METHOD
    group: str | None = None
    solver: str = "auto"


class SetCoverExplanation(Analysis):
    """The cheapest set of actions that turns an agent positive (seed 003), checked by Storm."""

    command = "setcover"
    Settings = SetCoverSettings
    columns = {"cost": lambda r: r.cost, "actions": lambda r: ",".join(r.problem.instance.names(r.actions)) or "-"}
    batched = True              # the agents of a chunk are certified together: one Storm call for their optima
    items = "agent"

    def problem(self, instance: SetCoverInstance, data: Any, where: str | None) -> SetCoverProblem:
        group = self.settings.group
        if isinstance(data, Mapping):
            if "agent" not in data:
                raise StateError(f'{where}: expected an agent [0, 1, ...] or {{"agent": [...], "group": "g"}}')
            data, group = data["agent"], data.get("group", group)
        return SetCoverProblem(instance, instance.agent(data, where), group)

    def solve(self, problem: SetCoverProblem, run: Run) -> SetCoverResult:
        return solve_setcover(problem, self.settings.method, solver=self.settings.solver, run=run)

    def solve_many(self, problems: Sequence[SetCoverProblem], run: Run) -> list:
        return solve_setcovers(problems, self.settings.method, solver=self.settings.solver, run=run)
