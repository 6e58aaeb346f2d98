"""What stormcf shows while it works: progress on stderr, and the output solvers and Storm print from C code.

A :class:`Reporter` is the progress reporter of one run (:class:`~stormcf.run.Run` carries it; analyses reach it
through their run, never through module state):

- its verbosity: ``QUIET`` (nothing but results and errors), ``NORMAL`` (progress) or ``VERBOSE`` (also the
  solvers' and Storm's own logs, :attr:`Reporter.solver_logs`, and a line when a long phase starts and ends);
- :meth:`Reporter.bar`: a step counter (Monte Carlo blocks, bisection steps, BRKGA generations, training epochs,
  batch items), drawn as a `tqdm <https://tqdm.github.io>`_ bar when stderr is a terminal;
- :meth:`Reporter.activity`: a phase without steps to count (a Storm build or check, a solver in a child process,
  training a classifier): on a terminal a line with its elapsed time once it has run :data:`ACTIVITY_AFTER` seconds;
- :meth:`Reporter.running`: while a run works and stderr is *not* a terminal (CI, scripts, Docker logs), a line
  every :data:`HEARTBEAT` seconds naming what is under way and how far it got (``stormcf: 1m30s: training mc:
  epoch 12/20``), so that no run is silent for minutes where nobody sees a bar.

:func:`native_output` redirects the file descriptors 1 and 2, where C and C++ libraries write (HiGHS's banner on
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
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Iterator, TextIO

#: verbosity levels
QUIET, NORMAL, VERBOSE = -1, 0, 1
#: seconds a phase runs before :meth:`Reporter.activity` shows it on a terminal
ACTIVITY_AFTER = 2.0
#: seconds between two progress lines on a stderr that is not a terminal (the environment variable
#: ``STORMCF_PROGRESS_SECONDS`` sets another period, e.g. for a CI log or a test that waits for the first line)
HEARTBEAT = 30.0


@dataclass
class Task:
    """Something under way that progress lines describe: its name, and for a counted one its steps."""

    name: str
    total: float | None = None
    n: float = 0
    counted: bool = False
    postfix: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        text = self.name
        if self.counted:
            text += f": {self.n:g}/{self.total:g}" if self.total else f": {self.n:g}"
            if self.total:
                text += f" ({100 * self.n / self.total:.0f}%)"
        if self.postfix:
            text += ", " + ", ".join(f"{key} {value}" for key, value in self.postfix.items())
        return text


class Reporter:
    """The progress reporter of a run (module docstring): ``verbosity`` and the stream it writes to (stderr, as it
    is when a line is written, by default)."""

    def __init__(self, verbosity: int = NORMAL, stream: IO | None = None, heartbeat: float | None = None) -> None:
        self.verbosity = max(QUIET, min(VERBOSE, int(verbosity)))
        self._stream = stream
        self.heartbeat = heartbeat if heartbeat is not None else _heartbeat()
        self._tasks: list[Task] = []
        self._lock = threading.Lock()

    @property
    def stream(self) -> IO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def terminal(self) -> bool:
        """Whether bars are drawn: stderr is a terminal and the run is not quiet."""
        return self.verbosity > QUIET and _is_terminal(self.stream)

    @property
    def lines(self) -> bool:
        """Whether progress is written as periodic lines: stderr is not a terminal and the run is not quiet."""
        return self.verbosity > QUIET and not _is_terminal(self.stream)

    @property
    def solver_logs(self) -> bool:
        """Whether solvers and Storm show their own logs (``VERBOSE``)."""
        return self.verbosity >= VERBOSE

    def say(self, line: str) -> None:
        """One line on stderr (unless quiet)."""
        if self.verbosity > QUIET:
            print(f"stormcf: {line}", file=self.stream, flush=True)

    @contextlib.contextmanager
    def task(self, task: Task) -> Iterator[Task]:
        """``task`` is under way while the block runs (what progress lines describe)."""
        with self._lock:
            self._tasks.append(task)
        try:
            yield task
        finally:
            with self._lock:
                if task in self._tasks:
                    self._tasks.remove(task)

    def doing(self) -> str:
        """What is under way, outermost first (``strategy: d0 MILP: HiGHS, 300 variables``)."""
        with self._lock:
            return ": ".join(str(task) for task in self._tasks)

    def bar(self, iterable: Iterable | None = None, *, total: float | None = None, desc: str = "",
            unit: str = "it", **options: Any) -> "Bar":
        """A step counter (module docstring); use it as an iterable wrapper or as a context manager with
        ``update()``."""
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)          # type: ignore[arg-type]  # it has __len__ (above)
        return Bar(self, iterable, Task(desc, total, counted=True), unit, options)

    @contextlib.contextmanager
    def activity(self, what: str, after: float = ACTIVITY_AFTER) -> Iterator[None]:
        """Show that ``what`` is under way (module docstring): an elapsed-time line on a terminal after ``after``
        seconds; with ``-v`` on a non-terminal a line when it has run that long and one when it ends."""
        with self.task(Task(what)):
            if not (self.terminal or (self.lines and self.solver_logs)):
                yield
                return
            with self._shown(what, after):
                yield

    @contextlib.contextmanager
    def _shown(self, what: str, after: float) -> Iterator[None]:
        from tqdm import tqdm
        start = time.monotonic()
        shown = threading.Event()

        def show(done: threading.Event) -> None:
            if done.wait(after):
                return
            shown.set()
            if not self.terminal:
                self.say(f"{what} ...")
                return
            with tqdm(total=None, desc=what, file=self.stream, leave=False, bar_format="{desc}: {elapsed}") as bar:
                while not done.wait(0.5):
                    bar.refresh()

        try:
            with _in_background(show, "stormcf-activity"):
                yield
        finally:
            if shown.is_set() and not self.terminal:
                self.say(f"{what}: done in {time.monotonic() - start:.1f} s")

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """While the block runs, and stderr is not a terminal, a line every :attr:`heartbeat` seconds saying what
        is under way (module docstring)."""
        if not self.lines:
            yield
            return
        start = time.monotonic()

        def beat(done: threading.Event) -> None:
            while not done.wait(self.heartbeat):
                self.say(f"{_clock(time.monotonic() - start)}: {self.doing() or 'working'}")

        with _in_background(beat, "stormcf-progress"):
            yield


class Bar:
    """A counted task (:meth:`Reporter.bar`): a tqdm bar on a terminal, the numbers of progress lines elsewhere."""

    def __init__(self, reporter: Reporter, iterable: Iterable | None, task: Task, unit: str,
                 options: dict[str, Any]) -> None:
        self.reporter, self.iterable, self.task = reporter, iterable, task
        self._registered = reporter.task(task)
        self._registered.__enter__()
        self._bar = None
        if reporter.terminal:
            from tqdm import tqdm
            self._bar = tqdm(total=task.total, desc=task.name, unit=unit, file=reporter.stream, leave=False,
                             **options)

    @property
    def n(self) -> float:
        return self.task.n

    def update(self, n: float = 1) -> None:
        self.task.n += n
        if self._bar is not None:
            self._bar.update(n)

    def set_postfix(self, **values: Any) -> None:
        self.task.postfix = values
        if self._bar is not None:
            self._bar.set_postfix(**values)

    def __iter__(self) -> Iterator[Any]:
        try:
            for value in self.iterable if self.iterable is not None else ():
                yield value
                self.update(1)
        finally:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._registered.__exit__(None, None, None)

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _heartbeat() -> float:
    """:data:`HEARTBEAT`, or the period ``STORMCF_PROGRESS_SECONDS`` gives (a positive number of seconds)."""
    try:
        seconds = float(os.environ.get("STORMCF_PROGRESS_SECONDS", HEARTBEAT))
    except ValueError:
        return HEARTBEAT
    return seconds if 0 < seconds < float("inf") else HEARTBEAT


def _clock(seconds: float) -> str:
    """``1h02m03s``, ``2m05s``, ``35s``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _is_terminal(stream: IO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def _in_background(work: Callable[[threading.Event], None], name: str) -> Iterator[None]:
    """``work(done)`` in a daemon thread while the block runs; ``done`` is set when the block ends (however it ends),
    and the thread gets a second to finish."""
    done = threading.Event()
    thread = threading.Thread(target=work, args=(done,), name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(1.0)


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


def _rebind(stream: TextIO, fd: int, saved: int) -> TextIO | None:
    """A text stream on a copy of ``saved`` when ``stream`` writes to the descriptor ``fd``, else None (a stream
    that is not the process's own, e.g. pytest's capture or a notebook's, keeps working unchanged)."""
    try:
        if stream.fileno() != fd:
            return None
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return None
    return io.TextIOWrapper(os.fdopen(os.dup(saved), "wb", buffering=0), encoding=stream.encoding,
                            errors=stream.errors, line_buffering=True, write_through=True)
