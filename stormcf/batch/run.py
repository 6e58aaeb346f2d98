"""Running a batch: one source, many items, one JSON document per item in input order, serially or in parallel.

A batch has

- a **source**: what every item shares and what a worker rebuilds (a model file with its constants, a set-cover
  instance file, a recourse data set): a small picklable recipe whose ``load()`` builds the shared object;
- **items** (:class:`Item`): one observed path, strategy, agent or instance each, as JSON data, with where it came
  from (``paths.jsonl:3``);
- an **analysis** (:class:`~stormcf.analysis.Analysis` with its settings): ``analysis(shared, data, where, deadline)``
  returns the item's result (a :class:`~stormcf.report.Report`), and the cells of the summary table come from it.

:func:`run_batch` yields one :class:`Outcome` per item, in input order: the item's JSON document (the command's
envelope of ``docs/json.md`` plus the key ``batch``), or, when the item fails, a document with status ``error`` and the
key ``error`` saying why. A bad item never stops the batch; a bad source does (its error is raised, before or
instead of any item).

One deadline bounds the whole batch (``deadline``: the active one by default); each item may also have a budget of
its own (``item_seconds``). An item that has not started when the deadline passes gets status ``timeout`` without
running.

Parallelism is joblib's: ``workers=N`` runs N loky processes; ``workers=None`` follows joblib's active
``parallel_config`` (e.g. ``backend="dask"`` on a ``distributed.Client``), and outside one runs serially in this
process. stormpy objects cannot be pickled, so workers receive the source, build the shared object once per process
(:func:`shared`, cached) and send back plain JSON documents. Within one process tasks run one at a time (Storm is not
thread-safe), so Dask workers are best started with one thread each (``--nthreads 1``).
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from ..analysis import Analysis
from ..deadline import Deadline
from ..errors import OptionError, StormcfError, TimeLimitReached
from ..examples import parse_json, read_text
from ..interrupt import Interrupted
from ..items import FilePin, Item, ItemError
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
    items = []
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
_SHARED: "OrderedDict[Hashable, Any]" = OrderedDict()
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
def run_item(source: Source, analysis: Analysis, item: Item, until: float = math.inf,
             item_seconds: float | None = None) -> Outcome:
    """One item in this process: the analysis's document, or an ``error`` document (:func:`run_chunk`)."""
    outcome, = run_chunk(source, analysis, [item], until, item_seconds)
    return outcome


def run_chunk(source: Source, analysis: Analysis, items: Sequence[Item], until: float = math.inf,
              item_seconds: float | None = None) -> list[Outcome]:
    """Consecutive items in this process (what a worker runs): each item's document, or an ``error`` document.
    ``until`` is the batch's deadline as a wall-clock time (:meth:`~stormcf.deadline.Deadline.until_time`),
    ``item_seconds`` each item's own budget. An analysis that solves many problems at once
    (:attr:`~stormcf.analysis.Analysis.batched`) gets the chunk's readable items together, within their budgets
    summed, and each item's seconds are its share."""
    with _LOCK:
        batch = Deadline.until(until)
        with batch.active():
            common = shared(source)             # a bad source raises: the whole batch fails
        model = common if isinstance(common, ExplicitModel) else None
        together = _solve_together(analysis, common, items, batch, item_seconds) if analysis.batched else {}
        outcomes = []
        for item in items:
            start = time.perf_counter()
            if item.error is not None:
                result: Report = ItemError(analysis.command, item.error, "InputError", False, model)
            elif item.index in together:
                result, seconds = together[item.index]
                start -= seconds
            else:
                deadline = batch if item_seconds is None else batch.sub(seconds=item_seconds)
                with deadline.active():
                    result = _solved(analysis, model, lambda: analysis(common, item.content, item.where, deadline),
                                     deadline)
            document = to_json_data(result.to_dict())
            outcomes.append(Outcome(item.index, item.where, _with_batch_key(document, item),
                                    time.perf_counter() - start, _cells(analysis, result)))
    return outcomes


def _solve_together(analysis: Analysis, common: Any, items: Sequence[Item], batch: Deadline,
                    item_seconds: float | None) -> dict[int, tuple[Report, float]]:
    """The readable items of a chunk solved at once: item index -> (its result or error document, its share of the
    seconds)."""
    readable = [item for item in items if item.error is None]
    if not readable:
        return {}
    deadline = batch if item_seconds is None else batch.sub(seconds=item_seconds * len(readable))
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
    """``solve()``'s result, or the error document of what stopped it (not started when the time was up)."""
    if deadline.expired and not deadline.interrupted:
        return ItemError(analysis.command, "not started: the time limit ran out", "TimeLimitReached", False, model,
                         status="timeout")
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


