"""One result protocol for every analysis: ``status``, ``timings``, ``checks``, text for people, ``to_dict()`` for JSON.

Every result object of stormcf (a check, a counterfactual strategy, an interval counterfactual MDP analysis, a path
explanation, ...) derives from :class:`Report`. ``str(result)`` is the explanation for people; ``result.to_dict()``
is one JSON document of the same shape for every command (documented in ``docs/json.md``)::

    {"schema": "stormcf/1", "command": "strategy", "status": "optimal", "approximate": false,
     "model": {"source": ..., "type": "mdp", "states": ..., "choices": ..., "transitions": ...,
               "decision_states": ...},
     ...the analysis's own keys...,
     "checks": [Storm's re-checks, see stormcf.verify.Check.to_dict],
     "timings": {"phase": seconds, ...}, "notes": ["..."], "stormcf": "0.2.0"}

:func:`write_json` writes such documents (or any JSON data) to stdout or atomically to a file; :func:`json_lines`
writes one document per line (the JSON lines of batch runs).
"""
from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import secrets
import stat
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, Sequence

from . import interrupt
from .errors import OutputError, cannot_write
from .files import opened_as, written_in_place

if TYPE_CHECKING:
    from .model import ExplicitModel

#: version of the JSON shape; bumped when a key changes meaning or disappears
SCHEMA = "stormcf/1"


def schema_path() -> Path:
    """The JSON Schema of every document (``SCHEMA``), shipped inside the package (``stormcf schema`` prints it)."""
    from importlib import resources
    return Path(str(resources.files("stormcf") / "schema" / "stormcf-1.json"))


#: the statuses a result can have (each analysis uses the ones that apply to it)
STATUSES = {
    "ok": "the analysis finished; every reported value was checked by Storm",
    "holds": "a bounded property holds (check)",
    "violated": "a bounded property does not hold (check)",
    "undecided": "the error interval of a floating-point value contains a bound: neither holds nor violated at its "
                 "precision (check)",
    "optimal": "the answer is proven optimal (within the reported gap, when there is one)",
    "suboptimal": "a valid answer, not proven optimal: the gap to the proven bound is reported",
    "feasible": "a valid answer; optimality was not sought (e.g. an ε-counterfactual)",
    "infeasible": "proven: no answer meets the requirements",
    "trivial": "nothing to change: the input already meets the requirements",
    "timeout": "the time limit ran out before a valid answer was found",
    "interrupted": "stopped by the user; the best checked answer so far is reported",
    "error": "this item failed (batch runs); the message says why",
}


class ModelSizes(Protocol):
    """What every document says of its model: an :class:`~stormcf.model.ExplicitModel`, or the facts ``info`` reads
    from Storm's model (:class:`~stormcf.modelinfo.ModelFacts`)."""

    @property
    def source(self) -> str: ...

    @property
    def model_type(self) -> str: ...

    @property
    def n_states(self) -> int: ...

    @property
    def n_choices(self) -> int: ...

    @property
    def n_transitions(self) -> int: ...

    @property
    def n_decision_states(self) -> int: ...


def model_summary(model: ModelSizes | None) -> dict[str, Any] | None:
    """The model's identity and sizes, as every JSON document carries them."""
    if model is None:
        return None
    return {"source": model.source, "type": model.model_type, "states": model.n_states, "choices": model.n_choices,
            "transitions": model.n_transitions, "decision_states": model.n_decision_states}


