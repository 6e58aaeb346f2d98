"""``stormcf recourse MODEL --target LABEL --cost REWARD`` and ``stormcf recourse --dataset adult --instance I``:
ordered, consequence-aware action plans from a rejected instance to an accepted one (seed 002)."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from ..errors import OptionError, RecourseError
from .common import (add_batch_arguments, add_input_argument, add_json_argument, add_model_arguments, add_plot_argument,
                     add_solver_argument, batch_exit_code, model_from_args, non_negative_int, positive_int,
                     require_single, require_solver_used, run_batch_command, run_single)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recourse", help="ordered action plans with consequence-aware costs that turn a rejected "
                       "instance into an accepted one (Naumann & Ntoutsi), with Storm's least cost")
    add_model_arguments(p, required=False)                     # MODEL, or --dataset
    prism = p.add_argument_group("PRISM front (MODEL)")
    prism.add_argument("--target", metavar="LABEL", help='the label of accepted states, e.g. "accept"')
    prism.add_argument("--cost", metavar="REWARD", help="reward model of the consequence-aware cost c = b*g")
    prism.add_argument("--effort", metavar="REWARD", help="reward model of the undiscounted effort b (optional)")
    prism.add_argument("--threshold", type=float, default=1.0, metavar="THETA",
                       help="P(accept) a plan needs on stochastic models (default 1)")
    data = p.add_argument_group("data sets of the paper")
    data.add_argument("--dataset", choices=LazyChoices("stormcf.recourse.datasets", "DATASETS"), metavar="DATASET",
                      help="%(choices)s: Adult or German credit (shipped, UCI, CC BY 4.0)")
    data.add_argument("--instance", type=non_negative_int, default=None, metavar="I",
                      help="the I-th rejected training row in the seeded order (default 0)")
    add_input_argument(data, "--instances", metavar="FILE.jsonl", help='a batch: one instance per line, I or '
                       '{"instance": I}')
    data.add_argument("--scf", action="store_true", help="minimize the plain effort (the paper's scf), no discount")
    data.add_argument("--grid", type=_grid_points, metavar="K",
                      help="discretise every value interval into K values (then Storm's least cost applies)")
    data.add_argument("--authors-rounding", action="store_true",
                      help="the authors' roundings (states 3, efforts 4, Gower 2 decimals, changes >= 0.1)")
    ga = p.add_argument_group("BRKGA (defaults: the paper's)")
    ga.add_argument("--objectives", default=None, metavar="LIST",
                    help="cost,gower,freq or a subset with cost (default all)")
    ga.add_argument("--seed", type=non_negative_int, default=1, help="seed of the GA (default 1)")
    ga.add_argument("--generations", type=positive_int, default=150, metavar="G",
                    help="default 150 (with the initial one)")
    ga.add_argument("--offspring", type=positive_int, default=400, metavar="N",
                    help="children per generation (default 400)")
    ga.add_argument("--mutants", type=non_negative_int, default=100, metavar="N",
                    help="mutants per generation (default 100)")
    ga.add_argument("--bias", type=float, default=0.7, metavar="RHO", help="P(gene from the elite) (default 0.7)")
    ga.add_argument("--dedupe", choices=("objectives", "phenotype"), default="objectives",
                    help="duplicates are equal objective vectors (the authors') or equal plans")
    p.add_argument("--no-exact", action="store_true", help="skip Storm's least cost on the plan MDP")
    p.add_argument("--storm-front", action="store_true", help="also Storm's achievable (cost, Gower) set "
                   "(multi-objective, deterministic models) and the check that every plan lies inside it")
    add_solver_argument(p, "the LPs of --storm-front (whether each plan lies inside the achievable set)")
    add_json_argument(p)
    add_plot_argument(p, "draw the front and the actions by position")
    add_batch_arguments(p, "--instances")
    p.set_defaults(run=run, analysis="stormcf.recourse.task:SequentialRecourse")


def _grid_points(text: str) -> int:
    points = positive_int(text)
    if points < 2:
        raise argparse.ArgumentTypeError(f"a value grid needs at least 2 points, got {points}")
    return points


def _dataset(args: argparse.Namespace):
    from ..recourse.problem import AUTHORS_ROUNDING, Rounding
    from ..recourse.task import RecourseData
    return RecourseData(args.dataset, discounted=not args.scf, objectives=_objectives(args),
                        rounding=AUTHORS_ROUNDING if args.authors_rounding else Rounding(), grid=args.grid)


def _objectives(args: argparse.Namespace) -> str:
    from ..recourse.problem import OBJECTIVES
    return args.objectives if args.objectives is not None else ",".join(OBJECTIVES)


def _require_front_options(args: argparse.Namespace) -> None:
    """Refuse the options of one front with the other (they would be ignored)."""
    if args.dataset is not None:
        given = [flag for flag, value in (("--target", args.target), ("--cost", args.cost), ("--effort", args.effort),
                                          ("--constants", args.constants)) if value is not None]
        given += ["--threshold"] if args.threshold != 1.0 else []
        given += ["--state-names"] if args.state_names != "valuation" else []
        if given:
            raise RecourseError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to the PRISM front "
                                f"(MODEL), not to --dataset {args.dataset}")
    elif args.model is not None:
        given = [flag for flag, value in (("--instance", args.instance), ("--grid", args.grid)) if value is not None]
        given += [flag for flag, on in (("--scf", args.scf), ("--authors-rounding", args.authors_rounding)) if on]
        if given:
            raise RecourseError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to the data sets "
                                f"(--dataset), not to the PRISM front ({args.model})")


def _shared(args: argparse.Namespace):
    """What the instance is read against: the data set's problems (instance -> problem), or the PRISM front."""
    if (args.model is None) == (args.dataset is None):
        raise RecourseError("give either a PRISM MODEL (with --target and --cost) or --dataset adult|german")
    if args.dataset is not None:
        return _dataset(args).load()
    if args.target is None or args.cost is None:
        raise RecourseError(f"{args.model}: the PRISM front needs --target LABEL and --cost REWARD")
    from ..recourse import PrismRecourse
    return PrismRecourse(model_from_args(args), args.target, args.cost, args.effort, _objectives(args),
                         args.threshold)


def run(args: argparse.Namespace) -> int:
    from ..batch import read_jsonl
    from ..recourse import BRKGASettings
    from ..recourse.task import SequentialRecourse
    _require_front_options(args)
    require_solver_used(args, args.storm_front, "--storm-front")
    ga = BRKGASettings(args.offspring, args.mutants, args.bias, args.generations, args.seed, args.dedupe)
    analysis = SequentialRecourse(ga=ga, exact=not args.no_exact, achievable=args.storm_front, solver=args.solver)
    if args.instances:
        if args.dataset is None or args.model is not None:
            raise RecourseError("--instances lists instances of a data set (--dataset adult|german); the PRISM "
                                "front's instance is its model's initial state")
        if args.plot:
            raise OptionError("--plot draws one front; it does not apply to --instances")
        return batch_exit_code(run_batch_command(args, _dataset(args), analysis,
                                                 read_jsonl(args.instances, RecourseError)))
    require_single(args, "--instances")
    return run_single(args, analysis, _shared(args), args.instance or 0, "--instance", plot=_plot)


def _plot(result, out: str) -> str:
    from ..recourse.plots import plot_result                     # matplotlib only when a plot is asked for
    return plot_result(result, out)
