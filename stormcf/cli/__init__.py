"""The ``stormcf`` command line: a thin layer over the Python API.

Exit codes (:data:`EXIT_CODES`): 0 success, 2 bad input (one line on stderr naming the problem), 1 internal error,
3 a violated property with ``check --fail-if-violated``, 130 interrupted (Ctrl-C twice), 143 terminated (SIGTERM).
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import signal
import sys
import threading
import traceback
import warnings
from importlib import import_module

from .. import console, interrupt
from ..errors import OutputError, StormcfError
from ..limits import out_of_memory_message
from .common import add_console_arguments, check_outputs

EXIT_CODES = """exit codes: 0 success; 2 bad input (one line on stderr), also an output that cannot be written and
running out of memory; 1 internal error (including Storm not confirming a computed value); 3 check
--fail-if-violated and a bounded property does not hold; 130 interrupted; 143 terminated"""

#: subcommand modules of stormcf.cli; each has ``register(subparsers)``
COMMANDS = ("info", "check", "strategy", "strategy_file", "simulate", "icfmdp", "explain_path", "recourse", "setcover",
            "setcover_learn", "setcover_evaluate", "demo", "learn", "demo_learn")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> None:   # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stormcf", description="Counterfactual explanations for MDPs, checked by Storm.",
                     epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        import_module(f"{__name__}.{name}").register(sub)
    for command in set(sub.choices.values()):
        add_console_arguments(command)
    return parser


def _version() -> str:
    from .. import __version__
    return f"stormcf {__version__}"


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that temporary files are removed on the way out."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    if not _writable(sys.stdout):
        return _fail("error: stdout is closed; stormcf writes its results there (redirect it to a file or "
                     "/dev/null)", 2)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:                    # usage errors (exit 2, one line) and --help/--version (0)
        return int(done.code or 0)
    console.set_verbosity(args.verbosity)
    show_native = args.verbosity >= console.VERBOSE or bool(os.environ.get("STORMCF_DEBUG"))
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        with console.native_output(show_native), warnings.catch_warnings():
            if not show_native:                   # libraries' warnings are solver chatter too, unless -v
                warnings.simplefilter("ignore")
            return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    """The command, with its errors turned into one line on stderr and an exit code."""
    try:
        check_outputs(args)
        args.result_stream = sys.stdout           # with --json -, the JSON document alone goes there
        json_on_stdout = getattr(args, "json", None) == "-"
        with contextlib.redirect_stdout(sys.stderr) if json_on_stdout else _nothing(), \
                interrupt.stop_on_interrupt(getattr(args, "stoppable", False)):
            code = int(args.run(args) or 0)
        _flush_stdout()
        return code
    except StormcfError as err:
        return _fail(f"error: {err}", 2)
    except MemoryError as err:
        return _fail(f"error: {out_of_memory_message(err)}", 2)
    except OSError as err:
        if isinstance(err, BrokenPipeError) or err.errno not in _FULL:
            return _internal(err)
        return _fail(f"error: cannot write ({err.strerror}): the disk is full or a file size limit is reached", 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Terminated:
        return _fail("terminated", 143)
    except Exception as err:   # an internal error: say so, keep the traceback for STORMCF_DEBUG=1
        return _internal(err)


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
    an exception Python ignores at exit."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        raise OutputError(f"stdout: cannot write ({err.strerror or err})") from None


def _fail(message: str, code: int) -> int:
    message = message.replace("\r", " ").replace("\n", " ")   # one line, whatever the message holds
    if len(message) > MESSAGE_WIDTH:
        message = f"{message[:MESSAGE_WIDTH - 200]} ... ({len(message)} characters) ... {message[-150:]}"
    if sys.stderr is not None:
        print(f"stormcf: {message}", file=sys.stderr)
    return code


@contextlib.contextmanager
def _nothing():
    yield


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
