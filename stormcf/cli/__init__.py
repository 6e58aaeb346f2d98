"""The ``stormcf`` command line: a thin layer over the Python API.

Every module of this package except ``common`` is one subcommand with ``register(subparsers)``; new modules are
found by themselves, and so are the command modules of plugins (entry point group ``stormcf.commands``,
:mod:`stormcf.plugins`). A command that runs an analysis names its class (``set_defaults(analysis="module:Class")``),
whose capabilities decide the rest: its default time limit and whether the first Ctrl-C gives the best answer so
far. Every command gets ``-q``/``-v`` and ``--time-limit`` and runs in one :class:`~stormcf.run.Run` (the time
budget of the whole command, the progress reporter, the routing of native output), passed to the command as
``args.context``, under :func:`stormcf.interrupt.command_signals`.

Exit codes (:data:`EXIT_CODES`): 0 success, 2 bad input (one line on stderr naming the problem), 1 internal error,
3 a violated property with ``check --fail-if-violated``, 4 a batch item failed, 5 the time limit ran out before
there was an answer, 6 an undecided property with ``check --fail-if-violated`` (none violated), 130 interrupted,
141 stdout's reader went away (``| head``; no message), 143 terminated.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import pkgutil
import re
import sys
import traceback
import warnings
from importlib import import_module
from typing import Sequence

from .. import console, interrupt
from ..errors import OutputError, StormcfError, TimeLimitReached, cannot_write
from ..limits import frugal_threads, is_out_of_memory, out_of_memory_message
from ..plugins import COMMANDS, plugins
from ..run import Run
from .common import TIMEOUT, add_console_arguments, check_outputs, command_analysis

EXIT_CODES = f"""exit codes: 0 success; 2 bad input (one line on stderr), also an output that cannot be written and
running out of memory; 1 internal error (including Storm not confirming a computed value); 3 check
--fail-if-violated and a bounded property does not hold; 4 a batch item failed (every item's document is written;
wins over 5, 3 and 6); {TIMEOUT} the time limit ran out before there was an answer (status timeout); 6 check
--fail-if-violated and no bounded property is violated but one is undecided (the bound within the error of Storm's
floating-point value; --exact decides); 130 interrupted; 141 the reader of stdout went away (e.g. | head), quietly;
143 terminated"""

#: exit code when stdout's reader has gone (128 + SIGPIPE, as Unix tools killed by SIGPIPE)
CLOSED_PIPE = 141

#: seconds, and share of the time limit, that a command may run past its limit before it is stopped from outside
OVERRUN_SECONDS, OVERRUN_SHARE = 2.0, 0.03


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2, and reads a word that starts with a minus
    and a digit as a value, not an option (``--weights -1,1,1``, ``--agent -1,0,1``; argparse's own rule takes only
    plain negative numbers such as ``-1`` or ``-0.5``, and no stormcf option looks like a number)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> None:   # type: ignore[override]  # argparse's says NoReturn; it exits too
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def commands() -> list[str]:
    """The subcommand modules: this package's (by name) and the plugins' (full module names)."""
    return own_commands() + plugins(COMMANDS)


def own_commands() -> list[str]:
    return sorted(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if m.name != "common")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; for the arguments ``argv`` of one of stormcf's own commands without the plugins'
    (their look-up imports ``importlib.metadata``: a fifth of ``info``'s time on a small model, issue 34)."""
    parser = _Parser(prog="stormcf", description="Counterfactual explanations for MDPs, checked by Storm.",
                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in own_commands():
        import_module(module).register(sub)
    if not argv or argv[0] not in sub.choices:
        for module in plugins(COMMANDS):
            import_module(module).register(sub)
    for command in set(sub.choices.values()):
        add_console_arguments(command)
    return parser


def _version() -> str:
    from .. import __version__
    return f"stormcf {__version__}"


def main(argv: list[str] | None = None, started: float = 0.0) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); ``started``: seconds the process ran before (its
    start-up, which the time limit counts too when this is the process's command)."""
    frugal_threads()
    if not _writable(sys.stdout):
        return _fail("error: stdout is closed; stormcf writes its results there (redirect it to a file or "
                     "/dev/null)", 2)
    try:
        args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
    except SystemExit as done:                    # usage errors (exit 2, one line) and --help/--version (0)
        return int(done.code or 0)
    except (MemoryError, ImportError, SystemError) as err:     # the commands' modules could not be loaded
        if not is_out_of_memory(err):
            raise
        return _fail(f"error: {out_of_memory_message(err)}", 2)
    said: list[int] = []                          # the exit code once a signal's line is said
    try:
        return _command_under_signals(args, started, said)
    except (interrupt.Terminated, KeyboardInterrupt) as err:   # after the command, before its handlers were removed
        return _signal_end(err, said)                           # (its objects being freed as its frames unwound)


def _command_under_signals(args: argparse.Namespace, started: float, said: list[int]) -> int:
    """The command in its own temporary folder and under its signal handlers (:mod:`stormcf.interrupt`). Running
    out of memory as the folder is removed, after the command has said its own line, keeps its exit code."""
    stoppable = False
    code: int | None = None
    try:
        # a signal ends it as any other
        with interrupt.scratch_folder(), interrupt.command_signals(lambda: stoppable):
            try:
                try:
                    analysis = command_analysis(args)
                except (MemoryError, ImportError, SystemError) as err:     # the analysis's modules could not load
                    interrupt.raise_if_ending()       # (a signal's exception an extension's import turned into one)
                    if not is_out_of_memory(err):
                        raise
                    code = _fail(f"error: {out_of_memory_message(err)}", 2)
                    return code
                stoppable = analysis is not None and analysis.stoppable
                if args.time_limit is None and analysis is not None:
                    args.time_limit = analysis.time_limit
                show_native = args.verbosity >= console.VERBOSE or bool(os.environ.get("STORMCF_DEBUG"))
                run = args.context = Run(args.time_limit, reporter=console.Reporter(args.verbosity),
                                         show_native=show_native, elapsed=started)
                with warnings.catch_warnings(), run.active(), \
                        interrupt.stop_after(_hard_limit(run), TIMEOUT, f"timeout: {_overrun_message(run)}",
                                             lambda: _timeout_document(args, _overrun_message(run))):
                    if not show_native:           # libraries' warnings are solver chatter too, unless -v
                        warnings.simplefilter("ignore")
                    code = _run(args)
                    return code
            except (interrupt.Terminated, KeyboardInterrupt) as err:  # also while an error was being reported
                return _signal_end(err, said)
    except (MemoryError, SystemError, OSError) as err:      # the folder's teardown ran out of memory
        if code and is_out_of_memory(err):                  # after the command had said its own line
            return code
        raise


def _signal_end(err: BaseException, said: list[int]) -> int:
    """The line and exit code of a command a signal ended, said once (``said``: the exit code once it was), also
    when another signal comes while the command's context is left."""
    code = interrupt.TERMINATED_EXIT if isinstance(err, interrupt.Terminated) else interrupt.INTERRUPTED_EXIT
    if not said:
        said.append(_fail("terminated" if code == interrupt.TERMINATED_EXIT else "interrupted", code))
    return said[0]


def _hard_limit(deadline: Run) -> float | None:
    """Seconds from now after which the command is stopped from outside (analyses stop at their deadline; this is
    the guarantee for a phase that cannot check it)."""
    if not deadline.limited:
        return None
    return deadline.remaining() + max(OVERRUN_SECONDS, OVERRUN_SHARE * deadline.seconds)


def _overrun_message(deadline: Run) -> str:
    return f"{deadline.limit} was reached; stopped without an answer"


def _run(args: argparse.Namespace) -> int:
    """The command, with its errors turned into one line on stderr and an exit code."""
    try:
        return _command(args)
    except BrokenPipeError:                       # the reader went away (stormcf ... | head): end quietly
        return _closed_pipe()
    except TimeLimitReached as err:
        return _timeout(args, err)
    except StormcfError as err:
        return _fail(f"error: {err}", 2)
    except MemoryError as err:
        return _fail(f"error: {out_of_memory_message(err)}", 2)
    except interrupt.Terminated:
        raise
    except OSError as err:
        if is_out_of_memory(err):
            return _fail(f"error: {out_of_memory_message(err)}", 2)
        if err.errno not in _FULL:
            return _internal(err)
        return _fail(f"error: {cannot_write(str(err.filename or 'a file'), err)}", 2)
    except KeyboardInterrupt:
        raise
    except Exception as err:   # an internal error: say so, keep the traceback for STORMCF_DEBUG=1
        if is_out_of_memory(err):               # e.g. a library that cannot be mapped any more (an ImportError)
            return _fail(f"error: {out_of_memory_message(err)}", 2)
        return _internal(err)


def _command(args: argparse.Namespace) -> int:
    """The command's exit code. A final signal that arrived (SIGTERM, the last Ctrl-C) wins over its end and its
    errors: the signal's exception may have been swallowed by a library or turned into another error."""
    try:
        check_outputs(args)
        args.result_stream = sys.stdout           # with --json -, the JSON document alone goes there
        json_on_stdout = getattr(args, "json", None) == "-"
        with contextlib.redirect_stdout(sys.stderr) if json_on_stdout else contextlib.nullcontext():
            code = int(args.run(args) or 0)
    except Exception:
        interrupt.raise_if_ending()
        raise
    interrupt.raise_if_ending()
    _flush_stdout()
    return code


#: errno values of a full disk, an exceeded quota and an exceeded file size limit (ulimit -f)
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _internal(err: BaseException) -> int:
    if os.environ.get("STORMCF_DEBUG"):
        traceback.print_exc()
    return _fail(f"internal error: {type(err).__name__}: {err} (set STORMCF_DEBUG=1 for the traceback)", 1)


def _writable(stream) -> bool:
    """Whether a standard stream is open (a process started with ``>&-`` has none)."""
    if stream is None:
        return False
    try:
        os.fstat(stream.fileno())
    except (AttributeError, io.UnsupportedOperation):     # not a file (a notebook's, pytest's capture): fine
        return True
    except (OSError, ValueError):
        return False
    return True


#: the longest error line printed; longer ones (a huge property or expression echoed back) lose their middle
MESSAGE_WIDTH = 500


def _flush_stdout() -> None:
    """What the command printed reaches stdout now, so that a full disk is an error of this command (exit 2), not
    an exception Python ignores at exit; a closed pipe is raised as it is."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        raise OutputError(cannot_write("stdout", err)) from None


def _timeout(args: argparse.Namespace, err: TimeLimitReached) -> int:
    """The time ran out before there was an answer: one line, and with ``--json`` a document of status timeout."""
    _timeout_document(args, str(err))
    return _fail(f"timeout: {err}", TIMEOUT)


def _timeout_document(args: argparse.Namespace, message: str) -> None:
    """With ``--json``, the document of a command that has no answer because its time ran out."""
    out = getattr(args, "json", None)
    if out:
        from ..items import ItemError
        from ..report import write_json
        document = ItemError(args.command, message, "TimeLimitReached", status="timeout").to_dict()
        write_json(document, out, stream=getattr(args, "result_stream", None))


def _closed_pipe() -> int:
    """Exit as Unix tools do when the reader of their output has gone: no message, 128 + SIGPIPE. stdout is pointed
    at /dev/null so that Python's own flush at exit finds no broken pipe (Python's documented recipe)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return CLOSED_PIPE


def _fail(message: str, code: int) -> int:
    message = message.replace("\r", " ").replace("\n", " ")   # one line, whatever the message holds
    if len(message) > MESSAGE_WIDTH:
        message = f"{message[:MESSAGE_WIDTH - 200]} ... ({len(message)} characters) ... {message[-150:]}"
    if sys.stderr is not None:
        print(f"stormcf: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
