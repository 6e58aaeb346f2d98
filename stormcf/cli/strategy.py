"""``stormcf strategy MODEL --strategy S.json --prop 'P<=0.2 [F "rejected"]'``: counterfactual strategies (seed 000)."""
from __future__ import annotations

import argparse

from ..counterfactual import CounterfactualProblem, diverse_counterfactuals, to_dot
from ..counterfactual.solve import SOLVERS
from ..strategy import Strategy
from ..report import write_json, write_text
from .common import add_json_argument, add_model_arguments, add_output_argument, model_from_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("strategy", help="the smallest change to a strategy that brings P(F bad) under a bound")
    add_model_arguments(p)
    p.add_argument("--strategy", "-s", required=True, metavar="S.json", help="the initial strategy σ")
    p.add_argument("--prop", "-p", required=True, metavar="PCTL",
                   help="""the bound to meet, e.g. 'P<=0.2 [F "rejected"]' (also P<, and P>=/P> when sound)""")
    p.add_argument("--weights", "-w", default="1,1,1", metavar="R0,R1,RINF",
                   help="weights of d = r0*d0 + r1*d1 + rinf*dinf (default 1,1,1)")
    control = p.add_mutually_exclusive_group()
    control.add_argument("--controllable-actions", metavar="A,B", help="only these PRISM actions may change")
    control.add_argument("--controllable-states", metavar="EXPR",
                         help="only states satisfying this label or PRISM expression may change")
    p.add_argument("--solver", choices=SOLVERS, default="auto",
                   help="auto (exact special cases, else Gurobi, else SCIP), gurobi, scip, highs")
    p.add_argument("--time-limit", type=float, default=600.0, metavar="SECONDS", help="per solve (default 600)")
    p.add_argument("--diverse", type=int, default=1, metavar="N", help="compute N diverse counterfactuals")
    p.add_argument("--diversity-weight", type=float, default=2.0, metavar="LAMBDA", help="λ (default 2)")
    p.add_argument("--epsilon", type=float, default=None, metavar="E",
                   help="any strategy with d <= E (an ε-counterfactual) instead of the closest one")
    p.add_argument("--exact", action="store_true", help="also check the answer in exact rational arithmetic")
    add_json_argument(p)
    add_output_argument(p, "--dot", metavar="OUT", help="write a Graphviz drawing of the changes to OUT")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    sigma = Strategy.load(model, args.strategy)
    actions = args.controllable_actions.split(",") if args.controllable_actions is not None else None
    problem = CounterfactualProblem(sigma, args.prop, args.weights, controllable_actions=actions,
                                    controllable_states=args.controllable_states, epsilon=args.epsilon)
    result = diverse_counterfactuals(problem, args.diverse, args.diversity_weight, args.solver, args.time_limit,
                                     args.exact)
    if args.json != "-":
        print(result)
    if args.json:
        write_json(result.to_dict(), args.json, stream=args.result_stream)
    if args.dot:
        write_text(to_dot(result), args.dot)
    return 0
