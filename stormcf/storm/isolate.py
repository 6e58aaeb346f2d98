"""Storm calls that cannot hang a command: model checking runs in forked child processes, stopped at the deadline.

One call into Storm cannot be interrupted from Python: a value iteration that crawls on a stiff chain (a 16-state DTMC
whose strategy leaves a cycle with probability 1e-7 per step took Storm's optimistic value iteration minutes) would
hold the command past its time limit, and signals would wait for it. :func:`first_answer` therefore runs each way of
answering a call (an :class:`Engine`: a method for people and the call itself) in a child process made by
``os.fork`` (it shares the parent's Storm models without copying them), and waits in Python, where signals and the
deadline act:

- the first engine that answers wins; the others are killed;
- engines with ``start_after`` start only when the engines already running have not answered after that many CPU
  seconds (a fallback such as exact arithmetic on a small model, which cannot crawl, beside a value iteration that
  might): counted in the running engine's CPU time, not in wall time, so that on a loaded machine, where a check
  takes several times its CPU time in wall time, a check that does not crawl is never raced by a second one;
- when the deadline (the active run's, :meth:`~stormcf.run.Run.current`, unless one is given) passes first, every
  child is killed and :class:`~stormcf.errors.TimeLimitReached` names the call; SIGTERM and Ctrl-C (the second one, in a
  command that stops at safe points: the first one lets the call finish, as it may be the check of the answer to
  report, unless the call is made :func:`~stormcf.interrupt.until_request`, where it raises
  :class:`~stormcf.interrupt.Interrupted`) kill the children on the way out;
- an engine's error (a :class:`~stormcf.errors.StormcfError`, Storm running out of memory) is raised in the parent
  when no other engine answers; a child that dies by a signal (Storm crashed) is an internal error naming the call.

Forking costs a few milliseconds; what comes back is the call's result, pickled through a pipe between this process
and its own child (never read from disk).

Many short calls on one model (a search that asks Storm thousands of questions of a fraction of a millisecond each)
go to a :class:`Worker` instead: one forked child that answers them one at a time through pipes, killed when a call
runs past its deadline (the next call forks a new one), so that a call costs a round trip, not a fork.

Storm work whose result must stay in this process (a model Storm builds, which cannot be pickled) runs in a thread
instead (:func:`in_thread`; Storm releases Python's lock while it works): the command waits for it in Python, so
signals act at once, and when the deadline passes first the command goes on without it (the thread's result is
dropped when it ends).
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import select
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .. import interrupt
from ..deadline import Deadline
from ..limits import process_cpu_seconds
from ..run import Run

#: seconds between two looks at the deadline and the stop request while children work
POLL = 0.05
#: seconds between two reclaims of SIGINT while Storm works in a thread (:func:`_reclaim_sigint`), during the first
#: :data:`Z3_SECONDS` of its work; :data:`POLL` after them
SIGINT_POLL = 0.01
#: seconds at the start of a build within which Storm enumerates the initial states with Z3; each wake-up of the waiting
#: thread costs 60-120 µs of CPU (a 10^7-state build waits 45-180 s), so later ones come at :data:`POLL`
Z3_SECONDS = 2.0

_abandoned: list[threading.Event] = []


@dataclass(frozen=True)
class Engine:
    """One way to answer a Storm call: ``method`` says how (for people, e.g. "Storm, exact rational arithmetic"),
    ``call()`` computes the answer; it starts when the engines already running have spent ``start_after`` CPU seconds
    (the most of any one of them) without an answer."""

    method: str
    call: Callable[[], Any]
    start_after: float = 0.0


class StormCrash(RuntimeError):
    """A Storm call ended its child process by a signal: an internal error (exit code 1), never a wrong number."""


def isolated(call: Callable[[], Any], what: str, deadline: Deadline | None = None) -> Any:
    """``call()`` in a child process (see the module docstring): its result, or its error."""
    return first_answer([Engine("", call)], what, deadline)[0]


def first_answer(engines: Sequence[Engine], what: str, deadline: Deadline | None = None) -> tuple[Any, Engine]:
    """The first answer of ``engines`` (each in its own child process) and the engine that gave it; ``what`` names
    the call in messages ("checking P=? [F "goal"]")."""
    run = Run.current()
    deadline = deadline if deadline is not None else run
    waiting = sorted(engines, key=lambda e: e.start_after)
    running: dict[int, _Child] = {}
    errors: list[BaseException] = []
    try:
        with run.activity(f"Storm, {what}"):
            while True:
                while waiting and (not running or waiting[0].start_after <= max(c.cpu() for c in running.values())):
                    child = _Child(waiting.pop(0))
                    running[child.fd] = child
                if deadline.out_of_time:
                    raise deadline.reached(what)
                ready, _, _ = select.select(list(running), [], [], POLL)
                for fd in ready:
                    child = running[fd]
                    if not child.read():
                        continue
                    del running[fd]
                    ok, value = child.outcome(what)
                    if ok:
                        return value, child.engine
                    errors.append(value)
                if not running and not waiting:
                    raise errors[0]
    finally:
        for child in running.values():
            child.kill()


def _reclaim_sigint() -> None:
    """Put Python's SIGINT handler back in place. Storm enumerates a PRISM model's initial states with Z3, and each
    Z3 check installs its own SIGINT handler for its duration: a Ctrl-C then cancels that check (the build goes on,
    or fails with "The model does not have a single initial state") and never reaches Python. Reinstalling Python's
    handler every :data:`SIGINT_POLL` seconds while a build runs leaves Z3 at most that long to take a Ctrl-C."""
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def abandoned() -> bool:
    """Whether Storm still works in a thread the deadline gave up on (:func:`in_thread`): the process must then end
    with ``os._exit`` (Storm's C++ state must not be torn down under it by a normal interpreter exit)."""
    return any(not done.is_set() for done in _abandoned)


def in_thread(call: Callable[[], Any], what: str, deadline: Deadline | None = None) -> Any:
    """``call()`` in a thread of this process (see the module docstring): its result, or its error;
    :class:`~stormcf.errors.TimeLimitReached` when the deadline passes first."""
    run = Run.current()
    deadline = deadline if deadline is not None else run
    box: dict[str, Any] = {}
    done = threading.Event()        # not Thread.is_alive(): a Ctrl-C that interrupts join() leaves it saying False

    def work() -> None:
        try:
            box["value"] = call()
        except BaseException as err:                # noqa: BLE001 - raised again in the waiting thread
            box["error"] = err
        finally:
            done.set()

    worker = threading.Thread(target=work, name="stormcf-storm", daemon=True)
    worker.start()
    try:
        with run.activity(f"Storm, {what}"):
            began = time.monotonic()
            while not done.wait(SIGINT_POLL if time.monotonic() - began < Z3_SECONDS else POLL):
                _reclaim_sigint()
                if deadline.out_of_time:
                    raise deadline.reached(what)
    finally:                                        # the deadline, Ctrl-C or SIGTERM: Storm works on without us
        if not done.is_set():
            _abandoned.append(done)
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Child:
    """One engine in a forked child process; its pickled outcome arrives through a pipe. Its temporary files go to a
    scratch directory of the parent's, removed when the child is done or killed."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.scratch = tempfile.mkdtemp(prefix="stormcf-storm-")
        interrupt.track_path(self.scratch)
        read, write = os.pipe()
        with interrupt.signals_blocked():            # until the child has dropped this process's handlers
            pid = os.fork()
            if pid == 0:                             # the child: answer, write, exit without Python's clean-up
                os.close(read)
                tempfile.tempdir = self.scratch
                _run_child(engine.call, write)
        os.close(write)
        self.pid, self.fd, self.data, self.began = pid, read, bytearray(), time.monotonic()
        interrupt.track_child(pid)

    def cpu(self) -> float:
        """CPU seconds (user and system, all threads) the child has used so far; its wall seconds where /proc is
        missing."""
        seconds = process_cpu_seconds(self.pid)
        return time.monotonic() - self.began if seconds is None else seconds

    def read(self) -> bool:
        """Read what is there; True at the end of the data."""
        chunk = os.read(self.fd, 1 << 20)
        self.data += chunk
        return not chunk

    def outcome(self, what: str) -> tuple[bool, Any]:
        """(True, value) or (False, the error to raise)."""
        _, status = os.waitpid(self.pid, 0)
        self._forget()
        if os.WIFSIGNALED(status) or not self.data:
            how = (f"by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
                   else f"with exit code {os.WEXITSTATUS(status)}")
            return False, StormCrash(f"Storm's process ended {how} during {what}")
        kind, value = pickle.loads(bytes(self.data))
        return kind == "ok", value

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        self._forget()

    def _forget(self) -> None:
        interrupt.untrack_child(self.pid)
        os.close(self.fd)
        shutil.rmtree(self.scratch, ignore_errors=True)
        interrupt.untrack_path(self.scratch)


def _run_child(call: Callable[[], Any], write: int) -> None:
    try:
        faulthandler.disable()                      # a crash here is reported by the parent, in one line
        interrupt.die_with_parent()
        try:
            payload = pickle.dumps(("ok", call()), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as err:                # noqa: BLE001 - every error goes to the parent
            payload = pickle.dumps(("error", _portable(err)), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(payload)
        while view:
            view = view[os.write(write, view):]
    finally:
        os._exit(0)


def _portable(err: BaseException) -> BaseException:
    """``err`` if it survives pickling, else a RuntimeError with its message."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        return RuntimeError(f"{type(err).__name__}: {err}")


class Worker:
    """A forked child process that answers requests one at a time (module docstring): ``answer(request)`` runs in the
    child, on the state this process had when it was forked. Requests and answers are pickled (length first) through
    a pipe each way. :meth:`call` waits in Python, where signals and the deadline act: when the deadline passes first
    (:class:`~stormcf.errors.TimeLimitReached`) or the user asks to stop (:class:`~stormcf.interrupt.Interrupted`)
    the child is killed, and the next call forks a new one."""

    def __init__(self, answer: Callable[[Any], Any]) -> None:
        self.answer = answer
        self.pid: int | None = None
        self.calls = 0

    def call(self, request: Any, what: str, deadline: Deadline | None = None) -> Any:
        """The child's answer to ``request`` (its error is raised here); ``what`` names the call in messages."""
        run = Run.current()
        deadline = deadline if deadline is not None else run
        if self.pid is None:
            self._start()
        payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.requests, len(payload).to_bytes(8, "little") + payload)
            with run.activity(f"Storm, {what}"):
                kind, value = pickle.loads(self._read(what, deadline))
        except BaseException:
            self.close()
            raise
        self.calls += 1
        if kind != "ok":
            raise value
        return value

    def _read(self, what: str, deadline: Deadline) -> bytes:
        data, size = bytearray(), None
        while size is None or len(data) < size + 8:
            if deadline.expired:
                if deadline.interrupted:
                    raise interrupt.stopped()
                raise deadline.reached(what)
            ready, _, _ = select.select([self.answers], [], [], POLL)
            if not ready:
                continue
            chunk = os.read(self.answers, 1 << 20)
            if not chunk:
                assert self.pid is not None                 # call() started the child before reading
                _, status = os.waitpid(self.pid, 0)
                self.pid = None
                how = (f"by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
                       else f"with exit code {os.WEXITSTATUS(status)}")
                raise StormCrash(f"Storm's process ended {how} during {what}")
            data += chunk
            if size is None and len(data) >= 8:
                size = int.from_bytes(data[:8], "little")
        return bytes(data[8:])

    def _start(self) -> None:
        to_child, self.requests = os.pipe()
        self.answers, from_child = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(self.requests)
            os.close(self.answers)
            _serve(self.answer, to_child, from_child)
        os.close(to_child)
        os.close(from_child)
        self.pid = pid
        interrupt.track_child(pid)

    def close(self) -> None:
        """Kill the child (if any); the next call forks a new one."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        interrupt.untrack_child(self.pid)
        for fd in (self.requests, self.answers):
            try:
                os.close(fd)
            except OSError:
                pass
        self.pid = None


def _serve(answer: Callable[[Any], Any], requests: int, answers: int) -> None:
    """A :class:`Worker`'s child: answer requests until the parent closes its end."""
    try:
        faulthandler.disable()
        interrupt.die_with_parent()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:
            pass
        while True:
            head = _read_exactly(requests, 8)
            body = None if head is None else _read_exactly(requests, int.from_bytes(head, "little"))
            if body is None:                        # the parent closed its end
                break
            request = pickle.loads(body)
            try:
                payload = pickle.dumps(("ok", answer(request)), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as err:            # noqa: BLE001 - every error goes to the parent
                payload = pickle.dumps(("error", _portable(err)), protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(answers, len(payload).to_bytes(8, "little") + payload)
    finally:
        os._exit(0)


def _read_exactly(fd: int, n: int) -> bytes | None:
    data = bytearray()
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
