"""One time budget for a whole command: the :class:`Deadline` every phase of an analysis draws from.

A command creates one deadline when it starts (``Deadline(600)``) and passes it down. Every phase asks it how much
time is left (:meth:`Deadline.remaining`), gives a solver at most that (:meth:`Deadline.budget`), checks it between
steps (:attr:`Deadline.expired`, :meth:`Deadline.check`), and may carve out a sub-budget for a phase that must leave
time to the phases after it (:meth:`Deadline.sub`: it ends no later than its parent). :meth:`Deadline.phase` does
the same and records the phase's wall-clock time in :attr:`Deadline.timings`, shared by a deadline and all its
sub-budgets, so a result can report where its time went::

    deadline = Deadline(120)
    with deadline.phase("pre-analysis"):
        ...
    with deadline.phase("d0 MILP", fraction=0.5) as budget:
        solver.solve(..., time_limit=budget.budget())
    deadline.timings            # {"pre-analysis": 0.4, "d0 MILP": 31.2}

A sub-budget can also end early when something else finishes (``until``: a predicate), e.g. heuristics that run
while a solver works in a child process stop when the solver is done.

The user's request to stop (the first Ctrl-C, :mod:`stormcf.interrupt`) ends every deadline at once: analyses stop
at their next check and report the best answer they have (status ``interrupted``); :meth:`Deadline.check` raises
:class:`~stormcf.interrupt.Interrupted` then, for phases that have nothing to report yet.

``Deadline(None)`` never expires. A deadline is the time budget only: what an analysis run carries besides it (the
user's stop request, the progress reporter, the routing of native output) is the :class:`~stormcf.run.Run`, a
deadline with that context, which every analysis receives.

Messages name the user's limit that ran out (``limit``: "the time limit of 8 s", "the item time limit of 2 s"), not
the remainder a sub-budget or a batch worker happened to start with.
"""
from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from . import interrupt
from .errors import StormcfError, TimeLimitReached

D = TypeVar("D", bound="Deadline")


