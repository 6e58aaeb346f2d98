"""Arguments and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .. import console
from ..deadline import Deadline
from .._lazy import LazyChoices
from ..errors import OptionError, OutputError, PathError
from ..examples import read_json
from ..files import file_kind, written_in_place

if TYPE_CHECKING:       # the command line imports the analyses (numpy, Storm, joblib, ...) when a command runs
    from ..analysis import Analysis
    from ..batch import BatchSummary, Item, ModelFile, Source
    from ..model import ExplicitModel
    from ..report import ModelSizes, Report

#: exit code of a batch in which some item failed (its document has status "error" and says why)
ITEMS_FAILED = 4
#: exit code of a command whose time limit ran out before it had an answer (status "timeout")
TIMEOUT = 5


def add_model_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    add_input_argument(parser, "model", metavar="MODEL", nargs=None if required else "?", default=None,
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


def add_output_argument(parser: argparse.ArgumentParser | argparse._ActionsContainer, *flags: str, kind: str = "file",
                        companions: Callable[[str], Sequence[str]] | None = None, **options) -> None:
    """An option (or positional argument) naming something the command writes. Every such path is checked before
    the command starts working (:func:`check_outputs`); ``companions(value)`` are the further files the command
    writes beside it (e.g. ``GEN.test.npz`` beside ``GEN.npz``), checked alike."""
    assert kind in OUTPUT_KINDS
    action = parser.add_argument(*flags, **options)
    outputs = parser.get_default("outputs") or ()
    parser.set_defaults(outputs=(*outputs, (action.dest, flags[0], kind, companions)))


def add_input_argument(parser: argparse.ArgumentParser | argparse._ActionsContainer, *flags: str, **options) -> None:
    """An option (or positional argument) naming a file the command reads: no output may be written over it
    (:func:`check_outputs`)."""
    action = parser.add_argument(*flags, **options)
    inputs = parser.get_default("inputs") or ()
    parser.set_defaults(inputs=(*inputs, (action.dest, flags[0] if flags[0].startswith("-") else action.metavar)))


class Deprecated(argparse.Action):
    """An earlier spelling of one of a command's options, kept for users' scripts where it is not ambiguous within
    the command: it works as the new option (same ``dest``; ``append`` for a repeatable one) with a warning on
    stderr, and ``--help`` does not show it. docs/cli.md lists them (option names)."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "", append: bool = False,
                 **options) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **options)
        self.new, self.append = new, append

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values,
                 option_string: str | None = None) -> None:
        print(f"stormcf: warning: {option_string} is deprecated in {parser.prog}: use {self.new}", file=sys.stderr)
        if self.append:
            values = [*(getattr(namespace, self.dest, None) or []), values]
        setattr(namespace, self.dest, values)


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    add_output_argument(parser, "--json", metavar="OUT", default=None,
                        help="write the result as JSON to OUT ('-': stdout, which then holds only the JSON)")


def add_plot_argument(parser: argparse.ArgumentParser, what: str) -> None:
    add_output_argument(parser, "--plot", kind="figure", metavar="OUT.png", default=None,
                        help=f"{what}; the format is OUT's extension (png, pdf, svg, ...; PNG without one)")


def add_solver_argument(parser: argparse.ArgumentParser | argparse._ActionsContainer, programmes: str) -> None:
    """``--solver``, the same choices and words in every command that solves mathematical programmes (stormcf.solvers):
    ``programmes`` names the command's."""
    parser.add_argument("--solver", choices=LazyChoices("stormcf.solvers", "SOLVERS"), default="auto",
                        metavar="SOLVER", help=f"the solver of {programmes}: %(choices)s (default auto: HiGHS for "
                        "linear programmes, Gurobi, else SCIP, for bilinear ones; the pip licence of Gurobi allows "
                        "about 2,000 variables and constraints)")


def require_solver_used(args: argparse.Namespace, used: bool, where: str) -> None:
    """Refuse a ``--solver`` the command would not use (it solves programmes only ``where``)."""
    if args.solver != "auto" and not used:
        raise OptionError(f"--solver {args.solver} applies to {where} only")


