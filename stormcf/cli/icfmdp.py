"""``stormcf icfmdp MODEL --path P.json --reward R``: robust counterfactual policy of an observed path (seed 004)."""
from __future__ import annotations

import argparse

from ..counterfactual_mdp import ESTIMATORS
from ..icfmdp import ASSUMPTIONS, BOUNDS_METHODS, ICFMDPProblem, solve_icfmdp
from ..modes import Optimization
from ..paths import ObservedPath
from .common import add_json_argument, add_model_arguments, add_plot_argument, emit, model_from_args, non_negative_int, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("icfmdp", help="interval counterfactual MDP of an observed path and its robust policy "
                                      "(Lally et al.), optionally against the Gumbel-max SCM baseline")
    add_model_arguments(p)
    p.add_argument("--path", required=True, metavar="P.json", help='observed path: {"steps": [{"state": {...}, '
                   '"action": "..."}, ...], "final_state": {...}}')
    p.add_argument("--reward", "-r", default=None, metavar="NAME",
                   help="PRISM reward model (state and state-action rewards; default: the only one)")
    p.add_argument("--minimize", action="store_true", help="the reward is a cost: the policy minimizes it")
    p.add_argument("--assumptions", choices=ASSUMPTIONS, default="cs+m",
                   help="cs+m: counterfactual stability and monotonicity (default); cs: stability only; none")
    p.add_argument("--bounds", choices=BOUNDS_METHODS, default="closed",
                   help="closed-form bounds (default) or one exact LP per transition (small models)")
    p.add_argument("--optimistic", action="store_true", help="also the optimistic (best-case) policy")
    p.add_argument("--baseline", choices=("gumbel",), default=None, help="also the Gumbel-max SCM policy")
    p.add_argument("--estimator", choices=ESTIMATORS, default="exact",
                   help="Gumbel-max probabilities of the baseline: exact closed form (default) or Monte Carlo")
    p.add_argument("--mc-samples", type=positive_int, metavar="N", default=10_000,
                   help="posterior samples per (t, s, a) for --estimator mc (default 10000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the Monte Carlo baseline (default 0)")
    add_json_argument(p)
    add_plot_argument(p, "plot bound widths and values per step")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    problem = ICFMDPProblem(ObservedPath.load(model, args.path), args.reward,
                            Optimization.MINIMIZE if args.minimize else Optimization.MAXIMIZE, args.assumptions,
                            args.bounds, args.optimistic, args.baseline, args.estimator, args.mc_samples, args.seed)
    result = solve_icfmdp(problem)
    emit(result, args, plot=_plot)
    return 0


def _plot(result, out: str) -> str:
    from ..icfmdp.plots import plot_analysis                     # matplotlib only when a plot is asked for
    return plot_analysis(result, out)
