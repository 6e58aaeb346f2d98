"""Typed exceptions of stormcf.

Every user error (bad model file, bad constants, bad property, bad strategy or path, an instance the installed
solver cannot handle) raises a subclass of :class:`StormcfError`. The CLI prints its message as one line and exits
with code 2. Anything else that escapes is an internal error (exit code 1).
"""
from __future__ import annotations

import errno


class StormcfError(Exception):
    """Base class of all user-facing errors. ``str(err)`` is one line that names the problem."""


class ModelError(StormcfError):
    """The model file is missing, malformed, or not a model stormcf can work on."""


class InstanceError(ModelError):
    """An instance file of a non-PRISM front (a set-cover instance, a recourse problem) is malformed; the message
    names the file and the field."""


class DataError(StormcfError):
    """A data file stormcf reads (a labelled data set, a generator's weights) is not what it should be: not an
    ``.npz``, truncated, an array missing, of the wrong shape, type or range, or its parts contradict each other; the
    message names the file and the array."""


class ConstantsError(ModelError):
    """Undefined, unknown or ill-typed model constants (``--constants N=3,p=0.5``)."""


class ParameterError(ConstantsError):
    """A parametric model's parameters, a valuation of them or a region of valuations is not usable: no parameters,
    an unknown parameter, a valuation outside the region, a region where the model's graph changes."""


class PropertyError(StormcfError):
    """A property does not parse, names an unknown label or reward model, or is not supported by an analysis."""


class StateError(StormcfError):
    """A state given by a valuation does not exist in the model, or the valuation is ambiguous."""


class StrategyError(StormcfError):
    """A strategy is malformed: unknown state or action, negative probabilities, rows not summing to 1, ..."""


class PathError(StormcfError):
    """An observed path is malformed or inconsistent with the model (the message names the step)."""


class RecourseError(StormcfError):
    """A malformed recourse problem: unknown feature, bad domain, x_0 outside the features, bad objective names."""


class LearnError(StormcfError):
    """Bad learning options: α outside (0, 2], an unknown observation in a label, an unknown action in a reward, ..."""


class LogError(LearnError):
    """An event log is unreadable or malformed (the message names the file and the line)."""


class OptionError(StormcfError):
    """An analysis option has an unknown or out-of-range value (a method or estimator name, a sample count, a size
    too large for the model or the memory, ...)."""


class OutputError(StormcfError):
    """An output file cannot be written: its directory is missing or read-only, it names a directory, its name is
    too long, its format is unknown, or the disk is full (the message names the file)."""


#: what a failed write means, by errno: a full disk (or device) only for ENOSPC, the file size limit for EFBIG
_WRITE_FAILURES = {errno.ENOSPC: "the disk or device is full", errno.EDQUOT: "the disk quota is used up",
                   errno.EFBIG: "the file size limit is reached (ulimit -f)"}


def cannot_write(what: str, err: OSError) -> str:
    """The message of a failed write of ``what`` (a file, ``stdout``): the system's words and, for a full disk, a
    quota or the file size limit, which of them (``out.json: cannot write (File too large): the file size limit is
    reached (ulimit -f)``)."""
    meaning = None if err.errno is None else _WRITE_FAILURES.get(err.errno)
    return f"{what}: cannot write ({err.strerror or err})" + (f": {meaning}" if meaning else "")


class SolverError(StormcfError):
    """No solver can handle the instance (missing package, licence too small, ...)."""


class TimeLimitReached(StormcfError):
    """The command's time limit (:class:`stormcf.deadline.Deadline`) ran out before a phase could finish. Analyses
    that have a checked answer catch it and report that answer (status ``suboptimal`` or ``timeout``)."""


class VerificationFailure(RuntimeError):
    """Storm does not confirm a value an analysis computed: an internal error (exit code 1), never a user error.

    stormcf refuses to report either number instead of printing a wrong one."""