def add_console_arguments(parser: argparse.ArgumentParser) -> None:
    """-q/-v and --time-limit of every command (the default limit is the analysis's ``time_limit``, or none)."""
    group = parser.add_argument_group("console")
    group.add_argument("--time-limit", type=seconds, default=None, metavar="SECONDS",
                       help="for the whole command: loading, Storm, every solve, training and check (default: none, "
                            "or the analysis's own, which --help's description gives); with an answer in time, the "
                            f"best checked one so far, else status timeout and exit code {TIMEOUT}")
    loudness = group.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=console.QUIET,
                          default=console.NORMAL, help="no progress bars")
    loudness.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=console.VERBOSE,
                          help="also the solvers' and Storm's own output (on stderr)")


def command_analysis(args: argparse.Namespace) -> type[Analysis] | None:
    """The analysis class a command runs (its ``analysis`` default, ``"module:Class"``), imported now; None for a
    command that runs none (``info``, ``examples``, ``simulate``, ...)."""
    reference = getattr(args, "analysis", None)
    if reference is None:
        return None
    from importlib import import_module
    module, _, name = reference.partition(":")
    return getattr(import_module(module), name)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written, before any work: a missing or read-only directory, an existing
    directory given as a file, a file name too long for the file system, an image format matplotlib lacks, a file
    the command reads (an input) or writes twice (two outputs naming one file)."""
    written: list[tuple[str, str]] = []                     # (label, path) of the outputs checked so far
    for dest, flag, kind, companions in getattr(args, "outputs", ()):
        value = getattr(args, dest, None)
        if value is None or (dest == "json" and value == "-"):
            continue
        label = f"{flag} {value}" if flag.startswith("-") else str(value)
        for path in [str(value), *(companions(str(value)) if companions else ())]:
            where = label if path == str(value) else f"{label} (and {path} beside it)"
            try:
                check_output_path(path, kind)
            except OutputError as err:
                raise OutputError(f"{where}: {err}") from None
            except OSError as err:                 # e.g. a folder name that is too long
                raise OutputError(f"{where}: {err.strerror}") from None
            if kind != "directory":
                _require_distinct(where, path, _inputs(args), written)
                written.append((label, path))


def _inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(label, path) of every input file of the command."""
    out = []
    for dest, flag in getattr(args, "inputs", ()):
        values = getattr(args, dest, None)
        for value in values if isinstance(values, (list, tuple)) else [values]:
            if value is not None and str(value) != "-":
                out.append((f"{flag} {value}" if flag.startswith("-") else f"the input {flag} {value}", str(value)))
    return out


def _require_distinct(where: str, path: str, inputs: Sequence[tuple[str, str]],
                      written: Sequence[tuple[str, str]]) -> None:
    """Refuse an output that is one of the inputs or an earlier output (the same file, by resolved path or by
    identity: hard and symbolic links included)."""
    for label, other in inputs:
        if same_file(path, other):
            raise OutputError(f"{where}: is also {label}; the command would overwrite its own input")
    for label, other in written:
        if same_file(path, other):
            raise OutputError(f"{where}: is also {label}; give each output its own file")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file: equal once resolved, or the same existing file (``os.path.samefile``)."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
        return Path(a).exists() and Path(b).exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output_path(path: str | os.PathLike, kind: str = "file") -> None:
    """Raise :class:`OutputError` (naming the problem, not the path) unless ``path`` can be written as ``kind``: in
    place (a device, a FIFO, ``/dev/stdout``: :func:`~stormcf.files.written_in_place`), else by a temporary file
    beside the file (beside the file a symbolic link names) renamed over it."""
    target = Path(path)
    limit = os.pathconf(target.parent if target.parent.is_dir() else ".", "PC_NAME_MAX")
    if len(os.fsencode(target.name)) > limit:
        raise OutputError(f"file name too long ({len(os.fsencode(target.name))} bytes; this file system allows "
                          f"{limit})")
    if kind == "directory":
        found = file_kind(target)
        if found != "directory":
            raise OutputError("no such directory" if found is None else f"is a {found}, not a directory")
        _require_writable_directory(target, "the directory")
        return
    if not target.name or target.is_dir():
        raise OutputError("is a directory; give a file name")
    if written_in_place(target):                # a device, a FIFO, /dev/stdout: written through, not replaced
        if not os.access(target, os.W_OK):
            raise OutputError("is not writable")
        return
    target = Path(os.path.realpath(target))     # a symbolic link: the file it names is replaced, beside it
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
        if args.verbosity >= console.VERBOSE and result.details():
            print("\n".join(result.details()))
        if args.json:
            write_json(result.to_dict(), args.json)
            print(f"JSON written to {args.json}")
    if plot is not None and getattr(args, "plot", None):
        fmt = plot(result, args.plot)
        if not quiet:
            print(f"plot written to {args.plot}" + ("" if Path(args.plot).suffix else f" ({fmt.upper()})"))


