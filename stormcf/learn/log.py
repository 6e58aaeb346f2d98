"""Event logs: the input of ``stormcf learn``, read from CSV (paired or activity form) or XES, as integer arrays.

Every case becomes an initial observation o_0 and steps (a_1, o_1), (a_2, o_2), ...: the action a_k is what the
strategy chooses (the user or the company), the observation o_k what follows (the process's response).

**Paired form** (CSV columns ``case, action, observation[, timestamp]``): the first row of a case has an empty
``action`` and gives o_0; every further row gives one step (a non-empty action and observation).

**Activity form** (CSV columns ``case, activity[, timestamp]``, or XES): the usual process-mining log; the
activities named as actions are actions, every other activity is an observation. They are paired in order:

- a case that starts with an observation starts there; one that starts with an action starts in the implicit
  observation ``start``;
- an observation that follows an observation is preceded by the implicit action ``continue`` (the process moved on
  by itself: a state with a single choice);
- an action that is followed by an action or ends the case is followed by the implicit observation of its own name
  (the state "action done, nothing observed yet").

**One initial state**: when the cases do not all start in the same observation, every case starts in the implicit
observation ``start`` instead, from which the implicit action ``continue`` leads to the case's first observation.

Rows of different cases may interleave; within a case they must be in time order: when a ``timestamp`` column is
given (numbers, or ISO 8601 dates; naive dates count as UTC), timestamps must not decrease within a case. Cells are
stripped of surrounding white space. Errors name the file and line (``log.csv:7: case 'c3': ...``).
"""
from __future__ import annotations

import contextlib
import csv
import gc
import io
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from ..errors import LogError
from ..examples import readable_file
from ..report import atomic_file
from .xes import read_xes

#: the implicit action of a step the process takes by itself
CONTINUE = "continue"
#: the implicit initial observation
START = "start"

PAIRED = ("case", "action", "observation")
ACTIVITY = ("case", "activity")
TIMESTAMP = "timestamp"


