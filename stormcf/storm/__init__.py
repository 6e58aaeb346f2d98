"""The Storm bridge: the only package of stormcf that imports stormpy (2.0).

What crosses the bridge, one module per Storm concern:

- :mod:`.load`: PRISM / JANI / DRN files with constants are parsed and built by Storm, the whole model once (all
  labels, reward models, state valuations, action names), whatever properties are checked later;
- :mod:`.extract`: the built model becomes an :class:`~stormcf.model.ExplicitModel` through Storm's bulk UMB export;
- :mod:`.formulas`: properties parsed by Storm, as :class:`~stormcf.properties.Property`, evaluated on the whole
  model; :mod:`.expressions`: the PRISM expressions in them, evaluated by Storm in every state;
- :mod:`.rewards`: PRISM transition rewards, which Storm's builder cannot build;
- :mod:`.build`: explicit models (MDPs, DTMCs induced by strategies, interval MDPs) rebuilt in Storm from arrays;
- :mod:`.check`: model checking there, in floating point or in exact rational arithmetic;
- :mod:`.multiobjective`: multi-objective queries (Pareto fronts, achievability, numerical);
- :mod:`.parametric`: parametric models (undefined constants as parameters, built over rational functions), Storm's
  parameter lifting over boxes of valuations, its values and solution functions at valuations.

Keeping every stormpy call here means a future stormpy change touches one package. The Storm model of a loaded
file (:func:`storm_model_of`) is never modified: labels the bridge needs go to its own copy.
"""
import stormpy as _stormpy

from .build import (exact_state_rewards, exact_transition_values, expected_choice_rewards_exact, interval_mdp,
                    storm_model_of)
from .check import (INTERVAL_VALUE_ITERATION, LRA_PRECISION, PRECISION, PRECISIONS, CheckResult, FilterResult,
                    SchedulerChoices, check, check_dtmc, check_exact, check_interval_mdp, exact_optimal_choices,
                    optimal_choices, prob01_states, reach_values)
from .formulas import parse_property
from .isolate import isolated
from .load import load_model, load_timings, storm_version, stormpy_example, variable_bounds
from .multiobjective import MultiObjectiveResult, check_multiobjective, pareto_points
from .parametric import ParametricBuild, ParametricModel, RegionChecker, SolutionFunction, exact_text, load_parametric

_stormpy.developer.set_log_level(_stormpy.developer.LogLevel.OFF)   # Storm's own log lines would pollute stdout

__all__ = ["INTERVAL_VALUE_ITERATION", "LRA_PRECISION", "PRECISION", "PRECISIONS", "CheckResult", "FilterResult",
           "MultiObjectiveResult", "ParametricBuild", "ParametricModel", "RegionChecker", "SchedulerChoices",
           "SolutionFunction", "check", "check_dtmc", "check_exact", "check_interval_mdp", "check_multiobjective",
           "exact_optimal_choices", "exact_state_rewards", "exact_text", "exact_transition_values",
           "expected_choice_rewards_exact", "interval_mdp", "isolated", "load_model", "load_parametric",
           "load_timings", "optimal_choices", "parse_property", "pareto_points", "prob01_states", "reach_values",
           "storm_model_of", "storm_version", "stormpy_example", "variable_bounds"]