def model_line(model: ModelSizes) -> str:
    return (f"{model.source}: {model.model_type.upper()} with {model.n_states} states, {model.n_choices} choices, "
            f"{model.n_transitions} transitions ({model.n_decision_states} decision states)")


#: the longest time limit, in seconds (about 31 years): Python's timers overflow beyond 2^63 ns (9.2e9 s)
MAX_SECONDS = Deadline.MAX_SECONDS


def seconds(text: str) -> float:
    """A time limit: a positive number of seconds, at most :data:`MAX_SECONDS`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a time limit in seconds, got {text!r}") from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"expected a time limit in seconds, more than 0 and at most 1e9 (about 31 "
                                         f"years), got {text}")
    return value


def mc_samples(args: argparse.Namespace, default: int) -> int:
    """``--mc-samples`` (``default`` when not given); refused without ``--estimator mc``, which alone uses it."""
    if args.mc_samples is None:
        return default
    if args.estimator != "mc":
        raise OptionError(f"--mc-samples {args.mc_samples} applies to --estimator mc only (the estimator is "
                          f"{args.estimator})")
    return args.mc_samples


def positive_int(text: str) -> int:
    return _bounded_int(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    return _bounded_int(text, 0, "an integer >= 0")


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (not nan, not inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def probability(text: str) -> float:
    """A number in [0, 1]."""
    return _number_in(text, lambda value: 0 <= value <= 1, "a probability in [0, 1]")


def share(text: str) -> float:
    """A fraction strictly between 0 and 1."""
    return _number_in(text, lambda value: 0 < value < 1, "a share in (0, 1)")


def _number_in(text: str, inside: Callable[[float], bool], what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not inside(value):                                   # also NaN
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


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
                       help="address of a running Dask scheduler you trust (it can run code here), with --backend "
                            "dask, e.g. tls://host:8786 (certificates from Dask's configuration, e.g. "
                            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE) or tcp://host:8786 (unencrypted)")
    group.add_argument("--item-time-limit", type=seconds, default=None, metavar="SECONDS",
                       help="each item's own limit (--time-limit bounds the whole batch)")


def require_single(args: argparse.Namespace, inputs: str) -> None:
    """Refuse batch options on a single input."""
    if args.workers is not None or args.backend != "loky" or args.scheduler is not None or args.item_time_limit:
        raise OptionError(f"--workers, --backend, --scheduler and --item-time-limit apply to batches ({inputs})")


def run_batch_command(args: argparse.Namespace, source: Source, analysis: Analysis,
                      items: Sequence[Item]) -> BatchSummary:
    """Run a batch: its documents as JSON lines to ``--json OUT`` (``-``: stdout, which then holds only them) and the
    summary table on stdout, a line and a row per item however the batch ends: the time limit (the items not done
    have status ``timeout``), Ctrl-C or SIGTERM (``interrupted``; raised again once the lines are written), or the
    process ended from outside (:func:`~stormcf.interrupt.last_words`). Returns the summary for the exit code."""
    from .. import interrupt
    from ..batch import BatchOutput, BatchRun, BatchSummary, ModelFile, backend
    from ..errors import TimeLimitReached
    summary = BatchSummary(list(analysis.columns), with_model=isinstance(source, ModelFile))
    workers = args.workers if args.workers is not None or args.backend == "dask" else 1
    start = time.perf_counter()
    stopped: BaseException | None = None
    with backend(args.backend, workers, args.scheduler) as parallelism:
        run = BatchRun(source, analysis, items, workers, args.context, args.item_time_limit)
        output = BatchOutput(summary, args.json, args.result_stream)
        outcomes = iter(run)

        def last_words(code: int) -> str | None:
            """The process is being ended from outside: every item's line, the table, and what ended it."""
            ending = _ending(code, f"{run.budget.batch().limit} was reached")
            if not output.finish_for_good(lambda written: run.rest(written, *ending[1:])):
                return None
            _show_batch(args, summary, time.perf_counter() - start, parallelism)
            return ending[0]

        with interrupt.last_words(last_words):
            try:
                with output.open():
                    try:
                        for outcome in outcomes:
                            output.add(outcome)
                    except (KeyboardInterrupt, interrupt.Terminated, TimeLimitReached) as err:
                        stopped = err
                        output.add_rest(run.rest(output.written, *_ending(err, str(err))[1:]))
            finally:
                outcomes.close()
            _show_batch(args, summary, time.perf_counter() - start, parallelism)
    if stopped is not None and not isinstance(stopped, TimeLimitReached):
        raise stopped
    return summary


