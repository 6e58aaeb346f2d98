"""``icfmdp`` as an analysis (:mod:`stormcf.analysis`): one item is an observed path (the JSON of a path file) of the
model the items share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis import Analysis
from ..model import ExplicitModel
from ..modes import Optimization
from ..paths import ObservedPath
from ..run import Run
from .problem import ICFMDPProblem, ICFMDPSettings
from .result import ICFMDPResult, policy_changes
from .solve import solve_icfmdp


@dataclass(frozen=True)
class ICFMDPAnalysisSettings:
    """The question's parameters every path shares (reward, optimization, assumptions) and how to answer it."""

    reward: str | None = None
    optimization: Optimization = Optimization.MAXIMIZE
    assumptions: str = "cs+m"
    method: ICFMDPSettings = ICFMDPSettings()


class IntervalCounterfactualMDP(Analysis):
    """The robust counterfactual policy of an observed path over its interval counterfactual MDP (seed 004)."""

    command = "icfmdp"
    Settings = ICFMDPAnalysisSettings
    items = "observed path"
    columns = {"worst case": lambda r: r.worst_case_value, "outcome": lambda r: r.observed_reward,
               "changes at t": lambda r: ",".join(map(str, policy_changes(r.robust))) or "-",
               "pairs": lambda r: r.icfmdp.n_pairs}

    def problem(self, model: ExplicitModel, data: Any, where: str | None) -> ICFMDPProblem:
        s = self.settings
        path = ObservedPath.from_dict(model, data, where or "path")
        return ICFMDPProblem(path, s.reward, s.optimization, s.assumptions)

    def solve(self, problem: ICFMDPProblem, run: Run) -> ICFMDPResult:
        return solve_icfmdp(problem, self.settings.method, run=run)
