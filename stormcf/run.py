"""The run context: what one analysis run carries all the way down, in the spirit of stormpy's ``Environment`` and
Storm's ``ResourceSettings`` / ``isTerminate()``.

A :class:`Run` is the run's time budget (a :class:`~stormcf.deadline.Deadline`: phases, sub-budgets, timings) with

- the **stop request**: :meth:`Run.stop` (from another thread) or the user's first Ctrl-C
  (:mod:`stormcf.interrupt`) expires the run and every sub-budget at once; analyses stop at their next safe point
  and report their best checked answer;
- the **progress reporter** (:class:`~stormcf.console.Reporter`): bars on a terminal, a line every 30 s elsewhere
  (:meth:`Run.progress`, :meth:`Run.activity`);
- the routing of **native output**: what Storm and the solvers print from C code goes to nowhere (default) or to
  stderr (``show_native``), never to the caller's stdout.

Every analysis receives its run explicitly (``Analysis.solve(problem, run)``, ``explain_path(problem, run=...)``);
the Python API builds one from ``time_limit=`` when none is given, so that a limit passed in Python bounds the whole
solve::

    result = stormcf.explain_path(problem, time_limit=2)          # ends within about 2 s with its best answer
    run = Run(60, reporter=Reporter(VERBOSE))                       # or one run for several calls
    result = stormcf.solve_counterfactual(problem, run=run)

An entry point makes its run the *active* one for its duration (:meth:`Run.active`): the Storm bridge and the solver
back ends, which sit below every analysis and cannot take a run argument through Storm's or a solver's own calls,
read it with :meth:`Run.current` (model checking in a child process stopped at the run's end, a solver's time limit
and log). Nothing else reads the active run.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Iterator

from . import interrupt
from .console import NORMAL, Bar, Reporter, Task, native_output
from .deadline import Deadline

_active: ContextVar["Run | None"] = ContextVar("stormcf_run", default=None)


class Run(Deadline):
    """One analysis run (module docstring).

    Args:
        seconds: the time budget (``None``: unlimited).
        reporter: the progress reporter (default: ``NORMAL`` verbosity on stderr).
        show_native: show what Storm and the solvers print from C code on stderr (default: hide it).
        clock, elapsed, limit: as for :class:`~stormcf.deadline.Deadline`.
    """

    def __init__(self, seconds: float | None = None, *, reporter: Reporter | None = None, show_native: bool = False,
                 clock: Callable[[], float] = time.perf_counter, elapsed: float = 0.0,
                 limit: str | None = None) -> None:
        super().__init__(seconds, clock=clock, elapsed=elapsed, limit=limit)
        self.reporter = reporter if reporter is not None else Reporter(NORMAL)
        self.show_native = show_native
        self._stop = threading.Event()

    @classmethod
    def of(cls, run: "Run | None" = None, time_limit: float | None = None) -> "Run":
        """The run a Python entry point works in: ``run`` (bounded by ``time_limit`` more seconds when both are
        given), else a new run of ``time_limit`` seconds (``None``: unlimited)."""
        if run is None:
            return cls(time_limit)
        if not isinstance(run, Run):
            raise TypeError(f"expected a stormcf.run.Run, got {type(run).__name__} (give time_limit= for seconds)")
        return run if time_limit is None else run.sub(seconds=time_limit,
                                                      limit=f"the time limit of {time_limit:g} s")

    @classmethod
    def current(cls) -> "Run":
        """The active run (:meth:`active`), or a new unlimited one when none is active: for the Storm bridge and
        the solver back ends only (module docstring)."""
        return _active.get() or cls(None)

    @classmethod
    def active_run(cls) -> "Run | None":
        """The active run, or None when none is active (a batch worker process)."""
        return _active.get()

    @contextmanager
    def active(self) -> Iterator["Run"]:
        """This run is the active one while the block runs. The outermost activation also routes native output
        and writes progress lines on a non-terminal stderr (:meth:`~stormcf.console.Reporter.running`)."""
        outermost = _active.get() is None
        token = _active.set(self)
        try:
            if outermost:
                with native_output(self.show_native), self.reporter.running():
                    yield self
            else:
                yield self
        finally:
            _active.reset(token)

    def stop(self) -> None:
        """Ask the run to stop at its next safe point with its best checked answer (any thread may call it)."""
        self._stop.set()

    @property
    def interrupted(self) -> bool:
        """Whether the run was asked to stop: :meth:`stop`, or the user's first Ctrl-C."""
        return self._stop.is_set() or interrupt.requested()

    @property
    def solver_logs(self) -> bool:
        """Whether solvers and Storm should print their own logs (``-v``)."""
        return self.reporter.solver_logs

    def progress(self, iterable: Iterable | None = None, *, total: float | None = None, desc: str = "",
                 unit: str = "it", **options: Any) -> Bar:
        """A step counter shown by the run's reporter (:meth:`~stormcf.console.Reporter.bar`)."""
        return self.reporter.bar(iterable, total=total, desc=desc, unit=unit, **options)

    def activity(self, what: str) -> Any:
        """A phase without steps to count (:meth:`~stormcf.console.Reporter.activity`)."""
        return self.reporter.activity(what)

    def _child(self) -> "Run":
        child = super()._child()
        child.reporter, child.show_native, child._stop = self.reporter, self.show_native, self._stop
        return child

    @contextmanager
    def phase(self, name: str, seconds: float | None = None, fraction: float | None = None,
              until: Callable[[], bool] | None = None) -> Iterator["Run"]:
        """A phase (:meth:`~stormcf.deadline.Deadline.phase`) that progress lines name while it runs."""
        with self.reporter.task(Task(name)), super().phase(name, seconds, fraction, until) as budget:
            yield budget
