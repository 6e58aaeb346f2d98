"""Signals while a command runs: the user's request to stop (Ctrl-C), termination (SIGTERM), and what a command leaves
behind (child processes, temporary files) when it is ended.

- The first Ctrl-C is a request (:func:`request`, :func:`requested`): analyses that can stop early check it at their
  safe points (between solver calls, GA generations, bisection steps, training epochs; :class:`~stormcf.deadline.
  Deadline` turns it into an expired deadline), stop there and report their best checked answer with status
  ``interrupted``. A phase that has no answer yet raises :class:`Interrupted`. Commands that cannot stop early get a
  :class:`KeyboardInterrupt` at once; the second Ctrl-C always raises it (exit code 130).
- SIGTERM raises :class:`Terminated` (exit code 143).

Python runs signal handlers only between bytecodes of the main thread, so a signal that arrives while Storm, a solver
library or a numpy kernel works in C code would wait for that call to end. :func:`command_signals` therefore also
starts a watchdog thread on Python's signal wake-up descriptor: it sets the stop request at once (so that Storm calls
and solvers in child processes are stopped within a fraction of a second), and when the main thread has not ended the
process :data:`GRACE` seconds after a SIGTERM or a final Ctrl-C, it ends it itself: it kills the child processes and
removes the temporary files registered with :func:`track_child` and :func:`track_path`, says why on stderr and exits
with 143 or 130. Child processes started by stormcf also die with their parent (:func:`die_with_parent`).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

#: seconds the main thread has to end the process after a SIGTERM or a final Ctrl-C before the watchdog does
GRACE = 2.0
#: exit codes of an interrupted and a terminated command (128 + the signal's number, as shells report them)
INTERRUPTED_EXIT, TERMINATED_EXIT = 130, 143

_requested = False
_children: dict[int, None] = {}
_paths: dict[Path, None] = {}
_lock = threading.Lock()


class Interrupted(KeyboardInterrupt):
    """The user's request to stop ended a phase before it had an answer. Analyses that have a checked answer catch
    it (never a plain :class:`KeyboardInterrupt`, which is the second Ctrl-C) and report that answer."""


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that child processes and temporary files are removed on the way out."""


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
    _raised.clear()


# ================================================================================================ cleanup registry
def track_child(pid: int) -> None:
    """A child process to kill when the command is ended by a signal (:func:`untrack_child` when it is done)."""
    with _lock:
        _children[pid] = None


def untrack_child(pid: int) -> None:
    with _lock:
        _children.pop(pid, None)


def track_path(path: str | os.PathLike) -> None:
    """A temporary file or directory to remove when the command is ended by a signal."""
    with _lock:
        _paths[Path(path)] = None


def untrack_path(path: str | os.PathLike) -> None:
    with _lock:
        _paths.pop(Path(path), None)


@contextmanager
def temporary_directory(prefix: str = "stormcf-") -> Iterator[Path]:
    """A temporary directory (as :class:`tempfile.TemporaryDirectory`) that is also removed when the command is
    ended by a signal."""
    with tempfile.TemporaryDirectory(prefix=prefix) as name:
        track_path(name)
        try:
            yield Path(name)
        finally:
            untrack_path(name)


def die_with_parent(ignore_ctrl_c: bool = True) -> None:
    """In a child process (``preexec_fn`` of :class:`subprocess.Popen`, or after ``os.fork``): ask the kernel to kill
    it when its parent dies (Linux ``PR_SET_PDEATHSIG``), and ignore the terminal's Ctrl-C (the parent decides)
    unless ``ignore_ctrl_c`` is False."""
    if ignore_ctrl_c:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def clean_up() -> None:
    """Kill the tracked child processes and remove the tracked temporary files: before the process ends without
    Python's clean-up (the watchdog, the outer time limit, Storm work abandoned in a thread)."""
    _kill_children()
    _remove_paths()


def _kill_children() -> None:
    with _lock:
        children = list(_children)
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _remove_paths() -> None:
    with _lock:
        paths = list(_paths)
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


#: what the running command writes when the process is ended from outside its main thread (:func:`last_words`)
_last_words: list[Callable[[int], str | None]] = []


@contextmanager
def last_words(say: Callable[[int], str | None]) -> Iterator[None]:
    """While the block runs, ``say(exit code)`` is called when the process is ended from outside its main thread
    (the watchdog after SIGTERM or the final Ctrl-C, :func:`stop_after`'s time limit), after the child processes are
    killed and before the temporary files are removed: a batch writes the documents it has. It returns the line to
    say on stderr instead of the usual one, or None. The innermost block's words replace those of the blocks around
    it and :func:`stop_after`'s own."""
    _last_words.append(say)
    try:
        yield
    finally:
        _last_words.remove(say)


