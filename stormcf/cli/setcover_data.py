"""``stormcf setcover-data OUT.npz``: generate the paper's random instance and agents and label every agent with its
optimal CFE (one Storm call for the whole family)."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from ..errors import OptionError
from .common import (add_json_argument, add_output_argument, add_solver_argument, non_negative_int, positive_int,
                     probability, require_solver_used, run_single)


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("setcover-data", help="generate the paper's random instance and agents, label them with "
                                             "their optimal CFE (one Storm call for the whole family)")
    add_output_argument(d, "out", metavar="OUT.npz", help="labelled data set (agents, CFEs, costs, the instance)")
    d.add_argument("--features", "-n", type=positive_int, default=20, help="n (default 20)")
    d.add_argument("--actions", "-A", type=positive_int, default=100, help="A (default 100)")
    d.add_argument("--draws", type=positive_int, default=100_000,
                   help="agents drawn before de-duplication (default 100000)")
    d.add_argument("--p-f", type=probability, default=0.68, help="feature probability in [0, 1] (default 0.68)")
    d.add_argument("--p-a", type=probability, default=0.5, help="effect probability in [0, 1] (default 0.5)")
    d.add_argument("--costs", choices=LazyChoices("stormcf.setcover.data", "COST_MODES"), default="real",
                   metavar="COSTS", help="coordinate costs: %(choices)s (default real: U(0, n))")
    d.add_argument("--classifier", choices=LazyChoices("stormcf.setcover.data", "THRESHOLDS"), default="ones",
                   metavar="THRESHOLDS", help="thresholds: %(choices)s (default ones)")
    d.add_argument("--groups", choices=LazyChoices("stormcf.setcover.data", "GROUPINGS"), default=None,
                   metavar="GROUPING",
                   help="Table 4's grouped data: manual (each of 5 groups may take a random half of the actions) or "
                        "probabilistic (5 groups with their own actions, p_a = 0.4 .. 0.8; --p-a is then unused)")
    d.add_argument("--method", choices=LazyChoices("stormcf.setcover.family", "FAMILY_METHODS", ("milp",)),
                   default="storm", metavar="ENGINE", help="labelling engine: %(choices)s (default storm)")
    add_solver_argument(d, "the milp engine's programmes (--method milp)")
    d.add_argument("--max-size", type=positive_int, default=3, help="drop CFEs with more actions (default 3)")
    d.add_argument("--seed", type=non_negative_int, default=0)
    add_output_argument(d, "--instance-out", metavar="INSTANCE.json", default=None, help="also write the instance")
    add_json_argument(d)
    d.set_defaults(run=run, analysis="stormcf.setcover.task:DataSetGeneration")


def run(args: argparse.Namespace) -> int:
    from ..setcover.engines import PROGRAMMES
    from ..setcover.space import SpaceTooLarge
    from ..setcover.task import DataSetGeneration
    require_solver_used(args, args.method in PROGRAMMES, "--method milp")
    analysis = DataSetGeneration(n=args.features, actions=args.actions, draws=args.draws, p_f=args.p_f,
                                 p_a=args.p_a, costs=args.costs, thresholds=args.classifier, groups=args.groups,
                                 method=args.method, max_size=args.max_size, seed=args.seed, solver=args.solver)
    try:
        return run_single(args, analysis, None, None, None,
                          save=lambda result: result.save(args.out, args.instance_out))
    except SpaceTooLarge as err:
        advice = "use fewer features or the MILP engine (--method milp)"
        raise OptionError(f"--features {args.features} (-n): {SpaceTooLarge(err.space, advice)}") from None
