"""Running a batch: one source, many items, one JSON document per item in input order, serially or in parallel.

A batch has

- a **source**: what every item shares and what a worker rebuilds (a model file with its constants, a set-cover
  instance file, a recourse data set): a small picklable recipe whose ``load()`` builds the shared object;
- **items** (:class:`Item`): one observed path, strategy, agent or instance each, as JSON data, with where it came
  from (``paths.jsonl:3``);
- a **task** (:class:`Task`): ``task(shared, data, where)`` returns the item's result (a
  :class:`~stormcf.report.Report`); :mod:`stormcf.batch.tasks` has the one of every command.

:func:`run_batch` yields one :class:`Outcome` per item, in input order: the item's JSON document (the command's
envelope of ``docs/json.md`` plus the key ``batch``), or, when the item fails, a document with status ``error`` and the
key ``error`` saying why. A bad item never stops the batch; a bad source does (its error is raised, before or
instead of any item).

Parallelism is joblib's: ``workers=N`` runs N loky processes; ``workers=None`` follows joblib's active
``parallel_config`` (e.g. ``backend="dask"`` on a ``distributed.Client``), and outside one runs serially in this
process. stormpy objects cannot be pickled, so workers receive the source, build the shared object once per process
(:func:`shared`, cached) and send back plain JSON documents. Within one process tasks run one at a time (Storm is not
thread-safe), so Dask workers are best started with one thread each (``--nthreads 1``).
"""
from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from ..errors import OptionError, StormcfError
from ..examples import parse_json, read_text
from ..model import ExplicitModel
from ..report import Report, to_json_data


class Source(Protocol):
    """What the items of a batch share: ``load()`` builds it (in every worker process, once). Sources are frozen
    dataclasses: hashable (the cache's key) and picklable (they travel to the workers)."""

    def load(self) -> Any: ...


@dataclass(frozen=True)
class ModelFile:
    """A model file with its constants and state naming: what a worker needs to rebuild the model."""

    path: str
    constants: str | None = None
    naming: str = "valuation"

    def load(self) -> ExplicitModel:
        from ..storm import load_model
        model = load_model(self.path, constants=self.constants)
        return model.with_naming(self.naming) if self.naming != "valuation" else model


@dataclass(frozen=True)
class Item:
    """One input of a batch: its position, where it came from (for messages and the JSON), its data (JSON), and the
    reason it could not be read (then ``data`` is None)."""

    index: int
    where: str
    data: Any = None
    error: str | None = None

    @property
    def id(self) -> Any:
        """The ``"id"`` the input line gives itself, if any."""
        return self.data.get("id") if isinstance(self.data, Mapping) else None

    @property
    def content(self) -> Any:
        """The data without the batch's own ``"id"``, which is not part of a path, strategy, agent or instance
        (whose files refuse unknown keys)."""
        if isinstance(self.data, Mapping) and "id" in self.data:
            return {key: value for key, value in self.data.items() if key != "id"}
        return self.data


@dataclass(frozen=True)
class Task:
    """``solve(shared, data, where, **options)`` of one command, as a picklable callable (``solve`` must be a
    module-level function). ``solve_many(shared, [(data, where), ...], **options)``, where given, solves several
    items at once (set cover certifies a whole chunk of agents with one Storm call) and returns, per item, its
    result or the error it raised."""

    command: str
    solve: Callable[..., Report]
    options: Mapping[str, Any] = field(default_factory=dict)
    solve_many: Callable[..., Sequence[Report | BaseException]] | None = None

    def __call__(self, shared: Any, data: Any, where: str) -> Report:
        return self.solve(shared, data, where, **self.options)


@dataclass(frozen=True)
class Outcome:
    """The result of one item: its JSON document (plain JSON data) and the seconds it took."""

    index: int
    where: str
    document: dict[str, Any]
    seconds: float

    @property
    def status(self) -> str:
        return self.document["status"]

    @property
    def failed(self) -> bool:
        return self.status == "error"


@dataclass(frozen=True, eq=False)
class ItemError(Report):
    """A failed item (status ``error``): what went wrong, in one line. ``internal`` is False for bad input (a
    :class:`~stormcf.errors.StormcfError`), True for anything else (a bug, or Storm refusing a computed value)."""

    command: str = ""
    message: str = ""
    error_type: str = "StormcfError"
    internal: bool = False
    model: ExplicitModel | None = None
    status = "error"
    checks: Sequence[Any] = ()
    timings: Mapping[str, float] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return {"error": {"type": self.error_type, "message": self.message, "internal": self.internal}}

    def text(self) -> str:
        return f"error: {self.message}"


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
def run_item(source: Source, task: Task, item: Item) -> Outcome:
    """One item in this process: the task's document, or an ``error`` document."""
    outcome, = run_chunk(source, task, [item])
    return outcome


