"""PCTL properties as stormcf sees them: Storm parses them; this records what the analyses need to know.

A :class:`Property` is created by :func:`stormcf.storm.parse_property`, which uses Storm's PRISM property parser, so
the syntax is Storm's: ``P<=0.2 [F "rejected"]``, ``Pmin=? [F s=3 & d>0]``, ``R{"steps"}=? [C<=10]``,
``Pmin=? [F{"time"}<=200 "done"]``, ``LRAmax=? ["up"]``, ``R{"r"}max=? [LRA]``,
``multi(Pmax=? [F "a"], R{"c"}min=? [F "b"])``, ``filter(max, Pmin=? [F "a"], true)``...

A property is evaluated on the whole model (never on a model rebuilt for it): the PRISM expressions it uses
(``s=3 & d>0``) become the labels in :attr:`Property.labels`, which Storm needs to check it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import PropertyError

#: a property's name, as Storm's ``.props`` files give it: ``"name": P=? [...]``
_NAME = re.compile(r'^\s*"([^"]*)"\s*:\s*')


def split_name(text: str) -> tuple[str | None, str]:
    """A property as written, split into its name (``"ok": P=? [...]``; None without) and the property itself
    (without a trailing ``;``)."""
    named = _NAME.match(text)
    return (named.group(1) if named else None), text[named.end() if named else 0:].strip().rstrip(";").strip()


def require_distinct_names(properties: Sequence[str]) -> None:
    """Refuse (:class:`PropertyError`) two properties given the same name (``"a": P=? [...]`` twice): a name
    identifies one property in the results."""
    seen: dict[str, str] = {}
    for text in properties:
        name, written = split_name(text)
        if name is None:
            continue
        if name in seen:
            raise PropertyError(f'the property name "{name}" is given twice ({seen[name]} and {written}); '
                                f'give each property its own name')
        seen[name] = written


def relative_error(value: float, precision: Fraction) -> Fraction:
    """The absolute error of a floating-point ``value`` computed at relative ``precision``: precision·|value| (0
    for an infinite or NaN value, which :meth:`Property.decide` takes as it is)."""
    return precision * abs(Fraction(value)) if math.isfinite(value) else Fraction(0)


_COMPARE = {
    "<=": lambda x, b: x <= b,
    "<": lambda x, b: x < b,
    ">=": lambda x, b: x >= b,
    ">": lambda x, b: x > b,
}


@dataclass(frozen=True, eq=False, repr=False)
class Property:
    """A parsed PCTL property.

    Attributes:
        text: the property as Storm prints it, e.g. ``P<=1/5 [F "rejected"]``.
        operator: ``"P"`` (probability), ``"R"`` (reward), ``"T"`` (time), ``"LRA"`` (long-run average, also
            written ``S``), ``"multi"`` (a multi-objective query), ``"quantile"`` or ``None`` for a state formula.
        optimization: ``"min"``, ``"max"`` or ``None``.
        comparison: ``"<="``, ``"<"``, ``">="``, ``">"`` when the property has a bound, else ``None``.
        threshold: the bound as an exact fraction (``1/5`` for ``0.2``), else ``None``.
        path: the path formula kind: ``"eventually"``, ``"until"``, ``"bounded_until"`` (step bounds),
            ``"reward_bounded_until"``, ``"globally"``, ``"next"``, ``"cumulative"``, ``"instantaneous"``, ``"total"``,
            ``"long_run_average"`` (``LRA`` operators and ``R.. [LRA]``), ``"discounted"``, ``"conditional"``
            (``P=? [F a || F b]``), ``"state"`` (a state formula), ``"multi"``, ``"quantile"`` or ``"other"``.
        target: for ``F φ`` and ``ψ U φ`` (also step-bounded): the mask of states satisfying φ, computed by Storm.
        constraint: for ``ψ U φ``: the mask of ψ (all ``True`` for ``F``).
        step_bound: the upper step bound of ``F<=k`` / ``U<=k``.
        reward_model: the reward model name of ``R{"name"}`` properties.
        reward_bounds: the reward models that bound the path formula (``F{"time"}<=200``), of every objective.
        labels: the labels Storm needs to check the property (one per PRISM expression, named as Storm names it,
            e.g. ``(s1 = 12)``), as masks over the states of the whole model.
        objectives: the objectives of a ``multi(...)`` query, each a Property.
        name: the name the property was given (``"ok": P=? [F "done"]``, as in Storm's ``.props`` files), else None.
        written: the property as it was written (without its name), e.g. ``P<=0.2 [F "rejected"]``.
        filter: Storm's filter around the formula (``filter(max, Pmin=? [F "a"], true)``), or None for Storm's
            default (the value at the initial state). Only ``stormcf check`` answers filtered properties.
    """

    text: str
    operator: str | None
    optimization: str | None
    comparison: str | None
    threshold: Fraction | None
    path: str
    target: np.ndarray | None = None
    constraint: np.ndarray | None = None
    step_bound: int | None = None
    reward_model: str | None = None
    reward_bounds: tuple[str, ...] = ()
    labels: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    objectives: tuple["Property", ...] = ()
    storm: Any = field(default=None, repr=False)
    name: str | None = None
    written: str | None = None
    filter: "PropertyFilter | None" = None

    def __repr__(self) -> str:
        return f"<Property {self.text}>"

    @property
    def has_bound(self) -> bool:
        return self.comparison is not None

    @property
    def bound_optimum(self) -> str | None:
        """On a model with nondeterminism, the optimum that decides a bound without ``min``/``max`` as Storm decides
        it (the bound must hold for every scheduler): ``P>=b`` holds iff ``Pmin>=b``, ``P<=b`` iff ``Pmax<=b``.
        None when the property has no bound or names its optimum."""
        if self.comparison is None or self.optimization is not None:
            return None
        return "min" if self.comparison in (">", ">=") else "max"

    def decide(self, value: float | Fraction, error: float | Fraction = 0) -> bool | None:
        """Whether ``value`` meets the property's bound, three-valued: True when every value of the error interval
        [value - error, value + error] meets it, False when none does, None (undecided at that precision) when the
        interval contains the bound. ``error`` is the absolute error of a floating-point result (0: the value is
        compared exactly, a float as the binary number it is); a probability's interval is cut to [0, 1]. Infinite
        values (an expected reward Storm counts as infinite) are compared as they are; NaN is undecided."""
        if self.comparison is None:
            raise PropertyError(f"property {self.text} has no bound")
        compare, b = _COMPARE[self.comparison], self.threshold
        if isinstance(value, float) and not math.isfinite(value):
            return None if math.isnan(value) else compare(value, b)
        x, e = Fraction(value), abs(Fraction(error))
        low, high = x - e, x + e
        if self.operator == "P":
            low, high = (min(max(y, Fraction(0)), Fraction(1)) for y in (low, high))
        at_low, at_high = compare(low, b), compare(high, b)
        return at_low if at_low == at_high else None

    def satisfied_by(self, value: float | Fraction) -> bool:
        """Whether ``value`` meets the property's bound, compared exactly (a float as the binary number it is)."""
        return bool(self.decide(value))

    @property
    def initial_state_only(self) -> bool:
        """Storm answers the property for the initial state only (reward bounds, conditional probabilities,
        quantiles)."""
        return self.path in ("reward_bounded_until", "conditional", "quantile")

    @property
    def is_reachability(self) -> bool:
        """``P ⋈ b [F φ]`` / ``P=? [F φ]``: unbounded reachability of a target."""
        return self.operator == "P" and self.path == "eventually"

    def require_reachability(self, what: str) -> np.ndarray:
        """The target mask of an unbounded ``P [F φ]`` property, or a :class:`PropertyError` saying ``what`` needs
        it."""
        if not self.is_reachability or self.target is None:
            raise PropertyError(f"{what} needs an unbounded reachability property P.. [F φ]; got {self.text}")
        return self.target


#: Storm's filter types (``filter(TYPE, φ, states)``) and what they give: a number over the states' values, or a
#: truth value / count over the states' truth values (a property with a bound); ``values`` gives every state's
FILTER_KINDS = {"max": "number", "min": "number", "sum": "number", "avg": "number", "count": "truth",
                "forall": "truth", "exists": "truth", "values": "any", "argmax": "states", "argmin": "states"}


@dataclass(frozen=True, eq=False, repr=False)
class PropertyFilter:
    """Storm's filter of a property: ``filter(kind, φ, states)`` aggregates φ's results over the states where the
    state formula ``states`` holds (``states`` as Storm prints it, ``mask`` computed by Storm)."""

    kind: str
    states: str
    mask: np.ndarray
    storm: Any = field(default=None, repr=False)
