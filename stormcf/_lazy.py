"""Lazy package exports (PEP 562): a package names its public objects and the submodule each lives in, and a
submodule is imported when one of its names is first used. ``import stormcf.cli`` then costs what the command line
needs, not every analysis with its solvers, plotting and learning libraries."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from functools import cached_property
from types import ModuleType
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

    # A name that is also its submodule's name (recourse.brkga, the function of recourse/brkga.py; storm.check):
    # once the submodule is imported by any route, the import system sets the package's attribute to the module,
    # and a lazy name would never be looked up again. The package's class turns that module into the name.
    shadowed = {name for name, module in exports.items() if module == f".{name}"}
    if shadowed:
        sys.modules[package].__class__ = _names_over_submodules(frozenset(shadowed))
    return __getattr__, __dir__


def _names_over_submodules(names: frozenset[str]) -> type[ModuleType]:
    """A module class whose attributes ``names``, when set to a submodule of that name, become the submodule's
    object of that name."""

    class Package(ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in names and isinstance(value, ModuleType) and value.__name__ == f"{self.__name__}.{name}":
                value = getattr(value, name)
            super().__setattr__(name, value)

    return Package


class LazyChoices(Sequence):
    """The choices of a command-line option that live in an analysis module (``stormcf.setcover.engines.METHODS``),
    imported when the option is used or its command's help is shown, not when the parser is built. Give the option
    a ``metavar`` (argparse formats the choices of an option without one when it is added), and write
    ``%(choices)s`` in its help to list them."""

    def __init__(self, module: str, name: str, before: tuple = ()) -> None:
        self.module, self.name, self.before = module, name, before

    @cached_property
    def _values(self) -> tuple:
        return self.before + tuple(getattr(importlib.import_module(self.module), self.name))

    def __getitem__(self, index):
        return self._values[index]

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, value: object) -> bool:
        return value in self._values
