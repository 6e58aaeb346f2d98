"""The question of ``stormcf repair``: a parametric PRISM model, the bounds it must meet, the nominal valuation of its
parameters (the model as it is today), the region of valuations to search, and how distances are measured.

Everything is validated once, where the problem is built: the parameters (the model's undefined ``double``
constants that the bounds depend on), the nominal valuation (every parameter, nothing else, inside the region), the
region (by default each parameter in [1/1000, 999/1000]: :data:`DEFAULT_MARGIN`), and the region-checking engine
the search can trust there (:func:`choose_engine`): Storm's parameter lifting where every transition function is
multi-affine and no transition vanishes in the region, Storm's robust lifting on DTMCs otherwise; an MDP where
neither applies is refused.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

from .. import storm
from ..errors import ModelError, OptionError, ParameterError, PropertyError
from ..model import ExplicitModel
from ..properties import Property
from ..storm.parametric import (EXACT_LIFTING, LIFTING, ROBUST_LIFTING, ParametricBuild, ParametricModel,
                                exact_text)
from ..strategy import Strategy
from .geometry import NORMS, SCALES, Box, Distance, Point

#: the default region: every parameter in [DEFAULT_MARGIN, 1 - DEFAULT_MARGIN]
DEFAULT_MARGIN = Fraction(1, 1000)
#: the default tolerance of a proven optimum: the answer is at most this far (in distance) above the proven bound
TOLERANCE = 1e-5

_INTERVAL = re.compile(r"^\s*([^<>=\s]+)\s*<=\s*([A-Za-z_][A-Za-z0-9_]*)\s*<=\s*([^<>=\s]+)\s*$")


@dataclass(frozen=True, eq=False)
class RepairProblem:
    """The closest valuation of a parametric model's parameters to ``nominal`` that meets every bound.

    Args:
        model: the parametric PRISM model (:func:`stormcf.storm.parametric.load_parametric`).
        bounds: bounded P or R properties that must all hold (``P<=0.01 [F "error"]``).
        nominal: the parameters' values today: ``"p=0.3,q=0.5"`` or ``{"p": 0.3, "q": "1/2"}`` (decimals are
            read exactly, as written).
        region: where to search: ``"0.1<=p<=0.9,0<=q<=0.5"`` or ``{"p": [0.1, 0.9]}``; parameters it does not name
            get the default [1/1000, 999/1000].
        norm: ``linf``, ``l1`` or ``l2`` of the per-parameter changes.
        scale: ``none`` (changes as they are) or ``width`` (each change divided by the region's width along it).
        strategy: on an MDP, a memoryless strategy (the JSON of a strategy file): the bounds are then asked of the
            DTMC it induces; without one, of the MDP with Storm's semantics of a bound (all schedulers, or the one
            the bound's min/max names).
        where: where the strategy came from, for messages.
        exact: the search's proofs in exact rational arithmetic (Storm's exact parameter lifting) where they can be.
    """

    model: ParametricModel
    bounds: Sequence[str]
    nominal: Mapping[str, Any] | str
    region: Mapping[str, Any] | str | None = None
    norm: str = "linf"
    scale: str = "none"
    strategy: Any = None
    where: str | None = None
    exact: bool = False
    build: ParametricBuild = field(init=False, repr=False)
    search_build: ParametricBuild = field(init=False, repr=False)
    parameters: tuple[str, ...] = field(init=False)
    point: Point = field(init=False)
    box: Box = field(init=False)
    distance: Distance = field(init=False)
    engine: str = field(init=False)
    engine_reason: str = field(init=False)
    nominal_model: ExplicitModel = field(init=False, repr=False)
    properties: tuple[Property, ...] = field(init=False, repr=False)
    policy: Strategy | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        if isinstance(self.bounds, str) or not self.bounds:
            raise PropertyError("give the bounds to meet (a list of bounded properties, e.g. 'P<=0.1 [F \"error\"]')")
        set_("bounds", tuple(self.bounds))
        if self.norm not in NORMS:
            raise OptionError(f"unknown norm '{self.norm}' (norms: {', '.join(NORMS)})")
        if self.scale not in SCALES:
            raise OptionError(f"unknown scale '{self.scale}' (scales: {', '.join(SCALES)})")
        build = self.model.build(self.bounds)
        unused = [name for name in self.model.undefined if name not in build.parameters]
        if unused:
            raise ParameterError(f"{self.model.source}: the bounds do not depend on {', '.join(unused)} (no "
                                 f"parameter of theirs), which the checks' builds of the model still need: give "
                                 f"{'them' if len(unused) > 1 else 'it'} any value with --constants "
                                 f"{','.join(u + '=...' for u in unused)}")
        set_("build", build)
        set_("parameters", build.parameters)
        set_("point", read_valuation(self.nominal, build, self.model.source))
        set_("box", read_region(self.region, build, self.model.source))
        lo, hi = self.box.lo, self.box.hi
        for name, x, a, b in zip(self.parameters, self.point, lo, hi):
            if not a <= x <= b:
                raise ParameterError(f"the nominal value {name}={exact_text(x)} is outside the region "
                                     f"{exact_text(a)}<={name}<={exact_text(b)}")
        weights = tuple(Fraction(1) if self.scale == "none" else 1 / (b - a) for a, b in zip(lo, hi))
        set_("distance", Distance(self.norm, weights))
        nominal_model = storm.load_model(self.model.file, self.model.constants_with(self.valuation(self.point)),
                                         shown_as=self.model.source)
        set_("nominal_model", nominal_model)
        set_("properties", tuple(_bound(nominal_model, text) for text in self.bounds))
        set_("policy", self._strategy(nominal_model))
        search = build if self.policy is None else build.induced(_strategy_rows(self.policy, build))
        set_("search_build", search)
        engine, reason = choose_engine(search, self.valuation(lo), self.valuation(hi), self.exact)
        set_("engine", engine)
        set_("engine_reason", reason)

    def _strategy(self, nominal_model: ExplicitModel) -> Strategy | None:
        if self.strategy is None:
            return None
        if self.build.model_type != "mdp":
            raise ParameterError(f"{self.model.source}: a strategy applies to an MDP; the model is a DTMC")
        return Strategy.from_dict(nominal_model, self.strategy, self.where or "strategy")

    def valuation(self, point: Point) -> dict[str, Fraction]:
        """A valuation as parameter name -> value."""
        return dict(zip(self.parameters, point))

    @property
    def region_text(self) -> str:
        """The region for people: ``LO<=NAME<=HI, ...``, or the default's words when every parameter has it."""
        default = (DEFAULT_MARGIN, 1 - DEFAULT_MARGIN)
        if all((a, b) == default for a, b in zip(self.box.lo, self.box.hi)):
            return f"every parameter in [{exact_text(default[0])}, {exact_text(default[1])}] (the default)"
        return ", ".join(f"{exact_text(a)}<={name}<={exact_text(b)}"
                         for name, a, b in zip(self.parameters, self.box.lo, self.box.hi))


