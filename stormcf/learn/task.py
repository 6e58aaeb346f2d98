"""``learn`` as an analysis (:mod:`stormcf.analysis`): the event log is what is shared (:class:`LogFile`); the one
item is the log itself (``None``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..analysis import Analysis, problem_fields, problem_settings
from ..run import Run
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


#: the fields of :class:`LearnProblem` after ``log``
LearnSettings = problem_settings("LearnSettings", LearnProblem, item="log")


class ModelLearning(Analysis):
    """An MDP and the users' strategy learned from an event log (IOAlergia), built and checked by Storm."""

    command = "learn"
    Settings = LearnSettings
    columns = {"states": lambda r: r.model.n_states}

    def problem(self, log: EventLog, data: Any, where: str | None) -> LearnProblem:
        return LearnProblem(log, **problem_fields(self.settings, LearnProblem))

    def solve(self, problem: LearnProblem, run: Run) -> LearnResult:
        return learn_mdp(problem, run=run)
