"""Counterfactual strategies for MDPs (seed 000, Kobialka et al.): the smallest change to a strategy that makes it
meet the bounds a process owner asks (the probability of a bad outcome, of a good one through safeguards, an expected
cost or revenue, several at once), exact where possible, certified by Storm.

    problem = CounterfactualProblem(sigma, 'P<=0.2 [F "rejected"]', weights="1,1,1")
    problem = CounterfactualProblem(sigma, bounds=['P<=0.2 [F "rejected"]', 'R{"steps"}<=3 [F "granted" | "rejected"]'])
    result = solve_counterfactual(problem, solver="auto", time_limit=600)
    print(result)                 # the paper's explanation, distances, status, solver, Storm's checks
    result.to_dict()              # JSON (stormcf.report)

Modules: :mod:`bounds` (what each bound means), :mod:`problem` (validated input), :mod:`preanalysis` (Storm
pre-analysis and pruning), :mod:`bellman` and :mod:`robust` (policy evaluation, exact d∞), :mod:`greedy` (d0
heuristics), :mod:`programs` (d0 MILP, MIQCQP, the paper's direct encoding), :mod:`stages` (the stages; their
Gurobi, SCIP and HiGHS back ends are :mod:`stormcf.solvers`), :mod:`descent` (sequential linear programming: the
primal method of d1 and the repair of rejected solutions), :mod:`certify` (candidates, proven bounds, status),
:mod:`solve` (the pipeline), :mod:`diverse`, :mod:`result`, :mod:`dot`. The distances are the norms of
:mod:`stormcf.distance`.
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["Weights"], "..distance"),
    **dict.fromkeys(["LicenceLimitError"], "..solvers"),
    **dict.fromkeys(["Bound", "parse_bound"], ".bounds"),
    **dict.fromkeys(["to_dot"], ".dot"),
    **dict.fromkeys(["CounterfactualProblem"], ".problem"),
    **dict.fromkeys(["CounterfactualResult"], ".result"),
    **dict.fromkeys(["diverse_counterfactuals", "solve_counterfactual"], ".solve"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Bound", "CounterfactualProblem", "CounterfactualResult", "LicenceLimitError", "Weights",
           "diverse_counterfactuals", "parse_bound", "solve_counterfactual", "to_dot"]