def run_chunk(source: Source, task: Task, items: Sequence[Item]) -> list[Outcome]:
    """Consecutive items in this process (what a worker runs): each item's document, or an ``error`` document.
    With ``task.solve_many`` the readable items are solved together, and each item's seconds are its share."""
    with _LOCK:
        common = shared(source)                 # a bad source raises: the whole batch fails
        model = common if isinstance(common, ExplicitModel) else None
        solved: dict[int, Report | BaseException] = {}
        readable = [item for item in items if item.error is None]
        share = 0.0
        if task.solve_many is not None and readable:
            start = time.perf_counter()
            try:
                results = task.solve_many(common, [(item.content, item.where) for item in readable], **task.options)
                solved = {item.index: result for item, result in zip(readable, results)}
            except Exception:                   # an internal error of the chunk: every item on its own, below
                solved = {}
            share = (time.perf_counter() - start) / len(readable)
        outcomes = []
        for item in items:
            start = time.perf_counter()
            if item.error is not None:
                result: Report = ItemError(task.command, item.error, "InputError", False, model)
            else:
                result = _report(task, solved[item.index] if item.index in solved else _solve(task, common, item),
                                 model)
            document = to_json_data(result.to_dict())
            seconds = time.perf_counter() - start + (share if item.index in solved else 0.0)
            outcomes.append(Outcome(item.index, item.where, _with_batch_key(document, item), seconds))
    return outcomes


def _solve(task: Task, common: Any, item: Item) -> Report | BaseException:
    try:
        return task(common, item.content, item.where)
    except Exception as err:                    # reported in the item's document, the batch goes on
        return err


def _report(task: Task, result: Report | BaseException, model: ExplicitModel | None) -> Report:
    """The item's result, or the error document of what it raised: bad input (a StormcfError), or an internal error
    (anything else)."""
    if isinstance(result, StormcfError):
        return ItemError(task.command, str(result), type(result).__name__, False, model)
    if isinstance(result, BaseException):
        return ItemError(task.command, f"internal error: {type(result).__name__}: {result}", type(result).__name__,
                         True, model)
    return result


def _with_batch_key(document: dict[str, Any], item: Item) -> dict[str, Any]:
    """The document with ``batch`` = {index, input, id} after its ``status``."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        out[key] = value
        if key == "status":
            out["batch"] = {"index": item.index, "input": item.where, "id": to_json_data(item.id)}
    return out


#: chunks per worker: items go to the workers in consecutive chunks, a few per worker so that the workers finish
#: together (a task with ``solve_many`` gets fewer: each chunk is one certificate)
CHUNKS_PER_WORKER = 4
CERTIFIED_CHUNKS_PER_WORKER = 2


def chunks(items: Sequence[Item], workers: int, solve_many: bool) -> list[list[Item]]:
    """Consecutive chunks of the items for ``workers`` workers: one item each when serial (the outcomes stream),
    or the whole batch for a task that solves many items at once; in parallel a few balanced chunks per worker."""
    items = list(items)
    if workers <= 1:
        return [items] if solve_many and items else [[item] for item in items]
    count = min(len(items), workers * (CERTIFIED_CHUNKS_PER_WORKER if solve_many else CHUNKS_PER_WORKER))
    bounds = np.linspace(0, len(items), count + 1).round().astype(int) if count else [0]
    return [items[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def run_batch(source: Source, task: Task, items: Iterable[Item], workers: int | None = None) -> Iterator[Outcome]:
    """Every item through ``task``, yielded in input order as soon as its chunk is done (module docs).

    ``workers``: 1 runs serially in this process; N > 1 runs N joblib workers of the active backend (loky processes
    by default); -1 one per CPU (or per Dask worker thread); ``None`` follows joblib's active ``parallel_config``
    (serial outside one). The items go to the workers in consecutive chunks (:func:`chunks`): each chunk travels
    with the source once, and a worker keeps the source's shared object (the model) between chunks and batches.
    """
    from joblib import Parallel, delayed, effective_n_jobs
    parallel = Parallel(n_jobs=workers, return_as="generator")
    jobs = chunks(list(items), effective_n_jobs(workers), task.solve_many is not None)
    try:
        for outcomes in parallel(delayed(run_chunk)(source, task, chunk) for chunk in jobs):
            yield from outcomes
    finally:
        _forget(source)                          # a serial run's model is not kept beyond its batch


@contextmanager
def backend(name: str = "loky", workers: int | None = None, scheduler: str | None = None) -> Iterator[None]:
    """joblib's configuration for a batch: ``"loky"`` (processes on this machine) or ``"dask"`` (the cluster whose
    scheduler listens at ``scheduler``, e.g. ``tcp://10.0.0.5:8786``; needs the extra ``stormcf[dask]``)."""
    from joblib import parallel_config
    if name == "loky":
        if scheduler is not None:
            raise OptionError("a scheduler address applies to the dask backend only")
        with parallel_config(backend="loky", n_jobs=workers):
            yield
        return
    if name != "dask":
        raise OptionError(f"unknown parallel backend {name!r}: use loky or dask")
    if not scheduler:
        raise OptionError("the dask backend needs the address of a running scheduler (e.g. tcp://host:8786)")
    try:
        from distributed import Client
    except ImportError:
        raise OptionError("the dask backend needs Dask: pip install 'stormcf[dask]'") from None
    try:
        client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError) as err:
        raise OptionError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    with client, parallel_config(backend="dask", n_jobs=-1 if workers is None else workers):
        yield


# ================================================================================================ summary
#: per command, the columns of the summary table: heading -> the cell's value taken from an item's document
Columns = Mapping[str, Callable[[Mapping[str, Any]], Any]]


@dataclass
class BatchSummary:
    """What a batch run did, for the table and the exit code: one row per item, the statuses, the wall time (and,
    ``with_model``, the model line of the first document that has one)."""

    columns: Columns
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
        if outcome.failed:
            cells = [doc["error"]["message"]]
        else:
            cells = [_cell(column(doc)) for column in self.columns.values()]
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
