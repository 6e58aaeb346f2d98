"""Set-cover counterfactual explanations and learned generators (seed 003: Naggita, Walter, Blum).

- problem: :class:`SetCoverInstance` (instance files), :class:`SetCoverProblem` (one agent);
- solve: :func:`solve_setcover` with the engines ``bnb`` (default), ``dp``, ``milp``, ``storm``, ``bruteforce`` and
  ``greedy``, re-checked by Storm -> :class:`SetCoverResult`;
- family: :func:`label_agents` (one Storm call labels every agent of a family);
"""
from .engines import DEFAULT_METHOD, EXACT, METHODS, EngineSolution, lp_bound, run_engine
from .problem import InstanceError, SetCoverInstance, SetCoverProblem
from .result import SetCoverResult
from .solve import solve_setcover

__all__ = ["DEFAULT_METHOD", "EXACT", "METHODS", "EngineSolution", "InstanceError", "SetCoverInstance",
           "SetCoverProblem", "SetCoverResult", "lp_bound", "run_engine", "solve_setcover"]
