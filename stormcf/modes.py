"""The field's named modes, used by every analysis instead of Booleans.

- :class:`Optimization`: what the controller (the strategy, the policy) does with the objective:
  ``Maximize`` or ``Minimize``, as Storm's ``Pmax``/``Pmin``, ``Rmax``/``Rmin``;
- :class:`Nature`: how the uncertainty of an interval model is resolved: ``Pessimistic`` (against the controller,
  Storm's ``UncertaintyResolutionMode.ROBUST``) or ``Optimistic`` (with it, ``COOPERATIVE``).

Both parse the words users type (``"max"``, ``"maximize"``, ``"robust"``, ...) with :meth:`parse`.
"""
from __future__ import annotations

from enum import Enum

import numpy as np

from .errors import OptionError


class Optimization(str, Enum):
    """What the controller does with the objective."""

    MAXIMIZE = "max"
    MINIMIZE = "min"

    @classmethod
    def parse(cls, value: "Optimization | str") -> "Optimization":
        return _parse(cls, value, _OPTIMIZATION_WORDS, "optimization direction", "max or min")

    @property
    def opposite(self) -> "Optimization":
        return Optimization.MINIMIZE if self is Optimization.MAXIMIZE else Optimization.MAXIMIZE

    @property
    def sign(self) -> float:
        """+1 for maximizing, -1 for minimizing: ``sign * value`` is always to be maximized."""
        return 1.0 if self is Optimization.MAXIMIZE else -1.0

    @property
    def word(self) -> str:
        """``maximize`` / ``minimize`` (JSON and text)."""
        return "maximize" if self is Optimization.MAXIMIZE else "minimize"

    def best(self, values: np.ndarray, axis: int | None = None) -> np.ndarray:
        """max or min of ``values``."""
        return np.max(values, axis=axis) if self is Optimization.MAXIMIZE else np.min(values, axis=axis)

    def arg_best(self, values: np.ndarray, axis: int | None = None) -> np.ndarray | np.intp:
        """The first position of the best value."""
        return np.argmax(values, axis=axis) if self is Optimization.MAXIMIZE else np.argmin(values, axis=axis)

    def better(self, a, b):
        """Whether ``a`` is strictly better than ``b`` (elementwise for arrays)."""
        return a > b if self is Optimization.MAXIMIZE else a < b

    def __str__(self) -> str:
        return self.value


class Nature(str, Enum):
    """How the uncertainty of an interval model is resolved."""

    PESSIMISTIC = "pessimistic"
    OPTIMISTIC = "optimistic"

    @classmethod
    def parse(cls, value: "Nature | str") -> "Nature":
        return _parse(cls, value, _NATURE_WORDS, "uncertainty resolution", "pessimistic (robust) or optimistic")

    @property
    def storm_resolution(self) -> str:
        """Storm's ``UncertaintyResolutionMode`` name."""
        return "ROBUST" if self is Nature.PESSIMISTIC else "COOPERATIVE"

    def inner(self, controller: Optimization) -> Optimization:
        """What nature does with the objective: the opposite of the controller when pessimistic."""
        return controller.opposite if self is Nature.PESSIMISTIC else controller

    def __str__(self) -> str:
        return self.value


def _parse(kind, value, words: dict, what: str, hint: str):
    """The mode of ``kind`` that ``value`` is or names (one of ``words``), or an error naming the choices."""
    if isinstance(value, kind):
        return value
    word = str(value).strip().lower()
    for mode, names in words.items():
        if word in names:
            return mode
    raise OptionError(f"unknown {what} {value!r}: use {hint}")


_OPTIMIZATION_WORDS = {Optimization.MAXIMIZE: {"max", "maximize", "maximise", "maximum"},
                       Optimization.MINIMIZE: {"min", "minimize", "minimise", "minimum"}}
_NATURE_WORDS = {Nature.PESSIMISTIC: {"pessimistic", "robust", "adversarial", "worst"},
                 Nature.OPTIMISTIC: {"optimistic", "cooperative", "angelic", "best"}}

Maximize = Optimization.MAXIMIZE
Minimize = Optimization.MINIMIZE
Pessimistic = Nature.PESSIMISTIC
Optimistic = Nature.OPTIMISTIC
