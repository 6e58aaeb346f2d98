"""PRISM expressions evaluated by Storm on the states of a built model.

A property such as ``Pmax=? [F s1=12]`` names a state set by an expression. Storm's builder would add a label for
it only when the model is built *for* that property, and then also makes the property's targets terminal, so the
model would depend on the property. Instead, stormcf builds the whole model once and lets Storm evaluate the
expression in every state: the expression is evaluated once per distinct valuation of the variables it reads
(``s1`` has 12 values in wlan's 2,954 states), by substituting the values and asking Storm for the result, so the
semantics are Storm's own (integer division, ``min``, ``mod``, ternaries, ...).
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Mapping

import numpy as np
import stormpy

from ..errors import PropertyError


def atomic_expressions(formula) -> tuple[list, bool]:
    """The PRISM expressions (``AtomicExpressionFormula``) in a Storm formula, in order of appearance, and whether
    the search is complete (stormpy gives some formulas, e.g. ``X φ``, only the base class, hiding their parts)."""
    kind = type(formula).__name__
    if kind == "AtomicExpressionFormula":
        return [formula.get_expression()], True
    if kind == "Formula":
        return [], str(formula) == "C"          # the total reward C has no state formula
    found, complete = [], True
    parts = [getattr(formula, p) for p in ("subformula", "left_subformula", "right_subformula") if hasattr(formula, p)]
    for part in parts + list(getattr(formula, "subformulas", ())):
        expressions, whole = atomic_expressions(part)
        found += expressions
        complete &= whole
    return found, complete


def expression_labels(formula, valuations: Mapping[str, np.ndarray], n: int) -> tuple[dict[str, np.ndarray], bool]:
    """The labels Storm needs to check ``formula`` on a model built without it: one per PRISM expression, named as
    Storm names it (``(s1 = 12)``), with the mask of the states where the expression holds; and whether every
    expression of the formula was found (see :func:`atomic_expressions`)."""
    expressions, complete = atomic_expressions(formula)
    return {str(e): evaluate(e, valuations, n, bool) for e in expressions}, complete


def missing_label(message: str) -> str | None:
    """The label Storm reports missing in an error message (an expression it would need as a label), if any."""
    match = re.search(r"unknown label '([^']*)'", message)
    return match.group(1) if match else None


def parse_expression(description, text: str):
    """A PRISM expression over the model's variables (and constants), parsed by Storm."""
    manager = description.expression_manager
    parser = stormpy.expressions.ExpressionParser(manager)
    parser.set_identifier_mapping({v.name: v.get_expression() for v in manager.get_variables()})
    try:
        return parser.parse_from_string(text, False)
    except Exception as err:
        raise PropertyError(f"cannot parse the expression {text}: {err}") from None


def evaluate(expression, valuations: Mapping[str, np.ndarray], n: int, kind: type = bool) -> np.ndarray:
    """The value of a Storm expression in each of the ``n`` states whose variables have the values ``valuations``
    (name -> array), as a bool or float array (``kind``)."""
    variables = sorted(expression.get_variables(), key=lambda v: v.name)
    missing = [v.name for v in variables if v.name not in valuations]
    if missing:
        known = ", ".join(valuations) or "none"
        raise PropertyError(f"expression {expression}: '{missing[0]}' is not a state variable of the model "
                            f"(variables: {known})")
    if not variables:
        return np.full(n, _value(expression, kind), dtype=kind)
    columns = [np.asarray(valuations[v.name]) for v in variables]
    keys = np.stack([c.astype(float) for c in columns], axis=1)
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    manager = expression.manager
    makers = [_literal_maker(manager, c.dtype) for c in columns]
    values = np.empty(len(distinct), dtype=kind)
    for i, row in enumerate(distinct.tolist()):
        values[i] = _value(expression.substitute({v: make(x) for v, make, x in zip(variables, makers, row)}), kind)
    return values[np.asarray(inverse).ravel()]


def _literal_maker(manager, dtype: np.dtype):
    if dtype == bool:
        return lambda x: manager.boolean(bool(x))
    if np.issubdtype(dtype, np.integer):
        return lambda x: manager.integer(int(x))
    return lambda x: manager.rational(stormpy.Rational(Fraction(repr(float(x)))))


def _value(expression, kind: type):
    try:
        return expression.evaluate_as_bool() if kind is bool else expression.evaluate_as_double()
    except RuntimeError as err:
        raise PropertyError(f"Storm cannot evaluate the expression {expression}: {err}") from None
