"""``stormcf check MODEL --prop '...' [--prop ...] [--strategy S.json]``: Storm's values of properties under a
strategy (or on the model itself: any property Storm answers there, incl. multi-objective queries).

Exit codes: 0, or 3 with ``--fail-if-violated`` when a bounded property does not hold (2: bad input, 1: internal)."""
from __future__ import annotations

import argparse

from ..errors import PropertyError
from ..modelcheck import check_properties, read_properties
from ..strategy import Strategy
from .common import add_json_argument, add_model_arguments, emit, model_from_args

#: the exit code of ``--fail-if-violated`` when a bounded property does not hold
VIOLATED = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="model-check properties on the DTMC induced by a strategy (or on the model)")
    add_model_arguments(p)
    p.add_argument("--strategy", "-s", metavar="S.json", help="strategy file; without it the model itself is "
                   "checked (then an MDP property needs Pmin/Pmax)")
    p.add_argument("--prop", "-p", action="append", default=[], metavar="PCTL",
                   help="""a property, e.g. 'P=? [F "rejected"]'; repeatable (one model build for all)""")
    p.add_argument("--props", metavar="FILE.props", help="a properties file as Storm's command line reads it")
    p.add_argument("--exact", action="store_true", help="exact rational arithmetic (stormpy.Rational)")
    p.add_argument("--fail-if-violated", action="store_true",
                   help=f"exit with code {VIOLATED} when a bounded property does not hold")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.prop and not args.props:
        raise PropertyError("no property given: use --prop PCTL (repeatable) or --props FILE")
    model = model_from_args(args)
    properties = list(args.prop) + (read_properties(args.props) if args.props else [])
    strategy = Strategy.load(model, args.strategy) if args.strategy else None
    result = check_properties(model, properties, strategy, args.exact, args.strategy)
    emit(result, args)
    return VIOLATED if args.fail_if_violated and result.status == "violated" else 0
