"""The vocabulary of inputs that analyses share with batches: an input item (:class:`Item`), a user's file pinned
where a batch starts (:class:`FilePin`), and the document of an item without an answer (:class:`ItemError`).

It sits below the analyses and the batch runner (:mod:`stormcf.batch`, which re-exports these names): an analysis's
``task`` module imports it, never the runner."""
from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .errors import ModelError
from .examples import resolve_file
from .model import ExplicitModel
from .report import Report


@dataclass(frozen=True)
class FilePin:
    """A user's file pinned where a batch starts: its absolute path and the SHA-256 of its content (both None for a
    missing or unreadable file: loading it reports that). A worker may run in another working directory or on
    another machine (Dask): :meth:`readable` gives it the same file, or refuses one that differs, instead of
    analysing another file of the same name."""

    location: str | None
    digest: str | None

    @classmethod
    def of(cls, path: str) -> "FilePin":
        try:
            file = resolve_file(path)
            return cls(str(file.resolve()), file_digest(file))
        except (ModelError, OSError):
            return cls(None, None)

    def readable(self, path: str) -> str:
        """Where to read ``path`` in this process: as the user named it where that is still the pinned file (the
        batch's own process), else the pinned absolute path once its content is checked (a worker elsewhere)."""
        if self.digest is None or (Path(path).is_file() and file_digest(Path(path)) == self.digest):
            return path
        assert self.location is not None                # pinned together with the digest (of)
        require_same_file(path, self.location, self.digest)
        return self.location


def require_same_file(path: str, location: str, digest: str) -> None:
    """Refuse to load ``path`` in a worker whose file at ``location`` differs from the one the batch started with."""
    where = f"{path} (at {location} on {socket.gethostname()})"
    try:
        found = file_digest(Path(location))
    except OSError as err:
        raise ModelError(f"{where}: cannot read the file ({err.strerror}); every worker of a batch needs it at the "
                         "same absolute path") from None
    if found != digest:
        raise ModelError(f"{where}: the file differs from the one the batch started with (SHA-256 {found[:12]}..., "
                         f"expected {digest[:12]}...); every worker needs the same file")


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's content (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


@dataclass(frozen=True, eq=False)
class ItemError(Report):
    """A failed item (status ``error``; ``timeout`` or ``interrupted`` when it had no answer when the time ran out
    or the user stopped it): what went wrong, in one line. ``internal`` is False for bad input (a
    :class:`~stormcf.errors.StormcfError`), True for anything else (a bug, or Storm refusing a computed value)."""

    command: str = ""
    message: str = ""
    error_type: str = "StormcfError"
    internal: bool = False
    model: ExplicitModel | None = None
    status: str = "error"
    checks: Sequence[Any] = ()
    timings: Mapping[str, float] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return {"error": {"type": self.error_type, "message": self.message, "internal": self.internal}}

    def text(self) -> str:
        return f"error: {self.message}"
