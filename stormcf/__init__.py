"""stormcf: counterfactual explanations for MDPs on top of the Storm probabilistic model checker.

The public names below are imported from their modules on first use (:mod:`stormcf._lazy`), so that importing one
part of stormcf (the command line, one analysis) does not import every analysis with its solvers and libraries."""
from ._lazy import lazy_exports

__version__ = "0.2.0"

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["CounterfactualProblem", "CounterfactualResult", "solve_counterfactual"], ".counterfactual"),
    **dict.fromkeys(["CounterfactualMDP"], ".counterfactual_mdp"),
    **dict.fromkeys(["StrategyDistance", "state_changes", "strategy_distance"], ".distance"),
    **dict.fromkeys(["ConstantsError", "ModelError", "OptionError", "PathError", "PropertyError", "SolverError",
        "StateError", "StormcfError", "StrategyError", "VerificationFailure"], ".errors"),
    **dict.fromkeys(["example_path"], ".examples"),
    **dict.fromkeys(["ExplanationProblem", "explain_path"], ".explain"),
    **dict.fromkeys(["ICFMDPProblem", "interval_cfmdp", "robust_value_iteration", "solve_icfmdp"], ".icfmdp"),
    **dict.fromkeys(["ExplicitModel", "RewardModel"], ".model"),
    **dict.fromkeys(["Maximize", "Minimize", "Nature", "Optimistic", "Optimization", "Pessimistic"], ".modes"),
    **dict.fromkeys(["ObservedPath"], ".paths"),
    **dict.fromkeys(["Property"], ".properties"),
    **dict.fromkeys(["can_reach", "optimal_strategy", "prob01_states", "reach_probability", "reachable_states",
        "state_graph"], ".reachability"),
    **dict.fromkeys(["RecourseProblem", "solve_recourse"], ".recourse"),
    **dict.fromkeys(["Report"], ".report"),
    **dict.fromkeys(["SetCoverProblem", "solve_setcover"], ".setcover"),
    **dict.fromkeys(["load_model", "parse_property"], ".storm"),
    **dict.fromkeys(["Strategy"], ".strategy"),
    **dict.fromkeys(["Check", "check_model", "check_strategy", "induced_dtmc"], ".verify"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Check", "ConstantsError", "CounterfactualMDP", "CounterfactualProblem", "CounterfactualResult",
           "ExplanationProblem", "ExplicitModel", "ICFMDPProblem", "Maximize", "Minimize", "ModelError", "Nature",
           "ObservedPath", "Optimistic", "Optimization", "OptionError", "PathError", "Pessimistic", "Property",
           "PropertyError", "RecourseProblem", "Report", "RewardModel", "SetCoverProblem", "SolverError", "StateError",
           "StormcfError", "Strategy", "StrategyDistance", "StrategyError", "VerificationFailure", "can_reach",
           "check_model", "check_strategy", "example_path", "explain_path", "induced_dtmc", "interval_cfmdp",
           "load_model", "optimal_strategy", "parse_property", "prob01_states", "reach_probability", "reachable_states",
           "robust_value_iteration", "solve_counterfactual", "solve_icfmdp", "solve_recourse", "solve_setcover",
           "state_changes", "state_graph", "strategy_distance"]
