"""Set-cover counterfactual explanations and learned generators (seed 003: Naggita, Walter, Blum).

- problem: :class:`SetCoverInstance` (instance files), :class:`SetCoverProblem` (one agent);
- solve: :func:`solve_setcover` with the engines ``bnb`` (default), ``dp``, ``milp``, ``storm``, ``bruteforce`` and
  ``greedy``, re-checked by Storm -> :class:`SetCoverResult`;
- family: :func:`label_agents` (one Storm call labels every agent of a family);
- generators: :func:`train` (a learned CFE generator on labelled agents) -> :class:`Generator`, :func:`guarantee`
  (a valid repaired prediction and its gap), :func:`evaluate` and :func:`exact_match` (its metrics on agents).
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["DEFAULT_METHOD", "EXACT", "METHODS", "EngineSolution", "lp_bound", "run_engine"], ".engines"),
    **dict.fromkeys(["Generator", "GeneratorError", "TrainingSettings", "augment", "evaluate", "exact_match",
                     "guarantee", "train"], ".generators"),
    **dict.fromkeys(["InstanceError", "SetCoverInstance", "SetCoverProblem"], ".problem"),
    **dict.fromkeys(["SetCoverResult"], ".result"),
    **dict.fromkeys(["solve_setcover"], ".solve"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["DEFAULT_METHOD", "EXACT", "METHODS", "EngineSolution", "Generator", "GeneratorError", "InstanceError",
           "SetCoverInstance", "SetCoverProblem", "SetCoverResult", "TrainingSettings", "augment", "evaluate",
           "exact_match", "guarantee", "lp_bound", "run_engine", "solve_setcover", "train"]
