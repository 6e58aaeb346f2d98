"""Properties: parsed by Storm, turned into stormcf's :class:`~stormcf.properties.Property`.

Every property is evaluated on the whole model as Storm built it (as ``stormcf info`` shows it): PRISM expressions
in properties (``F s1=12``) become labels of the bridge's copy of the model, evaluated by Storm in every state
(:mod:`.expressions`), never by rebuilding the model for the property.
"""
from __future__ import annotations

import dataclasses
import re
from fractions import Fraction
from typing import Iterable

import numpy as np
import stormpy
from stormpy.developer import storage as _storage

from ..errors import PropertyError
from ..model import ExplicitModel
from ..properties import FILTER_KINDS, Property, PropertyFilter, split_name
from .build import handle_of
from .expressions import constant_values, evaluate, expression_labels, missing_label, parse_expression
from .handle import StormHandle, bitvector_mask, labelled_model, storm_message
from .precheck import check_property_text

_OPERATORS = {"ProbabilityOperatorFormula": "P", "RewardOperatorFormula": "R", "TimeOperatorFormula": "T",
              "LongRunAverageOperatorFormula": "LRA", "MultiObjectiveFormula": "multi"}
_PATHS = {"EventuallyFormula": "eventually", "UntilFormula": "until", "BoundedUntilFormula": "bounded_until",
          "GloballyFormula": "globally", "CumulativeRewardFormula": "cumulative",
          "InstantaneousRewardFormula": "instantaneous", "LongRunAverageRewardFormula": "long_run_average",
          "DiscountedTotalRewardFormula": "discounted", "DiscountedCumulativeRewardFormula": "discounted",
          "ConditionalFormula": "conditional"}
_REWARD_BOUND = re.compile(r'rew\{"([^"]*)"\}')
#: how Storm describes its filter types when it prints a property (``Obtain the maximum of the 'true'-states ...``)
_FILTER_PHRASES = {"the maximum": "max", "the minimum": "min", "the minumum": "min", "the sum": "sum",
                   "the average": "avg", "the number of": "count", "whether there exists a state in": "exists",
                   "whether for all states in": "forall", "the argmax": "argmax", "the argmin": "argmin",
                   "the values": "values"}


def parse_storm_properties(description, properties: Iterable[str]) -> list:
    props = []
    constants = constant_values(description)
    for text in properties:
        check_property_text(text, constants)          # what would crash Storm: deep nesting, division by zero
        try:
            parsed = (stormpy.parse_properties(text, description) if description is not None
                      else stormpy.parse_properties(text))
        except Exception as err:
            raise PropertyError(f"cannot parse property '{text}': {storm_message(err)}") from None
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
    """The quoted label names of a formula (reward model names ``R{"name"}``, ``rew{"name"}`` are not labels)."""
    return re.findall(r'"([^"]*)"', re.sub(r'\{"[^"]*"\}', "", formula))


# ================================================================================================== properties
def parse_property(model: ExplicitModel, text: str, filters: bool = False) -> Property:
    """Parse a property against the model's program (so PRISM constants and expressions work) and evaluate its
    state formulas on the whole model. A name (``"ok": P=? [...]``) is kept in :attr:`Property.name`; a filter
    (``filter(max, φ, states)``) is accepted with ``filters=True`` only (analyses need the value at the initial
    state; ``stormcf check`` answers filters).

    Raises :class:`PropertyError` for syntax errors, unknown labels, unknown reward models and expressions over
    names that are not state variables.
    """
    handle = handle_of(model)
    storm_property = parse_storm_properties(handle.description, [text])
    if len(storm_property) != 1:
        raise PropertyError(f"expected one property, got {len(storm_property)} in '{text}'")
    storm_property = storm_property[0]
    formula = storm_property.get_raw_formula()
    printed = str(formula)
    _check_names(model, printed)
    labels, probes = expression_labels(formula, model.valuations, model.n_states)
    for probe in probes:
        labels = _probe_labels(model, handle, probe, labels)
    prop = _property(model, handle, formula, printed, labels, storm_property)
    found = _filter(storm_property)
    if found is not None:
        kind, states = found
        if not filters:
            raise PropertyError(f"filter({kind}, {printed}, {states}): a filter aggregates the property over a set "
                                f"of states; this analysis needs the property's value at the initial state (only "
                                f"'stormcf check' answers filters)")
        prop = _filtered(model, handle, prop, kind, states)
    name, written = split_name(text)
    return dataclasses.replace(prop, name=name, written=written)


