"""Arguments and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from .. import console
from ..errors import OptionError, OutputError, PathError
from ..examples import read_json

if TYPE_CHECKING:       # the command line imports the analyses (numpy, Storm, joblib, ...) when a command runs
    from ..batch import BatchSummary, Item, ModelFile, Source, Task
    from ..model import ExplicitModel
    from ..report import Report

#: exit code of a batch in which some item failed (its document has status "error" and says why)
ITEMS_FAILED = 4


def add_model_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("model", metavar="MODEL", nargs=None if required else "?", default=None,
                        help="PRISM (.prism/.nm/.pm), JANI (.jani) or DRN (.drn) file")
    parser.add_argument("--constants", "-c", metavar="N=3,p=0.5", default=None,
                        help="values of undefined constants, PRISM style")
    parser.add_argument("--state-names", metavar="SCHEME", default="valuation",
                        help="how states are named: valuation (s=3 & d=0), labels, index, or a template like '{s}/{d}'")


def model_file(args: argparse.Namespace) -> ModelFile:
    """The model file, constants and state naming of the arguments (what batch workers rebuild the model from)."""
    from ..batch import ModelFile
    return ModelFile(args.model, args.constants, args.state_names)


def model_from_args(args: argparse.Namespace) -> ExplicitModel:
    return model_file(args).load()


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
        from ..plotting import figure_format
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
    from ..report import write_json
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


# ================================================================================================ batches
def add_batch_arguments(parser: argparse.ArgumentParser, inputs: str) -> None:
    """``--workers``, ``--backend``, ``--scheduler`` for a command whose batch input is ``inputs``."""
    group = parser.add_argument_group(f"batches ({inputs}: one JSON document per item, in input order, as JSON lines "
                                      f"with --json OUT; exit code {ITEMS_FAILED} if an item failed)")
    group.add_argument("--workers", type=positive_int, default=None, metavar="N",
                       help="run the items in N worker processes, each building the model once (default: serially "
                            "here; with dask, every worker thread of the cluster)")
    group.add_argument("--backend", choices=("loky", "dask"), default="loky",
                       help="loky: processes on this machine (default); dask: the cluster at --scheduler")
    group.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="address of a running Dask scheduler (with --backend dask), e.g. tcp://host:8786")


def require_single(args: argparse.Namespace, inputs: str) -> None:
    """Refuse batch options on a single input."""
    if args.workers is not None or args.backend != "loky" or args.scheduler is not None:
        raise OptionError(f"--workers, --backend and --scheduler apply to batches ({inputs})")


def run_batch_command(args: argparse.Namespace, source: Source, task: Task, items: Sequence[Item]) -> BatchSummary:
    """Run a batch: its documents as JSON lines to ``--json OUT`` (``-``: stdout, which then holds only them) and the
    summary table on stdout. Returns the summary (statuses, failures) for the exit code."""
    from ..batch import COLUMNS, BatchSummary, ModelFile, backend, run_batch
    from ..report import json_lines
    summary = BatchSummary(COLUMNS[task.command], with_model=isinstance(source, ModelFile))
    workers = args.workers if args.workers is not None or args.backend == "dask" else 1
    start = time.perf_counter()
    output = json_lines(args.json, args.result_stream) if args.json else contextlib.nullcontext(lambda document: None)
    with backend(args.backend, workers, args.scheduler), output as write:
        for outcome in run_batch(source, task, items, workers):
            write(outcome.document)
            summary.add(outcome)
    summary.seconds = time.perf_counter() - start
    if args.json != "-":
        print(summary.text(_parallelism(args)))
        if args.json:
            print(f"JSON lines written to {args.json}")
    return summary


def run_on_paths(args: argparse.Namespace, task: Task, plot: Callable[[Report, str], str] | None = None) -> int:
    """A command on observed paths: one (``--path``: the result, with ``--plot``) or a batch (``--paths``)."""
    from ..batch import read_jsonl
    if args.paths:
        if args.plot:
            raise OptionError("--plot draws one analysis; it does not apply to --paths")
        return batch_exit_code(run_batch_command(args, model_file(args), task, read_jsonl(args.paths, PathError)))
    require_single(args, "--paths")
    emit(task(model_from_args(args), read_json(args.path, PathError), args.path), args, plot=plot)
    return 0


def batch_exit_code(summary: BatchSummary) -> int:
    return ITEMS_FAILED if summary.failed else 0


def _parallelism(args: argparse.Namespace) -> str:
    if args.backend == "dask":
        return f"dask at {args.scheduler}" + (f", {args.workers} workers" if args.workers else "")
    return "serial" if args.workers in (None, 1) else f"loky, {args.workers} workers"

