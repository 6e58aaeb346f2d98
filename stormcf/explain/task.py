"""``explain-path`` as an analysis (:mod:`stormcf.analysis`): one item is an observed path (the JSON of a path file)
of the model the items share."""
from __future__ import annotations

from typing import Any

from ..analysis import Analysis, problem_fields, problem_settings
from ..model import ExplicitModel
from ..paths import ObservedPath
from ..run import Run
from .problem import ExplanationProblem
from .result import ExplanationResult
from .solve import explain_path


#: the fields of :class:`ExplanationProblem` after ``path``, and what :func:`explain_path` adds to the answer
ExplanationSettings = problem_settings("ExplanationSettings", ExplanationProblem, item="path",
                                       extra=[("explanations", int, 1000), ("cross_check", bool, False),
                                              ("baselines", bool, False)])


class PathExplanation(Analysis):
    """The at most k changed actions that would most likely have led to a better outcome (seed 001)."""

    command = "explain-path"
    Settings = ExplanationSettings
    items = "observed path"
    columns = {"value": lambda r: r.value, "outcome": lambda r: r.observed_outcome,
               "improvement": lambda r: r.improvement}

    def problem(self, model: ExplicitModel, data: Any, where: str | None) -> ExplanationProblem:
        path = ObservedPath.from_dict(model, data, where or "path")
        return ExplanationProblem(path, **problem_fields(self.settings, ExplanationProblem))

    def solve(self, problem: ExplanationProblem, run: Run) -> ExplanationResult:
        s = self.settings
        return explain_path(problem, s.explanations, cross_check=s.cross_check, baselines=s.baselines, run=run)