def _ending(how: BaseException | int, reached: str) -> tuple[str, str, str, str]:
    """What ended a batch (an exception, or the exit code of a process ended from outside): the line said on stderr,
    and the status, error type and message of the items it left without an answer. ``reached``: what the time limit
    did, in words, when it ended the batch."""
    from .. import interrupt
    if how == interrupt.TERMINATED_EXIT or isinstance(how, interrupt.Terminated):
        return "terminated", "interrupted", "Terminated", "not finished: the batch was terminated (SIGTERM)"
    if how == interrupt.INTERRUPTED_EXIT or isinstance(how, KeyboardInterrupt):
        return "interrupted", "interrupted", "Interrupted", "not finished: stopped at the user's request (Ctrl-C)"
    return (f"timeout: {reached}; the items not done by then have status timeout", "timeout", "TimeLimitReached",
            f"not finished: {reached}")


def _show_batch(args: argparse.Namespace, summary: BatchSummary, seconds: float, parallelism: str) -> None:
    """The summary table (not with ``--json -``: stdout holds the JSON lines) and where the JSON lines went."""
    summary.seconds = seconds
    if args.json != "-":
        print(summary.text(parallelism))
        if args.json:
            print(f"JSON lines written to {args.json}")


def run_on_paths(args: argparse.Namespace, analysis: Analysis,
                 plot: Callable[[Report, str], str] | None = None) -> int:
    """A command on observed paths: one (``--path``: the result, with ``--plot``) or a batch (``--paths``)."""
    from ..batch import read_jsonl
    if args.paths:
        if args.plot:
            raise OptionError("--plot draws one analysis; it does not apply to --paths")
        return batch_exit_code(run_batch_command(args, model_file(args), analysis, read_jsonl(args.paths, PathError)))
    require_single(args, "--paths")
    return run_single(args, analysis, model_from_args(args), read_json(args.path, PathError), args.path, plot)


def run_single(args: argparse.Namespace, analysis: Analysis, shared, data, where: str | None,
               plot: Callable[[Report, str], str] | None = None, save: Callable[[Any], None] | None = None) -> int:
    """One item of an analysis: the files of its result written (``save(result)``: a data set, a trained
    generator), the result shown (:func:`emit`) and its exit code (:func:`status_exit_code`)."""
    result = analysis(shared, data, where, args.context)
    if save is not None:
        save(result)
    emit(result, args, plot=plot)
    return status_exit_code(result)


def status_exit_code(result: Report) -> int:
    """:data:`TIMEOUT` when the time ran out before there was an answer, else 0."""
    return TIMEOUT if result.status == "timeout" else 0


def batch_exit_code(summary: BatchSummary) -> int:
    """:data:`ITEMS_FAILED` when an item failed, 130 when the user stopped the batch before an item had an answer
    (status ``interrupted`` without one), :data:`TIMEOUT` when one ran out of time, else 0."""
    from ..interrupt import INTERRUPTED_EXIT
    if summary.failed:
        return ITEMS_FAILED
    if summary.unanswered.get("interrupted"):
        return INTERRUPTED_EXIT
    return TIMEOUT if summary.statuses.get("timeout") else 0