class Report(ABC):
    """Base class of every analysis result.

    Subclasses set the class attribute ``command`` and provide the attributes (or properties) ``status``,
    ``checks`` (a sequence of :class:`~stormcf.verify.Check`), ``timings`` (phase -> seconds), ``model``; they
    may override ``notes`` (caveats for people, e.g. what is approximate) and ``approximate``; and they implement
    :meth:`payload` (their own JSON keys) and :meth:`text` (the explanation for people).
    """

    command: str = ""

    if TYPE_CHECKING:               # what subclasses provide, as fields or properties (declared for type checkers)
        @property
        def status(self) -> str: ...

        @property
        def checks(self) -> Sequence[Any]: ...

        @property
        def timings(self) -> Mapping[str, float]: ...

        @property
        def model(self) -> ModelSizes | None: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Results keep the short :meth:`__repr__` below: set on each subclass before ``@dataclass`` would replace
        it with one that prints every field (models, arrays, ...)."""
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:
            setattr(cls, "__repr__", Report.__repr__)

    @property
    def notes(self) -> Sequence[str]:
        return ()

    @property
    def approximate(self) -> bool:
        """True when a reported value is an estimate (Monte Carlo, ...) rather than exact up to Storm's precision."""
        return False

    @abstractmethod
    def payload(self) -> dict[str, Any]:
        """The analysis's own JSON keys."""

    @abstractmethod
    def text(self) -> str:
        """The explanation for people."""

    def details(self) -> list[str]:
        """How the answer was found (method, sizes, time): lines that ``-v`` adds after :meth:`text` and that the
        JSON holds as well."""
        return []

    def to_dict(self) -> dict[str, Any]:
        from . import __version__
        document = {"schema": SCHEMA, "command": self.command, "status": self.status,
                    "approximate": bool(self.approximate), "model": model_summary(self.model)}
        document.update(self.payload())
        document.update({"checks": [c.to_dict() for c in self.checks], "timings": dict(self.timings),
                         "notes": list(self.notes), "stormcf": __version__})
        return document

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        where = f" on {self.model.source} ({self.model.n_states} states)" if self.model is not None else ""
        checks = len(self.checks)
        return (f"<{type(self).__name__} {self.command}: {self.status}{where}, {checks} Storm "
                f"check{'s' if checks != 1 else ''}>")


@dataclass(frozen=True, eq=False)
class Summary(Report):
    """A result that is a set of facts (a generated data set, a trained model, evaluation metrics): the facts go
    under ``facts`` in the JSON; the text is the given lines."""

    command: str
    facts: dict[str, Any] = field(default_factory=dict)
    lines: Sequence[str] = ()
    model: ExplicitModel | None = None
    checks: Sequence[Any] = ()
    timings: dict[str, float] = field(default_factory=dict)
    notes: Sequence[str] = ()
    approximate: bool = False
    status: str = "ok"

    def payload(self) -> dict[str, Any]:
        return {"facts": dict(self.facts)}

    def text(self) -> str:
        return "\n".join(self.lines)


# ================================================================================================ JSON output
def to_json_data(x: Any) -> Any:
    """Plain JSON data: numpy arrays and scalars as lists and numbers, Fractions as strings ``"411/1000"``, and
    non-finite floats as the strings ``"inf"``, ``"-inf"``, ``"nan"`` (strict JSON has no such numbers)."""
    if isinstance(x, dict):
        return {str(k): to_json_data(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_json_data(v) for v in x]
    np = sys.modules.get("numpy")           # numpy values exist only once numpy is imported (``info`` imports none)
    if np is not None and isinstance(x, (np.ndarray, np.generic)):
        return to_json_data(x.tolist())
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        x = float(x)
        return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
    if isinstance(x, Fraction):
        return str(x)
    if x is None or isinstance(x, str):
        return x
    if hasattr(x, "to_dict"):
        return to_json_data(x.to_dict())
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


#: keys whose values are wall-clock times (they differ between any two runs of the same analysis)
TIME_KEYS = frozenset({"seconds", "timings", "time_s", "check_seconds"})


def without_times(data: Any) -> Any:
    """A JSON document without its wall-clock times (:data:`TIME_KEYS`), for comparing two runs."""
    if isinstance(data, dict):
        return {k: without_times(v) for k, v in data.items() if k not in TIME_KEYS}
    if isinstance(data, list):
        return [without_times(v) for v in data]
    return data


def json_text(data: Any) -> str:
    return json.dumps(to_json_data(data), indent=1, allow_nan=False) + "\n"


def temporary_beside(target: str | os.PathLike, suffix: str = ".tmp") -> Path:
    """A new, empty file beside ``target`` to write its new content into before renaming it into place. It gets the
    permissions a plain ``open(target, "w")`` would give: a new file 0666 less the umask (the kernel applies it, as
    for ``open()``), an existing file keeps its mode. (``tempfile.mkstemp`` would make every output 0600.) It is
    registered for removal when a signal ends the command (:func:`stormcf.interrupt.track_path`) before it is made;
    the caller untracks it when it is renamed or removed."""
    target = Path(target)
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else None
    except OSError:
        mode = None
    for _ in range(100):
        name = target.parent / f".{target.name}.{secrets.token_hex(4)}{suffix}"
        interrupt.track_path(name)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            interrupt.untrack_path(name)
            continue
        except BaseException:
            interrupt.untrack_path(name)
            raise
        try:
            if mode is not None:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        return name
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))