def _filter(storm_property) -> tuple[str, str] | None:
    """Storm's filter of a parsed property, read from how Storm prints it (stormpy has no accessor): the filter type
    and the states formula as Storm prints it; None for Storm's default filter (the values at the initial states)."""
    text = str(storm_property)
    head = f"({storm_property.get_name()}): Obtain "
    tail = f"'-states with values described by '{storm_property.get_raw_formula()}'"
    phrase, _, states = text.removeprefix(head).removesuffix(tail).partition(" of the '")
    if not (text.startswith(head) and text.endswith(tail)) or phrase not in _FILTER_PHRASES:
        raise PropertyError(f"cannot read Storm's filter of the property {text}")
    kind = _FILTER_PHRASES[phrase]
    return None if kind == "values" and states == '"init"' else (kind, states)


def _filtered(model: ExplicitModel, handle: StormHandle, prop: Property, kind: str, states: str) -> Property:
    """``prop`` with Storm's filter ``kind`` over the states where the state formula ``states`` holds."""
    text = f"filter({kind}, {prop.text}, {states})"
    if FILTER_KINDS[kind] == "states":
        raise PropertyError(f"{text}: Storm does not output states (argmin/argmax filters); "
                            f"filter(values, ...) gives the value of every state of a set")
    if prop.operator in ("multi", "quantile") or prop.initial_state_only:
        raise PropertyError(f"{text}: Storm answers {prop.text} for the initial state only; it cannot be "
                            f"filtered over other states")
    formula = parse_storm_properties(handle.description, [states])[0].get_raw_formula()
    labels, probes = expression_labels(formula, model.valuations, model.n_states)
    labels = {**prop.labels, **labels}
    for probe in probes:
        labels = _probe_labels(model, handle, probe, labels)
    mask = _state_formula_mask(handle, formula, text, labels)
    return dataclasses.replace(prop, text=text, labels=labels, filter=PropertyFilter(kind, states, mask, formula))


def _probe_labels(model: ExplicitModel, handle: StormHandle, formula, labels: dict) -> dict:
    """The expression labels of a state formula whose parts stormpy hides (``"a" & s=3``, ``P=? [X s=3]``): check
    it and add each expression Storm reports as an unknown label (Storm names the label as it prints the
    expression), until Storm has them all. Other errors are left to the real check."""
    labels = dict(labels)
    while True:
        try:
            stormpy.model_checking(labelled_model(handle, labels), formula, only_initial_states=True)
            return labels
        except Exception as err:
            name = missing_label(storm_message(err))
            if name is None or name in labels or handle.description is None:
                return labels
            labels[name] = evaluate(parse_expression(handle.description, name), model.valuations, model.n_states)


