"""Running a batch: one source, many items, one JSON document per item in input order, serially or in parallel.

A batch has

- a **source**: what every item shares and what a worker rebuilds (a model file with its constants, a set-cover
  instance file, a recourse data set): a small picklable recipe whose ``load()`` builds the shared object;
- **items** (:class:`Item`): one observed path, strategy, agent or instance each, as JSON data, with where it came
  from (``paths.jsonl:3``);
- an **analysis** (:class:`~stormcf.analysis.Analysis` with its settings): ``analysis(shared, data, where, run)``
  returns the item's result (a :class:`~stormcf.report.Report`), and the cells of the summary table come from it.

:func:`run_batch` yields one :class:`Outcome` per item, in input order: the item's JSON document (the command's
envelope of ``docs/json.md`` plus the key ``batch``), or, when the item fails, a document with status ``error`` and the
key ``error`` saying why. A bad item never stops the batch; a bad source does (its error is raised, before or
instead of any item).

One run bounds the whole batch (``run``; a worker rebuilds it from its end and its limit, :class:`Budget`); each
item may also have a budget of its own (``item_seconds``); the messages of the items they stop name them ("the batch's time limit of 600 s was
reached during ..."). An item that has not started when the deadline passes (or after the user's request to stop)
gets status ``timeout`` (``interrupted``) without running.

A batch keeps every item that is done however it ends: :meth:`BatchRun.rest` gives the items not yet yielded when
it is stopped (Ctrl-C, SIGTERM, the process ended from outside), those done included, also in a worker's chunk that
did not come back (the workers on this machine note each item in a :class:`Spool`); a worker's death costs only the
items that were running then (status ``error``).

Parallelism is joblib's: ``workers=N`` runs N loky processes; ``workers=None`` follows joblib's active
``parallel_config`` (e.g. ``backend="dask"`` on a ``distributed.Client``), and outside one runs serially in this
process. stormpy objects cannot be pickled, so workers receive the source, build the shared object once per process
(:func:`shared`, cached) and send back plain JSON documents. Within one process tasks run one at a time (Storm is not
thread-safe), so Dask workers are best started with one thread each (``--nthreads 1``) and the settings
:data:`LEAN_DASK` (:func:`local_cluster` starts such a cluster on this machine).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generator, Iterable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from .. import interrupt
from ..analysis import Analysis
from ..deadline import Deadline
from ..errors import OptionError, StormcfError, TimeLimitReached
from ..examples import parse_json, read_text
from ..interrupt import Interrupted, temporary_directory
from ..items import FilePin, Item, ItemError
from ..run import Run
from ..limits import format_bytes, require_memory, resident_memory
from ..model import ExplicitModel
from ..report import Report, to_json_data


class Source(Protocol):
    """What the items of a batch share: ``load()`` builds it (in every worker process, once). Sources are frozen
    dataclasses: hashable (the cache's key) and picklable (they travel to the workers)."""

    def load(self) -> Any: ...


@dataclass(frozen=True)
class ModelFile:
    """A model file with its constants and state naming: what a worker needs to rebuild the model (the file pinned
    by :class:`FilePin` where the batch starts)."""

    path: str
    constants: str | None = None
    naming: str = "valuation"
    pin: FilePin | None = None

    def __post_init__(self) -> None:
        if self.pin is None:
            object.__setattr__(self, "pin", FilePin.of(self.path))

    def load(self) -> ExplicitModel:
        from ..storm import load_model
        assert self.pin is not None                     # set by __post_init__
        model = load_model(self.pin.readable(self.path), constants=self.constants, shown_as=self.path)
        return model.with_naming(self.naming) if self.naming != "valuation" else model


@dataclass(frozen=True)
class Outcome:
    """The result of one item: its JSON document (plain JSON data), the cells of its row in the summary table (read
    from the result object by the analysis) and the seconds it took."""

    index: int
    where: str
    document: dict[str, Any]
    seconds: float
    cells: Mapping[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return self.document["status"]

    @property
    def failed(self) -> bool:
        return self.status == "error"


# ================================================================================================ reading items
def read_jsonl(path: str, error: type[StormcfError] = OptionError) -> list[Item]:
    """The items of a JSON lines file (one JSON value per line; blank lines are skipped). A line that is not valid
    JSON becomes an item with its error (the batch goes on); a missing or empty file raises ``error``."""
    items: list[Item] = []
    for number, line in enumerate(read_text(path, error).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            items.append(Item(len(items), where, parse_json(line)))
        except json.JSONDecodeError as err:
            items.append(Item(len(items), where, error=f"{where}: not valid JSON ({err.msg}, column {err.colno})"))
        except ValueError as err:                   # strict JSON: duplicate keys, NaN, integers beyond 64 bits
            items.append(Item(len(items), where, error=f"{where}: not valid JSON ({err})"))
    if not items:
        raise error(f"{path}: no items (expected one JSON value per line)")
    return items


# ================================================================================================ the shared object
#: the shared objects of this process, most recent last (a worker keeps the last few sources it served)
_SHARED: "OrderedDict[Source, Any]" = OrderedDict()
_KEEP = 2
#: one task at a time per process: Storm is not thread-safe (Dask workers may run several threads)
_LOCK = threading.RLock()


def shared(source: Source) -> Any:
    """The shared object of ``source`` in this process: built on first use, then cached."""
    with _LOCK:
        if source in _SHARED:
            _SHARED.move_to_end(source)
        else:
            _SHARED[source] = source.load()
            while len(_SHARED) > _KEEP:
                _SHARED.popitem(last=False)
        return _SHARED[source]


def _forget(source: Source) -> None:
    with _LOCK:
        _SHARED.pop(source, None)


# ================================================================================================ running
@dataclass(frozen=True)
class Budget:
    """A batch's time limits as its workers need them: the batch's end as a wall-clock time
    (:meth:`~stormcf.deadline.Deadline.until_time`) with its limit in seconds (for the messages), and each item's own
    seconds."""

    until: float = math.inf
    seconds: float | None = None
    item_seconds: float | None = None

    @classmethod
    def of(cls, deadline: Deadline, item_seconds: float | None = None) -> "Budget":
        return cls(deadline.until_time(), deadline.seconds if deadline.limited else None, item_seconds)

    def batch(self) -> Run:
        """The batch's run in this process (expired when its end has passed), with the progress reporter of the
        command's run in its own process (a serial batch) and a quiet one in a worker (whose progress would
        interleave with the others')."""
        from ..console import QUIET, Reporter
        words = None if self.seconds is None else f"the batch's time limit of {self.seconds:g} s"
        outer = Run.active_run()
        return Run.until(self.until, words, reporter=outer.reporter if outer is not None else Reporter(QUIET))

    def item(self, batch: Run, count: int = 1) -> Run:
        """The deadline of ``count`` items solved together, starting now: the batch's, or the items' own seconds
        when they end first."""
        if self.item_seconds is None:
            return batch
        words = f"the item time limit of {self.item_seconds:g} s" + (f" (x {count} items)" if count > 1 else "")
        return batch.sub(seconds=self.item_seconds * count, limit=words)


def run_item(source: Source, analysis: Analysis, item: Item, budget: Budget = Budget()) -> Outcome:
    """One item in this process: the analysis's document, or an ``error`` document (:func:`run_chunk`)."""
    outcome, = run_chunk(source, analysis, [item], budget)
    return outcome


def run_chunk(source: Source, analysis: Analysis, items: Sequence[Item], budget: Budget = Budget(),
              spool: Spool | None = None) -> list[Outcome]:
    """Consecutive items in this process (what a worker runs): each item's document, or an ``error`` document,
    within the batch's ``budget``; each item is noted in the ``spool`` as it starts and ends. An analysis that solves
    many problems at once (:attr:`~stormcf.analysis.Analysis.batched`) gets the chunk's readable items together,
    within their budgets summed, and each item's seconds are its share."""
    with _LOCK, (spool or Spool(None)).notes() as notes:
        batch = budget.batch()
        with batch.active():
            common = shared(source)             # a bad source raises: the whole batch fails
        model = common if isinstance(common, ExplicitModel) else None
        together = _solve_together(analysis, common, items, batch, budget, notes) if analysis.batched else {}
        outcomes = []
        for item in items:
            start = time.perf_counter()
            if item.error is not None:
                result: Report = ItemError(analysis.command, item.error, "InputError", False, model)
            elif item.index in together:
                result, seconds = together[item.index]
                start -= seconds
            else:
                notes.started([item])
                deadline = budget.item(batch)
                with deadline.active():
                    result = _solved(analysis, model, lambda: analysis(common, item.content, item.where, deadline),
                                     deadline)
            outcomes.append(_outcome(analysis, item, result, time.perf_counter() - start))
            notes.done(outcomes[-1])
    return outcomes


def _solve_together(analysis: Analysis, common: Any, items: Sequence[Item], batch: Run, budget: Budget,
                    notes: "SpoolNotes") -> dict[int, tuple[Report, float]]:
    """The readable items of a chunk solved at once: item index -> (its result or error document, its share of the
    seconds)."""
    readable = [item for item in items if item.error is None]
    if not readable:
        return {}
    notes.started(readable)
    deadline = budget.item(batch, len(readable))
    model = common if isinstance(common, ExplicitModel) else None
    start = time.perf_counter()
    with deadline.active():
        problems: dict[int, Any] = {}
        results: dict[int, Report] = {}
        for item in readable:
            try:
                problems[item.index] = analysis.problem(common, item.content, item.where)
            except StormcfError as err:
                results[item.index] = _error_result(analysis, err, model)
        answers = _solved(analysis, model, lambda: analysis.solve_many(list(problems.values()), deadline), deadline)
        if isinstance(answers, ItemError) and answers.internal:     # a bug of the chunk: every item on its own
            answers = Analysis.solve_many(analysis, list(problems.values()), deadline)
    if isinstance(answers, ItemError):          # the whole chunk stopped (time limit, Ctrl-C)
        results.update(dict.fromkeys(problems, answers))
    else:
        for index, answer in zip(problems, answers):
            results[index] = answer if isinstance(answer, Report) else _error_result(analysis, answer, model)
    share = (time.perf_counter() - start) / len(readable)
    return {index: (result, share) for index, result in results.items()}


def _solved(analysis: Analysis, model: ExplicitModel | None, solve, deadline: Deadline):
    """``solve()``'s result, or the document of what stopped it; not started when the time is up or the user asked
    to stop."""
    if deadline.interrupted:
        return ItemError(analysis.command, "not started: stopped at the user's request", "Interrupted", False, model,
                         status="interrupted")
    if deadline.expired:
        return ItemError(analysis.command, f"not started: {deadline.limit} was reached", "TimeLimitReached", False,
                         model, status="timeout")
    try:
        return solve()
    except (Interrupted, Exception) as err:     # a bad, stopped or broken item: reported, the batch goes on
        return _error_result(analysis, err, model)


def _error_result(analysis: Analysis, err: BaseException, model: ExplicitModel | None) -> ItemError:
    """The error document of an item: stopped (``timeout``, ``interrupted``), bad input (a StormcfError) or an
    internal error (anything else)."""
    if isinstance(err, (TimeLimitReached, Interrupted)):
        why = str(err) or "stopped at the user's request"
        return ItemError(analysis.command, why, type(err).__name__, False, model,
                         status="timeout" if isinstance(err, TimeLimitReached) else "interrupted")
    if isinstance(err, StormcfError):
        return ItemError(analysis.command, str(err), type(err).__name__, False, model)
    return ItemError(analysis.command, f"internal error: {type(err).__name__}: {err}", type(err).__name__, True,
                     model)


def _outcome(analysis: Analysis, item: Item, result: Report, seconds: float) -> Outcome:
    cells = {} if isinstance(result, ItemError) else analysis.cells(result)
    return Outcome(item.index, item.where, _with_batch_key(to_json_data(result.to_dict()), item), seconds, cells)


def _with_batch_key(document: dict[str, Any], item: Item) -> dict[str, Any]:
    """The document with ``batch`` = {index, input, id} after its ``status``."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        out[key] = value
        if key == "status":
            out["batch"] = {"index": item.index, "input": item.where, "id": to_json_data(item.id)}
    return out


# ================================================================================================ the spool
class Spool:
    """Where the workers of a parallel batch on this machine note each item as it starts and each outcome as it is
    done (a directory of the batch's process, one file of JSON lines per chunk): the items a chunk finished
    before the batch was stopped or the chunk's worker died are kept, and the items that were running when a worker
    died are known. A worker process's temporary files go there too while it runs a chunk, so that a worker killed
    with the batch leaves none behind. A worker that cannot see the directory (on another machine) notes nothing."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder
        self.owner = os.getpid()                    # the batch's process

    @contextmanager
    def notes(self) -> Iterator["SpoolNotes"]:
        """The notes of one chunk (nothing is noted without a folder or where the folder does not exist)."""
        if self.folder is None or not os.path.isdir(self.folder):
            yield SpoolNotes(None)
            return
        fd, _ = tempfile.mkstemp(dir=self.folder, suffix=".notes")
        with open(fd, "w", encoding="utf-8") as f, self._temporary_files():
            yield SpoolNotes(f)

    @contextmanager
    def _temporary_files(self) -> Iterator[None]:
        """In a worker process that runs its tasks in its main thread (loky's, not Dask's thread pools): its
        temporary files in the spool while the block runs."""
        if os.getpid() == self.owner or threading.current_thread() is not threading.main_thread():
            yield
            return
        previous, tempfile.tempdir = tempfile.tempdir, self.folder
        try:
            yield
        finally:
            tempfile.tempdir = previous

    def read(self) -> tuple[set[int], dict[int, Outcome]]:
        """The items noted as started, and the outcomes noted as done (by item index). An internal error noted in a
        chunk that did not come back is not kept: loky kills a worker's own child processes (Storm's) before the
        worker when the batch stops or another worker dies, and the worker may note that as the item's crash."""
        started: set[int] = set()
        done: dict[int, Outcome] = {}
        for file in sorted(Path(self.folder).glob("*.notes")) if self.folder else ():
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except OSError:                     # a spool removed
                continue
            for line in lines:
                try:
                    note = json.loads(line)
                except ValueError:              # a note cut short by a worker's death
                    break
                if "started" in note:
                    started.update(note["started"])
                elif not note["document"].get("error", {}).get("internal"):
                    done[note["index"]] = Outcome(**note)
        return started, done


class SpoolNotes:
    """A chunk's notes in the spool (:class:`Spool`), each flushed as it is written."""

    def __init__(self, file: IO[str] | None) -> None:
        self.file = file

    def started(self, items: Sequence[Item]) -> None:
        self._note({"started": [item.index for item in items], "pid": os.getpid()})

    def done(self, outcome: Outcome) -> None:
        self._note({"index": outcome.index, "where": outcome.where, "document": outcome.document,
                    "seconds": outcome.seconds, "cells": to_json_data(dict(outcome.cells))})

    def _note(self, note: dict[str, Any]) -> None:
        """One JSON line (plain data: nothing read back from the spool can run code)."""
        if self.file is not None:
            self.file.write(json.dumps(note) + "\n")
            self.file.flush()


# ================================================================================================ the batch
#: chunks per worker: items go to the workers in consecutive chunks, a few per worker so that the workers finish
#: together (an analysis that solves many items at once gets fewer: each chunk is one certificate)
CHUNKS_PER_WORKER = 4
CERTIFIED_CHUNKS_PER_WORKER = 2


def chunks(items: Sequence[Item], workers: int, together: bool) -> list[list[Item]]:
    """Consecutive chunks of the items for ``workers`` workers: one item each when serial (the outcomes stream),
    or the whole batch for an analysis that solves many items at once (``together``); in parallel a few balanced
    chunks per worker."""
    items = list(items)
    if workers <= 1:
        return [items] if together and items else [[item] for item in items]
    count = min(len(items), workers * (CERTIFIED_CHUNKS_PER_WORKER if together else CHUNKS_PER_WORKER))
    bounds = np.linspace(0, len(items), count + 1).round().astype(int) if count else [0]
    return [items[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def run_batch(source: Source, analysis: Analysis, items: Iterable[Item], workers: int | None = None,
              run: Deadline | None = None, item_seconds: float | None = None) -> Iterator[Outcome]:
    """Every item through ``analysis``, yielded in input order as soon as it and the items before it are done
    (:class:`BatchRun`, which also says what the items not yet yielded are when the batch is stopped)."""
    return iter(BatchRun(source, analysis, items, workers, run, item_seconds))


class BatchRun:
    """A batch on its way (module docs): iterating it yields one :class:`Outcome` per item, in input order, as soon as
    the item and those before it are done; :meth:`rest` gives the items not yet yielded when the batch is stopped
    (those done, the others with the document of the ending).

    ``workers``: 1 runs serially in this process; N > 1 runs N joblib workers of the active backend (loky processes
    by default); -1 one per CPU (or per Dask worker thread); ``None`` follows joblib's active ``parallel_config``
    (serial outside one). The items go to the workers in consecutive chunks (:func:`chunks`): each chunk travels
    with the source once, and a worker keeps the source's shared object (the model) between chunks and batches.
    ``run`` (default: unlimited) bounds the whole batch, ``item_seconds`` each item.

    When a worker process dies (killed, out of memory, a crash in C code), loky stops the batch's other workers too:
    the items that were running then get an ``error`` document naming the death, those done are kept, and those not
    started run again in new workers."""

    def __init__(self, source: Source, analysis: Analysis, items: Iterable[Item], workers: int | None = None,
                 run: Deadline | None = None, item_seconds: float | None = None) -> None:
        self.source, self.analysis, self.items, self.workers = source, analysis, list(items), workers
        _require_distinct_positions(self.items)
        self.budget = Budget.of(run if run is not None else Deadline(None), item_seconds)
        self._done: dict[int, Outcome] = {}         # done, not yet yielded (and the last one yielded)
        self._yielded = 0                           # how many items were yielded
        self._spool: Spool | None = None

    def __iter__(self) -> Iterator[Outcome]:
        from joblib import effective_n_jobs
        jobs = effective_n_jobs(self.workers)
        folder = temporary_directory("stormcf-batch-") if jobs > 1 else contextlib.nullcontext(None)
        try:
            with folder as path:
                self._spool = Spool(None if path is None else str(path))
                try:
                    pending = self.items
                    while pending:
                        pending = yield from self._round(pending, jobs)
                finally:                            # what the spool holds outlives it, for rest()
                    self._keep(self._spool.read()[1])
                    self._spool = None
        finally:
            _forget(self.source)                    # a serial run's model is not kept beyond its batch

    def _round(self, items: list[Item], jobs: int) -> Generator[Outcome, None, list[Item]]:
        """The items through the workers; returns those to run again because a worker died before they started."""
        from joblib import Parallel, delayed
        parallel = Parallel(n_jobs=self.workers, return_as="generator_unordered")
        tasks = (delayed(run_chunk)(self.source, self.analysis, chunk, self.budget, self._spool)
                 for chunk in chunks(items, jobs, self.analysis.batched))
        try:
            with contextlib.closing(parallel(tasks)) as results:      # closed: its workers stop with the batch
                for outcomes in results:
                    self._done.update((outcome.index, outcome) for outcome in outcomes)
                    yield from self._in_order()
        except _worker_deaths() as err:
            again = self._after_death(items, err)
            yield from self._in_order()
            return again
        return []

    def _keep(self, outcomes: Mapping[int, Outcome]) -> None:
        """Keep the outcomes of items not yet yielded."""
        waiting = {item.index for item in self.items[self._yielded:]}
        self._done.update((index, outcome) for index, outcome in outcomes.items() if index in waiting)

    def _in_order(self) -> Iterator[Outcome]:
        while self._yielded < len(self.items) and self.items[self._yielded].index in self._done:
            outcome = self._done[self.items[self._yielded].index]
            if self._yielded:
                self._done.pop(self.items[self._yielded - 1].index, None)
            self._yielded += 1
            yield outcome

    def _after_death(self, items: list[Item], err: BaseException) -> list[Item]:
        """After a worker's death: the outcomes the spool holds are kept, the items that were running get an error
        document naming the death; returns the items that had not started (all of them when no item could be
        placed: a round in which nothing is done ends the batch)."""
        started, done = self._spool.read() if self._spool else (set(), {})
        self._keep(done)
        yielded = {item.index for item in self.items[:self._yielded]}
        lost = [item for item in items if item.index not in self._done and item.index not in yielded]
        running = [item for item in lost if item.index in started]
        waiting = [item for item in lost if item.index not in started]
        if not running and len(lost) == len(items):     # nothing done or running: no round could do better
            running, waiting = lost, []
        message = _death_message(err)
        for item in running:
            self._done[item.index] = _outcome(self.analysis, item, ItemError(self.analysis.command, message,
                                                                             "WorkerDied", True), 0.0)
        return waiting

    def rest(self, handled: int, status: str, error_type: str, message: str) -> list[Outcome]:
        """Every item after the first ``handled`` (in input order) when the batch is stopped: its outcome when it
        is done (in a worker's chunk too, on this machine), else a document of status ``status`` (``timeout``,
        ``interrupted``) whose error says ``message``. Safe to call from another thread while the batch runs."""
        done = dict(self._done)
        spool = self._spool
        if spool is not None:
            done.update(spool.read()[1])
        unfinished = ItemError(self.analysis.command, message, error_type, False, status=status)
        return [done.get(item.index) or _outcome(self.analysis, item, unfinished, 0.0)
                for item in self.items[handled:]]


def _require_distinct_positions(items: Sequence[Item]) -> None:
    """Outcomes are matched to items by their index: refuse two items of one index (a caller's bug, not a user's)."""
    seen: set[int] = set()
    for item in items:
        if item.index in seen:
            raise ValueError(f"two items at position {item.index} of the batch: every item needs its own index")
        seen.add(item.index)


def _worker_deaths() -> tuple[type[BaseException], ...]:
    """The errors joblib raises when a worker process died: loky's (a ``BrokenProcessPool``) and, when Dask is in
    use, Dask's ``KilledWorker`` (a task whose workers kept dying)."""
    from concurrent.futures.process import BrokenProcessPool
    dask = sys.modules.get("distributed")
    return (BrokenProcessPool,) + ((dask.KilledWorker,) if dask is not None else ())


def _death_message(err: BaseException) -> str:
    """What an item that was running when a worker died says: the death, with loky's exit codes of the workers."""
    codes = re.search(r"exit codes of the workers are (\{[^}]*\})", str(err))
    return ("a worker process of the batch died while this item ran (" + (f"exit codes {codes.group(1)}: "
            if codes else "") + "killed, out of memory or a crash; one worker's death stops the items running in "
            "the others too)")


#: what a ``tls://`` scheduler needs, and where Dask reads it from (its configuration, e.g. environment variables)
TLS_SETTINGS = ("a tls:// scheduler needs the CA certificate that signed the cluster's certificates and this client's "
                "certificate and key, in Dask's configuration distributed.comm.tls.ca-file, .client.cert and "
                ".client.key (environment: DASK_DISTRIBUTED__COMM__TLS__CA_FILE, "
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT, DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY)")


@contextmanager
def backend(name: str = "loky", workers: int | None = None, scheduler: str | None = None,
            security: Any = None) -> Iterator[str]:
    """joblib's configuration for a batch: ``"loky"`` (processes on this machine) or ``"dask"`` (the cluster whose
    scheduler listens at ``scheduler``, e.g. ``tls://10.0.0.5:8786``; needs the extra ``stormcf[dask]``). Yields
    how the batch runs, in words (for the summary line).

    Loky workers are bounded by this machine's cores and by its memory (each worker process holds what this
    process holds, and builds the model once). A Dask cluster with one worker thread (or ``workers=1``) would make
    joblib run the batch here, serially: the words say so.

    A Dask scheduler can run any code in its clients and workers (Dask's security model: whoever controls the
    scheduler controls every process connected to it): connect only to schedulers you trust. ``tls://`` addresses
    encrypt and authenticate the connection with ``security`` (a ``distributed.security.Security``), by default
    the one Dask's configuration gives (:data:`TLS_SETTINGS`)."""
    from joblib import parallel_config
    if name == "loky":
        if scheduler is not None:
            raise OptionError("a scheduler address applies to the dask backend only")
        if workers is not None and workers > 1:
            require_workers(workers)
        with parallel_config(backend="loky", n_jobs=workers, initializer=_worker_started, initargs=(os.getpid(),)):
            yield "serial" if workers in (None, 1) else f"loky, {workers} workers"
        return
    if name != "dask":
        raise OptionError(f"unknown parallel backend {name!r}: use loky or dask")
    if not scheduler:
        raise OptionError("the dask backend needs the address of a running scheduler (e.g. tcp://host:8786)")
    try:
        from distributed import Client
        from distributed.security import Security
    except ImportError:
        raise OptionError("the dask backend needs Dask: pip install 'stormcf[dask]'") from None
    security = security if security is not None else Security()
    if scheduler.startswith("tls://") and not security.tls_ca_file:
        raise OptionError(TLS_SETTINGS)
    try:
        client = Client(scheduler, timeout=10, security=security)
    except (OSError, TimeoutError, ValueError) as err:
        raise OptionError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    with client:
        threads = sum(client.nthreads().values())
        jobs = threads if workers is None else workers
        if threads == 0:
            raise OptionError(f"the Dask cluster at {scheduler} has no workers")
        if jobs <= 1:
            words = (f"dask at {scheduler}: {'one worker thread' if threads == 1 else 'one worker asked for'}, so "
                     "the batch ran serially in this process, not on the cluster")
        else:
            words = f"dask at {scheduler}, {jobs} of {threads} worker threads"
        with parallel_config(backend="dask", n_jobs=jobs):
            yield words


#: Dask's settings for the processes of a cluster that runs batches (:func:`local_cluster` sets them; a user who
#: starts a cluster sets them in its configuration, docs/batches.md). With Dask's defaults a batch of icfmdp items on
#: Sepsis took 1.9x the CPU of the serial batch, 1.17x with these (issue 34): the nannies start every worker
#: with ``MALLOC_TRIM_THRESHOLD_`` set, which turns off glibc's adaptive mmap threshold, so that every array above
#: 128 KiB is mapped, zeroed and unmapped anew (+35-38% CPU and twice the page faults on the same items in a plain
#: process); each worker samples every thread's stack every 10 ms (the profiler) and every scheduler, nanny and
#: worker checks its event loop every 20 ms, so that an idle two-worker cluster burns 5-6 CPU s a minute (0.9 s
#: with these settings).
LEAN_DASK = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing": False,               # joblib hands out a few chunks at a time
    "distributed.scheduler.active-memory-manager.start": False,  # a chunk's documents are its only data
    "distributed.client.scheduler-info-interval": "10s",
    "distributed.deploy.cluster-repr-interval": "10s",
}


@contextmanager
def local_cluster(workers: int) -> Iterator[Any]:
    """A Dask cluster on this machine for batches (``distributed.LocalCluster``, needs ``stormcf[dask]``):
    ``workers`` worker processes of one thread each (Storm is not thread-safe), no dashboard, with the settings
    :data:`LEAN_DASK` while it runs. Connect with ``Client(cluster)`` or pass ``cluster.scheduler_address`` to
    :func:`backend`."""
    import dask.config
    from distributed import LocalCluster
    here = {"dashboard_address": "127.0.0.1:0"}     # the scheduler's HTTP server (health checks): any free port
    with dask.config.set(LEAN_DASK), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  dashboard_address=None, scheduler_kwargs=here,
                                                  silence_logs=40) as cluster:
        yield cluster


def _worker_started(parent: int) -> None:
    """A loky worker of a batch dies with the batch's process ``parent`` (a batch ended from outside, e.g. at its
    time limit, leaves no worker behind), also when that ended while the worker started; a Ctrl-C still reaches
    it."""
    interrupt.die_with_parent(ignore_ctrl_c=False)
    if os.getppid() != parent:
        os._exit(0)


def require_workers(workers: int) -> None:
    """Refuse more worker processes than this machine has cores, or than its memory holds (each needs about what
    this process holds now)."""
    cores = usable_cores()
    if workers > cores:
        raise OptionError(f"{workers} worker processes on a machine with {cores} cores: use at most {cores}")
    require_memory(workers * resident_memory(), f"{workers} worker processes (each about "
                                                f"{format_bytes(resident_memory())}, as this process)")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
