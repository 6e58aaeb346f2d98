"""``stormcf strategy MODEL --strategy S.json --prop 'P<=0.2 [F "rejected"]'``: counterfactual strategies (seed 000);
``--require PROP`` (repeatable): bounds that must hold as well, all at once; ``--strategies FILE.jsonl`` and/or
several ``--prop``: a batch of every strategy with every bound, one model build."""
from __future__ import annotations

import argparse

from ..errors import OptionError, StrategyError
from ..examples import read_json
from .common import (Deprecated, add_batch_arguments, add_input_argument, add_json_argument, add_model_arguments,
                     add_output_argument, add_plot_argument, add_solver_argument, batch_exit_code, emit, model_file,
                     model_from_args, non_negative_int, positive_int, require_single, run_batch_command,
                     status_exit_code)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("strategy", help="the closest strategy that meets probability and expected-reward bounds "
                                        "(counterfactual strategies, Kobialka et al.)",
                       description="The closest strategy that meets the bounds: probabilities (P<=, P>=, also until) and "
                                   "expected rewards (R<=, R>=), one or several at once (--require); the default "
                                   "time limit is 600 s (the search is anytime: the best strategy Storm checked so "
                                   "far is the answer when it ends, and the first Ctrl-C gives it too).")
    add_model_arguments(p)
    strategies = p.add_mutually_exclusive_group(required=True)
    add_input_argument(strategies, "--strategy", "-s", metavar="S.json", help="the initial strategy σ")
    add_input_argument(strategies, "--strategies", metavar="FILE.jsonl",
                       help="a batch: one initial strategy per line (JSON lines), each with every --prop")
    p.add_argument("--prop", "-p", action="append", metavar="PCTL",
                   help="""the bound to meet, e.g. 'P<=0.2 [F "rejected"]', 'P<=0.3 [!"safe" U "bad"]', """
                        """'R{"cost"}<=5 [F "done"]' (also <, and >=/> when sound); repeatable: a batch of every """
                        "strategy with every bound")
    p.add_argument("--require", action="append", default=[], metavar="PCTL",
                   help="a bound that must hold too (repeatable: all at once, with each --prop)")
    p.add_argument("-r", dest="require", action=Deprecated, append=True,
                   new="--require PCTL (-r is --reward in icfmdp and explain-path)")
    p.add_argument("--weights", "-w", default="1,1,1", metavar="R0,R1,RINF",
                   help="weights of d = r0*d0 + r1*d1 + rinf*dinf (default 1,1,1)")
    control = p.add_mutually_exclusive_group()
    control.add_argument("--controllable-actions", metavar="A,B", help="only these PRISM actions may change")
    control.add_argument("--controllable-states", metavar="EXPR",
                         help="only states satisfying this label or PRISM expression may change")
    add_solver_argument(p, "the d0 MILP and the MIQCQP (auto: the exact special cases first, the d0 MILP on HiGHS "
                           "and SCIP side by side)")
    p.add_argument("--diverse", type=positive_int, default=1, metavar="N", help="compute N diverse counterfactuals")
    p.add_argument("--diversity-weight", type=float, default=2.0, metavar="LAMBDA", help="λ (default 2)")
    p.add_argument("--epsilon", type=float, default=None, metavar="E",
                   help="any strategy with d <= E (an ε-counterfactual) instead of the closest one")
    p.add_argument("--exact", action="store_true", help="also check the answer in exact rational arithmetic")
    add_json_argument(p)
    add_output_argument(p, "--dot", metavar="OUT", help="draw the changed states and their steps (Graphviz): OUT.png, "
                        ".svg or .pdf rendered by Graphviz's dot program, any other name the DOT text")
    p.add_argument("--dot-states", type=non_negative_int, default=None, metavar="N",
                   help="--dot draws at most N changed states, the largest changes first (default 12; 0: all)")
    add_plot_argument(p, "draw the changed probabilities, σ beside σ*")
    add_batch_arguments(p, "--strategies or several --prop")
    p.set_defaults(run=run, analysis="stormcf.counterfactual.task:CounterfactualStrategies")


def run(args: argparse.Namespace) -> int:
    from ..batch import Item, read_jsonl
    from ..counterfactual.dot import drawing_format, write_drawing
    from ..counterfactual.result import CounterfactualResult
    from ..counterfactual.task import CounterfactualStrategies, strategy_items
    if not args.prop and not args.require:
        raise OptionError("give the bound to meet with --prop (or the bounds that must all hold with --require)")
    if args.dot_states is not None and not args.dot:
        raise OptionError("--dot-states applies to the drawing: give --dot OUT")
    batch = bool(args.strategies) or len(args.prop or []) > 1
    analysis = CounterfactualStrategies(
        weights=args.weights, epsilon=args.epsilon, controllable_states=args.controllable_states,
        controllable_actions=args.controllable_actions.split(",") if args.controllable_actions is not None else None,
        diverse=args.diverse, diversity_weight=args.diversity_weight, solver=args.solver, exact=args.exact)
    if batch:
        if args.dot or args.plot:
            raise OptionError("--dot and --plot draw one counterfactual; they do not apply to a batch")
        strategies = (read_jsonl(args.strategies, StrategyError) if args.strategies
                      else [Item(0, args.strategy, read_json(args.strategy, StrategyError))])
        items = strategy_items(strategies, args.prop or [None], args.require)
        return batch_exit_code(run_batch_command(args, model_file(args), analysis, items))
    require_single(args, "--strategies or several --prop")
    fmt = drawing_format(args.dot) if args.dot else None                  # Graphviz missing: refused before work
    data = {"strategy": read_json(args.strategy, StrategyError), "property": (args.prop or [None])[0],
            "bounds": args.require}
    result = analysis(model_from_args(args), data, args.strategy, args.context)
    assert isinstance(result, CounterfactualResult)     # what CounterfactualStrategies answers
    emit(result, args, plot=_plot)
    if args.dot:
        write_drawing(result, args.dot, *([] if args.dot_states is None else [args.dot_states or None]))
        if args.json != "-":
            print(f"drawing written to {args.dot}" + (f" (Graphviz DOT; render it with: dot -Tpng {args.dot} -o "
                                                      "drawing.png)" if fmt == "dot" else ""))
    return status_exit_code(result)


def _plot(result, out: str) -> str:
    from ..counterfactual.plots import plot_changes              # matplotlib only when a plot is asked for
    return plot_changes(result, out)
