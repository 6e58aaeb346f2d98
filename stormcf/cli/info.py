"""``stormcf info MODEL``: sizes and vocabulary of a model."""
from __future__ import annotations

import argparse

import numpy as np

from .common import add_model_arguments, model_from_args, model_line, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="states, choices, transitions, labels, actions, reward models, variables")
    add_model_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    summary = model.summary()
    if args.json:
        print_json(summary)
        return 0
    print(model_line(model))
    print(f"initial state: {model.state_name(model.initial_state)}")
    print("variables:     " + (", ".join(f"{v} in [{lo}, {hi}]" for v, (lo, hi) in summary["variables"].items())
                               or "none"))
    print("labels:        " + (", ".join(f'"{k}"' for k in summary["labels"]) or "none"))
    print("actions:       " + (", ".join(summary["actions"]) or "none"))
    print("choice names:  " + _choice_naming(model))
    rewards = [f'"{k}" ({", ".join(parts)} rewards)' for k, parts in summary["reward_models"].items()]
    print("reward models: " + (", ".join(rewards) or "none"))
    return 0


def _choice_naming(model) -> str:
    shared = np.flatnonzero(model.shared_action_states)
    if not shared.size:
        return "the action names (no state has two choices of one action)"
    s = int(shared[0])
    return (f"{shared.size} state(s) have several choices of one action, named a#0, a#1, ... in Storm's order "
            f"(e.g. {', '.join(model.enabled_actions(s))} in state {model.state_name(s)})")
