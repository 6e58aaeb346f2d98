"""Signals while a command runs: the user's request to stop (Ctrl-C), termination (SIGTERM), and what a command leaves
behind (child processes, temporary files) when it is ended.

- The first Ctrl-C is a request (:func:`request`, :func:`requested`): analyses that can stop early check it at their
  safe points (between solver calls, GA generations, bisection steps, training epochs; :class:`~stormcf.deadline.
  Deadline` turns it into an expired deadline), stop there and report their best checked answer with status
  ``interrupted``. A phase that has no answer yet raises :class:`Interrupted`. Commands that cannot stop early get a
  :class:`KeyboardInterrupt` at once; the second Ctrl-C always raises it (exit code 130), also when the first was
  caught by a library (Gurobi, while it solves: :func:`caught_elsewhere`). Work the answer can do without (its exact
  re-check), and a phase without safe points before there is any answer, stop at the first Ctrl-C at once
  (:func:`until_request`).
- SIGTERM raises :class:`Terminated` (exit code 143).
- A final signal (SIGTERM, the second Ctrl-C) wins over whatever the command was doing: an exception a library
  swallowed or turned into another one (pybind11 makes it an ImportError "initialization failed" when the signal
  interrupts an extension module's import) is raised again (:func:`raise_if_ending`), also right before an output
  file is put in place, so that no output file is written after it.
- Before a command's handlers are installed and after they are removed (Python's start-up and imports, the
  interpreter's exit), SIGINT and SIGTERM end the process at once with 130 / 143 and one line
  (:func:`exit_on_signals`, the first thing ``python -m stormcf`` does).

Python runs signal handlers only between bytecodes of the main thread, so a signal that arrives while Storm, a solver
library or a numpy kernel works in C code would wait for that call to end. :func:`command_signals` therefore also
starts a watchdog thread on Python's signal wake-up descriptor: it sets the stop request at once (so that Storm calls
and solvers in child processes are stopped within a fraction of a second), and when the main thread has not ended the
process :data:`GRACE` seconds after a SIGTERM or a final Ctrl-C, it ends it itself: it kills the child processes and
removes the temporary files registered with :func:`track_child` and :func:`track_path`, says why on stderr and exits
with 143 or 130. Child processes started by stormcf also die with their parent (:func:`die_with_parent`), and are
started with SIGINT and SIGTERM blocked (:func:`signals_blocked`) until they have dropped the parent's handlers.

A command's temporary files, and its libraries' (Storm's model exchange, PyTorch's inductor cache, which ``import
torch._dynamo`` creates in ``$TMPDIR``), all go to one folder of its own (:func:`scratch_folder`), removed however
the command ends.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from .deadline import Deadline

#: seconds the main thread has to end the process after a SIGTERM or a final Ctrl-C before the watchdog does
GRACE = 2.0
#: exit codes of an interrupted and a terminated command (128 + the signal's number, as shells report them)
INTERRUPTED_EXIT, TERMINATED_EXIT = 130, 143

_requested = False
#: the exception of the final signal that arrived (SIGTERM: Terminated, the last Ctrl-C: KeyboardInterrupt), or None
_ending: type[BaseException] | None = None
#: Ctrl-Cs of the running command: all of them, and those a library caught before Python's handler could
#: (:func:`caught_elsewhere`); whether the first one is a request (:func:`command_signals`)
_interrupts = _caught = 0
_graceful: Callable[[], bool] = lambda: True       # noqa: E731 - the running command's (command_signals)
#: whether the user pressed Ctrl-C during a command of this process (never reset: :func:`ever_interrupted`)
_ever_interrupted = False
_until_request: ContextVar[bool] = ContextVar("stormcf_until_request", default=False)
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


def caught_elsewhere() -> None:
    """A Ctrl-C that a library caught itself (Gurobi, while it solves) reached stormcf that way: it counts as one of
    the user's, as if Python's handler had received it (the first asks the analysis to stop, the next one is final
    and raises :class:`KeyboardInterrupt`)."""
    global _caught
    _caught += 1
    _on_interrupt()


def requested() -> bool:
    """Whether the user asked to stop."""
    return _requested


@contextmanager
def until_request() -> Iterator[None]:
    """Work in the block ends at the user's first Ctrl-C, not only at the second: the handler raises
    :class:`Interrupted` in it at once (also while a Storm call waits for its child process), the block does not
    start when the user asked to stop before, and it raises :class:`Interrupted` when it ends after a request whose
    exception a library swallowed (scikit-learn's training loop catches KeyboardInterrupt). For work the answer can
    do without (the exact re-check of an answer Storm checked in floating point) and for a phase without safe points
    before there is any answer (scikit-learn training the recourse classifier, a minute). Elsewhere the first Ctrl-C
    lets the work go on to its next safe point, and a Storm call finishes: it may be the check of the answer."""
    if _requested:
        raise stopped()
    token = _until_request.set(True)
    try:
        yield
    finally:
        _until_request.reset(token)
    if _requested:
        raise stopped()


def ever_interrupted() -> bool:
    """Whether the user pressed Ctrl-C during a command of this process (also after the command ended): ``python -m
    stormcf`` then ends without the interpreter's teardown, during which a further Ctrl-C would meet Python's
    default handler again (the process killed by SIGINT, not exit code 130)."""
    return _ever_interrupted


def stopped_by(deadline: Deadline) -> str:
    """What ended work under ``deadline`` early, in a message's words: "the user's Ctrl-C", "a request to stop" (a
    run stopped from another thread), or the limit as the user gave it ("the time limit of 600 s")."""
    if _requested:
        return "the user's Ctrl-C"
    return "a request to stop" if deadline.interrupted else deadline.limit


def clear() -> None:
    global _requested, _ending, _interrupts, _caught
    _requested = False
    _ending = None
    _interrupts = _caught = 0


def _end(error: type[BaseException]) -> None:
    """Record the final signal (the watchdog does so at once, also while the main thread works in C code)."""
    global _ending
    request()
    if _ending is None or error is Terminated:
        _ending = error


def stopped() -> BaseException:
    """The exception that ends work the user's request stopped before it had an answer: :class:`Interrupted`, or
    the final signal's own exception when one came and its first raising was lost on the way (a SIGTERM in an
    extension module's import turned into an ImportError, a library that swallowed it): SIGTERM's request to stop
    then ends the command with 143 and ``terminated``, never as the user's Ctrl-C."""
    return _ending() if _ending is not None else Interrupted()


