"""PCTL properties: parsed by Storm, turned into stormcf's :class:`~stormcf.properties.Property`."""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Iterable

import numpy as np
import stormpy
from stormpy.developer import storage as _storage

from ..errors import PropertyError
from ..model import ExplicitModel
from ..properties import Property
from .build import _handle_of
from .handle import StormHandle, _mask, _storm_message


def _parse_storm_properties(description, properties: Iterable[str]) -> list:
    props = []
    for text in properties:
        try:
            parsed = (stormpy.parse_properties(text, description) if description is not None
                      else stormpy.parse_properties(text))
        except Exception as err:
            raise PropertyError(f"cannot parse property '{text}': {_storm_message(err)}") from None
        if not parsed:
            raise PropertyError(f"no property in '{text}'")
        if isinstance(description, _storage.PrismProgram):
            known = {label.name for label in description.labels} | {"init", "deadlock"}
            for prop in parsed:
                unknown = sorted(set(_quoted_labels(str(prop.get_raw_formula()))) - known)
                if unknown:
                    raise PropertyError(f"unknown label \"{unknown[0]}\" in property '{text}' "
                                        f"(labels: {', '.join(sorted(known - {'init', 'deadlock'})) or 'none'})")
        props.extend(parsed)
    return props


def _quoted_labels(formula: str) -> list[str]:
    """The quoted label names of a formula (reward model names ``R{"name"}`` are not labels)."""
    return re.findall(r'"([^"]*)"', re.sub(r'\{"[^"]*"\}', "", formula))


# ================================================================================================== properties
def parse_property(model: ExplicitModel, text: str) -> Property:
    """Parse a PCTL property against the model's program (so PRISM constants and expressions work).

    Raises :class:`PropertyError` for syntax errors, unknown labels, unknown reward models, and expressions whose
    label was not built (pass the property to :func:`load_model`).
    """
    handle = _handle_of(model)
    storm_property = _parse_storm_properties(handle.description, [text])
    if len(storm_property) != 1:
        raise PropertyError(f"expected one property, got {len(storm_property)} in '{text}'")
    storm_property = storm_property[0]
    formula = storm_property.get_raw_formula()
    printed = str(formula)
    _check_names(model, printed)
    kind = type(formula).__name__
    operator = {"ProbabilityOperatorFormula": "P", "RewardOperatorFormula": "R",
                "TimeOperatorFormula": "T"}.get(kind)
    if operator is None:
        return Property(printed, None, None, None, None, "state", target=_state_formula_mask(handle, formula, printed),
                        storm=storm_property)
    comparison = threshold = None
    if formula.has_bound:
        comparison = {"LESS": "<", "LEQ": "<=", "GREATER": ">", "GEQ": ">="}[formula.comparison_type.name]
        threshold = Fraction(str(formula.threshold))
    optimization = None
    if formula.has_optimality_type:
        optimization = "min" if formula.optimality_type.name == "MINIMIZE" else "max"
    reward_model = None
    if operator == "R":
        reward_model = formula.reward_name if formula.has_reward_model_name() else model.reward_model(None).name
    sub = formula.subformula
    path, target, constraint, steps = _path_formula(handle, sub, printed)
    return Property(printed, operator, optimization, comparison, threshold, path, target=target,
                    constraint=constraint, step_bound=steps, reward_model=reward_model, storm=storm_property)


def _check_names(model: ExplicitModel, printed: str) -> None:
    for name in re.findall(r'R\{"([^"]*)"\}', printed):
        model.reward_model(name)                                     # raises PropertyError if unknown
    for name in _quoted_labels(printed):
        model.label(name)                                            # raises PropertyError if unknown


def _path_formula(handle: StormHandle, sub, printed: str):
    kind = type(sub).__name__
    if kind == "EventuallyFormula":
        return "eventually", _state_formula_mask(handle, sub.subformula, printed), None, None
    if kind in ("UntilFormula", "BoundedUntilFormula"):
        target = _state_formula_mask(handle, sub.right_subformula, printed)
        constraint = _state_formula_mask(handle, sub.left_subformula, printed)
        if kind == "UntilFormula":
            return "until", target, constraint, None
        steps = None
        if not sub.has_lower_bound:
            try:
                steps = int(str(sub.upper_bound_expression))
            except ValueError:
                steps = None
        return "bounded_until", target, constraint, steps
    return {"GloballyFormula": "globally", "CumulativeRewardFormula": "cumulative",
            "InstantaneousRewardFormula": "instantaneous"}.get(kind, "other"), None, None, None


def _state_formula_mask(handle: StormHandle, formula, printed: str) -> np.ndarray:
    try:
        result = stormpy.model_checking(handle.model, formula)
    except Exception as err:
        message = _storm_message(err)
        if "unknown label" in message:
            raise PropertyError(f"property {printed}: {message}; expressions in properties need a label built with "
                                f"the model: pass the property when loading the model") from None
        raise PropertyError(f"property {printed}: {message}") from None
    return _mask(result.get_truth_values_vector(), handle.model.nr_states)


