"""``stormcf setcover INSTANCE.json --agent 0,0,0,0,1``: the optimal counterfactual explanation of one agent
(weighted set cover, seed 003), computed by an engine chosen by name and re-checked by Storm."""
from __future__ import annotations

import argparse

from ..setcover import DEFAULT_METHOD, METHODS, SetCoverProblem, solve_setcover
from ..setcover.data import load_instance
from .common import add_json_argument, emit


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setcover", help="cheapest set of actions that turns an agent positive (set-cover CFE, "
                                        "Naggita et al.), checked by Storm")
    p.add_argument("instance", metavar="INSTANCE", help="instance file (JSON) or a labelled data set (.npz)")
    p.add_argument("--agent", required=True, metavar="0,0,1,...", help="the agent's feature values, in order")
    p.add_argument("--group", default=None, help="the agent's group (its available actions)")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help="bnb (branch and bound, default), dp, milp (HiGHS), storm (Rmin on the projected MDP), "
                        "bruteforce, greedy")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    instance = load_instance(args.instance)
    problem = SetCoverProblem(instance, instance.agent(args.agent, "--agent"), args.group)
    emit(solve_setcover(problem, args.method), args)
    return 0
