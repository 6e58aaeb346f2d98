"""Arguments and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import IO, Any, Callable, Iterator, Sequence

from ..batch import COLUMNS, BatchSummary, Item, ModelFile, Source, Task, backend, run_batch
from ..errors import OptionError
from ..model import ExplicitModel
from ..report import Report, json_lines, write_json

#: exit code of a batch in which some item failed (its document has status "error" and says why)
ITEMS_FAILED = 4


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


def model_file(args: argparse.Namespace) -> ModelFile:
    """The model file, constants and state naming of the arguments (what batch workers rebuild the model from)."""
    return ModelFile(args.model, args.constants, args.state_names)


def model_from_args(args: argparse.Namespace) -> ExplicitModel:
    return model_file(args).load()


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
    summary = BatchSummary(COLUMNS[task.command], with_model=isinstance(source, ModelFile))
    workers = args.workers if args.workers is not None or args.backend == "dask" else 1
    start = time.perf_counter()
    with stdout_to_stderr(args.json == "-") as stdout:
        output = json_lines(args.json, stdout) if args.json else contextlib.nullcontext(lambda document: None)
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


def batch_exit_code(summary: BatchSummary) -> int:
    return ITEMS_FAILED if summary.failed else 0


def _parallelism(args: argparse.Namespace) -> str:
    if args.backend == "dask":
        return f"dask at {args.scheduler}" + (f", {args.workers} workers" if args.workers else "")
    return "serial" if args.workers in (None, 1) else f"loky, {args.workers} workers"


@contextlib.contextmanager
def stdout_to_stderr(active: bool) -> Iterator[IO[str]]:
    """With ``--json -`` stdout carries exactly the JSON: lines solvers print from C code (HiGHS's banner) go to
    stderr meanwhile (file descriptor 1 is redirected, which Python's redirect_stdout cannot do; worker processes
    started meanwhile inherit it). Yields the stream for the JSON: the real stdout (``sys.stdout`` itself when Python's
    stdout was replaced, e.g. captured, and is not file descriptor 1)."""
    if not active:
        yield sys.stdout
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        if _on_descriptor_1(sys.stdout):
            with os.fdopen(os.dup(saved), "w", encoding="utf-8") as real:
                yield real
        else:
            yield sys.stdout
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _on_descriptor_1(stream: IO[str]) -> bool:
    try:
        return stream.fileno() == 1
    except (AttributeError, OSError, ValueError):          # io.UnsupportedOperation is both OSError and ValueError
        return False