@contextlib.contextmanager
def atomic_output(out: str | os.PathLike, after_final_signal: bool = False) -> Iterator[Path]:
    """A temporary file beside ``out`` to write into (:func:`temporary_beside`: the permissions a plain write would
    give); renamed to ``out`` when the block succeeds, removed when it fails (an exception, a full disk, a signal
    turned into an exception), so that ``out`` is either the complete new file or what it was before. A symbolic
    link is followed: the file it names is replaced (the temporary file is made beside that file) and the link
    stays. What is not a regular file (:func:`~stormcf.files.written_in_place`: a device, a FIFO, ``/dev/stdout``)
    is written through: the block gets ``out`` itself (:func:`~stormcf.files.opened_as`). Nothing is put in place
    after a final signal (SIGTERM, the last Ctrl-C: :func:`~stormcf.interrupt.raise_if_ending`), also when its
    exception was lost, unless ``after_final_signal`` (a batch's JSON lines keep the items done however the batch
    ends). Failures to write raise :class:`~stormcf.errors.OutputError` naming ``out``. Every file stormcf writes
    goes through here."""
    if written_in_place(out):
        try:
            yield opened_as(out)
        except OSError as err:
            raise OutputError(cannot_write(str(out), err)) from None
        return
    target = Path(os.path.realpath(out))
    try:
        tmp = temporary_beside(target)
    except OSError as err:
        raise OutputError(cannot_write(str(out), err)) from None
    try:
        yield tmp
        if not after_final_signal:
            interrupt.raise_if_ending()
        os.replace(tmp, target)
    except OSError as err:
        raise OutputError(cannot_write(str(out), err)) from None
    finally:
        tmp.unlink(missing_ok=True)
        interrupt.untrack_path(tmp)


@contextlib.contextmanager
def atomic_file(out: str | os.PathLike, mode: str = "w", after_final_signal: bool = False,
                **options: Any) -> Iterator[IO]:
    """``out`` opened for writing (``open()``'s ``mode`` and ``options``), written atomically (:func:`atomic_output`,
    with ``after_final_signal``): a regular file is flushed to disk before it replaces the earlier file."""
    with atomic_output(out, after_final_signal) as tmp, open(tmp, mode, **options) as f:
        yield f
        f.flush()
        if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            os.fsync(f.fileno())


def write_text(text: str, out: str | os.PathLike) -> None:
    """Write ``text`` to the file ``out`` atomically (:func:`atomic_output`): a failed write never leaves a
    truncated file where a valid one was."""
    with atomic_file(out, encoding="utf-8") as f:
        f.write(text)


def write_npz(out: str | os.PathLike, **arrays: Any) -> None:
    """numpy arrays to the compressed ``.npz`` file ``out``, atomically, under exactly that name."""
    import numpy as np
    with atomic_file(out, "wb") as f:
        np.savez_compressed(f, **arrays)


def json_line(data: Any) -> str:
    """One document as one line of JSON lines (compact, strict JSON)."""
    return json.dumps(to_json_data(data), allow_nan=False, separators=(",", ":")) + "\n"


@contextlib.contextmanager
def json_lines(out: str | os.PathLike | None = None, stdout: IO[str] | None = None) -> Iterator[Callable[[Any], None]]:
    """A writer of documents, one per line (JSON lines, the output of batch runs): to stdout (``out`` None or
    ``"-"``; ``stdout``, default ``sys.stdout``; each line flushed as it is written) or atomically to the file ``out``
    (:func:`atomic_output`)."""
    if out in (None, "-"):
        stream = sys.stdout if stdout is None else stdout

        def write(data: Any) -> None:
            write_stream(json_line(data), stream)
        yield write
        return
    with atomic_file(out, encoding="utf-8") as f:
        def write_line(data: Any) -> None:
            f.write(json_line(data))
        yield write_line


def write_json(data: Any, out: str | os.PathLike | None = None, stream: IO[str] | None = None) -> None:
    """JSON to ``stream`` (default ``sys.stdout``) when ``out`` is None or ``"-"``, else atomically to the file
    ``out``."""
    text = json_text(data)
    if out in (None, "-"):
        write_stream(text, stream or sys.stdout)
    else:
        write_text(text, out)


def write_stream(text: str, stream: IO[str] | None) -> None:
    """Write and flush ``text`` to a stream (stdout); a closed stream or a full disk raises
    :class:`~stormcf.errors.OutputError` (a broken pipe, the reader gone, is left to the caller)."""
    if stream is None or getattr(stream, "closed", False):
        raise OutputError("stdout is closed; nothing can be written there")
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        raise OutputError(cannot_write("stdout", err)) from None
