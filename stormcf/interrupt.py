"""The user's request to stop (the first Ctrl-C): analyses that can stop early check :func:`requested` at their safe
points (between solver calls, GA generations, bisection steps), stop there and report their best checked answer
with status ``interrupted``.

The command line turns the first SIGINT into :func:`request` while a command that can stop early runs
(:func:`stop_on_interrupt`); a second SIGINT raises :class:`KeyboardInterrupt` (exit code 130). Commands that cannot
stop early get the :class:`KeyboardInterrupt` at once. Solvers in child processes (which receive the terminal's
SIGINT too) are told to stop by their parent, not by the signal: they ignore it (:func:`ignore_in_child`).
"""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

_requested = False


def request() -> None:
    """Ask the running analysis to stop at its next safe point."""
    global _requested
    _requested = True


def requested() -> bool:
    """Whether the user asked to stop."""
    return _requested


def clear() -> None:
    global _requested
    _requested = False


@contextmanager
def stop_on_interrupt(graceful: bool = True) -> Iterator[None]:
    """While active (in the main thread): with ``graceful``, the first SIGINT is a :func:`request` (said on stderr) and
    the second raises :class:`KeyboardInterrupt`; without, the first raises it. Restores the previous handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum, frame) -> None:
        if not graceful or requested():
            raise KeyboardInterrupt
        request()
        print("stormcf: stopping at the next safe point with the best checked answer (Ctrl-C again to quit)",
              file=sys.stderr, flush=True)

    clear()
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        clear()


def ignore_in_child() -> None:
    """For a solver's child process: ignore SIGINT (the parent decides when the child stops)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