def read_valuation(nominal: Mapping[str, Any] | str, build: ParametricBuild, source: str) -> Point:
    """The nominal valuation: every parameter of ``build`` exactly once, each an exact number."""
    pairs = _pairs(nominal, "the nominal valuation", "p=0.3,q=0.5")
    unknown = [name for name in pairs if name not in build.parameters]
    if unknown:
        raise ParameterError(f"{unknown[0]} is not a parameter of {source} for these bounds (parameters: "
                             f"{', '.join(build.parameters)})")
    missing = [name for name in build.parameters if name not in pairs]
    if missing:
        raise ParameterError(f"the nominal valuation gives no value to {', '.join(missing)} (parameters of {source}: "
                             f"{', '.join(build.parameters)})")
    return tuple(_number(pairs[name], f"the nominal value of {name}") for name in build.parameters)


def read_region(region: Mapping[str, Any] | str | None, build: ParametricBuild, source: str) -> Box:
    """The region: the intervals given (``LO<=NAME<=HI``), [DEFAULT_MARGIN, 1 - DEFAULT_MARGIN] for the others."""
    given: dict[str, tuple[Fraction, Fraction]] = {}
    if isinstance(region, str):
        for part in filter(None, (p.strip() for p in region.split(","))):
            m = _INTERVAL.match(part)
            if not m:
                raise ParameterError(f"region: expected LO<=NAME<=HI, got '{part}' (e.g. '0.1<=p<=0.9,0.2<=q<=0.8')")
            low, name, high = m.groups()
            if name in given:
                raise ParameterError(f"region: {name} is bounded twice")
            given[name] = (_number(low, f"the region's lower bound of {name}"),
                           _number(high, f"the region's upper bound of {name}"))
    elif region is not None:
        if not isinstance(region, Mapping):
            raise ParameterError(f"region: expected 'LO<=NAME<=HI,...' or {{name: [lo, hi]}}, got {region!r}")
        for name, interval in region.items():
            if not isinstance(interval, (list, tuple)) or len(interval) != 2:
                raise ParameterError(f"region: expected {name}: [lo, hi], got {interval!r}")
            given[str(name)] = (_number(interval[0], f"the region's lower bound of {name}"),
                                _number(interval[1], f"the region's upper bound of {name}"))
    for name, (low, high) in given.items():
        if name not in build.parameters:
            raise ParameterError(f"region: {name} is not a parameter of {source} for these bounds (parameters: "
                                 f"{', '.join(build.parameters)})")
        if not low < high:
            raise ParameterError(f"region: the interval {exact_text(low)}<={name}<={exact_text(high)} is empty or a "
                                 f"single value (give that value with --constants instead)")
    default = (DEFAULT_MARGIN, 1 - DEFAULT_MARGIN)
    return Box(tuple(given.get(n, default)[0] for n in build.parameters),
               tuple(given.get(n, default)[1] for n in build.parameters))


