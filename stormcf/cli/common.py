"""Arguments and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Callable

from .. import console
from ..errors import OutputError
from ..model import ExplicitModel
from ..plotting import figure_format
from ..report import Report, write_json
from ..storm import load_model


def add_model_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("model", metavar="MODEL", nargs=None if required else "?", default=None,
                        help="PRISM (.prism/.nm/.pm), JANI (.jani) or DRN (.drn) file")
    parser.add_argument("--constants", "-c", metavar="N=3,p=0.5", default=None,
                        help="values of undefined constants, PRISM style")
    parser.add_argument("--state-names", metavar="SCHEME", default="valuation",
                        help="how states are named: valuation (s=3 & d=0), labels, index, or a template like '{s}/{d}'")


def model_from_args(args: argparse.Namespace) -> ExplicitModel:
    model = load_model(args.model, constants=args.constants)
    return model.with_naming(args.state_names) if args.state_names != "valuation" else model


#: what an output option names: a file, a figure (its extension must be an image format) or a directory
OUTPUT_KINDS = ("file", "figure", "directory")


def add_output_argument(parser: argparse.ArgumentParser, *flags: str, kind: str = "file", **options) -> None:
    """An option (or positional argument) naming something the command writes. Every such path is checked before
    the command starts working (:func:`check_outputs`)."""
    assert kind in OUTPUT_KINDS
    action = parser.add_argument(*flags, **options)
    outputs = parser.get_default("outputs") or ()
    parser.set_defaults(outputs=(*outputs, (action.dest, flags[0], kind)))


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    add_output_argument(parser, "--json", metavar="OUT", default=None,
                        help="write the result as JSON to OUT ('-': stdout, which then holds only the JSON)")


def add_plot_argument(parser: argparse.ArgumentParser, what: str) -> None:
    add_output_argument(parser, "--plot", kind="figure", metavar="OUT.png", default=None,
                        help=f"{what}; the format is OUT's extension (png, pdf, svg, ...; PNG without one)")


def add_console_arguments(parser: argparse.ArgumentParser) -> None:
    """-q/-v of every command."""
    group = parser.add_argument_group("console")
    loudness = group.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=console.QUIET,
                          default=console.NORMAL, help="no progress bars")
    loudness.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=console.VERBOSE,
                          help="also the solvers' and Storm's own output (on stderr)")


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written, before any work: a missing or read-only directory, an existing
    directory given as a file, a file name too long for the file system, an image format matplotlib lacks."""
    for dest, flag, kind in getattr(args, "outputs", ()):
        value = getattr(args, dest, None)
        if value is None or (dest == "json" and value == "-"):
            continue
        label = f"{flag} {value}" if flag.startswith("-") else str(value)
        try:
            check_output_path(value, kind)
        except OutputError as err:
            raise OutputError(f"{label}: {err}") from None
        except OSError as err:                     # e.g. a folder name that is too long
            raise OutputError(f"{label}: {err.strerror}") from None


def check_output_path(path: str | os.PathLike, kind: str = "file") -> None:
    """Raise :class:`OutputError` (naming the problem, not the path) unless ``path`` can be written as ``kind``."""
    target = Path(path)
    limit = os.pathconf(target.parent if target.parent.is_dir() else ".", "PC_NAME_MAX")
    if len(os.fsencode(target.name)) > limit:
        raise OutputError(f"file name too long ({len(os.fsencode(target.name))} bytes; this file system allows "
                          f"{limit})")
    if kind == "directory":
        if not target.is_dir():
            raise OutputError("no such directory")
        _require_writable_directory(target, "the directory")
        return
    if not target.name or target.is_dir():
        raise OutputError("is a directory; give a file name")
    folder = target.parent
    if not folder.is_dir():
        raise OutputError(f"directory '{folder}' does not exist" if not folder.exists() else f"'{folder}' is not a "
                          "directory")
    _require_writable_directory(folder, f"directory '{folder}'")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError("the file is read-only")
    if kind == "figure":
        try:
            figure_format(target)
        except OutputError as err:          # the message names the path already
            raise OutputError(str(err).removeprefix(f"{path}: ")) from None


def _require_writable_directory(folder: Path, what: str) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{what} is not writable")


def emit(result: Report, args: argparse.Namespace, plot: Callable[[Report, str], str] | None = None) -> None:
    """The result as text on stdout and, with ``--json OUT``, as JSON (``-``: only the JSON on stdout); with
    ``--plot OUT`` also the figure ``plot(result, OUT)`` draws (it returns the image format it wrote)."""
    quiet = args.json == "-"
    if quiet:
        write_json(result.to_dict(), stream=getattr(args, "result_stream", None))
    else:
        if result.model is not None:
            print(model_line(result.model))
        print(result)
        if args.json:
            write_json(result.to_dict(), args.json)
            print(f"JSON written to {args.json}")
    if plot is not None and getattr(args, "plot", None):
        fmt = plot(result, args.plot)
        if not quiet:
            print(f"plot written to {args.plot}" + ("" if Path(args.plot).suffix else f" ({fmt.upper()})"))


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
