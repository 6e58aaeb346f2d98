"""Counterfactual strategies for MDPs (seed 000, Kobialka et al.): the smallest change to a strategy that brings
the probability of a bad outcome under a bound, exact where possible, verified by Storm.

    problem = CounterfactualProblem(sigma, 'P<=0.2 [F "rejected"]', weights="1,1,1")
    result = solve_counterfactual(problem, solver="auto", time_limit=600)
    print(result)                 # the paper's explanation, distances, status, solver, Storm's check
    result.to_dict()              # JSON

Modules: :mod:`problem` (validated input), :mod:`analysis` (Storm pre-analysis and pruning), :mod:`robust` (exact
d∞), :mod:`programs` (d0 MILP, MIQCQP), :mod:`backends` (Gurobi, SCIP, HiGHS), :mod:`solvers` (one interface),
:mod:`solve` (the pipeline), :mod:`diverse`, :mod:`result`, :mod:`dot` (Graphviz).
"""
from .backends import LicenceLimitError
from .dot import to_dot
from .problem import CounterfactualProblem, Weights
from .result import CounterfactualResult
from .solve import diverse_counterfactuals, solve_counterfactual
from .solvers import D0Milp, DinfBisection, Miqcqp

__all__ = ["CounterfactualProblem", "CounterfactualResult", "D0Milp", "DinfBisection", "LicenceLimitError",
           "Miqcqp", "Weights", "diverse_counterfactuals", "solve_counterfactual", "to_dot"]