def _cells(analysis: Analysis, result: Report) -> Mapping[str, Any]:
    return {} if isinstance(result, ItemError) else analysis.cells(result)


def _with_batch_key(document: dict[str, Any], item: Item) -> dict[str, Any]:
    """The document with ``batch`` = {index, input, id} after its ``status``."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        out[key] = value
        if key == "status":
            out["batch"] = {"index": item.index, "input": item.where, "id": to_json_data(item.id)}
    return out


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
              deadline: Deadline | None = None, item_seconds: float | None = None) -> Iterator[Outcome]:
    """Every item through ``analysis``, yielded in input order as soon as its chunk is done (module docs).

    ``workers``: 1 runs serially in this process; N > 1 runs N joblib workers of the active backend (loky processes
    by default); -1 one per CPU (or per Dask worker thread); ``None`` follows joblib's active ``parallel_config``
    (serial outside one). The items go to the workers in consecutive chunks (:func:`chunks`): each chunk travels
    with the source once, and a worker keeps the source's shared object (the model) between chunks and batches.
    ``deadline`` (default: the active one) bounds the whole batch, ``item_seconds`` each item.
    """
    from joblib import Parallel, delayed, effective_n_jobs
    until = (deadline if deadline is not None else Deadline.current()).until_time()
    parallel = Parallel(n_jobs=workers, return_as="generator")
    jobs = chunks(list(items), effective_n_jobs(workers), analysis.batched)
    try:
        for outcomes in parallel(delayed(run_chunk)(source, analysis, chunk, until, item_seconds) for chunk in jobs):
            yield from outcomes
    finally:
        _forget(source)                          # a serial run's model is not kept beyond its batch


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
        with parallel_config(backend="loky", n_jobs=workers):
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


# ================================================================================================ summary
@dataclass
class BatchSummary:
    """What a batch run did, for the table and the exit code: one row per item, the statuses, the wall time (and,
    ``with_model``, the model line of the first document that has one). ``columns`` are the headings of the
    analysis's own columns (:attr:`~stormcf.analysis.Analysis.columns`)."""

    columns: Sequence[str]
    with_model: bool = True
    rows: list[list[str]] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    model: Mapping[str, Any] | None = None
    seconds: float = 0.0

    @property
    def items(self) -> int:
        return len(self.rows)

    @property
    def failed(self) -> int:
        return self.statuses.get("error", 0)

    def add(self, outcome: Outcome) -> None:
        doc = outcome.document
        self.statuses[outcome.status] = self.statuses.get(outcome.status, 0) + 1
        if self.with_model and self.model is None and doc.get("model"):
            self.model = doc["model"]
        if "error" in doc:
            cells = [doc["error"]["message"]]
        else:
            cells = [_cell(outcome.cells.get(heading)) for heading in self.columns]
        self.rows.append([str(outcome.index), outcome.where, outcome.status] + cells + [f"{outcome.seconds:.3g}"])

    def text(self, parallel: str = "serial") -> str:
        headings = ["#", "input", "status"] + list(self.columns) + ["seconds"]
        ok_rows = [r for r in self.rows if len(r) == len(headings)]
        widths = [max([len(h)] + [len(r[k]) for r in ok_rows]) for k, h in enumerate(headings)]
        lines = [_model_line(self.model)] if self.model else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(headings, widths)).rstrip())
        for row in self.rows:
            if len(row) == len(headings):
                lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            else:                                    # a failed item: its message after the status
                lines.append("  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3])
        counts = ", ".join(f"{n} {status}" for status, n in self.statuses.items())
        rate = self.items / self.seconds if self.seconds > 0 else float("inf")
        lines.append(f"{self.items} items: {counts}; {self.seconds:.3g} s, {rate:.3g} items/s ({parallel})")
        return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _model_line(model: Mapping[str, Any]) -> str:
    return (f"{model['source']}: {str(model['type']).upper()} with {model['states']} states, {model['choices']} "
            f"choices, {model['transitions']} transitions ({model['decision_states']} decision states)")
