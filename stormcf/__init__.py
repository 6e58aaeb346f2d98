"""stormcf: counterfactual explanations for MDPs on top of the Storm probabilistic model checker."""
from .distance import StrategyDistance, state_changes, strategy_distance
from .errors import (ConstantsError, ModelError, PathError, PropertyError, SolverError, StateError, StormcfError,
                     StrategyError)
from .examples import example_path
from .model import ExplicitModel, RewardModel
from .properties import Property
from .reachability import (can_reach, optimal_strategy, prob01_states, reach_probability, reachable_states,
                           state_graph)
from .storm import load_model, parse_property
from .strategy import Strategy
from .verification import Verification, induced_dtmc, verify
from .counterfactual import CounterfactualProblem, CounterfactualResult, solve_counterfactual  # noqa: E402 (needs the above)

__version__ = "0.1.0"
