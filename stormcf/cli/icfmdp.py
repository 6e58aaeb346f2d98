"""``stormcf icfmdp MODEL --path P.json --reward R``: robust counterfactual policy of an observed path (seed 004);
``--paths FILE.jsonl``: one observed path per line, one model build for the batch."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from ..errors import OptionError
from .common import (add_batch_arguments, add_input_argument, add_json_argument, add_model_arguments, add_plot_argument,
                     add_solver_argument, mc_samples, non_negative_int, positive_int, require_solver_used,
                     run_on_paths)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("icfmdp", help="interval counterfactual MDP of an observed path and its robust policy "
                                      "(Lally et al.), optionally against the Gumbel-max SCM baseline")
    add_model_arguments(p)
    paths = p.add_mutually_exclusive_group(required=True)
    add_input_argument(paths, "--path", metavar="P.json", help='observed path: {"steps": [{"state": {...}, '
                       '"action": "..."}, ...], "final_state": {...}}')
    add_input_argument(paths, "--paths", metavar="FILE.jsonl", help="a batch: one observed path per line (JSON lines)")
    p.add_argument("--reward", "-r", default=None, metavar="NAME",
                   help="PRISM reward model (state and state-action rewards; default: the only one)")
    p.add_argument("--minimize", action="store_true", help="the reward is a cost: the policy minimizes it")
    p.add_argument("--assumptions", choices=LazyChoices("stormcf.icfmdp.bounds", "ASSUMPTIONS"), default="cs+m",
                   metavar="ASSUMPTIONS",
                   help="cs+m: counterfactual stability and monotonicity (default); cs: stability only; none")
    p.add_argument("--bounds", choices=LazyChoices("stormcf.icfmdp.problem", "BOUNDS_METHODS"), default="closed",
                   metavar="BOUNDS", help="closed: closed-form bounds (default); lp: one exact LP per transition "
                                          "(small models)")
    add_solver_argument(p, "the LPs of --bounds lp")
    p.add_argument("--optimistic", action="store_true", help="also the optimistic (best-case) policy")
    p.add_argument("--baseline", choices=("gumbel",), default=None, help="also the Gumbel-max SCM policy")
    p.add_argument("--estimator", choices=LazyChoices("stormcf.counterfactual_mdp.gumbel", "ESTIMATORS"),
                   default="exact", metavar="ESTIMATOR",
                   help="Gumbel-max probabilities of the baseline: exact (closed form, default) or mc (Monte Carlo)")
    p.add_argument("--mc-samples", type=positive_int, metavar="N", default=None,
                   help="posterior samples per (t, s, a) for --estimator mc (default: the method's, 10000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the Monte Carlo baseline (default 0)")
    add_json_argument(p)
    add_plot_argument(p, "plot bound widths and values per step")
    add_batch_arguments(p, "--paths")
    p.set_defaults(run=run, analysis="stormcf.icfmdp.task:IntervalCounterfactualMDP")


def run(args: argparse.Namespace) -> int:
    from ..icfmdp import ICFMDPSettings
    from ..icfmdp.task import IntervalCounterfactualMDP
    from ..modes import Optimization
    if args.estimator != "exact" and args.baseline is None:
        raise OptionError(f"--estimator {args.estimator} applies to the Gumbel-max baseline only (--baseline gumbel)")
    require_solver_used(args, args.bounds == "lp", "--bounds lp")
    method = ICFMDPSettings(bounds=args.bounds, solver=args.solver, optimistic=args.optimistic, baseline=args.baseline,
                            estimator=args.estimator, samples=mc_samples(args, ICFMDPSettings.samples), seed=args.seed)
    analysis = IntervalCounterfactualMDP(reward=args.reward, optimization=Optimization.MINIMIZE if args.minimize
                                         else Optimization.MAXIMIZE, assumptions=args.assumptions, method=method)
    return run_on_paths(args, analysis, plot=_plot)


def _plot(result, out: str) -> str:
    from ..icfmdp.plots import plot_analysis                     # matplotlib only when a plot is asked for
    return plot_analysis(result, out)
