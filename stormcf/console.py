"""What stormcf shows while it works: progress bars on stderr, and the output solvers and Storm print from C code.

- :func:`set_verbosity` chooses how much is shown: ``QUIET`` (nothing but results and errors), ``NORMAL`` (progress
  bars when stderr is a terminal) or ``VERBOSE`` (also the solvers' own logs). :func:`solver_logs` tells a solver
  interface whether to switch its log on.
- :func:`progress` is a `tqdm <https://tqdm.github.io>`_ bar on stderr, shown only when stderr is a terminal and the
  verbosity is not ``QUIET``; analyses wrap their long loops in it (Monte Carlo samples, bisection steps, batch
  items, solver phases with their gap in the postfix).
- :func:`activity` marks a phase without steps to count (a Storm build or check, a solver in a child process,
  training a classifier): on a terminal a line with its elapsed time once it has run :data:`ACTIVITY_AFTER` seconds;
  on a non-terminal with ``-v`` a line on stderr when it has run that long and one when it ends.
- :func:`native_output` redirects the file descriptors 1 and 2, where C and C++ libraries write (HiGHS's banner on
  stdout, SCIP's warnings on stderr, Storm's log), to stderr or to nowhere, while Python's own ``sys.stdout`` and
  ``sys.stderr`` keep writing where they wrote. Python's ``contextlib.redirect_stdout`` cannot do this: it only
  rebinds ``sys.stdout``. Child processes started meanwhile inherit the redirection.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from typing import IO, Iterable, Iterator

from tqdm import tqdm

#: verbosity levels
QUIET, NORMAL, VERBOSE = -1, 0, 1

_verbosity = NORMAL


def set_verbosity(level: int) -> None:
    """``QUIET`` (-1), ``NORMAL`` (0, the default) or ``VERBOSE`` (1)."""
    global _verbosity
    _verbosity = max(QUIET, min(VERBOSE, int(level)))


def verbosity() -> int:
    return _verbosity


def solver_logs() -> bool:
    """Whether solvers should print their own logs (``VERBOSE``)."""
    return _verbosity >= VERBOSE


def progress(iterable: Iterable | None = None, *, total: float | None = None, desc: str = "",
             unit: str = "it", **options) -> tqdm:
    """A progress bar on stderr (a ``tqdm``), drawn only when stderr is a terminal and the verbosity is not
    ``QUIET``; it disappears when done. Use it as an iterable wrapper or as a context manager with ``update()``."""
    shown = _verbosity > QUIET and _is_terminal(sys.stderr)
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=not shown, leave=False,
                **options)


#: seconds a phase runs before :func:`activity` shows it
ACTIVITY_AFTER = 2.0


@contextlib.contextmanager
def activity(what: str, after: float = ACTIVITY_AFTER) -> Iterator[None]:
    """Show that ``what`` is under way when it takes more than ``after`` seconds (module docstring)."""
    terminal = _verbosity > QUIET and _is_terminal(sys.stderr)
    lines = _verbosity >= VERBOSE and not terminal
    if not (terminal or lines):
        yield
        return
    start = time.monotonic()
    done = threading.Event()
    shown = threading.Event()

    def show() -> None:
        if done.wait(after):
            return
        shown.set()
        if lines:
            print(f"stormcf: {what} ...", file=sys.stderr, flush=True)
            return
        with tqdm(total=None, desc=what, file=sys.stderr, leave=False, bar_format="{desc}: {elapsed}") as bar:
            while not done.wait(0.5):
                bar.refresh()

    watcher = threading.Thread(target=show, name="stormcf-activity", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join(1.0)
        if lines and shown.is_set():
            print(f"stormcf: {what}: done in {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)


def _is_terminal(stream: IO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def native_output(show: bool = False) -> Iterator[None]:
    """While active, what C code writes to stdout or stderr (file descriptors 1 and 2) goes to stderr when ``show``
    is true and to nowhere otherwise; stdout then holds only what Python writes to ``sys.stdout``.

    ``sys.stdout`` and ``sys.stderr``, when they are the process's own streams, are rebound to copies of the
    original descriptors, so that results, progress bars and error messages written from Python still appear."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    sink = os.dup(saved_err) if show else os.open(os.devnull, os.O_WRONLY)
    streams = {name: getattr(sys, name) for name in ("stdout", "stderr")}
    rebound = {name: _rebind(stream, fd, saved) for (name, stream), fd, saved
               in zip(streams.items(), (1, 2), (saved_out, saved_err))}
    try:
        os.dup2(sink, 1)
        os.dup2(sink, 2)
        for name, stream in rebound.items():
            if stream is not None:
                setattr(sys, name, stream)
        yield
    finally:
        for name, stream in rebound.items():
            if stream is not None:
                stream.flush()
                setattr(sys, name, streams[name])
                stream.close()
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        for fd in (saved_out, saved_err, sink):
            os.close(fd)


def _rebind(stream: IO, fd: int, saved: int) -> IO | None:
    """A text stream on a copy of ``saved`` when ``stream`` writes to the descriptor ``fd``, else None (a stream
    that is not the process's own, e.g. pytest's capture or a notebook's, keeps working unchanged)."""
    try:
        if stream.fileno() != fd:
            return None
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return None
    return io.TextIOWrapper(os.fdopen(os.dup(saved), "wb", buffering=0), encoding=stream.encoding,
                            errors=stream.errors, line_buffering=True, write_through=True)
