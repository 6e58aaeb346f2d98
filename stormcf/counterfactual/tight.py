"""Bounds that floating point cannot decide (issue 37): values within Storm's precision of a bound.

Storm's floating-point values are sound to a relative precision (:data:`stormcf.storm.PRECISION`): a value farther
than that from a bound decides it, a value closer does not. Where the optimum sits exactly on the bound (a strict
bound at Storm's exact optimum, or ``P<=γ`` with γ the exact Pmin), the exact value decides, so stormcf asks Storm
again in exact rational arithmetic, on models of at most :data:`EXACT_STATES` states and within
:data:`EXACT_SECONDS` (rational solves grow with every digit of a strategy's probabilities: a 400-state grid with a
random strategy takes 80 s). What stays undecided is never claimed: a candidate is not accepted, an optimum does not
make an instance infeasible.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from .. import storm
from ..run import Run
from ..errors import StormcfError
from ..properties import Property
from ..strategy import Strategy
from ..verify import Check, check_strategy

#: a floating-point value this close to a bound (relative) does not decide it: twice Storm's precision each side
WINDOW = 4 * float(storm.PRECISION)
#: models of at most this many states have undecided values decided in exact arithmetic
EXACT_STATES = 1000
#: seconds (at most, and at most a tenth of the time left) one exact decision may take
EXACT_SECONDS = 10.0


def undecided(prop: Property, value: float) -> bool:
    """Whether Storm's floating-point ``value`` is too close to the bound of ``prop`` to decide it (a bound that every
    value meets, ``P<=1``, ``P>=0``, ``R>=0``, is always decided)."""
    if prop.threshold is None or prop.satisfied_by(Fraction(0)) and \
            prop.satisfied_by(Fraction(1) if prop.operator == "P" else np.inf):
        return False
    gamma = float(prop.threshold)
    return bool(np.isfinite(value) and abs(value - gamma) <= WINDOW * max(abs(value), abs(gamma)))


def exact_budget(deadline: Run) -> Run:
    """The sub-budget of one exact decision."""
    return deadline.sub(seconds=EXACT_SECONDS, fraction=0.1)


class Decider:
    """Decides the bounds of strategies' checks, exactly where floating point cannot (see the module docstring),
    for one run: once an exact decision runs out of time, the run stops asking (the model's rational solves are
    too slow) and counts what it could not decide."""

    def __init__(self, n_states: int, deadline: Run) -> None:
        self.deadline = deadline
        self.exact = n_states <= EXACT_STATES       # whether exact decisions are (still) tried
        self.undecided = 0

    def decide(self, strategy: Strategy, prop: Property, check: Check, known: Fraction | float | None = None
               ) -> Check:
        """``check`` when its value decides the bound (its ``holds`` then follows that value, or ``known``, the
        exact value when Storm's graph analysis gives it); Storm's exact check of ``strategy`` when it does not;
        else ``check`` with ``holds`` False (undecided: not accepted)."""
        if check.exact is not None or check.holds is None:
            return check
        if known is not None:
            return replace(check, holds=prop.satisfied_by(known))
        if not undecided(prop, check.value):
            return replace(check, holds=prop.satisfied_by(check.value))
        if self.exact:
            try:
                with exact_budget(self.deadline).active():
                    exact = check_strategy(strategy, prop, exact=True)
                return replace(exact, expected=check.expected, tolerance=check.tolerance)
            except StormcfError:          # out of its time, or Storm cannot build the model over rationals
                self.exact = False
        self.undecided += 1
        return replace(check, holds=False)

    def note(self) -> str | None:
        """What could not be decided, for the notes."""
        if not self.undecided:
            return None
        return (f"{self.undecided} strategies whose values lie within Storm's precision (relative {WINDOW:g}) of a "
                f"bound were not accepted: exact arithmetic could not decide them (more than {EXACT_STATES} states, "
                f"slower than {EXACT_SECONDS:g} s, or no rational build)")
