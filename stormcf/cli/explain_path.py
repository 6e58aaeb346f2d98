"""``stormcf explain-path MODEL --path P.json --reward R --k 3``: which at most k different actions would most likely
have led to a better outcome of an observed path (Tsirtsis et al. 2021), with the values for every k' <= k_max, sampled
counterfactual explanations, and Storm's re-check of the policy; ``--paths FILE.jsonl``: one observed path per line,
one model build for the batch."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from .common import (add_batch_arguments, add_input_argument, add_json_argument, add_model_arguments, add_plot_argument,
                     mc_samples, non_negative_int, positive_int, run_on_paths)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain-path", help="counterfactual explanations of an observed path with at most k changed "
                       "actions (Gumbel-max counterfactual MDP, Algorithm 2 of Tsirtsis et al. 2021)")
    add_model_arguments(p)
    paths = p.add_mutually_exclusive_group(required=True)
    add_input_argument(paths, "--path", metavar="P.json",
                       help='observed path: {"steps": [{"state": {...}, "action": "a"}, ...]} (final_state optional)')
    add_input_argument(paths, "--paths", metavar="FILE.jsonl", help="a batch: one observed path per line (JSON lines)")
    p.add_argument("--reward", metavar="R", default=None,
                   help="reward model (state and state-action rewards); optional if the model has only one")
    p.add_argument("--k", type=non_negative_int, required=True,
                   help="change budget: at most k actions differ from the path (0: the observed actions' own "
                        "counterfactual outcome)")
    p.add_argument("--k-max", type=non_negative_int, default=None,
                   help="also report the best expected outcome for every budget k' <= K (default: k)")
    p.add_argument("--estimator", choices=LazyChoices("stormcf.counterfactual_mdp.gumbel", "ESTIMATORS"),
                   default="exact", metavar="ESTIMATOR",
                   help="counterfactual probabilities: exact (closed form, default) or mc (Monte Carlo as in the "
                        "paper)")
    p.add_argument("--mc-samples", type=positive_int, default=None, metavar="D",
                   help="posterior samples per step for --estimator mc (default: the problem's, 1000)")
    p.add_argument("--explanations", type=non_negative_int, default=1000, metavar="N",
                   help="counterfactual paths sampled from the policy for the explanation summary (0: none)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the Monte Carlo estimator and of the sampling")
    p.add_argument("--pin", action="append", default=[], metavar="T:ACTION",
                   help="step T (negative: from the end) must play ACTION, e.g. 0:STR or -1:END; repeatable")
    p.add_argument("--forbid", action="append", default=[], metavar="ACTION",
                   help="never change to ACTION (keeping it where it was observed stays allowed); repeatable")
    p.add_argument("--minimize", action="store_true", help="minimize the outcome (cost models)")
    p.add_argument("--baselines", action="store_true",
                   help="also evaluate the random, greedy and noisy-greedy baselines (paper App. D)")
    p.add_argument("--verify", action="store_true",
                   help="cross-check the DP with Storm's optimum of the unrolled (t, s, l) MDP for every k' <= k_max")
    add_json_argument(p)
    add_plot_argument(p, "draw the best expected outcome for every budget k' <= k_max")
    add_batch_arguments(p, "--paths")
    p.set_defaults(run=run, analysis="stormcf.explain.task:PathExplanation")


def run(args: argparse.Namespace) -> int:
    from ..explain import ExplanationProblem, parse_pins
    from ..explain.task import PathExplanation
    from ..modes import Optimization
    analysis = PathExplanation(explanations=args.explanations, cross_check=args.verify, baselines=args.baselines,
                               reward_model=args.reward, k=args.k, k_max=args.k_max, estimator=args.estimator,
                               samples=mc_samples(args, ExplanationProblem.samples), seed=args.seed,
                               pins=parse_pins(args.pin), forbidden=frozenset(args.forbid),
                               optimization=Optimization.MINIMIZE if args.minimize else Optimization.MAXIMIZE)
    return run_on_paths(args, analysis, plot=_plot)


def _plot(result, out: str) -> str:
    from ..explain.plots import plot_values_by_k                 # matplotlib only when a plot is asked for
    return plot_values_by_k(result, out)
