"""Lazy package exports (PEP 562): a package names its public objects and the submodule each lives in, and a
submodule is imported when one of its names is first used. ``import stormcf.cli`` then costs what the command line
needs, not every analysis with its solvers, plotting and learning libraries."""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package ``package`` whose public names live in submodules:
    ``exports`` maps each name to its submodule, relative (``".solve"``) or absolute. A name that is no export but a
    submodule of the package (``stormcf.storm``) is imported as such."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            try:
                value: Any = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as err:
                if err.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        else:
            value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)          # the next use is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