def raise_if_ending() -> None:
    """Raise the exception of the final signal that arrived, if one did: where a command ends normally or with an
    error (Python drops an exception a handler raises in an at-fork hook or a finaliser, a library may swallow it or
    turn it into another) and right before an output file is put in place."""
    if _ending is not None:
        raise _ending()


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
    """A new temporary directory (as :class:`tempfile.TemporaryDirectory`, in ``tempfile.gettempdir()``), removed at
    the block's end and when the command is ended by a signal: it is registered (:func:`track_path`) before it is
    made, so that no moment exists in which it is there but unknown to :func:`clean_up`."""
    while True:
        path = Path(tempfile.gettempdir()) / f"{prefix}{os.urandom(4).hex()}"
        track_path(path)
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            untrack_path(path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        untrack_path(path)


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A folder of the command's own in ``$TMPDIR`` that takes every temporary file of the command and its libraries
    and child processes (``tempfile.tempdir`` and ``TMPDIR`` point there while the block runs), removed when it ends,
    also when a signal ends the command (:func:`clean_up`)."""
    variable = os.environ.get("TMPDIR")
    with temporary_directory() as folder:
        os.environ["TMPDIR"] = str(folder)
        previous = {module: module.tempdir for module in _tempfile_modules()}
        for module in previous:
            module.tempdir = str(folder)
        try:
            yield folder
        finally:
            for module, tempdir in previous.items():
                module.tempdir = tempdir
            for module in set(_tempfile_modules()) - set(previous):      # imported meanwhile: their cache is ours
                module.tempdir = None
            if variable is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = variable


def _tempfile_modules() -> list:
    """Python's ``tempfile`` and the copies libraries vendor (pydot's): each caches its folder in ``tempdir``, which
    must not outlive the command's folder (a second command in one process would write into a removed folder)."""
    return [module for name, module in list(sys.modules.items())
            if name.rsplit(".", 1)[-1] == "tempfile" and hasattr(module, "tempdir") and hasattr(module, "mkdtemp")]


