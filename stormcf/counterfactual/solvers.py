"""The solvers of the counterfactual problem, with one interface: ``solver.solve(encoding, gamma, time_limit)``.

- :class:`DinfBisection`: d∞ alone, exact (bisection + robust policy iteration; no optimisation solver);
- :class:`D0Milp`: d0 alone, exact, a MILP on any back end (HiGHS by default);
- :class:`Miqcqp`: the mixed objective, the non-convex MIQCQP of seed 000 on Gurobi or SCIP.

``gamma`` is the bound the solver must meet (the caller subtracts a safety margin); the outcome's ``probs`` is a
policy over the encoding's rows, which the caller turns into a strategy and has Storm verify.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .analysis import Encoding
from .backends import backend
from .greedy import greedy_d0
from .programs import Bounds, d0_program, miqcqp_program
from .robust import dinf_bisection


@dataclass
class SolverResult:
    """``objective``: the solver's value of its own objective; ``bound``: a proven lower bound on it."""

    status: str
    probs: np.ndarray | None
    objective: float | None
    bound: float | None
    time: float
    name: str
    sizes: dict | None = None


class DinfBisection:
    """Optimal d∞ (see :mod:`stormcf.counterfactual.robust`)."""

    name = "d∞ bisection (robust policy iteration)"

    def __init__(self, tolerance: float = 1e-7) -> None:
        self.tolerance = tolerance

    def solve(self, enc: Encoding, gamma: float, time_limit: float) -> SolverResult:
        out = dinf_bisection(enc, gamma, tolerance=self.tolerance, time_limit=time_limit)
        if out.probs is None:
            return SolverResult("infeasible", None, None, out.lower, out.time, self.name)
        status = "suboptimal" if out.timed_out else "optimal"
        return SolverResult(status, out.probs, out.dinf, out.lower, out.time, self.name)


class D0Milp:
    """Optimal d0: the MILP of :func:`stormcf.counterfactual.programs.d0_program`, warm-started by
    :func:`stormcf.counterfactual.greedy.greedy_d0` (or ``start`` when the heuristic finds nothing)."""

    def __init__(self, backend_name: str = "highs", start: np.ndarray | None = None) -> None:
        self.backend = backend(backend_name)
        self.start = start
        self.name = f"d0 MILP ({self.backend.name})"

    def solve(self, enc: Encoding, gamma: float, time_limit: float) -> SolverResult:
        t0 = time.perf_counter()
        start = greedy_d0(enc, gamma, time_limit / 10)
        program = d0_program(enc, gamma, self.start if start is None else start)
        out = self.backend.solve(program.formulation, max(time_limit - (time.perf_counter() - t0), 0.01))
        probs = program.policy(enc, out.x) if out.x is not None else None
        bound = None if out.bound is None else float(math.ceil(out.bound - 1e-6))   # d0 is an integer
        return SolverResult(out.status, probs, out.objective, bound, out.time, self.name,
                            program.formulation.sizes())


class Miqcqp:
    """The MIQCQP (1)-(13) for the weighted distance, with warm start and valid bounds from the special cases."""

    def __init__(self, backend_name: str, weights: tuple[float, float, float], bounds: Bounds = Bounds(),
                 start: np.ndarray | None = None, epsilon: float | None = None, diversity=None) -> None:
        self.backend = backend(backend_name)
        self.weights, self.bounds, self.start = weights, bounds, start
        self.epsilon, self.diversity = epsilon, diversity
        self.name = f"MIQCQP ({self.backend.name})"

    def solve(self, enc: Encoding, gamma: float, time_limit: float) -> SolverResult:
        t0 = time.perf_counter()
        program = miqcqp_program(enc, gamma, self.weights, self.bounds, self.start, self.epsilon, self.diversity)
        out = self.backend.solve(program.formulation, max(time_limit - (time.perf_counter() - t0), 0.01))
        probs = program.policy(enc, out.x) if out.x is not None else None
        return SolverResult(out.status, probs, out.objective, out.bound, time.perf_counter() - t0, self.name,
                            program.formulation.sizes())
