"""Arguments and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..model import ExplicitModel
from ..storm import load_model


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="PRISM (.prism/.nm/.pm), JANI (.jani) or DRN (.drn) file")
    parser.add_argument("--constants", "-c", metavar="N=3,p=0.5", default=None,
                        help="values of undefined constants, PRISM style")
    parser.add_argument("--state-names", metavar="SCHEME", default="valuation",
                        help="how states are named: valuation (s=3 & d=0), labels, index, or a template like '{s}/{d}'")


def model_from_args(args: argparse.Namespace) -> ExplicitModel:
    model = load_model(args.model, constants=args.constants)
    return model.with_naming(args.state_names) if args.state_names != "valuation" else model


def print_json(data: Any, out: str | None = None) -> None:
    """JSON to stdout, or to the file ``out``."""
    text = json.dumps(data, indent=1, default=_json_default) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)


def _json_default(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    if hasattr(x, "numerator"):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def model_line(model: ExplicitModel) -> str:
    return (f"{model.source}: {model.model_type.upper()} with {model.n_states} states, {model.n_choices} choices, "
            f"{model.n_transitions} transitions ({int(model.decision_states.sum())} decision states)")
