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

import csv
import io
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .errors import LogError

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
        cases, implicit = _implicit_names(_one_initial_state(list(cases), dict(implicit or {})), source)
        actions = sorted({a for _, steps in cases for a, _ in steps})
        observations = sorted({o0 for o0, _ in cases} | {o for _, steps in cases for _, o in steps})
        a_code = {a: k for k, a in enumerate(actions)}
        o_code = {o: k for k, o in enumerate(observations)}
        lengths = np.array([len(steps) for _, steps in cases], dtype=np.int64)
        flat = [step for _, steps in cases for step in steps]
        ids = tuple(case_ids) if case_ids is not None else tuple(str(c) for c in range(len(cases)))
        return cls(source, form, ids, tuple(actions), tuple(observations),
                   np.array([o_code[o0] for o0, _ in cases], dtype=np.int64),
                   np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                   np.array([a_code[a] for a, _ in flat], dtype=np.int64),
                   np.array([o_code[o] for _, o in flat], dtype=np.int64),
                   int(lengths.sum() + len(cases)) if events is None else events, implicit)

    def to_csv(self, path: str | Path) -> None:
        """Write the log in the paired form (one row per initial observation and per step)."""
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(PAIRED)
            for c, case_id in enumerate(self.case_ids):
                o0, steps = self.case(c)
                w.writerow((case_id, "", o0))
                w.writerows((case_id, a, o) for a, o in steps)


def _one_initial_state(cases: list, implicit: dict[str, int]) -> tuple[list, dict[str, int]]:
    if len({o0 for o0, _ in cases}) == 1:
        if cases[0][0] is None:
            implicit["start"] = len(cases)
        return cases, implicit
    implicit["start"] = len(cases)
    implicit["continue"] = implicit.get("continue", 0) + sum(o0 is not None for o0, _ in cases)
    return [(None, list(steps) if o0 is None else [(None, o0)] + list(steps)) for o0, steps in cases], implicit


def _implicit_names(cases_implicit: tuple[list, dict[str, int]], source: str) -> tuple[list, dict[str, int]]:
    """Replace ``None`` by the names ``start`` and ``continue``, which the log itself must not use then."""
    cases, implicit = cases_implicit
    if implicit.get("start"):
        if any(o0 == START or any(o == START for _, o in steps) for o0, steps in cases):
            raise LogError(f"{source}: the log has an observation named '{START}', the name of the implicit initial "
                           f"observation it needs (rename that observation)")
    if implicit.get("continue") and any(a == CONTINUE for _, steps in cases for a, _ in steps):
        raise LogError(f"{source}: the log has an action named '{CONTINUE}', the name of the implicit action it "
                       f"needs (rename that action)")
    named = [(START if o0 is None else o0, [(CONTINUE if a is None else a, o) for a, o in steps])
             for o0, steps in cases]
    return named, implicit


# ================================================================================================ reading
def read_log(path: str | Path, actions: Iterable[str] | None = None) -> EventLog:
    """Read an event log: CSV in the paired or the activity form (told apart by the header), or XES (``.xes``,
    ``.xes.gz``, through pm4py). The activity form needs ``actions``: the activities that are actions."""
    p = Path(path)
    name = str(path)
    if not p.is_file():
        raise LogError(f"{name}: {'is a directory, not a file' if p.is_dir() else 'file not found'}")
    actions = None if actions is None else list(actions)
    if p.name.lower().endswith((".xes", ".xes.gz")):
        from .xes import read_xes
        rows = read_xes(p, name)
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
    """The cells of a log file by column, with where every row is (CSV: its line; XES: `` event k``)."""

    columns: tuple[str, ...]
    cells: dict[str, list[str]]
    lines: list

    def where(self, source: str, k: int, case: str | None = None) -> str:
        return f"{source}:{self.lines[k]}: " + (f"case '{case}': " if case is not None else "")


