"""``stormcf check MODEL --prop '...' [--prop ...] [--strategy S.json]``: Storm's values of properties under a
strategy (or on the model itself: any property Storm answers there, incl. multi-objective queries);
``--strategies FILE.jsonl``: one strategy per line, every property under each, one model build for the batch.

Exit codes: 0, or with ``--fail-if-violated`` 3 when a bounded property does not hold and else 6 when one is
undecided at the precision of Storm's floating-point value (2: bad input, 1: internal; batches: 4 when an item
failed, which takes precedence over 3 and 6)."""
from __future__ import annotations

import argparse

from ..errors import PropertyError, StrategyError
from ..examples import read_json
from .common import (add_batch_arguments, add_input_argument, add_json_argument, add_model_arguments, batch_exit_code,
                     emit, model_file, model_from_args, require_single, run_batch_command)

#: the exit codes of ``--fail-if-violated`` when a bounded property does not hold, and when (none does not hold but)
#: the error interval of a floating-point value contains a bound
VIOLATED, UNDECIDED = 3, 6


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="model-check properties on the DTMC induced by a strategy (or on the model)")
    add_model_arguments(p)
    strategies = p.add_mutually_exclusive_group()
    add_input_argument(strategies, "--strategy", "-s", metavar="S.json",
                       help="strategy file; without it the model itself is checked (then an MDP property needs "
                            "Pmin/Pmax)")
    add_input_argument(strategies, "--strategies", metavar="FILE.jsonl",
                       help="a batch: one strategy per line (JSON lines), every property checked under each")
    p.add_argument("--prop", "-p", action="append", default=[], metavar="PCTL",
                   help="""a property, e.g. 'P=? [F "rejected"]'; repeatable (one model build for all)""")
    add_input_argument(p, "--props", metavar="FILE.props", help="a properties file as Storm's command line reads it")
    p.add_argument("--exact", action="store_true", help="exact rational arithmetic (stormpy.Rational)")
    p.add_argument("--fail-if-violated", action="store_true",
                   help=f"exit with code {VIOLATED} when a bounded property does not hold, else {UNDECIDED} when "
                        f"one is undecided at the precision of Storm's floating-point value (--exact decides)")
    add_json_argument(p)
    add_batch_arguments(p, "--strategies")
    p.set_defaults(run=run, analysis="stormcf.modelcheck.task:PropertyCheck")


def run(args: argparse.Namespace) -> int:
    from ..batch import read_jsonl
    from ..modelcheck import read_properties
    from ..modelcheck.task import PropertyCheck
    from ..properties import require_distinct_names
    if not args.prop and not args.props:
        raise PropertyError("no property given: use --prop PCTL (repeatable) or --props FILE")
    properties = list(args.prop) + (read_properties(args.props) if args.props else [])
    require_distinct_names(properties)
    analysis = PropertyCheck(properties=properties, exact=args.exact)
    if args.strategies:
        summary = run_batch_command(args, model_file(args), analysis, read_jsonl(args.strategies, StrategyError))
        return batch_exit_code(summary) or _verdict_code(args, summary.statuses)
    require_single(args, "--strategies")
    model = model_from_args(args)
    strategy = read_json(args.strategy, StrategyError) if args.strategy else None
    result = analysis(model, strategy, args.strategy, args.context)
    emit(result, args)
    return _verdict_code(args, {result.status: 1})


def _verdict_code(args: argparse.Namespace, statuses: dict[str, int]) -> int:
    """The exit code of ``--fail-if-violated`` for results with these statuses (status -> count)."""
    if not args.fail_if_violated:
        return 0
    return VIOLATED if statuses.get("violated") else (UNDECIDED if statuses.get("undecided") else 0)
