"""Arguments and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any, Callable

from ..model import ExplicitModel
from ..report import Report, write_json
from ..storm import load_model


def add_model_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("model", metavar="MODEL", nargs=None if required else "?", default=None,
                        help="PRISM (.prism/.nm/.pm), JANI (.jani) or DRN (.drn) file")
    parser.add_argument("--constants", "-c", metavar="N=3,p=0.5", default=None,
                        help="values of undefined constants, PRISM style")
    parser.add_argument("--state-names", metavar="SCHEME", default="valuation",
                        help="how states are named: valuation (s=3 & d=0), labels, index, or a template like '{s}/{d}'")


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="OUT", default=None,
                        help="write the result as JSON to OUT ('-': stdout, which then holds only the JSON)")


def model_from_args(args: argparse.Namespace) -> ExplicitModel:
    model = load_model(args.model, constants=args.constants)
    return model.with_naming(args.state_names) if args.state_names != "valuation" else model


def emit(result: Report, args: argparse.Namespace, plot: Callable[[Report, str], None] | None = None) -> None:
    """The result as text on stdout and, with ``--json OUT``, as JSON (``-``: only the JSON on stdout); with
    ``--plot OUT`` also the figure ``plot(result, OUT)`` draws."""
    quiet = args.json == "-"
    if quiet:
        write_json(result.to_dict())
    else:
        if result.model is not None:
            print(model_line(result.model))
        print(result)
        if args.json:
            write_json(result.to_dict(), args.json)
            print(f"JSON written to {args.json}")
    if plot is not None and getattr(args, "plot", None):
        plot(result, args.plot)
        if not quiet:
            print(f"plot written to {args.plot}")


def print_json(data: Any, out: str | None = None) -> None:
    """JSON to stdout, or atomically to the file ``out``."""
    write_json(data, out)


def model_line(model: ExplicitModel) -> str:
    return (f"{model.source}: {model.model_type.upper()} with {model.n_states} states, {model.n_choices} choices, "
            f"{model.n_transitions} transitions ({int(model.decision_states.sum())} decision states)")


def positive_int(text: str) -> int:
    return _bounded_int(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    return _bounded_int(text, 0, "an integer >= 0")


def _bounded_int(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


@contextlib.contextmanager
def stdout_to_stderr(active: bool):
    """With ``--json -`` stdout carries exactly one JSON document: lines solvers print from C code (HiGHS's banner)
    go to stderr meanwhile (file descriptor 1 is redirected, which Python's redirect_stdout cannot do)."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
