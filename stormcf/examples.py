"""The example models shipped with stormcf (``prism_models/`` in a checkout, ``stormcf.prism_models`` when installed)."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ModelError, StormcfError


def example_path(name: str) -> Path:
    """Path of a shipped example file, e.g. ``example_path("loan.prism")``."""
    path = Path(str(resources.files("stormcf.prism_models").joinpath(name)))
    if not path.is_file():
        raise ModelError(f"no example model named '{name}' (examples: {', '.join(list_examples())})")
    return path


def list_examples() -> list[str]:
    root = resources.files("stormcf.prism_models")
    return sorted(p.name for p in root.iterdir() if p.name.endswith((".prism", ".json")))


def resolve_file(path: str | Path) -> Path:
    """Resolve a user-given file (model, strategy, path): as given if it exists; ``prism_models/<name>`` or a bare
    ``<name>`` falls back to the shipped example of that name, so the README's commands work after a plain
    ``pip install`` too. Raises :class:`ModelError` for a missing file."""
    p = Path(path)
    if p.is_file():
        return p
    if p.parent in (Path("."), Path("prism_models")) and p.name in list_examples():
        return example_path(p.name)
    if p.is_dir():
        raise ModelError(f"{path}: is a directory, not a file")
    raise ModelError(f"{path}: file not found")


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


def read_json(path: str | Path, error: type[StormcfError]) -> Any:
    """The JSON content of a user's file (resolved like :func:`resolve_file`); a missing file or invalid JSON raises
    ``error`` with a one-line message naming the file."""
    text = read_text(path, error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise error(f"{path}: not valid JSON ({err})") from None
