"""The errors of ``stormcf learn``: every one a :class:`~stormcf.errors.StormcfError` (CLI: one line, exit 2)."""
from __future__ import annotations

from ..errors import StormcfError


class LearnError(StormcfError):
    """Bad learning options: α outside (0, 2], an unknown observation in a label, an unknown action in a reward, ..."""


class LogError(LearnError):
    """An event log is unreadable or malformed (the message names the file and the line)."""
