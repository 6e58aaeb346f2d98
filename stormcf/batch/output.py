"""What a batch shows and writes: the summary table (:class:`BatchSummary`) and the documents as JSON lines in input
order (:class:`BatchOutput`), one line per item however the batch ends."""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Sequence

from .. import interrupt
from ..report import atomic_file, json_line, write_stream
from .run import Outcome


@dataclass
class BatchSummary:
    """What a batch run did, for the table and the exit code: one row per item, the statuses (and those of the
    items without an answer: their document has ``error``), the wall time (and, ``with_model``, the model line of
    the first document that has one). ``columns`` are the headings of the analysis's own columns
    (:attr:`~stormcf.analysis.Analysis.columns`)."""

    columns: Sequence[str]
    with_model: bool = True
    #: per item: the cells of its row, or its first three cells and the message of an item without an answer
    rows: list[tuple[list[str], str | None]] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    unanswered: dict[str, int] = field(default_factory=dict)
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
        head = [str(outcome.index), outcome.where, outcome.status]
        if "error" in doc:
            self.unanswered[outcome.status] = self.unanswered.get(outcome.status, 0) + 1
            self.rows.append((head, doc["error"]["message"]))
        else:
            cells = [_cell(outcome.cells.get(heading)) for heading in self.columns]
            self.rows.append((head + cells + [f"{outcome.seconds:.3g}"], None))

    def text(self, parallel: str = "serial") -> str:
        """The table: a row per item (an item without an answer: its message after the status), then the counts."""
        headings = ["#", "input", "status"] + list(self.columns) + ["seconds"]
        widths = [max([len(h)] + [len(cells[k]) for cells, message in self.rows if message is None or k < 3])
                  for k, h in enumerate(headings)]
        lines = [_model_line(self.model)] if self.model else []
        lines.append(_aligned(headings, widths))
        for cells, message in self.rows:
            lines.append(_aligned(cells + ([] if message is None else [message]), widths))
        counts = ", ".join(f"{n} {status}" for status, n in self.statuses.items())
        rate = self.items / self.seconds if self.seconds > 0 else float("inf")
        lines.append(f"{self.items} items: {counts}; {self.seconds:.3g} s, {rate:.3g} items/s ({parallel})")
        return "\n".join(lines)


def _aligned(cells: Sequence[str], widths: Sequence[int]) -> str:
    """A row of the table: each cell padded to its column's width (a message, past the columns, as it is)."""
    return "  ".join(c.ljust(w) for c, w in zip(cells, list(widths) + [0] * len(cells))).rstrip()


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _model_line(model: Mapping[str, Any]) -> str:
    return (f"{model['source']}: {str(model['type']).upper()} with {model['states']} states, {model['choices']} "
            f"choices, {model['transitions']} transitions ({model['decision_states']} decision states)")


class BatchOutput:
    """Where a batch's outcomes go, in input order: the summary table's rows and, with ``out``, the documents as JSON
    lines, to a file (written beside it and put in place when the batch ends, :func:`~stormcf.report.atomic_file`)
    or, for ``out`` ``"-"``, to ``stream`` (each line as it comes).

    Every item gets its line however the batch ends: the caller adds the outcomes of the items the batch did not
    yield (:meth:`~stormcf.batch.run.BatchRun.rest`) when it is stopped, and :meth:`finish_for_good` does so from
    another thread when the process is ended from outside (:func:`stormcf.interrupt.last_words`)."""

    def __init__(self, summary: BatchSummary, out: str | None = None, stream: IO[str] | None = None) -> None:
        self.summary, self.out, self.stream = summary, out, stream
        self.written = 0                            # the outcomes added so far (the first ones in input order)
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self._over = False

    @contextmanager
    def open(self) -> Iterator["BatchOutput"]:
        """The output while the batch runs; the file is put in place when the block ends without an error."""
        if self.out in (None, "-"):
            yield self
            return
        with atomic_file(self.out, encoding="utf-8", after_final_signal=True) as f:
            self._file = f
            yield self
            self._lock.acquire()                    # held for good by finish_for_good once it wrote the file
            self._over = True
            self._lock.release()

    def add(self, outcome: Outcome) -> None:
        """The next outcome (in input order). A signal's exception (Ctrl-C, SIGTERM) waits until its line is
        written and counted (:func:`~stormcf.interrupt.deferred_signals`)."""
        with interrupt.deferred_signals(), self._lock:
            if not self._over:
                self._add(outcome)

    def add_rest(self, outcomes: Iterable[Outcome]) -> None:
        """The outcomes of the items after those added, when the batch was stopped: every line is written, also
        when another signal comes meanwhile (the batch is stopping already)."""
        try:
            with interrupt.deferred_signals():
                for outcome in outcomes:
                    self.add(outcome)
        except (KeyboardInterrupt, interrupt.Terminated):
            pass

    def _add(self, outcome: Outcome) -> None:
        line = json_line(outcome.document) if self.out else ""
        if self._file is not None:
            self._file.write(line)
        elif self.out == "-":
            write_stream(line, self.stream)
        self.summary.add(outcome)
        self.written += 1

    def finish_for_good(self, rest: Callable[[int], Sequence[Outcome]], wait: float = 1.0) -> bool:
        """From another thread, before the process ends: add ``rest(written)`` (the outcomes of the items after
        those written) and put the file in place. Keeps the output closed to the batch's own thread for good.
        Returns False when the batch's own thread finished first (or held the output for ``wait`` seconds)."""
        if not self._lock.acquire(timeout=wait):
            return False
        if self._over:
            self._lock.release()
            return False
        self._over = True
        for outcome in rest(self.written):
            self._add(outcome)
        if self._file is not None and self.out is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            os.replace(self._file.name, self.out)
        return True
