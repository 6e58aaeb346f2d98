"""``stormcf icfmdp MODEL --path P.json --reward R``: robust counterfactual policy of an observed path (seed 004)."""
from __future__ import annotations

import argparse

from ..icfmdp import ASSUMPTIONS, analyse_path
from ..paths import ObservedPath
from .common import add_model_arguments, model_from_args, model_line, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("icfmdp", help="interval counterfactual MDP of an observed path and its robust policy "
                                      "(Lally et al.), optionally against the Gumbel-max SCM baseline")
    add_model_arguments(p)
    p.add_argument("--path", required=True, metavar="P.json", help='observed path: {"steps": [{"state": {...}, '
                   '"action": "..."}, ...], "final_state": {...}}')
    p.add_argument("--reward", "-r", default=None, metavar="NAME",
                   help="PRISM reward model (state and state-action rewards; default: the only one)")
    p.add_argument("--assumptions", choices=ASSUMPTIONS, default="cs+m",
                   help="cs+m: counterfactual stability and monotonicity (default); cs: stability only; none")
    p.add_argument("--bounds", choices=("closed", "lp"), default="closed",
                   help="closed-form bounds (default) or one exact LP per transition (small models)")
    p.add_argument("--optimistic", action="store_true", help="also the optimistic (best-case) policy")
    p.add_argument("--baseline", choices=("gumbel",), default=None, help="also the Gumbel-max SCM policy")
    est = p.add_mutually_exclusive_group()
    est.add_argument("--exact", action="store_true", help="exact Gumbel-max probabilities (the default)")
    est.add_argument("--mc-samples", type=_positive_int, metavar="N", default=None,
                     help="Monte Carlo Gumbel-max probabilities with N posterior samples per (t, s, a)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Monte Carlo baseline (default 0)")
    p.add_argument("--json", metavar="OUT", default=None, help="write the result as JSON to OUT ('-': stdout)")
    p.add_argument("--plot", metavar="OUT.png", default=None, help="plot bound widths and values per step")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    path = ObservedPath.load(model, args.path)
    analysis = analyse_path(path, args.reward, args.assumptions, args.bounds, args.optimistic, args.baseline,
                            "mc" if args.mc_samples else "exact", args.mc_samples or 1, args.seed)
    if args.json == "-":
        print_json(analysis.to_dict())
        return 0
    print(model_line(model))
    print(analysis)
    if args.json:
        print_json(analysis.to_dict(), args.json)
        print(f"JSON written to {args.json}")
    if args.plot:
        from ..icfmdp.plots import plot_analysis
        plot_analysis(analysis, args.plot)
        print(f"plot written to {args.plot}")
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value
