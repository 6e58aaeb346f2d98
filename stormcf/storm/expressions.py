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
from typing import Callable, Mapping

import numpy as np
import stormpy
from stormpy.developer import storage as _storage

from ..errors import PropertyError
from .precheck import check_expression_text, shortened


#: formulas whose parts stormpy does not expose (only their printed form): Boolean combinations of state formulas,
#: and the base class it gives ``X φ``, total rewards ``C`` and quantiles
_OPAQUE = {"BinaryBooleanStateFormula", "UnaryBooleanStateFormula", "Formula"}


def atomic_expressions(formula, enclosing=None) -> tuple[list, list]:
    """The PRISM expressions (``AtomicExpressionFormula``) in a Storm formula, in order of appearance, and the state
    formulas that enclose parts stormpy hides (``"a" & s=3``, ``X s=3``): those must be probed (see
    :func:`~stormcf.storm.formulas.parse_property`)."""
    kind = type(formula).__name__
    if kind == "AtomicExpressionFormula":
        return [formula.get_expression()], []
    if enclosing is None or isinstance(formula, stormpy.logic.StateFormula):
        enclosing = formula
    if kind in _OPAQUE:
        return [], ([] if str(formula) == "C" else [enclosing])
    found, probes = [], []
    parts = [getattr(formula, p) for p in ("subformula", "left_subformula", "right_subformula", "main_subformula",
                                           "conditional_subformula") if hasattr(formula, p)]
    for part in parts + list(getattr(formula, "subformulas", ())):
        expressions, hidden = atomic_expressions(part, enclosing)
        found += expressions
        probes += hidden
    return found, probes


def expression_labels(formula, valuations: Mapping[str, np.ndarray], n: int) -> tuple[dict[str, np.ndarray], list]:
    """The labels Storm needs to check ``formula`` on a model built without it: one per PRISM expression, named as
    Storm names it (``(s1 = 12)``), with the mask of the states where the expression holds; and the state formulas
    whose expressions stormpy hides (see :func:`atomic_expressions`)."""
    expressions, probes = atomic_expressions(formula)
    return {str(e): evaluate(e, valuations, n, bool) for e in expressions}, probes


def missing_label(message: str) -> str | None:
    """The label Storm reports missing in an error message (an expression it would need as a label), if any."""
    match = re.search(r"unknown label '([^']*)'", message)
    return match.group(1) if match else None


def constant_values(description) -> dict[str, Fraction]:
    """The values of the defined constants of a PRISM program (for :mod:`.precheck`); empty for other models."""
    values = {}
    if isinstance(description, _storage.PrismProgram):
        for constant in description.constants:
            if not constant.defined:
                continue
            try:
                values[constant.name] = Fraction(str(constant.definition.evaluate_as_rational()))
            except Exception:                  # a Boolean constant, or one Storm does not evaluate: skipped
                continue
    return values


def parse_expression(description, text: str):
    """A PRISM expression over the model's variables (and constants), parsed by Storm."""
    check_expression_text(text, constant_values(description))     # what would crash Storm's parser
    manager = description.expression_manager
    parser = stormpy.expressions.ExpressionParser(manager)
    parser.set_identifier_mapping({v.name: v.get_expression() for v in manager.get_variables()})
    try:
        return parser.parse_from_string(text, False)
    except Exception as err:
        raise PropertyError(f"cannot parse the expression {shortened(text)}: {err}") from None


#: Boolean connectives combined with numpy over their operands' masks (their operands are evaluated by Storm)
_CONNECTIVES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor, "IFF": np.equal, "IMPLIES": lambda a, b: ~a | b}


def evaluate(expression, valuations: Mapping[str, np.ndarray], n: int, kind: type = bool) -> np.ndarray:
    """The value of a Storm expression in each of the ``n`` states whose variables have the values ``valuations``
    (name -> array), as a bool or float array (``kind``).

    Boolean connectives (``&``, ``|``, ``!``, ``=>``, ``<=>``, xor) are combined over the masks of their operands, so
    that each comparison is evaluated by Storm once per distinct valuation of the few variables *it* reads. A chain
    of one connective (``a & b & c ...``, a tree as deep as it is long) is combined in a loop, not by recursion."""
    if kind is bool and expression.is_function_application:
        name = expression.operator.name
        if name == "NOT":
            return ~evaluate(expression.get_operand(0), valuations, n, bool)
        if name in _CONNECTIVES:
            combine = _CONNECTIVES[name]
            rights = []
            while expression.is_function_application and expression.operator.name == name:   # left-deep chain
                rights.append(expression.get_operand(1))
                expression = expression.get_operand(0)
            value = evaluate(expression, valuations, n, bool)
            for right in reversed(rights):
                value = combine(value, evaluate(right, valuations, n, bool))
            return value
    return _evaluate_atom(expression, valuations, n, kind)


def _evaluate_atom(expression, valuations: Mapping[str, np.ndarray], n: int, kind: type) -> np.ndarray:
    """:func:`evaluate` of an expression Storm evaluates as a whole (once per distinct valuation it reads)."""
    variables = sorted(expression.get_variables(), key=lambda v: v.name)
    missing = [v.name for v in variables if v.name not in valuations]
    if missing:
        known = ", ".join(valuations) or "none"
        raise PropertyError(f"expression {shortened(str(expression))}: '{missing[0]}' is not a state variable of the "
                            f"model (variables: {known})")
    if not variables:
        return np.full(n, _value(expression, kind), dtype=kind)
    columns = [np.asarray(valuations[v.name]) for v in variables]
    first, inverse = _distinct_rows(columns)
    manager = expression.manager
    makers = [_literal_maker(manager, c.dtype) for c in columns]
    values: np.ndarray = np.empty(len(first), dtype=kind)
    for i, s in enumerate(first.tolist()):
        values[i] = _value(expression.substitute({v: make(c[s]) for v, make, c in zip(variables, makers, columns)}),
                           kind)
    return values[inverse]


def _distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the table with these columns: one state of each (``first``) and, for every state, the
    number of its row (``inverse``). Columns are combined one at a time as dense codes (1-D sorts only)."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        values, codes = np.unique(column, return_inverse=True)
        _, key = np.unique(key * len(values) + codes.ravel(), return_inverse=True)
        key = key.ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _literal_maker(manager, dtype: np.dtype):
    if np.dtype(dtype).kind == "b":
        return lambda x: manager.boolean(bool(x))
    if np.issubdtype(dtype, np.integer):
        return lambda x: manager.integer(int(x))
    return lambda x: manager.rational(stormpy.Rational(Fraction(repr(float(x)))))


def _value(expression, kind: type):
    try:
        return expression.evaluate_as_bool() if kind is bool else expression.evaluate_as_double()
    except RuntimeError as err:
        raise PropertyError(f"Storm cannot evaluate the expression {shortened(str(expression))}: {err}") from None
