"""``stormcf setcover INSTANCE.json --agent 0,0,0,0,1``: the optimal counterfactual explanation of one agent
(weighted set cover, seed 003), computed by an engine chosen by name and re-checked by Storm; ``--agents
FILE.jsonl``: one agent per line, one instance load for the batch."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from ..errors import StateError
from .common import (add_batch_arguments, add_input_argument, add_json_argument, add_solver_argument,
                     batch_exit_code, require_single, require_solver_used, run_batch_command, run_single)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setcover", help="cheapest set of actions that turns an agent positive (set-cover CFE, "
                                        "Naggita et al.), checked by Storm")
    add_input_argument(p, "instance", metavar="INSTANCE", help="instance file (JSON) or a labelled data set (.npz)")
    agents = p.add_mutually_exclusive_group(required=True)
    agents.add_argument("--agent", metavar="0,0,1,...", help="the agent's feature values, in order")
    add_input_argument(agents, "--agents", metavar="FILE.jsonl", help='a batch: one agent per line, [0, 0, 1, ...] or '
                       '{"agent": [...], "group": "g"}')
    p.add_argument("--group", default=None, help="the agent's group (its available actions; in a batch: of the "
                                                 "agents whose line names none)")
    p.add_argument("--method", choices=LazyChoices("stormcf.setcover.engines", "METHODS"), default=None,
                   metavar="METHOD",
                   help="bnb (branch and bound, default), dp, milp (HiGHS), storm (Rmin on the projected MDP), "
                        "bruteforce, greedy")
    add_solver_argument(p, "the milp engine's programmes and the LP bound of a greedy answer")
    add_json_argument(p)
    add_batch_arguments(p, "--agents")
    p.set_defaults(run=run, analysis="stormcf.setcover.task:SetCoverExplanation")


def run(args: argparse.Namespace) -> int:
    from ..batch import read_jsonl
    from ..setcover.engines import PROGRAMMES
    from ..setcover.task import InstanceFile, SetCoverExplanation
    require_solver_used(args, args.method in PROGRAMMES + ("greedy",), "--method milp and greedy")
    settings = {"method": args.method} if args.method is not None else {}
    source = InstanceFile(args.instance)
    analysis = SetCoverExplanation(group=args.group, solver=args.solver, **settings)
    if args.agents:
        return batch_exit_code(run_batch_command(args, source, analysis, read_jsonl(args.agents, StateError)))
    require_single(args, "--agents")
    return run_single(args, analysis, source.load(), args.agent, "--agent")
