"""stormcf: counterfactual explanations for MDPs on top of the Storm probabilistic model checker."""
from .counterfactual import CounterfactualProblem, CounterfactualResult, solve_counterfactual
from .counterfactual_mdp import CounterfactualMDP
from .distance import StrategyDistance, state_changes, strategy_distance
from .errors import (ConstantsError, ModelError, OptionError, PathError, PropertyError, SolverError, StateError,
                     StormcfError, StrategyError, VerificationFailure)
from .examples import example_path
from .explain import ExplanationProblem, explain_path
from .icfmdp import ICFMDPProblem, interval_cfmdp, robust_value_iteration, solve_icfmdp
from .model import ExplicitModel, RewardModel
from .modes import Maximize, Minimize, Nature, Optimistic, Optimization, Pessimistic
from .paths import ObservedPath
from .properties import Property
from .reachability import can_reach, optimal_strategy, prob01_states, reach_probability, reachable_states, state_graph
from .recourse import RecourseProblem, solve_recourse
from .report import Report
from .setcover import SetCoverProblem, solve_setcover
from .storm import load_model, parse_property
from .strategy import Strategy
from .verify import Check, check_model, check_strategy, induced_dtmc

__version__ = "0.2.0"

__all__ = ["Check", "ConstantsError", "CounterfactualMDP", "CounterfactualProblem", "CounterfactualResult",
           "ExplanationProblem", "ExplicitModel", "ICFMDPProblem", "Maximize", "Minimize", "ModelError", "Nature",
           "ObservedPath", "Optimistic", "Optimization", "OptionError", "PathError", "Pessimistic", "Property",
           "PropertyError", "RecourseProblem", "Report", "RewardModel", "SetCoverProblem", "SolverError", "StateError", "StormcfError", "Strategy",
           "StrategyDistance", "StrategyError", "VerificationFailure", "can_reach", "check_model", "check_strategy",
           "example_path", "explain_path", "induced_dtmc", "interval_cfmdp", "load_model", "optimal_strategy",
           "parse_property", "prob01_states", "reach_probability", "reachable_states", "robust_value_iteration",
           "solve_counterfactual", "solve_icfmdp", "solve_recourse", "solve_setcover", "state_changes", "state_graph", "strategy_distance"]
