"""One solver layer for every mathematical programme stormcf solves: Gurobi, SCIP and HiGHS behind one interface.

A programme is a solver-independent :class:`~stormcf.solvers.formulation.Formulation` (linear and bilinear rows,
binary variables, an objective); a back end (:func:`backend` by name: ``gurobi``, ``scip``, ``highs``) solves it
within a time limit and returns a :class:`SolverOutcome` (status, solution, objective, proven bound). SCIP, and
HiGHS on large programmes, run in child processes (:mod:`stormcf.solvers.worker`) that the parent stops at the
deadline, so that a solver crash or overrun cannot take a command down.
"""
from .backends import (BACKENDS, MIP_GAP, ChildJob, GurobiBackend, HighsBackend, Job, LicenceLimitError, ScipBackend,
                       SolverOutcome, available, backend, pack)
from .formulation import INF, Formulation, FormulationBuilder, QuadraticRow

__all__ = ["BACKENDS", "ChildJob", "Formulation", "FormulationBuilder", "GurobiBackend", "HighsBackend", "INF", "Job",
           "LicenceLimitError", "MIP_GAP", "QuadraticRow", "ScipBackend", "SolverOutcome", "available", "backend",
           "pack"]
