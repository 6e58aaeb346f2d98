"""XES event logs through pm4py (an optional extra: ``pip install stormcf[xes]``; pm4py is AGPL-licensed, so stormcf
never depends on it). A trace's ``concept:name`` is the case, an event's ``concept:name`` the activity and its
``time:timestamp`` the timestamp; the events are read in file order. Errors name the event (1-based, in file order).
"""
from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

from ..errors import LogError


def read_xes(path: Path, name: str, timestamp: str = "timestamp") -> dict[str, list[str]]:
    """The events of an XES file as the cells of an activity-form log by column (see :mod:`.log`): ``case``,
    ``activity`` and, when the file has them, the times under the column name ``timestamp``."""
    quiet = io.StringIO()
    try:
        with contextlib.redirect_stderr(quiet), contextlib.redirect_stdout(quiet), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pm4py
            frame = pm4py.read_xes(str(path))
    except ImportError:
        raise LogError(f"{name}: reading XES needs pm4py, an optional extra (pip install 'stormcf[xes]'); "
                       f"or export the log as CSV (case, activity, timestamp)") from None
    except Exception as err:   # pm4py raises whatever its XML parser raises
        raise LogError(f"{name}: not a readable XES file ({type(err).__name__}: {str(err).splitlines()[0][:120]})") \
            from None
    missing = [c for c in ("case:concept:name", "concept:name") if c not in frame.columns]
    if missing or frame.empty:
        raise LogError(f"{name}: no events with a case and an activity name (concept:name) in the XES file")
    cells = {"case": [_text(v) for v in frame["case:concept:name"]],
             "activity": [_text(v) for v in frame["concept:name"]]}
    if "time:timestamp" in frame.columns:
        cells[timestamp] = [v.isoformat() if hasattr(v, "isoformat") else _text(v) for v in frame["time:timestamp"]]
    return cells


def _text(value) -> str:
    return "" if value is None or value != value else str(value).strip()   # NaN != NaN: a missing value