def process_age() -> float:
    """Seconds since this process started (Linux ``/proc``; 0 where that cannot be read): the time Python's start-up
    and imports took before a command's deadline was made."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
        return max(time.clock_gettime(time.CLOCK_BOOTTIME) - started, 0.0)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


class Deadline:
    """A point in time by which a command must finish (or none), with per-phase timings.

    Args:
        seconds: the budget from now (less ``elapsed``); ``None`` for no limit.
        clock: the clock (seconds, monotonic); ``time.perf_counter`` by default.
        elapsed: seconds already spent (a command's: since its process started, :func:`process_age`).
        limit: the limit in the user's words, for messages that say it was reached (default: "the time limit of
            10 s"; a batch item's: "the batch's time limit of 600 s").
    """

    #: the longest time limit accepted (about 31.7 years): Python's timers overflow beyond 2^63 ns (9.2e9 s)
    MAX_SECONDS = 1e9

    def __init__(self, seconds: float | None = None, *, clock: Callable[[], float] = time.perf_counter,
                 elapsed: float = 0.0, limit: str | None = None) -> None:
        require_seconds(seconds)
        self._clock = clock
        self._until: Callable[[], bool] | None = None
        self.start = clock() - elapsed                 # a command's deadline counts from the process's start
        self.end = math.inf if seconds is None else self.start + float(seconds)
        self.timings: dict[str, float] = defaultdict(float)
        self.limit = limit or ("no time limit" if seconds is None else f"the time limit of {seconds:g} s")

    def until_time(self) -> float:
        """The end as a wall-clock time (``time.time()``), for another process; ``inf`` when unlimited."""
        return math.inf if not self.limited else time.time() + self.end - self._clock()

    @classmethod
    @classmethod
    def until(cls: type[D], wall_time: float, limit: str | None = None, **context) -> D:
        """The deadline that ends at the wall-clock time ``wall_time`` (from :meth:`until_time` in another process;
        expired already when that has passed), named in messages as ``limit`` (the limit the user gave, not what
        was left of it)."""
        deadline = cls(None, limit=limit or "the time limit", **context)
        if math.isfinite(wall_time):
            deadline.end = deadline.start + wall_time - time.time()
        return deadline

    @property
    def seconds(self) -> float:
        """The whole budget (``inf`` when unlimited)."""
        return self.end - self.start

    @property
    def limited(self) -> bool:
        return math.isfinite(self.end)

    def elapsed(self) -> float:
        """Seconds since this deadline (or sub-budget) was created."""
        return self._clock() - self.start

    def remaining(self) -> float:
        """Seconds left (0 when expired or interrupted, ``inf`` when unlimited)."""
        return 0.0 if self.interrupted else max(self.end - self._clock(), 0.0)

    @property
    def interrupted(self) -> bool:
        """Whether the user asked to stop (:mod:`stormcf.interrupt`)."""
        return interrupt.requested()

    @property
    def expired(self) -> bool:
        """Whether a search should stop: the time is up, the user asked to stop, or the sub-budget's ``until``."""
        return self.interrupted or self.out_of_time or (self._until is not None and self._until())

    @property
    def out_of_time(self) -> bool:
        """Whether the time is up (the user's request to stop does not count: work that must finish to report an
        answer, such as Storm's check of it, goes on until the time is up or the second Ctrl-C)."""
        return self._clock() >= self.end

    def budget(self, at_most: float | None = None, floor: float = 0.01) -> float:
        """The time limit to hand to a solver: what is left (capped by ``at_most``), at least ``floor`` seconds so
        that a solver library accepts it; ``inf`` when unlimited and uncapped."""
        left = self.remaining() if at_most is None else min(self.remaining(), at_most)
        return max(left, floor)

    def check(self, what: str) -> None:
        """Raise :class:`~stormcf.errors.TimeLimitReached` naming ``what`` if the deadline has passed
        (:func:`~stormcf.interrupt.stopped` when the user or a signal asked to stop)."""
        if self.interrupted:
            raise interrupt.stopped()
        if self.expired:
            raise self.reached(what)

    def reached(self, what: str) -> TimeLimitReached:
        """The error saying that this deadline's limit (:attr:`limit`) was reached during ``what``."""
        return TimeLimitReached(f"{self.limit} was reached during {what}")

    def sub(self: D, seconds: float | None = None, fraction: float | None = None,
            until: Callable[[], bool] | None = None, limit: str | None = None) -> D:
        """A sub-budget starting now: at most ``seconds``, at most ``fraction`` of the time left, never past this
        deadline, and over as soon as ``until()`` is true. It shares this deadline's timings (and a run's
        context, :class:`~stormcf.run.Run`). ``limit`` names ``seconds`` in messages when it is a limit the user
        gave (an item's own); a share of a phase is named by the limit it is part of."""
        child = self._child()
        child._clock, child.start, child.timings = self._clock, self._clock(), self.timings
        parent = self._until
        child._until = parent if until is None else (until if parent is None else lambda: parent() or until())
        end, child.limit = self.end, self.limit
        if seconds is not None and child.start + seconds < end:
            end = child.start + seconds
            child.limit = limit or child.limit
        if fraction is not None and math.isfinite(self.end):
            end = min(end, child.start + fraction * max(self.end - child.start, 0.0))
        child.end = end
        return child

    def _child(self: D) -> D:
        """A new object of this class for :meth:`sub` (subclasses copy their context into it)."""
        return object.__new__(type(self))

    @contextmanager
    def phase(self: D, name: str, seconds: float | None = None, fraction: float | None = None,
              until: Callable[[], bool] | None = None) -> Iterator[D]:
        """Run a phase with a sub-budget (see :meth:`sub`) and add its wall-clock time to ``timings[name]``."""
        budget = self.sub(seconds, fraction, until)
        try:
            yield budget
        finally:
            self.timings[name] += self._clock() - budget.start

    def __repr__(self) -> str:
        left = "unlimited" if not self.limited else f"{self.remaining():.3g} s of {self.seconds:g} s left"
        return f"<{type(self).__name__} {left}>"


def require_seconds(seconds: float | None) -> None:
    """Refuse a time limit that is not a positive, finite number of seconds up to :attr:`Deadline.MAX_SECONDS`."""
    if seconds is None:
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= Deadline.MAX_SECONDS:
        raise StormcfError(f"the time limit must be a positive number of seconds up to {Deadline.MAX_SECONDS:g}, "
                           f"got {seconds!r}")