def _end_process(code: int, word: str, fallback: Callable[[], None] | None = None) -> None:
    """End the process now: children killed, the last words said (:func:`last_words`, else ``fallback()``),
    temporary files removed, one line on stderr."""
    try:
        _kill_children()
        if _last_words:
            word = _last_words[-1](code) or word
        elif fallback is not None:
            fallback()
    finally:
        _remove_paths()
        try:
            sys.stderr.write(f"stormcf: {word}\n")
            sys.stderr.flush()
        finally:
            os._exit(code)


# ================================================================================================ handlers
@contextmanager
def command_signals(graceful: Callable[[], bool] = lambda: True) -> Iterator[None]:
    """While active (in the main thread): SIGTERM raises :class:`Terminated`; while ``graceful()`` the first SIGINT is a
    :func:`request` (said on stderr) and the second raises :class:`KeyboardInterrupt`; without, the first raises it.
    A watchdog thread ends the process when the main thread cannot (module docstring). Restores the previous
    handlers and wake-up descriptor."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupts = 0

    def on_sigint(signum, frame) -> None:
        nonlocal interrupts
        interrupts += 1
        if not graceful() or interrupts > 1:
            _raise(KeyboardInterrupt())
            return
        request()
        print("stormcf: stopping at the next safe point with the best checked answer (Ctrl-C again to quit)",
              file=sys.stderr, flush=True)

    def on_sigterm(signum, frame) -> None:
        _raise(Terminated())

    clear()
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, on_sigint),
                signal.SIGTERM: signal.signal(signal.SIGTERM, on_sigterm)}
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    endings: list[threading.Timer] = []
    watchdog = threading.Thread(target=_watch, args=(reader, graceful, endings), name="stormcf-signals", daemon=True)
    watchdog.start()
    try:
        yield
    finally:                                     # the main thread got here: it ends the process itself
        signal.set_wakeup_fd(previous_fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        writer.close()                           # ends the watchdog's read
        watchdog.join(1.0)
        reader.close()
        for timer in endings:
            timer.cancel()
        clear()


_deferred: list[BaseException] = []
_deferring = 0


_raised: list[BaseException] = []


def _raise(error: BaseException) -> None:
    """Raise a signal's exception, or, inside :func:`deferred_signals`, keep it for the block's end. Each is recorded
    for :func:`raise_lost_signal`."""
    _raised.append(error)
    if _deferring:
        request()
        _deferred.append(error)
        return
    raise error


def raise_lost_signal() -> None:
    """Raise again the exception a signal handler raised during this command (:func:`command_signals`), for a
    command that ended normally all the same: Python drops an exception raised while it runs an at-fork hook or a
    finaliser (it prints "Exception ignored"), so a Ctrl-C that arrives while Storm's child is forked was lost and
    the command went on to exit 0. Called where the command has ended without an exception."""
    if _raised:
        raise _raised[-1]


@contextmanager
def deferred_signals() -> Iterator[None]:
    """While a C library calls back into Python (Gurobi's callback), an exception a signal handler raises there
    would be swallowed by the library: such a signal (SIGTERM, the final Ctrl-C) is kept, the work is asked to stop
    (:func:`request`, which the callback reads), and the exception is raised when the block ends."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _deferred:
            error = _deferred.pop(0)
            _deferred.clear()
            raise error


def _watch(reader: socket.socket, graceful: Callable[[], bool], endings: list[threading.Timer]) -> None:
    """The watchdog: reads the signal numbers Python's C-level handler writes to the wake-up descriptor, and starts
    the timers (in ``endings``) that end the process if the main thread does not."""
    interrupts = 0
    while True:
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data:
            return
        for signum in data:
            if signum == signal.SIGINT:
                interrupts += 1
                request()
                if not graceful() or interrupts > 1:
                    endings.append(_end_if_still_running(INTERRUPTED_EXIT, "interrupted"))
            elif signum == signal.SIGTERM:
                request()
                endings.append(_end_if_still_running(TERMINATED_EXIT, "terminated"))


@contextmanager
def stop_after(seconds: float | None, code: int, message: str,
               last_words: Callable[[], None] | None = None) -> Iterator[None]:
    """End the process (children killed, ``last_words()`` called, e.g. to write a document saying so, unless a
    :func:`last_words` block says its own, temporary files removed, ``message`` on stderr, exit ``code``) if the block
    is still running ``seconds`` from now (``None``: never): the outer guarantee of a command's time limit."""
    if seconds is None:
        yield
        return

    def stop() -> None:
        _end_process(code, message, last_words)

    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _end_if_still_running(code: int, word: str) -> threading.Timer:
    """Give the main thread :data:`GRACE` seconds to end the process (its handler raises, ``finally`` blocks clean
    up); if it is still running then (busy in C code), end it here."""
    timer = threading.Timer(GRACE, _end_process, args=(code, word))
    timer.daemon = True
    timer.start()
    return timer
