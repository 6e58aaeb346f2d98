"""Limits that sizes of work must respect: the memory this process may still use.

Analyses whose memory grows with an option (Monte Carlo samples, sampled paths, change budgets) estimate what they
will allocate and call :func:`require_memory` before allocating, so that a size the machine cannot hold is refused
with a message saying why, instead of a failed 30 GiB allocation (or the kernel killing the process).
"""
from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys

from .errors import OptionError


def available_memory() -> int:
    """Bytes this process can still allocate: the kernel's estimate of available memory (``MemAvailable``), capped
    by the address-space limit (``ulimit -v``) minus what the process already maps."""
    available = _meminfo("MemAvailable") or os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        available = min(available, max(soft - _mapped(), 0))
    return int(available)


def require_memory(needed: float, what: str) -> None:
    """Raise :class:`OptionError` when ``what`` (e.g. "10^9 Monte Carlo samples per step") needs more than half
    of the available memory (the rest is left to Storm, the model and the arrays around)."""
    available = available_memory()
    if needed > available / 2:
        raise OptionError(f"{what} would need about {format_bytes(needed)} of memory; "
                          f"{format_bytes(available)} are available")


#: free memory Storm's model builders need before they start, even for a tiny model: with less, Storm's explicit
#: builder crashes (a segmentation fault) instead of raising std::bad_alloc. Measured (stormpy 2.0, an 8-state
#: model): std::bad_alloc with 0-2 MiB left, a crash with 3-16 MiB, Storm's "out of memory" at 20 MiB, built from
#: 24 MiB on
STORM_BUILD_HEADROOM = 32 * 2 ** 20
#: address space a new thread reserves for its stack (glibc's default, 8 MiB); with less left, creating one aborts
#: the process ("cannot allocate memory for thread-local data", exit code 127) instead of raising an error
THREAD_STACK = 8 * 2 ** 20

#: how running out of memory shows in errors that are no MemoryError: a shared library that cannot be mapped
#: (an import), Storm's own "out of memory", std::bad_alloc in a message
_OUT_OF_MEMORY = ("failed to map segment", "cannot allocate memory", "out of memory", "std::bad_alloc")


def frugal_threads() -> None:
    """Make this process's threads cheap in address space, as a command under ``ulimit -v`` needs: one malloc arena
    for all threads (glibc otherwise reserves 64 MiB per thread that allocates, and a thread that cannot get its
    memory aborts the process with exit code 127), and single-threaded BLAS (stormcf's kernels are sparse; OpenBLAS
    would start its threads again after every fork of a Storm check): OpenBLAS reads ``OPENBLAS_NUM_THREADS`` when
    numpy loads it, which a command does after this (the command line imports no numpy); where numpy is loaded
    already (``stormcf.cli.main`` called from Python), threadpoolctl limits it."""
    try:
        ctypes.CDLL(None).mallopt(-8, 1)          # M_ARENA_MAX
    except (OSError, AttributeError):
        pass
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "numpy" not in sys.modules:
        return
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except Exception:                             # noqa: BLE001 - only an optimisation
        pass


def require_headroom(needed: int, what: str) -> None:
    """Raise :class:`MemoryError` (the command line's "out of memory", exit 2) when less than ``needed`` bytes of
    memory are left for ``what``, which would crash rather than fail cleanly with less."""
    available = available_memory()
    if available < needed:
        raise MemoryError(f"{what} needs about {format_bytes(needed)} of free memory; {format_bytes(available)} left")


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` is running out of memory: a :class:`MemoryError`, an OSError ENOMEM (a memory map, a thread
    or a process that cannot be made), an error whose message says so, or CPython's SystemError of a C function
    whose allocation failed without setting MemoryError (``compile`` under a tight ``ulimit -v``) while the address
    space is at its limit."""
    return (isinstance(err, MemoryError) or (isinstance(err, OSError) and err.errno == errno.ENOMEM)
            or any(text in str(err).lower() for text in _OUT_OF_MEMORY)
            or (isinstance(err, SystemError) and "without setting an exception" in str(err)
                and _address_space_nearly_full()))


#: how close to its ``ulimit -v`` a process's address space counts as full (what a failed allocation leaves)
ADDRESS_SPACE_MARGIN = 64 * 2 ** 20


def _address_space_nearly_full() -> bool:
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return limit != resource.RLIM_INFINITY and _mapped() > limit - ADDRESS_SPACE_MARGIN


#: the most value-iteration steps (T x transitions of the unrolled model) Storm's check of a model unrolled over T
#: steps may take (about a minute); it checks a step-bounded or layered property by T rounds over the whole model
UNROLLED_WORK_LIMIT = 1e10
#: bytes per transition of an unrolled model, all copies together: the counterfactual MDP's rows (indices and
#: bounds), the unrolled CSR matrices, their transfer to Storm and Storm's own model
UNROLLED_BYTES = 120.0


def require_unrolled_size(steps: int, transitions: int, what: str) -> None:
    """Refuse a model unrolled over an observed path of ``steps`` steps with ``transitions`` transitions in all its
    layers together (e.g. :func:`~stormcf.counterfactual_mdp.nominal_transitions`) that the memory cannot hold
    (:data:`UNROLLED_BYTES` per transition) or Storm cannot check in about a minute (T x transitions value-iteration
    steps). ``what`` names the unrolled model, e.g. "the unrolled ICFMDP"."""
    T = max(int(steps), 1)
    require_memory(transitions * UNROLLED_BYTES, f"{what} of a path of {T:,} steps ({transitions:,} transitions "
                                                 "in its layers)")
    work = float(T) * transitions
    if work > UNROLLED_WORK_LIMIT:
        longest = int((UNROLLED_WORK_LIMIT * T / max(transitions, 1)) ** 0.5)     # at this many per layer
        raise OptionError(f"a path of {T:,} steps: Storm's check of {what} ({transitions:,} transitions in its "
                          f"layers, T x transitions = {work:.2g} value-iteration steps) would take hours; stormcf "
                          f"accepts paths of at most about {longest:,} steps on this model")


def out_of_memory_message(err: BaseException) -> str:
    """One line for a :class:`MemoryError` (numpy's failed allocation, Storm's ``std::bad_alloc``)."""
    detail = str(err).strip()
    where = " in Storm" if detail == "std::bad_alloc" else (f" ({detail})" if detail else "")
    return f"out of memory{where}: try a smaller model, other constants or smaller option values"


def format_bytes(n: float) -> str:
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


#: clock ticks per second of /proc's CPU times
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system, all threads) the process ``pid`` has used so far; None where /proc is missing
    or the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()             # after the command name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS      # utime, stime (fields 14 and 15)
    except (OSError, IndexError, ValueError):
        return None


def resident_memory() -> int:
    """Bytes of memory this process holds now (``VmRSS``; 0 where /proc is missing)."""
    return _status("VmRSS:")


def _mapped() -> int:
    """Bytes of address space this process maps (``VmSize``)."""
    return _status("VmSize:")


def _status(key: str) -> int:
    """A size in bytes from /proc/self/status (0 if missing)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
