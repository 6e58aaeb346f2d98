"""What every benchmark under ``scripts/`` measures (issue 34), in one place: CPU seconds of this process (all its
threads: Storm loads and checks in threads of its own) and of the child processes it waited for (SCIP's MILPs,
Storm's isolated checks: ``stormcf.storm.isolate``), wall seconds beside them, and the machine's 1-minute load
average at the start and the end. Ratios are computed from CPU seconds (wall shown beside); a wall time is never
subtracted from a CPU time.

Not a script (``tests/test_scripts.py`` runs ``scripts/*.py`` but the private modules, ``_*.py``); the scripts
import it from their own folder (``from _measure import ...``).
"""
from __future__ import annotations

import contextlib
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its child processes that ended and were waited for."""
    return process_cpu_seconds() + children_cpu_seconds()


def process_cpu_seconds() -> float:
    """User and system CPU seconds of this process alone (all its threads)."""
    return time.process_time()


def children_cpu_seconds() -> float:
    """User and system CPU seconds of this process's child processes that ended and were waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def load_average() -> float:
    """The machine's 1-minute load average."""
    return os.getloadavg()[0]


def machine() -> str:
    """The CPUs and the load now, for a benchmark's first line."""
    return f"{os.cpu_count()} CPUs, load average {load_average():.2f}"


@dataclass
class Timing:
    """CPU and wall seconds of a piece of work, and the load average when it started and ended."""
    cpu: float = 0.0
    wall: float = 0.0
    load: tuple[float, float] = field(default_factory=lambda: (load_average(), load_average()))

    def __str__(self) -> str:
        return f"{self.cpu:.3f} s CPU ({self.wall:.3f} s wall)"

    @property
    def loads(self) -> str:
        """The load at the start and the end, e.g. ``1.9-2.4``."""
        return f"{self.load[0]:.1f}-{self.load[1]:.1f}"


@contextlib.contextmanager
def timed() -> Iterator[Timing]:
    """Measure the ``with`` block: the :class:`Timing` is filled in when the block ends."""
    timing = Timing()
    start, wall = cpu_seconds(), time.perf_counter()
    try:
        yield timing
    finally:
        timing.cpu, timing.wall = cpu_seconds() - start, time.perf_counter() - wall
        timing.load = (timing.load[0], load_average())


def call(function: Callable, *args, **kwargs) -> tuple[object, Timing]:
    """``function(*args, **kwargs)`` and its :class:`Timing`."""
    with timed() as timing:
        out = function(*args, **kwargs)
    return out, timing


def repeated(repeats: int, function: Callable, *args, statistic: Callable = statistics.median,
             **kwargs) -> tuple[object, Timing]:
    """``repeats`` calls: the last result, and the ``statistic`` (median, or ``min`` for the best) of their CPU
    seconds and of their wall seconds (the load: at the first start, at the last end)."""
    timings = []
    for _ in range(repeats):
        out, timing = call(function, *args, **kwargs)
        timings.append(timing)
    return out, Timing(statistic([t.cpu for t in timings]), statistic([t.wall for t in timings]),
                       (timings[0].load[0], timings[-1].load[1]))


def ratio(numerator: Timing, denominator: Timing) -> str:
    """``numerator`` over ``denominator`` in CPU seconds, with the wall ratio beside, e.g. ``3.1x CPU (2.9x wall)``."""
    return f"{times(numerator.cpu / denominator.cpu)} CPU ({times(numerator.wall / denominator.wall)} wall)"


def times(factor: float) -> str:
    """A ratio as ``0.821x``, ``34.9x``, ``1,470x``."""
    return f"{factor:,.0f}x" if factor >= 100 else f"{factor:.3g}x"


@contextlib.contextmanager
def cpu_timers(targets: dict[str, tuple[object, str]]) -> Iterator[dict[str, float]]:
    """CPU seconds spent in each of the functions ``targets`` (phase -> (owner, attribute)), wrapped meanwhile."""
    spent = dict.fromkeys(targets, 0.0)
    originals = {phase: getattr(owner, name) for phase, (owner, name) in targets.items()}

    def wrapped(phase: str, function: Callable) -> Callable:
        def run(*args, **kwargs):
            start = cpu_seconds()
            try:
                return function(*args, **kwargs)
            finally:
                spent[phase] += cpu_seconds() - start
        return run
    for phase, (owner, name) in targets.items():
        setattr(owner, name, wrapped(phase, originals[phase]))
    try:
        yield spent
    finally:
        for phase, (owner, name) in targets.items():
            setattr(owner, name, originals[phase])
