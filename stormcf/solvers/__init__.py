"""One solver layer for every mathematical programme stormcf solves: Gurobi, SCIP and HiGHS behind one interface.

A programme is a solver-independent :class:`~stormcf.solvers.formulation.Formulation` (linear and bilinear rows,
binary variables, an objective); a back end (:func:`backend` by name: ``gurobi``, ``scip``, ``highs``) solves it
within a time limit and returns a :class:`SolverOutcome` (status, solution, objective, proven bound). SCIP, and
HiGHS on large programmes, run in child processes (:mod:`stormcf.solvers.worker`) that the parent stops at the
deadline, so that a solver crash or overrun cannot take a command down.
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["BACKENDS", "MIP_GAP", "ChildJob", "GurobiBackend", "HighsBackend", "Job", "LicenceLimitError",
        "ScipBackend", "SolverOutcome", "available", "backend", "pack"], ".backends"),
    **dict.fromkeys(["INF", "Formulation", "FormulationBuilder", "QuadraticRow"], ".formulation"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["BACKENDS", "ChildJob", "Formulation", "FormulationBuilder", "GurobiBackend", "HighsBackend", "INF", "Job",
           "LicenceLimitError", "MIP_GAP", "QuadraticRow", "ScipBackend", "SolverOutcome", "available", "backend",
           "pack"]