def _property(model: ExplicitModel, handle: StormHandle, formula, printed: str, labels: dict,
              storm_property) -> Property:
    kind = type(formula).__name__
    operator = "quantile" if printed.startswith("quantile(") else _OPERATORS.get(kind)
    if operator is None:
        if kind == "GameFormula":
            raise PropertyError(f"{printed}: game formulas are for stochastic games, which stormcf does not support")
        return Property(printed, None, None, None, None, "state", labels=labels,
                        target=_state_formula_mask(handle, formula, printed, labels), storm=storm_property)
    if operator == "quantile":      # quantile(max A, φ): Storm answers it for the initial state
        return Property(printed, "quantile", None, None, None, "quantile", labels=labels,
                        reward_bounds=tuple(_REWARD_BOUND.findall(printed)), storm=storm_property)
    if operator == "multi":
        objectives = tuple(_property(model, handle, sub, str(sub), labels, None) for sub in formula.subformulas)
        return Property(printed, "multi", None, None, None, "multi", labels=labels, objectives=objectives,
                        reward_bounds=tuple(sorted({b for o in objectives for b in o.reward_bounds})),
                        storm=storm_property)
    comparison = threshold = optimization = reward_model = None
    if formula.has_bound:
        comparison = {"LESS": "<", "LEQ": "<=", "GREATER": ">", "GEQ": ">="}[formula.comparison_type.name]
        threshold = _threshold(formula, operator, printed)
    if formula.has_optimality_type:
        optimization = "min" if formula.optimality_type.name == "MINIMIZE" else "max"
    if operator == "R":
        reward_model = formula.reward_name if formula.has_reward_model_name() else model.reward_model(None).name
    sub = formula.subformula
    if operator == "LRA":      # LRA=? [φ] (S=? [φ]): the long-run fraction of time spent in φ
        path, constraint, steps = "long_run_average", None, None
        target = _state_formula_mask(handle, sub, printed, labels)
    else:
        path, target, constraint, steps = _path_formula(handle, sub, printed, labels)
    return Property(printed, operator, optimization, comparison, threshold, path, target=target,
                    constraint=constraint, step_bound=steps, reward_model=reward_model, labels=labels,
                    reward_bounds=tuple(_REWARD_BOUND.findall(str(sub))), storm=storm_property)


def _threshold(formula, operator: str, printed: str) -> Fraction:
    """A bound's threshold as Storm reads it: its expression evaluated as an exact rational (``1/5`` is 1/5;
    stormpy's ``formula.threshold`` evaluates it as an integer division, 0). A probability bound must lie in
    [0, 1]: outside it the property holds or fails for every strategy, which is refused as a likely typo."""
    threshold = Fraction(str(formula.threshold_expr.evaluate_as_rational()))
    if operator == "P" and not 0 <= threshold <= 1:
        raise PropertyError(f"{printed}: the probability bound {threshold} is outside [0, 1] (it would hold, or "
                            f"fail, whatever the model does)")
    return threshold


def _check_names(model: ExplicitModel, printed: str) -> None:
    for name in re.findall(r'(?:R|rew)\{"([^"]*)"\}', printed):
        model.reward_model(name)                                     # raises PropertyError if unknown
    for name in _quoted_labels(printed):
        model.label(name)                                            # raises PropertyError if unknown


def _path_formula(handle: StormHandle, sub, printed: str, labels: dict):
    kind = _PATHS.get(type(sub).__name__)
    if kind is None:                        # pybind gives Next and total-reward formulas only the base class
        text = str(sub)
        return {"C": "total"}.get(text, "next" if text.startswith("X ") else "other"), None, None, None
    if kind == "conditional":
        return kind, None, None, None
    if kind == "eventually":
        return kind, _state_formula_mask(handle, sub.subformula, printed, labels), None, None
    if kind in ("until", "bounded_until"):
        target = _state_formula_mask(handle, sub.right_subformula, printed, labels)
        constraint = _state_formula_mask(handle, sub.left_subformula, printed, labels)
        if kind == "until":
            return kind, target, constraint, None
        if _REWARD_BOUND.search(str(sub)):
            return "reward_bounded_until", target, constraint, None
        steps = None
        if not sub.has_lower_bound and sub.upper_bound_expression.has_integer_type():
            steps = sub.upper_bound_expression.evaluate_as_int()
        return kind, target, constraint, steps
    return kind, None, None, None


def _state_formula_mask(handle: StormHandle, formula, printed: str, labels: dict) -> np.ndarray:
    try:
        result = stormpy.model_checking(labelled_model(handle, labels), formula)
    except Exception as err:
        raise PropertyError(f"property {printed}: {storm_message(err)}") from None
    return bitvector_mask(result.get_truth_values_vector(), handle.model.nr_states)
