"""The example inputs shipped with stormcf (``prism_models/`` in a checkout, ``stormcf.prism_models`` installed: the
models, strategies, paths, batches, properties, event logs and set-cover instances the documented commands use;
``stormcf examples`` lists and copies them), and the readers of users' files (text, strict JSON, ``.npz`` arrays)
that name the file in every error."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ModelError, StormcfError
from .files import file_kind


def example_path(name: str) -> Path:
    """Path of a shipped example file, e.g. ``example_path("loan.prism")``."""
    path = Path(str(resources.files("stormcf.prism_models").joinpath(name)))
    if not path.is_file():
        raise ModelError(f"no example model named '{name}' (examples: {', '.join(list_examples())})")
    return path


#: the kinds of files shipped as examples (models, strategies, paths, batches, properties, logs, set-cover instances)
EXAMPLE_SUFFIXES = (".prism", ".pm", ".json", ".jsonl", ".props", ".csv")

#: the folder the examples live in (in a checkout) and are copied to (``stormcf examples --copy DIR``)
EXAMPLES_FOLDER = "prism_models"

#: every shipped example file: name -> what it is (``stormcf examples`` prints these)
EXAMPLES = {
    "adaptive.prism": "an MDP where a counterfactual policy that adapts beats every fixed action sequence "
                      "(explain-path)",
    "adaptive.path.json": "an observed path of adaptive.prism",
    "adult.instances.jsonl": "two rejected people of the Adult data set (a recourse --dataset adult batch)",
    "deadlock.prism": "an MDP with a deadlock state (explain-path's forced moves)",
    "die.pm": "Knuth and Yao's die from two biased coins whose biases p, q are parameters (repair)",
    "die.nominal.jsonl": "three nominal valuations of die.pm's coins (a repair batch)",
    "frozenlake4.prism": "gymnasium's FrozenLake-v1 4x4, slippery (icfmdp, strategy)",
    "frozenlake8.prism": "gymnasium's FrozenLake-v1 8x8, slippery",
    "grid.prism": "an N x N slippery grid with traps (-c N=316: 10^5 states; benchmarks)",
    "gridworld.prism": "the 4x4 GridWorld of the robust counterfactual inference paper (icfmdp)",
    "gridworld.catastrophic.json": "an observed path of gridworld.prism that ends in danger",
    "loan.prism": "the loan application MDP of the counterfactual strategies paper (Fig. 1a)",
    "loan.impatient.json": "the impatient client's strategy on loan.prism (Fig. 1b)",
    "loan.props": "four named properties of loan.prism (check --props)",
    "loan.strategies.jsonl": "three strategies on loan.prism (a check or strategy batch)",
    "loan_activity.csv": "the 300 cases of loan_log.csv as an activity log (learn --actions Apply,Consult,Quit,"
                         "Submit)",
    "loan_log.csv": "an event log of 300 loan applications sampled from loan.prism, paired form (learn)",
    "person.prism": "the person of the sequential recourse paper's Fig. 2 (recourse)",
    "sepsis.prism": "Oberst & Sontag's sepsis simulator as an MDP, 636 states (icfmdp, explain-path)",
    "sepsis.catastrophic.json": "an observed sepsis path that ends in death",
    "sepsis.paths.jsonl": "three observed sepsis paths of 10 steps (an icfmdp or explain-path batch)",
    "sepsis.sampled.json": "an observed sepsis path sampled from the model",
    "setcover.agents.jsonl": "three agents of setcover.paper.json (a setcover batch)",
    "setcover.paper.json": "the worked example of the set-cover counterfactual paper (setcover)",
    "stiff.pm": "a stiff DTMC on which value iteration crawls (exact arithmetic answers at once)",
    "treat.prism": "an ill or healthy patient, coin or drug (explain-path)",
    "treat.path.json": "an observed path of treat.prism",
}


def list_examples() -> list[str]:
    """The names of the shipped example files."""
    root = resources.files("stormcf.prism_models")
    return sorted(p.name for p in root.iterdir() if p.name.endswith(EXAMPLE_SUFFIXES))


def resolve_file(path: str | Path) -> Path:
    """Resolve a user-given file (model, strategy, path): as given if it exists; ``prism_models/<name>`` or a bare
    ``<name>`` falls back to the shipped example of that name, so the README's commands work after a plain
    ``pip install`` too. Raises :class:`ModelError` for a missing, unreadable or unnamable file, and for what is not
    a regular file (a directory, a FIFO, a device such as ``/dev/zero``)."""
    p = Path(path)
    try:
        kind = file_kind(p)
        if kind == "file":
            _require_readable(p)
            return p
        if kind is None and p.parent in (Path("."), Path("prism_models")) and p.name in list_examples():
            return example_path(p.name)
    except OSError as err:                        # a name too long, a loop of symbolic links, ...
        raise ModelError(f"{path}: cannot read ({err.strerror})") from None
    if kind == "directory":
        raise ModelError(f"{path}: is a directory, not a file")
    if kind is not None:                          # read more than once (Storm, a batch's digest): never a stream
        raise ModelError(f"{path}: is a {kind}, not a regular file; stormcf reads its inputs from files (save a "
                         f"stream to a file first)")
    raise ModelError(f"{path}: file not found")


def _require_readable(path: Path) -> None:
    with open(path, "rb"):
        pass


def readable_file(path: str | Path, error: type[StormcfError]) -> Path:
    """:func:`resolve_file`, raising ``error`` (one line naming the file) for a missing or unreadable file."""
    try:
        return resolve_file(path)
    except ModelError as err:
        raise error(str(err)) from None


def read_text(path: str | Path, error: type[StormcfError]) -> str:
    """The text of a user's file (resolved like :func:`resolve_file`); a missing, unreadable or non-UTF-8 file raises
    ``error`` with a one-line message naming the file."""
    try:
        return resolve_file(path).read_text(encoding="utf-8")
    except ModelError as err:
        raise error(str(err)) from None
    except UnicodeDecodeError:
        raise error(f"{path}: not a text file (not UTF-8)") from None
    except OSError as err:
        raise error(f"{path}: cannot read ({err.strerror})") from None


#: JSON integers must fit the 64-bit integers of models and arrays
INT_RANGE = (-2 ** 63, 2 ** 63 - 1)


class _JSONContentError(ValueError):
    pass


def parse_json(text: str) -> Any:
    """Strict JSON: no duplicate keys in an object, no ``NaN``/``Infinity``, integers within 64 bits. Raises
    ``ValueError`` (``json.JSONDecodeError`` for syntax) with a one-line reason."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=_int64)
    except RecursionError:
        raise _JSONContentError("nested too deeply") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _JSONContentError(f'the key "{key}" appears twice in one object')
        data[key] = value
    return data


