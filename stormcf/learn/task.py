"""``learn`` as an analysis (:mod:`stormcf.analysis`): the event log is what is shared (:class:`LogFile`); the one
item is the log itself (``None``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..analysis import Analysis
from ..deadline import Deadline
from .log import EventLog, read_log
from .problem import LearnProblem
from .result import LearnResult
from .solve import learn_mdp


@dataclass(frozen=True)
class LogFile:
    """An event log file and, for the activity form, which activities are actions."""

    path: str
    actions: Sequence[str] | None = None

    def load(self) -> EventLog:
        return read_log(self.path, self.actions)


@dataclass(frozen=True)
class LearnSettings:
    """The fields of :class:`LearnProblem` after ``log``."""

    alpha: float | str = 0.05
    labels: Mapping[str, Sequence[str]] = field(default_factory=dict)
    final_only: frozenset[str] = frozenset()
    rewards: Mapping[str, Mapping[str, float | str]] = field(default_factory=dict)
    laplace: float = 0.0
    learner: str = "stormcf"
    model_path: Path | None = None
    strategy_path: Path | None = None
    drn_path: Path | None = None
    properties: Sequence[str] = ()


class ModelLearning(Analysis):
    """An MDP and the users' strategy learned from an event log (IOAlergia), built and checked by Storm."""

    command = "learn"
    Settings = LearnSettings
    columns = {"states": lambda r: r.model.n_states}

    def problem(self, log: EventLog, data: Any, where: str | None) -> LearnProblem:
        s = self.settings
        return LearnProblem(log, s.alpha, s.labels, s.final_only, s.rewards, s.laplace, s.learner, s.model_path,
                            s.strategy_path, s.drn_path, s.properties)

    def solve(self, problem: LearnProblem, deadline: Deadline) -> LearnResult:
        return learn_mdp(problem, deadline)
