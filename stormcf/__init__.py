"""stormcf: counterfactual explanations for MDPs on top of the Storm probabilistic model checker."""
from .counterfactual import CounterfactualProblem, CounterfactualResult, solve_counterfactual
from .distance import StrategyDistance, state_changes, strategy_distance
from .errors import (ConstantsError, ModelError, PathError, PropertyError, SolverError, StateError, StormcfError,
                     StrategyError)
from .examples import example_path
from .explain import ExplanationProblem, explain_path
from .icfmdp import IntervalCFMDP, interval_cfmdp, robust_value_iteration
from .model import ExplicitModel, RewardModel
from .paths import ObservedPath
from .properties import Property
from .reachability import (can_reach, optimal_strategy, prob01_states, reach_probability, reachable_states,
                           state_graph)
from .storm import load_model, parse_property
from .strategy import Strategy
from .verify import Check, check_model, check_strategy, induced_dtmc

__version__ = "0.2.0"
