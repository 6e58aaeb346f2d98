"""``stormcf strategy-file MODEL --uniform|--random SEED|--optimal PROP --out S.json``: write a strategy file of
the full model (the uniform strategy, a seeded random one, or Storm's optimal scheduler)."""
from __future__ import annotations

import argparse

from .common import (Deprecated, add_json_argument, add_model_arguments, add_output_argument, emit, model_from_args,
                     non_negative_int)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("strategy-file", help="write a strategy file of a model: uniform, random, or Storm's optimal "
                                             "scheduler for a property")
    add_model_arguments(p)
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--uniform", action="store_true", help="every enabled action equally likely")
    kind.add_argument("--random", type=non_negative_int, metavar="SEED",
                      help="σ(s) drawn from Dirichlet(1, ..., 1) in every state, seeded")
    kind.add_argument("--optimal", metavar="PROP",
                      help="""Storm's optimal memoryless deterministic scheduler, e.g. 'Pmin=? [F "rejected"]'""")
    kind.add_argument("--scheduler", dest="optimal", action=Deprecated, new="--optimal PROP (--scheduler is a Dask "
                      "scheduler's address in the batch commands)")
    add_output_argument(p, "--out", "-o", required=True, metavar="S.json", help="the strategy file to write")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..inputs import make_strategy_file
    kind = "uniform" if args.uniform else ("random" if args.random is not None else "scheduler")
    emit(make_strategy_file(model_from_args(args), args.out, kind, args.optimal, args.random), args)
    return 0
