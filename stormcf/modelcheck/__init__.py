"""What ``stormcf info`` and ``stormcf check`` answer, as results of the shared protocol: the model's vocabulary, and
Storm's values of properties on the model or on the DTMC a strategy induces (several properties on one build).

Properties may come as strings or from a ``.props`` file as Storm's command line reads them: one property per line,
``//`` starts a comment, an optional ``"name": `` prefix names the property.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from .. import storm
from ..errors import PropertyError
from ..examples import read_text
from ..model import ExplicitModel
from ..modelinfo import ModelInfo as ModelInfo     # what ``info`` answers: its own module imports no numpy
from ..properties import Property, require_distinct_names
from ..report import Report
from ..strategy import Strategy
from ..verify import Check, StateValues, check_model, check_strategy


@dataclass(frozen=True, eq=False)
class PropertyChecks(Report):
    """Storm's values of properties at the initial state (``stormcf check``).

    ``results`` holds one entry per property, in order: a :class:`~stormcf.verify.Check`, Storm's answer to a
    multi-objective query, or the values of a ``filter(values, ...)`` (:class:`~stormcf.verify.StateValues`);
    ``properties`` the parsed properties, in the same order (their names and how they were written).
    ``status`` is ``violated`` if a bounded property does not hold, else ``undecided`` if the error interval of a
    floating-point value contains a bound (:attr:`~stormcf.verify.Check.undecided`), ``holds`` if every bounded
    property holds, else ``ok``.

    The text shows each property as it was written (with its name); the JSON keeps Storm's form (``property``,
    e.g. ``P<=1/5 [...]`` for ``P<=0.2 [...]``), the ``name`` and the form as written (a check record's
    ``details.written``; ``written`` in the other results).
    """

    command = "check"
    model: ExplicitModel
    strategy: str | None
    results: Sequence[Any]
    timings: dict[str, float] = field(default_factory=dict)
    properties: Sequence[Property] = ()

    @property
    def checks(self) -> list[Check]:
        return [r for r in self.results if isinstance(r, Check)]

    @property
    def status(self) -> str:
        verdicts = {r.verdict if isinstance(r, Check) else _verdict(r.holds) for r in self.results}
        for status in ("violated", "undecided", "holds"):
            if status in verdicts:
                return status
        return "ok"

    @property
    def approximate(self) -> bool:
        return any(getattr(r, "approximate", False) for r in self.results)

    @property
    def notes(self) -> list[str]:
        return [f"{r.property}: multi-objective results are approximate ({r.method})"
                for r in self.results if getattr(r, "approximate", False)]

    def payload(self) -> dict[str, Any]:
        results = []
        for r, prop in zip(self.results, self.properties):
            data = r.to_dict()
            if not isinstance(r, Check):      # a check record carries its name and written form itself
                data.update({"name": prop.name or "", "written": prop.written})
            results.append(data)
        return {"strategy": self.strategy, "results": results}

    def text(self) -> str:
        lines = [f"strategy: {self.strategy or '(none: the model itself)'}"]
        for r, prop in zip(self.results, self.properties):
            lines.append(_result_line(r, prop))
        methods = sorted({r.method for r in self.results})
        lines.append("checked by " + "; ".join(methods))
        return "\n".join(lines)


def _result_line(r: Any, prop: Property) -> str:
    """One result for people: the property as it was written (with its name), then Storm's answer."""
    written = prop.written or prop.text                 # written: set by storm.parse_property
    shown = f'"{prop.name}": {written}' if prop.name else written
    if not isinstance(r, Check):
        text = str(r)
        return shown + text[len(r.property):] if text.startswith(r.property) else text
    optimum = (r.details or {}).get("optimum")
    if optimum:                              # a bound on an MDP, decided for every scheduler by one optimum
        text, scope = f"{shown}: {prop.operator}{optimum} = {r.value_text()}", " for every scheduler"
    else:
        text, scope = f"{shown} = {r.value_text()}", ""
    if r.verdict == "undecided":
        return f"{text}  [{r.undecided}]"
    return f"{text}  [{'holds' if r.holds else 'does not hold'}{scope}]" if r.verdict else text


def _verdict(holds: bool | None) -> str | None:
    """The verdict of an answer that is not a check record (a multi-objective achievability, a set of values)."""
    return None if holds is None else ("holds" if holds else "violated")


def check_properties(model: ExplicitModel, properties: Sequence[str], strategy: Strategy | None = None,
                     exact: bool = False, strategy_source: str | None = None) -> PropertyChecks:
    """Storm's value of every property at the initial state: on the DTMC ``strategy`` induces, or on the model
    itself (where an MDP needs ``Pmin``/``Pmax``, and multi-objective queries are answered)."""
    if not properties:
        raise PropertyError("no property to check")
    require_distinct_names(properties)
    results: list[Check | StateValues | storm.MultiObjectiveResult] = []
    parsed = []
    for text in properties:
        prop = storm.parse_property(model, text, filters=True)
        parsed.append(prop)
        if prop.operator == "multi":
            if strategy is not None:
                raise PropertyError(f"{prop.text}: a multi-objective query asks about every strategy of the model; "
                                    f"it is not checked under one strategy")
            if exact:
                raise PropertyError(f"{prop.text}: Storm answers multi-objective queries in floating point only "
                                    f"(no exact arithmetic)")
            results.append(storm.check_multiobjective(model, prop))
        elif strategy is not None:
            results.append(_as_written(check_strategy(strategy, prop, exact=exact), prop))
        else:
            results.append(_as_written(check_model(model, prop, exact=exact), prop))
    return PropertyChecks(model, strategy_source, tuple(results),
                          {"storm": sum(getattr(r, "seconds", 0.0) for r in results)}, tuple(parsed))


def _as_written(result: Check | StateValues, prop: Property) -> Check | StateValues:
    """A check record with the property's name and, in its details, the property as it was written."""
    if isinstance(result, StateValues):
        return result.named(prop.name or "")
    return replace(result, name=prop.name or "", details={**(result.details or {}), "written": prop.written})


def read_properties(path: str | Path) -> list[str]:
    """The properties of a ``.props`` file (Storm's format: one per line, ``//`` comments, optional names
    ``"name": `` which are kept)."""
    out = []
    for line in read_text(path, PropertyError).splitlines():
        line = line.split("//", 1)[0].strip().rstrip(";").strip()
        if line:
            out.append(line)
    if not out:
        raise PropertyError(f"{path}: no property in the file")
    return out

