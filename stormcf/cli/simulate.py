"""``stormcf simulate MODEL --strategy S.json --steps T --seed N --out P.json``: write an observed path sampled from
the initial state under a strategy (the input of ``icfmdp`` and ``explain-path``)."""
from __future__ import annotations

import argparse

from .common import (add_input_argument, add_json_argument, add_model_arguments, add_output_argument, emit,
                     model_from_args, non_negative_int, positive_int)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="write an observed path sampled under a strategy (seeded)")
    add_model_arguments(p)
    add_input_argument(p, "--strategy", "-s", metavar="S.json", help="the strategy (default: the uniform one)")
    p.add_argument("--steps", "-T", type=positive_int, required=True, metavar="T", help="number of steps")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the simulation (default 0)")
    add_output_argument(p, "--out", "-o", required=True, metavar="P.json", help="the path file to write")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..inputs import make_path_file
    from ..strategy import Strategy
    model = model_from_args(args)
    strategy = Strategy.load(model, args.strategy) if args.strategy else Strategy.uniform(model)
    name = args.strategy or "the uniform strategy"
    emit(make_path_file(strategy, args.out, args.steps, args.seed, name), args)
    return 0