def _no_constant(name: str) -> Any:
    raise _JSONContentError(f"{name} is not a JSON number")


def _int64(text: str) -> int:
    value = int(text) if len(text) <= 20 else None
    if value is None or not INT_RANGE[0] <= value <= INT_RANGE[1]:
        shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text.lstrip('-'))} digits)"
        raise _JSONContentError(f"the integer {shown} is out of range (64-bit integers)")
    return value


def read_npz(path: str | Path, error: type[StormcfError], what: str) -> dict[str, Any]:
    """The arrays of a user's ``.npz`` file (``what`` it should be, for messages), without pickles. A missing file,
    one that is not an ``.npz`` of plain arrays, a truncated one, or arrays larger than the memory holds (their sizes
    are read from the headers first) raise ``error`` with one line naming the file."""
    import zipfile
    import zlib

    import numpy as np

    from .limits import format_bytes, require_memory
    file = readable_file(path, error)
    try:
        with zipfile.ZipFile(file) as archive:
            needed = 0.0
            for member in archive.infolist():
                if not member.filename.endswith(".npy"):
                    raise error(f"{path}: not {what} (it holds {member.filename!r}, not an array)")
                with archive.open(member) as f:
                    version = np.lib.format.read_magic(f)
                    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                              else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = header(f)
                if dtype.hasobject:
                    raise error(f"{path}: not {what} (the array {member.filename[:-4]!r} holds Python objects)")
                needed += float(np.prod(shape, dtype=float)) * dtype.itemsize
        try:
            require_memory(needed, f"the arrays of {path}")
        except StormcfError as err:
            raise error(str(err)) from None
        with np.load(file, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, KeyError, OSError, NotImplementedError) as err:
        detail = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        raise error(f"{path}: not {what} ({detail})") from None
    except MemoryError:
        raise error(f"{path}: its arrays do not fit the memory ({format_bytes(needed)})") from None


def read_json(path: str | Path, error: type[StormcfError]) -> Any:
    """The JSON content of a user's file (resolved like :func:`resolve_file`, read by :func:`parse_json`); a
    missing file or invalid JSON raises ``error`` with a one-line message naming the file."""
    text = read_text(path, error)
    try:
        return parse_json(text)
    except json.JSONDecodeError as err:
        raise error(f"{path}:{err.lineno}:{err.colno}: not valid JSON: {err.msg}") from None
    except _JSONContentError as err:
        raise error(f"{path}: not valid JSON ({err})") from None
