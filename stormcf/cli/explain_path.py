"""``stormcf explain-path MODEL --path P.json --reward R --k 3``: which at most k different actions would most likely
have led to a better outcome of an observed path (seed 001), with the values for every k' <= k_max, sampled
counterfactual explanations, and Storm's re-check of the policy."""
from __future__ import annotations

import argparse
import sys

from ..explain import ExplanationProblem, explain_path, parse_pins
from ..paths import ObservedPath
from .common import add_model_arguments, model_from_args, model_line, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain-path", help="counterfactual explanations of an observed path with at most k changed "
                       "actions (Gumbel-max counterfactual MDP, Algorithm 2 of Tsirtsis et al. 2021)")
    add_model_arguments(p)
    p.add_argument("--path", required=True, metavar="P.json",
                   help='observed path: {"steps": [{"state": {...}, "action": "a"}, ...]} (final_state optional)')
    p.add_argument("--reward", metavar="R", default=None,
                   help="reward model (state and state-action rewards); optional if the model has only one")
    p.add_argument("--k", type=int, required=True, help="change budget: at most k actions differ from the path")
    p.add_argument("--k-max", type=int, default=None, help="also report h(s0, T, k') for k' <= K (default: k)")
    p.add_argument("--estimator", choices=("exact", "mc"), default="exact",
                   help="counterfactual probabilities: exact closed form (default) or Monte Carlo as in the paper")
    p.add_argument("--mc-samples", type=int, default=1000, metavar="D", help="posterior samples per step for mc")
    p.add_argument("--explanations", type=int, default=1000, metavar="N",
                   help="counterfactual paths sampled from the policy for the explanation summary (0: none)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Monte Carlo estimator and of the sampling")
    p.add_argument("--pin", action="append", default=[], metavar="T:ACTION",
                   help="step T (negative: from the end) must play ACTION, e.g. 0:STR or -1:END; repeatable")
    p.add_argument("--forbid", action="append", default=[], metavar="ACTION",
                   help="never change to ACTION (keeping it where it was observed stays allowed); repeatable")
    p.add_argument("--minimize", action="store_true", help="minimize the outcome (cost models)")
    p.add_argument("--baselines", action="store_true",
                   help="also evaluate the random, greedy and noisy-greedy baselines (paper App. D)")
    p.add_argument("--verify", action="store_true",
                   help="cross-check the DP with Storm's optimum of the enhanced (t, s, l) MDP for every k' <= k_max")
    p.add_argument("--json", metavar="OUT", default=None, help="write the result as JSON to OUT ('-': stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    path = ObservedPath.load(model, args.path)
    problem = ExplanationProblem(path, args.reward, k=args.k, k_max=args.k_max, estimator=args.estimator,
                                 samples=args.mc_samples, seed=args.seed, pins=parse_pins(args.pin),
                                 forbidden=frozenset(args.forbid), minimize=args.minimize)
    result = explain_path(problem, explanations=args.explanations, cross_check=args.verify, baselines=args.baselines)
    if args.json != "-":
        print(model_line(model))
        print(result)
    if args.json:
        print_json({"model_summary": model.summary(), **result.to_dict()}, args.json)
    for failure in result.failures:
        print(f"stormcf: internal error: Storm disagrees with the DP: {failure}", file=sys.stderr)
    return 1 if result.failures else 0