def choose_engine(build: ParametricBuild, lo: Mapping[str, Fraction], hi: Mapping[str, Fraction],
                  exact: bool) -> tuple[str, str]:
    """The region-checking engine the search trusts on the region [lo, hi], and why (module docstring)."""
    nonaffine = build.not_multiaffine()
    change = None if nonaffine else build.graph_change(lo, hi)
    if nonaffine is None and change is None:
        return (EXACT_LIFTING if exact else LIFTING), ("every transition function is multi-affine and none vanishes "
                                                       "in the region")
    reason = (f"the transition probability {nonaffine} is not multi-affine" if nonaffine
              else f"the model's graph changes in the region: {change}")
    rational = build.not_polynomial()
    if rational is not None:
        raise ParameterError(f"{build.source}: the transition probability {rational} has parameters in its "
                             f"denominator; Storm's parameter lifting is sound only for multi-affine transition "
                             f"functions, and its robust lifting takes polynomials only")
    if build.model_type == "dtmc":
        return ROBUST_LIFTING, reason
    raise ParameterError(f"{build.source}: {reason}; Storm's parameter lifting is sound only for multi-affine "
                         f"transition functions that do not vanish in the region, and its robust lifting applies "
                         f"to DTMCs only" + ("" if nonaffine else ": give a --region where every transition keeps "
                                                                  "a positive probability"))


def _bound(model: ExplicitModel, text: str) -> Property:
    prop = storm.parse_property(model, text)
    if prop.operator not in ("P", "R") or prop.comparison is None:
        raise PropertyError(f"{text}: repair needs a bound on a probability or an expected reward")
    return prop


def _strategy_rows(policy: Strategy, build: ParametricBuild) -> list[Fraction]:
    """σ of every choice of the parametric build (exact: the shortest decimals that print the strategy's numbers).
    The strategy is read on the nominal model Storm built from the PRISM file; the parametric build is Storm's build
    for the bounds, which stops at the states that decide them (one self-loop each): its states are matched with
    the nominal model's by their variables' values, and the choices of a matched state are the same commands in
    the same order."""
    model = policy.model
    ours = build.valuations()
    if set(ours) != set(model.valuations):
        raise ModelError(f"{build.source}: the parametric build has other state variables than the nominal model")
    names = sorted(ours)
    index = {key: s for s, key in enumerate(zip(*(model.valuations[n].tolist() for n in names)))}
    groups = list(build.model.nondeterministic_choice_indices)
    rows: list[Fraction] = []
    for s, key in enumerate(zip(*(ours[n].tolist() for n in names))):
        t = index.get(key)
        if t is None:
            raise ModelError(f"{build.source}: a state of the parametric build is not one of the nominal model's")
        first, count = model.row_groups[t], model.row_groups[t + 1] - model.row_groups[t]
        mine = groups[s + 1] - groups[s]
        if mine == count:
            rows += [Fraction(repr(float(x))) for x in policy.probabilities[first:first + count]]
        elif mine == 1:                                  # a state where Storm's build stops: its self-loop
            rows.append(Fraction(1))
        else:
            raise ModelError(f"{build.source}: the state {model.state_name(t)} has {mine} choices in the parametric "
                             f"build and {count} in the nominal model")
    return rows


def _pairs(data: Mapping[str, Any] | str, what: str, example: str) -> dict[str, Any]:
    if isinstance(data, Mapping):
        return {str(k): v for k, v in data.items()}
    if not isinstance(data, str):
        raise ParameterError(f"{what}: expected NAME=VALUE,... (e.g. {example}), got {data!r}")
    pairs: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in data.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"{what}: expected NAME=VALUE, got '{part}' (e.g. {example})")
        if name.strip() in pairs:
            raise ParameterError(f"{what}: {name.strip()} is given twice")
        pairs[name.strip()] = value.strip()
    return pairs


def _number(value: Any, what: str) -> Fraction:
    """An exact number from a JSON number or a text (``0.3`` is 3/10, ``1/3`` is 1/3)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction)):
        raise ParameterError(f"{what}: expected a number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"{what}: expected a finite number, got {value!r}")
        return Fraction(repr(value))
    try:
        return Fraction(value.strip() if isinstance(value, str) else value)
    except (ValueError, ZeroDivisionError):
        raise ParameterError(f"{what}: expected a number such as 0.3 or 1/3, got {value!r}") from None