def _read_csv(p: Path, name: str) -> _Rows:
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LogError(f"{name}: not a CSV text file (byte {err.start} is not UTF-8)") from None
    if "\0" in text:
        raise LogError(f"{name}: not a CSV text file (it contains NUL bytes)")
    if not text.strip():
        raise LogError(f"{name}: empty file (expected a CSV event log with a header row)")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip().lower() for h in next(reader)]
        columns = _columns(header, name)
        cells: dict[str, list[str]] = {c: [] for c in header}
        lines: list[int] = []
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(header):
                raise LogError(f"{name}:{reader.line_num}: {len(row)} fields, the header has {len(header)}")
            for c, v in zip(header, row):
                cells[c].append(v.strip())
            lines.append(reader.line_num)
    except csv.Error as err:
        raise LogError(f"{name}:{reader.line_num}: not valid CSV ({err})") from None
    if not lines:
        raise LogError(f"{name}: no events (the file has a header row but no data rows)")
    return _Rows(columns, cells, lines)


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
    if {"action", "observation"} <= has and "activity" not in has:
        order = PAIRED
    elif "activity" in has and not has & {"action", "observation"}:
        order = ACTIVITY
    else:
        raise LogError(f"{name}:1: the columns {','.join(header)} are neither form ({forms})")
    return order + ((TIMESTAMP,) if TIMESTAMP in has else ())


def _group_by_case(rows: _Rows, source: str) -> tuple[list[str], list[list[int]]]:
    """Case ids in order of first appearance, and the row indices of every case in file order."""
    order: dict[str, list[int]] = {}
    for k, case in enumerate(rows.cells["case"]):
        if not case:
            raise LogError(f"{rows.where(source, k)}empty case identifier")
        order.setdefault(case, []).append(k)
    if TIMESTAMP in rows.cells:
        _check_timestamps(rows, order, source)
    return list(order), list(order.values())


def _check_timestamps(rows: _Rows, cases: dict[str, list[int]], source: str) -> None:
    stamps = rows.cells[TIMESTAMP]
    for case, ks in cases.items():
        previous = -math.inf
        for j, k in enumerate(ks):
            t = _timestamp(stamps[k], rows.where(source, k, case))
            if t < previous:
                raise LogError(f"{rows.where(source, k, case)}timestamp {stamps[k]} is earlier than the one of the "
                               f"case's previous event (line {rows.lines[ks[j - 1]]}); rows must be in time order")
            previous = t


def _timestamp(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise LogError(f"{where}timestamp '{text}' is neither a number nor an ISO 8601 date") from None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _paired_log(source: str, rows: _Rows) -> EventLog:
    ids, groups = _group_by_case(rows, source)
    act, obs = rows.cells["action"], rows.cells["observation"]
    cases = []
    for case, ks in zip(ids, groups):
        first = ks[0]
        if act[first]:
            raise LogError(f"{rows.where(source, first, case)}the case has no initial observation (its first row "
                           f"has the action '{act[first]}'; the first row of a case has an empty action)")
        for k in ks:
            if not obs[k]:
                raise LogError(f"{rows.where(source, k, case)}empty observation")
        for k in ks[1:]:
            if not act[k]:
                raise LogError(f"{rows.where(source, k, case)}empty action (only the first row of a case, the "
                               f"initial observation, has no action)")
        cases.append((obs[first], [(act[k], obs[k]) for k in ks[1:]]))
    return EventLog.from_cases(cases, source, ids, "paired", len(rows.lines))


def _activity_log(source: str, rows: _Rows, actions: list[str] | None) -> EventLog:
    if actions is None:
        raise LogError(f"{source}: an activity log needs the list of activities that are actions (--actions A,B)")
    ids, groups = _group_by_case(rows, source)
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
    cases = [_pair([activity[k] for k in ks], is_action, implicit) for ks in groups]
    return EventLog.from_cases(cases, source, ids, "activity", len(rows.lines), implicit)


def _pair(events: list[str], is_action: set[str], implicit: dict[str, int]) -> tuple:
    """One case of the activity form as (o_0, [(a, o), ...]) by the pairing rules of the module docs (``None``:
    the implicit ``start`` observation and ``continue`` action)."""
    if events[0] in is_action:
        o0, rest = None, events
    else:
        o0, rest = events[0], events[1:]
    steps: list[tuple[str, str]] = []
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
