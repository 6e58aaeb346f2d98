"""The Storm bridge: the only package of stormcf that imports stormpy (2.0).

What crosses the bridge, one module per Storm concern:

- :mod:`.load`: PRISM / JANI / DRN files with constants are parsed and built by Storm, the whole model once (all
  labels, reward models, state valuations, action names), whatever properties are checked later;
- :mod:`.facts`: what ``stormcf info`` prints, read straight from the built model (no explicit model, no numpy);
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

from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy): ``info`` loads no numpy
    **dict.fromkeys(["exact_state_rewards", "exact_transition_values", "expected_choice_rewards_exact",
                     "interval_mdp", "storm_model_of"], ".build"),
    **dict.fromkeys(["INTERVAL_VALUE_ITERATION", "LRA_PRECISION", "PRECISION", "PRECISIONS", "CheckResult",
                     "FilterResult", "SchedulerChoices", "check", "check_dtmc", "check_exact", "check_interval_mdp",
                     "exact_optimal_choices", "optimal_choices", "prob01_states", "reach_values"], ".check"),
    **dict.fromkeys(["model_facts"], ".facts"),
    **dict.fromkeys(["parse_property"], ".formulas"),
    **dict.fromkeys(["isolated"], ".isolate"),
    **dict.fromkeys(["load_model", "load_timings", "storm_version", "stormpy_example", "variable_bounds"], ".load"),
    **dict.fromkeys(["MultiObjectiveResult", "check_multiobjective", "pareto_points"], ".multiobjective"),
    **dict.fromkeys(["ParametricBuild", "ParametricModel", "RegionChecker", "SolutionFunction", "exact_text",
                     "load_parametric"], ".parametric"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

_stormpy.developer.set_log_level(_stormpy.developer.LogLevel.OFF)   # Storm's own log lines would pollute stdout

__all__ = ["INTERVAL_VALUE_ITERATION", "LRA_PRECISION", "PRECISION", "PRECISIONS", "CheckResult", "FilterResult",
           "MultiObjectiveResult", "ParametricBuild", "ParametricModel", "RegionChecker", "SchedulerChoices",
           "SolutionFunction", "check", "check_dtmc", "check_exact", "check_interval_mdp", "check_multiobjective",
           "exact_optimal_choices", "exact_state_rewards", "exact_text", "exact_transition_values",
           "expected_choice_rewards_exact", "interval_mdp", "isolated", "load_model", "load_parametric",
           "load_timings", "model_facts", "optimal_choices", "parse_property", "pareto_points", "prob01_states",
           "reach_values", "storm_model_of", "storm_version", "stormpy_example", "variable_bounds"]