@dataclass(frozen=True, eq=False)
class EventLog:
    """A log as arrays: case c has initial observation ``observations[initial[c]]`` and the steps
    ``offsets[c]:offsets[c+1]`` with actions ``actions[step_actions[k]]`` and observations
    ``observations[step_observations[k]]``. ``actions`` and ``observations`` are sorted names.

    Attributes:
        source: where the log came from (file name), for messages.
        form: ``"paired"``, ``"activity"`` or ``"sampled"``.
        case_ids: the case identifiers in order of first appearance.
        events: rows (events) read from the file.
        implicit: how many implicit ``continue`` actions, implicit observations and ``start`` states were added.
    """

    source: str
    form: str
    case_ids: tuple[str, ...]
    actions: tuple[str, ...]
    observations: tuple[str, ...]
    initial: np.ndarray
    offsets: np.ndarray
    step_actions: np.ndarray
    step_observations: np.ndarray
    events: int
    implicit: dict[str, int] = field(default_factory=dict)

    @property
    def n_cases(self) -> int:
        return len(self.case_ids)

    @property
    def n_steps(self) -> int:
        return int(self.offsets[-1])

    def case(self, c: int) -> tuple[str, list[tuple[str, str]]]:
        """Case ``c`` as names: (o_0, [(a_1, o_1), ...])."""
        steps = range(int(self.offsets[c]), int(self.offsets[c + 1]))
        return (self.observations[self.initial[c]],
                [(self.actions[self.step_actions[k]], self.observations[self.step_observations[k]]) for k in steps])

    def summary(self) -> dict:
        return {"source": self.source, "form": self.form, "cases": self.n_cases, "events": self.events,
                "steps": self.n_steps, "actions": len(self.actions), "observations": len(self.observations),
                "implicit": dict(self.implicit)}

    @classmethod
    def from_cases(cls, cases: Sequence[tuple[str, Sequence[tuple[str, str]]]], source: str = "<cases>",
                   case_ids: Sequence[str] | None = None, form: str = "paired", events: int | None = None,
                   implicit: dict[str, int] | None = None) -> "EventLog":
        """A log from cases given as names ``(o_0, [(a_1, o_1), ...])``; ``None`` stands for the implicit ``start``
        observation (o_0) and the implicit ``continue`` action; the initial observations are unified (module docs).
        """
        if not cases:
            raise LogError(f"{source}: no cases")
        lengths = np.array([len(steps) for _, steps in cases], dtype=np.int64)
        ids = tuple(case_ids) if case_ids is not None else tuple(str(c) for c in range(len(cases)))
        return _encode(source, form, ids, _objects([o0 for o0, _ in cases]), lengths,
                       _objects([a for _, steps in cases for a, _ in steps]),
                       _objects([o for _, steps in cases for _, o in steps]),
                       int(lengths.sum() + len(cases)) if events is None else events, dict(implicit or {}))

    def to_csv(self, path: str | Path) -> None:
        """Write the log in the paired form (one row per initial observation and per step), atomically."""
        with atomic_file(path, newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(PAIRED)
            for c, case_id in enumerate(self.case_ids):
                o0, steps = self.case(c)
                w.writerow((case_id, "", o0))
                w.writerows((case_id, a, o) for a, o in steps)


def _objects(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _encode(source: str, form: str, case_ids: tuple[str, ...], initial: np.ndarray, lengths: np.ndarray,
            actions: np.ndarray, observations: np.ndarray, events: int, implicit: dict[str, int]) -> EventLog:
    """The log as codes, from names in object arrays: ``initial[c]`` (``None``: the implicit ``start``), and the
    steps of all cases one after the other (``lengths[c]`` of case c; action ``None``: the implicit ``continue``).
    Unifies the initial observations and checks that the implicit names are free (module docs)."""
    real_observations = set(initial[initial != None].tolist()) | set(observations.tolist())  # noqa: E711
    if len(set(initial.tolist())) > 1:                   # one initial state: start -continue-> o_0
        given = np.flatnonzero(initial != None)          # noqa: E711
        at = np.concatenate([[0], np.cumsum(lengths)])[given]
        actions = np.insert(actions, at, np.array(None, dtype=object))
        observations = np.insert(observations, at, initial[given])
        lengths = lengths.copy()
        lengths[given] += 1
        implicit["continue"] = implicit.get("continue", 0) + int(given.size)
        initial = np.full(initial.size, None, dtype=object)
    if initial[0] is None:
        implicit["start"] = int(initial.size)
        if START in real_observations:
            raise LogError(f"{source}: the log has an observation named '{START}', the name of the implicit initial "
                           f"observation it needs (rename that observation)")
    implicit_steps = actions == None                     # noqa: E711
    if implicit_steps.any():
        if CONTINUE in set(actions[~implicit_steps].tolist()):
            raise LogError(f"{source}: the log has an action named '{CONTINUE}', the name of the implicit action it "
                           f"needs (rename that action)")
        actions = np.where(implicit_steps, CONTINUE, actions)
    initial = np.where(initial == None, START, initial)  # noqa: E711
    action_names, step_actions = _codes(actions.tolist(), sort=True)
    observation_names, codes = _codes(initial.tolist() + observations.tolist(), sort=True)
    return EventLog(source, form, case_ids, action_names, observation_names, codes[:initial.size],
                    np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), step_actions, codes[initial.size:],
                    events, implicit)


def _codes(values: list[str], sort: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """The distinct values (sorted, or in order of first appearance) and the code of every value."""
    names = dict.fromkeys(values)
    order = sorted(names) if sort else list(names)
    index = {name: k for k, name in enumerate(order)}
    return tuple(order), np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


# ================================================================================================ reading
def read_log(path: str | Path, actions: Iterable[str] | None = None) -> EventLog:
    """Read an event log: CSV in the paired or the activity form (told apart by the header), or XES (``.xes``,
    ``.xes.gz``, through pm4py). The activity form needs ``actions``: the activities that are actions."""
    p = readable_file(path, LogError)
    name = str(path)
    actions = None if actions is None else list(actions)
    if p.name.lower().endswith((".xes", ".xes.gz")):
        cells = read_xes(p, name, TIMESTAMP)
        rows = _Rows(tuple(cells), cells, lambda k: k + 1, kind="event")
        return _activity_log(name, rows, actions)
    rows = _read_csv(p, name)
    if rows.columns[1] == "action":
        if actions is not None:
            raise LogError(f"{name}: actions are given in the paired form's 'action' column; the list of actions "
                           f"is only for the activity form")
        return _paired_log(name, rows)
    return _activity_log(name, rows, actions)


@dataclass
class _Rows:
    """The cells of a log file by column; ``locate(k)`` is the line of data row k in the file (CSV) or its event
    number (XES), as ``kind`` says."""

    columns: tuple[str, ...]
    cells: dict[str, list[str]]
    locate: Callable[[int], int]
    kind: str = "line"

    def where(self, source: str, k: int, case: str | None = None) -> str:
        at = f"{source}:{self.locate(k)}: " if self.kind == "line" else f"{source}: {self.kind} {self.locate(k)}: "
        return at + (f"case '{case}': " if case is not None else "")

    def line(self, k: int) -> str:
        return f"{self.kind} {self.locate(k)}"


def _is_blank(row: list[str]) -> bool:
    return not row or (len(row) == 1 and not row[0].strip())


def _read_csv(p: Path, name: str) -> _Rows:
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LogError(f"{name}: not a CSV text file (byte {err.start} is not UTF-8)") from None
    if "\0" in text:
        raise LogError(f"{name}: not a CSV text file (it contains NUL bytes)")
    if not text.strip():
        raise LogError(f"{name}: empty file (expected a CSV event log with a header row)")
    header_row, data, locate = _parse_csv(text, name)
    header = [h.strip().lower() for h in header_row]
    columns = _columns(header, name)
    if not data:
        raise LogError(f"{name}: no events (the file has a header row but no data rows)")
    width = len(header)
    bad = next((k for k, row in enumerate(data) if len(row) != width), None)
    if bad is not None:
        raise LogError(f"{name}:{locate(bad)}: {len(data[bad])} fields, the header has {width}")
    with _no_cycle_collection():
        cells = {c: [row[i].strip() for row in data] for i, c in enumerate(header)}
    return _Rows(columns, cells, locate)


def _parse_csv(text: str, name: str) -> tuple[list[str], list[list[str]], Callable[[int], int]]:
    """The header row, the non-blank data rows and the line finder of a CSV text. Strict CSV: a quoted cell that is
    never closed, or text after a closing quote, is an error naming the line where the row starts."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    done = 0                                         # the last line of the rows read so far
    try:
        with _no_cycle_collection():
            header = next(reader)
            done = reader.line_num
            data = []
            for row in reader:
                if not _is_blank(row):
                    data.append(row)
                done = reader.line_num
    except csv.Error as err:
        if str(err) == "unexpected end of data":
            raise LogError(f"{name}:{done + 1}: a quoted cell starts in this row and is never closed (a \" is "
                           "missing)") from None
        raise LogError(f"{name}:{done + 1}: not valid CSV ({err})") from None
    return header, data, _line_finder(text)


@contextlib.contextmanager
def _no_cycle_collection():
    """Python's cycle collector would run again and again over a million fresh row lists (seconds, for nothing:
    rows hold strings only)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _line_finder(text: str) -> Callable[[int], int]:
    """The file line of data row k (after the header, blank rows skipped), found by reading the file again when a
    message needs it (quoted cells may span lines)."""
    lines: list[int] = []

    def locate(k: int) -> int:
        if not lines:
            reader = csv.reader(io.StringIO(text, newline=""))
            next(reader)
            lines.extend(reader.line_num for row in reader if not _is_blank(row))
        return lines[k]
    return locate


def _columns(header: list[str], name: str) -> tuple[str, ...]:
    forms = "paired form: case, action, observation[, timestamp]; activity form: case, activity[, timestamp]"
    known = set(PAIRED) | set(ACTIVITY) | {TIMESTAMP}
    if "case" not in header:
        shown = ",".join(header)[:60]
        raise LogError(f"{name}:1: not a CSV event log: the header has no 'case' column (found '{shown}'; {forms})")
    for h in header:
        if h not in known:
            raise LogError(f"{name}:1: unknown column '{h}' ({forms})")
    if len(set(header)) != len(header):
        raise LogError(f"{name}:1: a column is named twice ({','.join(header)})")
    has = set(header)
    order: tuple[str, ...]
    if {"action", "observation"} <= has and "activity" not in has:
        order = PAIRED
    elif "activity" in has and not has & {"action", "observation"}:
        order = ACTIVITY
    else:
        raise LogError(f"{name}:1: the columns {','.join(header)} are neither form ({forms})")
    return order + ((TIMESTAMP,) if TIMESTAMP in has else ())


@dataclass(frozen=True)
class _Cases:
    """The rows grouped by case: ``ids`` in order of first appearance; ``rows`` the row indices case after case,
    each case's rows in file order; ``starts`` where each case begins in ``rows``."""

    ids: tuple[str, ...]
    rows: np.ndarray
    starts: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(np.append(self.starts, self.rows.size))


def _group_by_case(rows: _Rows, source: str) -> _Cases:
    case = _objects(rows.cells["case"])
    empty = np.flatnonzero(case == "")
    if empty.size:
        raise LogError(f"{rows.where(source, int(empty[0]))}empty case identifier")
    ids, number = _codes(rows.cells["case"], sort=False)    # cases numbered by first appearance
    order = np.argsort(number, kind="stable")
    starts = np.flatnonzero(np.r_[True, number[order][1:] != number[order][:-1]])
    cases = _Cases(ids, order, starts)
    if TIMESTAMP in rows.cells:
        _check_timestamps(rows, cases, source)
    return cases


def _check_timestamps(rows: _Rows, cases: _Cases, source: str) -> None:
    stamps = rows.cells[TIMESTAMP]
    case_of = np.repeat(np.arange(len(cases.ids)), cases.lengths)
    previous, previous_row = -math.inf, -1
    for j, (k, c) in enumerate(zip(cases.rows.tolist(), case_of.tolist())):
        where = rows.where(source, k, cases.ids[c])
        t = _timestamp(stamps[k], where)
        if j and case_of[j - 1] == c and t < previous:
            raise LogError(f"{where}timestamp {stamps[k]} is earlier than the one of the case's previous event "
                           f"({rows.line(previous_row)}); rows must be in time order")
        previous, previous_row = t, k


def _timestamp(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):                 # nan would make every comparison false: no order check
            raise LogError(f"{where}timestamp '{text}' is not a finite number")
        return value
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise LogError(f"{where}timestamp '{text}' is neither a number nor an ISO 8601 date") from None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _paired_log(source: str, rows: _Rows) -> EventLog:
    cases = _group_by_case(rows, source)
    act, obs = _objects(rows.cells["action"]), _objects(rows.cells["observation"])
    first = cases.rows[cases.starts]
    later = np.ones(cases.rows.size, dtype=bool)
    later[cases.starts] = False
    steps = cases.rows[later]
    case_of_row = np.empty(act.size, dtype=np.int64)
    case_of_row[cases.rows] = np.repeat(np.arange(len(cases.ids)), cases.lengths)

    def fail(bad: np.ndarray, message: str) -> None:
        if bad.size:
            k = int(bad.min())
            raise LogError(f"{rows.where(source, k, cases.ids[case_of_row[k]])}{message.format(act[k])}")

    fail(first[act[first] != ""], "the case has no initial observation (its first row has the action '{}'; the "
                                  "first row of a case has an empty action)")
    fail(np.flatnonzero(obs == ""), "empty observation")
    fail(steps[act[steps] == ""], "empty action (only the first row of a case, the initial observation, has no "
                                  "action)")
    return _encode(source, "paired", cases.ids, obs[first], cases.lengths - 1, act[steps], obs[steps], act.size, {})


def _activity_log(source: str, rows: _Rows, actions: list[str] | None) -> EventLog:
    if actions is None:
        raise LogError(f"{source}: an activity log needs the list of activities that are actions (--actions A,B)")
    cases = _group_by_case(rows, source)
    activity = rows.cells["activity"]
    for k, a in enumerate(activity):
        if not a:
            raise LogError(f"{rows.where(source, k, rows.cells['case'][k])}empty activity")
    present = set(activity)
    missing = [a for a in actions if a not in present]
    if missing:
        raise LogError(f"{source}: the action '{missing[0]}' does not occur in the log")
    is_action = set(actions)
    implicit = {"continue": 0, "observations": 0}
    bounds = np.append(cases.starts, cases.rows.size).tolist()
    order = cases.rows.tolist()
    paired = [_pair([activity[k] for k in order[a:b]], is_action, implicit) for a, b in zip(bounds[:-1], bounds[1:])]
    return EventLog.from_cases(paired, source, cases.ids, "activity", len(activity), implicit)


def _pair(events: list[str], is_action: set[str], implicit: dict[str, int]) -> tuple:
    """One case of the activity form as (o_0, [(a, o), ...]) by the pairing rules of the module docs (``None``:
    the implicit ``start`` observation and ``continue`` action)."""
    if events[0] in is_action:
        o0, rest = None, events
    else:
        o0, rest = events[0], events[1:]
    steps: list[tuple[str | None, str]] = []
    pending: str | None = None                       # an action waiting for its observation
    for e in rest:
        if e in is_action:
            if pending is not None:
                steps.append((pending, pending))
                implicit["observations"] += 1
            pending = e
        elif pending is not None:
            steps.append((pending, e))
            pending = None
        else:
            steps.append((None, e))
            implicit["continue"] += 1
    if pending is not None:
        steps.append((pending, pending))
        implicit["observations"] += 1
    return o0, steps
