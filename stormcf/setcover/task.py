"""``setcover`` as an analysis (:mod:`stormcf.analysis`): one item is an agent, ``[0, 0, 1, ...]`` or
``{"agent": [...], "group": "g"}``, of the set-cover instance the items share (:class:`InstanceFile`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..analysis import Analysis
from ..deadline import Deadline
from ..errors import StateError
from ..items import FilePin
from .data import load_instance
from .engines import DEFAULT_METHOD
from .problem import SetCoverInstance, SetCoverProblem
from .result import SetCoverResult
from .solve import solve_setcover, solve_setcovers


@dataclass(frozen=True)
class InstanceFile:
    """A set-cover instance file (JSON, or a labelled data set ``.npz``): what a batch worker loads once (the file
    pinned by :class:`~stormcf.items.FilePin` where the batch starts)."""

    path: str
    pin: FilePin | None = None

    def __post_init__(self) -> None:
        if self.pin is None:
            object.__setattr__(self, "pin", FilePin.of(self.path))

    def load(self) -> SetCoverInstance:
        return load_instance(self.pin.readable(self.path))


@dataclass(frozen=True)
class SetCoverSettings:
    """The engine, and the group of agents whose item names none."""

    method: str = DEFAULT_METHOD
    group: str | None = None


class SetCoverExplanation(Analysis):
    """The cheapest set of actions that turns an agent positive (seed 003), checked by Storm."""

    command = "setcover"
    Settings = SetCoverSettings
    columns = {"cost": lambda r: r.cost, "actions": lambda r: ",".join(r.problem.instance.names(r.actions)) or "-"}
    batched = True              # the agents of a chunk are certified together: one Storm call for their optima

    def problem(self, instance: SetCoverInstance, data: Any, where: str | None) -> SetCoverProblem:
        group = self.settings.group
        if isinstance(data, Mapping):
            if "agent" not in data:
                raise StateError(f'{where}: expected an agent [0, 1, ...] or {{"agent": [...], "group": "g"}}')
            data, group = data["agent"], data.get("group", group)
        return SetCoverProblem(instance, instance.agent(data, where), group)

    def solve(self, problem: SetCoverProblem, deadline: Deadline) -> SetCoverResult:
        return solve_setcover(problem, self.settings.method, deadline=deadline)

    def solve_many(self, problems: Sequence[SetCoverProblem], deadline: Deadline) -> list:
        return solve_setcovers(problems, self.settings.method, deadline=deadline)
