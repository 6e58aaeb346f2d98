"""``stormcf info MODEL``: sizes and vocabulary of a model, read straight from Storm's model (no explicit model, no
numpy: on a small model the command costs little more than Storm's parse and build)."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import add_json_argument, add_model_arguments, emit

if TYPE_CHECKING:
    from ..modelinfo import ModelFacts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="states, choices, transitions, labels, actions, reward models, variables")
    add_model_arguments(p)
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..modelinfo import ModelInfo
    emit(ModelInfo(facts_from_args(args)), args)
    return 0


def facts_from_args(args: argparse.Namespace) -> ModelFacts:
    from ..storm import model_facts
    return model_facts(args.model, args.constants, args.state_names)
