"""``stormcf repair MODEL -p BOUND [-p BOUND ...] --nominal p=0.3,q=0.5``: the closest valuation of a parametric PRISM
model's parameters (its undefined ``double`` constants) that meets every bound, proven for up to three parameters
(issue 33); ``--instances FILE.jsonl``: a batch of nominal valuations (and bounds), one model build."""
from __future__ import annotations

import argparse

from ..errors import OptionError, ParameterError, StrategyError
from ..examples import read_json
from .common import (add_batch_arguments, add_input_argument, add_json_argument, add_plot_argument,
                     batch_exit_code, non_negative_float, require_single, run_batch_command,
                     run_single)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("repair", help="the closest change of a parametric model's probabilities that meets the bounds",
                       description="The valuation of a parametric PRISM model's parameters (its undefined double "
                                   "constants) closest to the nominal one that meets every bound, with Storm's proof "
                                   "(parameter lifting) that nothing closer does for up to three parameters; every "
                                   "value shown is Storm's. The default time limit is 600 s (the search is anytime: "
                                   "the best valuation Storm confirmed is the answer when it ends, and the first "
                                   "Ctrl-C gives it too).")
    add_input_argument(p, "model", metavar="MODEL",
                       help="a PRISM program (.prism/.pm/.nm); its undefined double constants are the parameters")
    p.add_argument("--constants", "-c", metavar="N=3,...", default=None,
                   help="values of the other undefined constants, PRISM style")
    p.add_argument("--prop", "-p", action="append", default=[], metavar="BOUND",
                   help="""a bound that must hold, e.g. 'P<=0.01 [F "error"]', 'R{"cost"}<=5 [F "done"]' """
                        "(repeatable: all at once); on an MDP as Storm decides it (every scheduler, or the one its "
                        "min/max names)")
    p.add_argument("--nominal", metavar="NAME=VALUE,...",
                   help="the parameters' values today, e.g. pL=0.8,pK=0.9 (decimals and fractions are read exactly)")
    p.add_argument("--region", metavar="'LO<=NAME<=HI,...'",
                   help="where to search (default: each parameter in [0.001, 0.999]), e.g. '0.5<=pL<=0.999'")
    p.add_argument("--norm", choices=("linf", "l1", "l2"), default="linf",
                   help="the distance: the largest change (linf, default), their sum (l1) or the Euclidean (l2)")
    p.add_argument("--scale", choices=("none", "width"), default="none",
                   help="each parameter's change as it is (none, default) or divided by the region's width (width)")
    p.add_argument("--tolerance", type=non_negative_float, default=None, metavar="T",
                   help="the absolute gap allowed between a proven optimum and the proven lower bound (default 1e-05)")
    p.add_argument("--gap", type=non_negative_float, default=0.0, metavar="G",
                   help="the relative gap allowed (e.g. 0.01: within 1%% of the proven bound; default 0)")
    add_input_argument(p, "--strategy", "-s", metavar="S.json",
                       help="on an MDP: the bounds are asked of the DTMC this memoryless strategy induces")
    p.add_argument("--exact", action="store_true",
                   help="region proofs and checks in exact rational arithmetic (default: exact checks on models of "
                        "up to 5,000 transitions, proofs by parameter lifting with sound value iteration)")
    add_json_argument(p)
    add_plot_argument(p, "draw the bounds' boundaries, the nominal valuation and the answer (one or two parameters)")
    add_input_argument(p, "--instances", metavar="FILE.jsonl",
                       help='a batch: one item per line, {"nominal": {"p": 0.3, ...}} with "bounds": [...] (or the '
                            "--prop bounds)")
    add_batch_arguments(p, "--instances")
    p.set_defaults(run=run, analysis="stormcf.repair.task:ModelRepair")


def run(args: argparse.Namespace) -> int:
    from ..batch import read_jsonl
    from ..repair.problem import TOLERANCE
    from ..repair.task import ModelRepair, ParametricFile
    strategy = read_json(args.strategy, StrategyError) if args.strategy else None
    analysis = ModelRepair(region=args.region, norm=args.norm, scale=args.scale, strategy=strategy,
                           strategy_source=args.strategy,
                           tolerance=TOLERANCE if args.tolerance is None else args.tolerance, gap=args.gap,
                           exact=True if args.exact else None)
    source = ParametricFile(args.model, args.constants)
    if args.instances:
        if args.plot:
            raise OptionError("--plot draws one answer; it does not apply to --instances")
        if args.nominal:
            raise OptionError("--nominal is the single run's valuation; each line of --instances gives its own")
        items = [_item(item, args.prop) for item in read_jsonl(args.instances, ParameterError)]
        return batch_exit_code(run_batch_command(args, source, analysis, items))
    require_single(args, "--instances")
    if not args.prop:
        raise OptionError("give the bounds to meet with --prop (e.g. -p 'P<=0.01 [F \"error\"]')")
    if args.nominal is None:
        raise OptionError("give the parameters' values today with --nominal (e.g. --nominal p=0.3,q=0.5)")
    return run_single(args, analysis, source.load(), {"nominal": args.nominal, "bounds": args.prop}, args.model,
                      plot=_plot)


def _item(item, bounds: list[str]):
    """An --instances line with the --prop bounds where it gives none."""
    from ..batch import Item
    data = item.data
    if item.error is None and isinstance(data, dict) and "bounds" not in data and bounds:
        data = {**data, "bounds": list(bounds)}
    return Item(item.index, item.where, data, item.error)


def _plot(result, out: str) -> str:
    from ..repair.plots import plot_repair                 # matplotlib only when a plot is asked for
    return plot_repair(result, out)
