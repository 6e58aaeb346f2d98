"""``stormcf check MODEL --strategy S.json --prop '...'``: Storm's value of a property under a strategy (or on the
model itself: any property Storm answers there, incl. multi-objective queries)."""
from __future__ import annotations

import argparse

from .. import storm
from ..errors import PropertyError
from ..strategy import Strategy
from ..verify import check_model, check_strategy, format_value
from .common import add_model_arguments, model_from_args, model_line, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="model-check a property on the DTMC induced by a strategy (or on the MDP)")
    add_model_arguments(p)
    p.add_argument("--strategy", "-s", metavar="S.json", help="strategy file; without it the MDP itself is checked "
                   "(then the property needs Pmin/Pmax)")
    p.add_argument("--prop", "-p", required=True, metavar="PCTL", help="""e.g. 'P=? [F "rejected"]'""")
    p.add_argument("--exact", action="store_true", help="exact rational arithmetic (stormpy.Rational)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    prop = storm.parse_property(model, args.prop)
    if prop.operator == "multi" and not args.strategy:
        return _multiobjective(args, model, prop)
    if args.strategy:
        result = check_strategy(Strategy.load(model, args.strategy), prop, exact=args.exact)
    else:
        result = check_model(model, prop, exact=args.exact)
    if args.json:
        print_json({"model": model.summary(), "strategy": args.strategy, "result": result.to_dict()})
        return 0
    print(model_line(model))
    print(f"strategy: {args.strategy or '(none: the MDP itself)'}")
    value = str(result.exact) if result.exact is not None else format_value(result.value)
    text = f"{result.property} = {value}"
    if result.exact is not None and result.exact.denominator != 1:
        text += f" (= {format_value(result.value)})"
    if result.holds is not None:
        text += f"  [{'holds' if result.holds else 'does not hold'}]"
    print(text)
    print(f"checked by {result.method}")
    return 0


def _multiobjective(args: argparse.Namespace, model, prop) -> int:
    if args.exact:
        raise PropertyError(f"{prop.text}: Storm answers multi-objective queries in floating point only (no exact "
                            f"arithmetic)")
    result = storm.check_multiobjective(model, prop)
    if args.json:
        print_json({"model": model.summary(), "strategy": None, "result": result.to_dict()})
        return 0
    print(model_line(model))
    print("strategy: (none: the MDP itself)")
    print(result)
    print(f"checked by {result.method}")
    return 0
