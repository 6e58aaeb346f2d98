"""The Storm bridge: the only package of stormcf that imports stormpy (2.0).

What crosses the bridge, one module per Storm concern:

- :mod:`.load`: PRISM / JANI / DRN files with constants are parsed and built by Storm (with state valuations, choice
  labels and all reward models);
- :mod:`.extract`: the built model becomes an :class:`~stormcf.model.ExplicitModel` through Storm's bulk UMB export;
- :mod:`.formulas`: PCTL properties parsed by Storm, as :class:`~stormcf.properties.Property`;
- :mod:`.build`: explicit models (MDPs, DTMCs induced by strategies, interval MDPs) rebuilt in Storm from arrays;
- :mod:`.check`: model checking there, in floating point or in exact rational arithmetic.

Keeping every stormpy call here means a future stormpy change touches one package.
"""
import stormpy as _stormpy

from .build import exact_transition_values, interval_mdp, storm_model_of
from .check import (PRECISION, CheckResult, check, check_dtmc, check_exact, check_interval_mdp, optimal_choices,
                    prob01_states, reach_values)
from .formulas import parse_property
from .load import load_model, storm_version, stormpy_example, variable_bounds

_stormpy.developer.set_log_level(_stormpy.developer.LogLevel.OFF)   # Storm's own log lines would pollute stdout

__all__ = ["PRECISION", "CheckResult", "check", "check_dtmc", "check_exact", "check_interval_mdp",
           "exact_transition_values", "interval_mdp", "load_model", "optimal_choices", "parse_property",
           "prob01_states", "reach_values", "storm_model_of", "storm_version", "stormpy_example", "variable_bounds"]
