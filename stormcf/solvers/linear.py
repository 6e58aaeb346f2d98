"""Linear and mixed-integer linear programmes solved in this process by HiGHS (through ``scipy.optimize``): the
small programmes of set cover (its ``milp`` engine, LP bounds), the interval counterfactual bounds (``--bounds lp``)
and the recourse front's achievable-set test. One place handles what every such solve needs: the time limit (what
is left of the active :class:`~stormcf.run.Run`), the solver's own log (``-v``), and a status in the
words of :class:`~stormcf.solvers.SolverOutcome`.

Large programmes with a proven bound to report go through the back ends (:func:`~stormcf.solvers.backend`), which
can also run HiGHS in a child process.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ..run import Run

#: scipy's status codes of linprog and milp, in the solver layer's words
_STATUS = {0: "optimal", 1: "limit", 2: "infeasible", 3: "unbounded"}


@dataclass(frozen=True)
class LinearOutcome:
    """A solve's status (``optimal``, ``infeasible``, ``unbounded``, ``limit``: a time or iteration limit, or
    ``failed``), its solution and objective (None without one) and HiGHS's message."""

    status: str
    x: np.ndarray | None
    objective: float | None
    message: str

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


def _options(**extra: Any) -> dict[str, Any]:
    run = Run.current()
    options = {"disp": run.solver_logs, **extra}
    left = run.remaining()
    if math.isfinite(left):
        options["time_limit"] = max(left, 0.01)
    return options


def linear_program(c: np.ndarray, A_ub=None, b_ub=None, A_eq=None, b_eq=None,
                   bounds: Any = (0, None)) -> LinearOutcome:
    """min cᵀx s.t. A_ub x <= b_ub, A_eq x = b_eq, bounds (``scipy.optimize.linprog``'s arguments), by HiGHS."""
    result = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs",
                     options=_options())
    return _outcome(result)


def mixed_integer_program(c: np.ndarray, constraints: Sequence[LinearConstraint], integrality: np.ndarray,
                          bounds: Bounds, gap: float = 1e-10) -> LinearOutcome:
    """min cᵀx s.t. the linear ``constraints``, ``bounds``, x_i integer where ``integrality`` is 1, by HiGHS with
    the relative optimality gap ``gap``."""
    result = milp(c, constraints=list(constraints), integrality=integrality, bounds=bounds,
                  options=_options(mip_rel_gap=gap))
    return _outcome(result)


def _outcome(result) -> LinearOutcome:
    status = _STATUS.get(result.status, "failed")
    x = None if result.x is None else np.asarray(result.x)
    objective = None if x is None or result.fun is None else float(result.fun)
    return LinearOutcome(status, x, objective, str(result.message))