_STOPPING = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_blocked() -> Iterator[None]:
    """SIGINT and SIGTERM held back in this thread while a child process is started (``os.fork``, ``subprocess``):
    the child inherits the mask and unblocks them in :func:`die_with_parent`, once it no longer runs this process's
    handlers (which would raise there, and write to this process's signal wake-up descriptor, so that the watchdog
    would count the terminal's one Ctrl-C twice); here they are delivered when the block ends."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


def die_with_parent(ignore_ctrl_c: bool = True) -> None:
    """In a child process (``preexec_fn`` of :class:`subprocess.Popen`, or after ``os.fork``): ask the kernel to kill
    it when its parent dies (Linux ``PR_SET_PDEATHSIG``), ignore the terminal's Ctrl-C (the parent decides) unless
    ``ignore_ctrl_c`` is False, end by SIGTERM's default action, write no signal to the parent's wake-up descriptor,
    and unblock both signals (:func:`signals_blocked`)."""
    if ignore_ctrl_c:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:                           # not the main thread of the main interpreter
        pass
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


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
        _remove(path)


def _remove(path: Path) -> None:
    """Remove a file or a folder; a folder is renamed first, so that a thread still at work cannot create anything
    in it any more (it may run on while the watchdog ends the process)."""
    if not path.is_dir():
        path.unlink(missing_ok=True)
        return
    gone = path.with_name(path.name + ".removed")
    try:
        os.rename(path, gone)
    except OSError:
        gone = path
    shutil.rmtree(gone, ignore_errors=True)


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
def exit_on_signals() -> None:
    """Until a command installs its own handlers (:func:`command_signals`), and again after it has removed them:
    SIGTERM and SIGINT end the process at once with 143 / 130 and one line (children killed, temporary files
    removed). In Python's start-up an exception raised by a handler could surface as another one (an extension
    module's initialisation turns it into an ImportError) or as a traceback; at the interpreter's exit it could hang
    it. A SIGINT that is ignored (a job started in the background) stays ignored. Python's temporary folder is
    found first, with both signals held back: finding it writes and removes a test file there, which an exit in
    between would leave behind.

    The interpreter's teardown after its last exit function (freeing modules and Storm's objects, a few tenths of a
    second) runs with Python's handlers reset to the default actions, so that a SIGTERM there killed the finished
    process without its line (14 of 40 SIGTERMs sent in the last third of `stormcf info`). The last exit function
    ignores both signals from then on: the command has said all it had to, and its exit code stands."""
    with signals_blocked():                      # this process has one thread yet: the signals wait
        tempfile.gettempdir()
        signal.signal(signal.SIGTERM, lambda signum, frame: _end_process(TERMINATED_EXIT, "terminated"))
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, lambda signum, frame: _end_process(INTERRUPTED_EXIT, "interrupted"))
        atexit.register(_ignore_signals)          # registered first: runs last


def _ignore_signals() -> None:
    for signum in _STOPPING:
        signal.signal(signum, signal.SIG_IGN)


@contextmanager
def command_signals(graceful: Callable[[], bool] = lambda: True) -> Iterator[None]:
    """While active (in the main thread): SIGTERM raises :class:`Terminated`; while ``graceful()`` the first SIGINT is
    a :func:`request` (said on stderr) and the second raises :class:`KeyboardInterrupt`; without, the first raises it.
    A watchdog thread ends the process when the main thread cannot (module docstring). Restores the previous
    handlers and wake-up descriptor."""
    global _graceful
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum, frame) -> None:
        _on_interrupt()

    def on_sigterm(signum, frame) -> None:
        _raise(Terminated)

    clear()
    _graceful = graceful
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
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(previous_fd)
        writer.close()                           # ends the watchdog's read
        watchdog.join(1.0)
        reader.close()
        for timer in endings:
            timer.cancel()
        clear()


_deferring = 0


def _on_interrupt() -> None:
    """A Ctrl-C of the user's: the first one of a graceful command asks it to stop (said on stderr), any other raises
    :class:`KeyboardInterrupt`."""
    global _interrupts, _ever_interrupted
    _interrupts += 1
    _ever_interrupted = True
    if not _graceful() or _interrupts > 1:
        _raise(KeyboardInterrupt)
        return
    request()
    print("stormcf: stopping at the next safe point with the best checked answer (Ctrl-C again to quit)",
          file=sys.stderr, flush=True)
    if _until_request.get():
        raise Interrupted


def _raise(error: type[BaseException]) -> None:
    """Record a final signal (:func:`raise_if_ending`) and raise its exception, or, inside :func:`deferred_signals`,
    keep it for the block's end."""
    _end(error)
    if not _deferring:
        raise error()


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
        if not _deferring:
            raise_if_ending()


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
                if not graceful() or interrupts + _caught > 1:
                    _end(KeyboardInterrupt)
                    endings.append(_end_if_still_running(INTERRUPTED_EXIT, "interrupted"))
            elif signum == signal.SIGTERM:
                _end(Terminated)
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
