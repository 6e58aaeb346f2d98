"""``stormcf setcover-evaluate GEN.npz DATA.npz``: exact match (the paper's metric; per CFE size, and per group on
grouped data) and what stormcf adds: valid rate, cost ratios, the guarantees (top-k by validity and cost, repair,
certification) and latency. Evaluating a saved generator needs no PyTorch."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from .common import (add_input_argument, add_json_argument, add_solver_argument, positive_int, require_solver_used,
                     run_single)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setcover-evaluate", help="evaluate a learned CFE generator on labelled agents")
    add_input_argument(p, "generator", metavar="GEN.npz", help="generator from setcover-learn")
    add_input_argument(p, "data", metavar="DATA.npz", help="labelled agents (e.g. GEN.test.npz from setcover-learn)")
    p.add_argument("--top-k", type=positive_int, default=1,
                   help="mc/knn: cheapest valid of the k best CFEs (default 1)")
    p.add_argument("--certify", choices=LazyChoices("stormcf.setcover.pipeline", "CERTIFIERS"), default=None,
                   metavar="ENGINE", help="bound the optimality gap of every answer: the LP relaxation or an exact "
                                          "engine (%(choices)s)")
    add_solver_argument(p, "the certificates' programmes (--certify lp or milp)")
    add_json_argument(p)
    p.set_defaults(run=run, analysis="stormcf.setcover.task:GeneratorEvaluation")


def run(args: argparse.Namespace) -> int:
    from ..setcover.data import LabelledAgents
    from ..setcover.engines import PROGRAMMES
    from ..setcover.generators import Generator
    from ..setcover.task import GeneratorEvaluation
    require_solver_used(args, args.certify in PROGRAMMES + ("lp",), "--certify lp and milp")
    analysis = GeneratorEvaluation(top_k=args.top_k, certify=args.certify, solver=args.solver)
    return run_single(args, analysis, Generator.load(args.generator), LabelledAgents.load(args.data), str(args.data))
