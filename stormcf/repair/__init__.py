"""Counterfactual models (issue 33): the closest change of a parametric PRISM model's uncertain probabilities that
makes it meet its bounds, with Storm's proof that nothing closer does.

    model = load_parametric("brp.pm")                     # its undefined double constants are the parameters
    problem = RepairProblem(model, ['P<=0.01 [F "error"]'], nominal="pL=0.8,pK=0.9", norm="l2")
    result = solve_repair(problem, time_limit=60)
    print(result)             # what to change and by how much, Storm's values before and after, the proof
    result.to_dict()          # JSON (stormcf.report)

Modules: :mod:`problem` (the validated question: parameters, nominal valuation, region, engine), :mod:`geometry`
(valuations, boxes, weighted norms), :mod:`search` (the branch and bound with Storm's parameter lifting; the local
method for many parameters), :mod:`solve` (the pipeline and Storm's re-checks), :mod:`result`, :mod:`plots`,
:mod:`task` (the analysis). The parametric engine is reached through :mod:`stormcf.storm.parametric`.
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["ParametricModel", "load_parametric"], "..storm.parametric"),
    **dict.fromkeys(["Box", "Distance"], ".geometry"),
    **dict.fromkeys(["RepairProblem"], ".problem"),
    **dict.fromkeys(["RepairResult", "Sensitivity"], ".result"),
    **dict.fromkeys(["solve_repair"], ".solve"),
    **dict.fromkeys(["ModelRepair", "ParametricFile"], ".task"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Box", "Distance", "ModelRepair", "ParametricFile", "ParametricModel", "RepairProblem", "RepairResult",
           "Sensitivity", "load_parametric", "solve_repair"]
