"""``explain-path`` as an analysis (:mod:`stormcf.analysis`): one item is an observed path (the JSON of a path file)
of the model the items share."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..analysis import Analysis
from ..counterfactual_mdp import ESTIMATORS
from ..deadline import Deadline
from ..model import ExplicitModel
from ..modes import Optimization
from ..paths import ObservedPath
from .problem import ExplanationProblem
from .result import ExplanationResult
from .solve import explain_path


@dataclass(frozen=True)
class ExplanationSettings:
    """The question's parameters every path shares (the fields of :class:`ExplanationProblem` after ``path``) and
    what :func:`explain_path` adds to the answer."""

    reward_model: str | None = None
    k: int = 1
    k_max: int | None = None
    estimator: str = ESTIMATORS[0]
    samples: int = 1000
    seed: int = 0
    pins: Mapping[int, str] = field(default_factory=dict)
    forbidden: frozenset[str] = frozenset()
    optimization: Optimization = Optimization.MAXIMIZE
    explanations: int = 1000
    cross_check: bool = False
    baselines: bool = False


class PathExplanation(Analysis):
    """The at most k changed actions that would most likely have led to a better outcome (seed 001)."""

    command = "explain-path"
    Settings = ExplanationSettings
    columns = {"value": lambda r: r.value, "outcome": lambda r: r.observed_outcome,
               "improvement": lambda r: r.improvement}

    def problem(self, model: ExplicitModel, data: Any, where: str | None) -> ExplanationProblem:
        s = self.settings
        return ExplanationProblem(ObservedPath.from_dict(model, data, where), s.reward_model, s.k, s.k_max,
                                  s.estimator, s.samples, s.seed, s.pins, s.forbidden, s.optimization)

    def solve(self, problem: ExplanationProblem, deadline: Deadline) -> ExplanationResult:
        s = self.settings
        return explain_path(problem, s.explanations, cross_check=s.cross_check, baselines=s.baselines,
                            deadline=deadline)
