"""Counterfactual strategies for MDPs (seed 000, Kobialka et al.): the smallest change to a strategy that brings
the probability of a bad outcome under a bound, exact where possible, certified by Storm.

    problem = CounterfactualProblem(sigma, 'P<=0.2 [F "rejected"]', weights="1,1,1")
    result = solve_counterfactual(problem, solver="auto", time_limit=600)
    print(result)                 # the paper's explanation, distances, status, solver, Storm's check
    result.to_dict()              # JSON (stormcf.report)

Modules: :mod:`problem` (validated input), :mod:`analysis` (Storm pre-analysis and pruning), :mod:`bellman` and
:mod:`robust` (policy evaluation, exact d∞), :mod:`greedy` (d0 heuristics), :mod:`programs` (d0 MILP, MIQCQP,
the paper's direct encoding), :mod:`stages` (the stages; their Gurobi, SCIP and HiGHS back ends are
:mod:`stormcf.solvers`), :mod:`certify` (candidates, proven bounds, status), :mod:`solve` (the pipeline),
:mod:`diverse`, :mod:`result`, :mod:`dot`.
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["LicenceLimitError"], "..solvers"),
    **dict.fromkeys(["to_dot"], ".dot"),
    **dict.fromkeys(["CounterfactualProblem", "Weights"], ".problem"),
    **dict.fromkeys(["CounterfactualResult"], ".result"),
    **dict.fromkeys(["diverse_counterfactuals", "solve_counterfactual"], ".solve"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["CounterfactualProblem", "CounterfactualResult", "LicenceLimitError", "Weights", "diverse_counterfactuals",
           "solve_counterfactual", "to_dot"]
