"""``stormcf info MODEL``: sizes and vocabulary of a model."""
from __future__ import annotations

import argparse

from .common import add_json_argument, add_model_arguments, emit, model_from_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="states, choices, transitions, labels, actions, reward models, variables")
    add_model_arguments(p)
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..modelcheck import ModelInfo
    emit(ModelInfo(model_from_args(args)), args)
    return 0
