"""One solver layer for every mathematical programme stormcf solves: HiGHS, SCIP and Gurobi behind one interface.

A programme is a solver-independent :class:`~stormcf.solvers.formulation.Formulation` (linear and bilinear rows,
integer variables, an objective): the LPs and MILPs of set cover, of the interval counterfactual bounds and of the
recourse achievable-set test, the d0 MILP and the MIQCQP of counterfactual strategies. :func:`solve` solves it with
the solver chosen by name (:data:`SOLVERS`: ``auto``, ``highs``, ``scip``, ``gurobi``, the ``--solver`` option of
every command that solves programmes) within a time limit and returns a :class:`SolverOutcome` (status, solution,
objective, proven bound, gap; ``optimal`` only when proven); :func:`backend` gives a back end by name, whose
``start`` runs a solve beside other work. SCIP on MILPs and bilinear programmes, and HiGHS and SCIP on large ones,
run in child processes (:mod:`stormcf.solvers.worker`) that the parent stops at the deadline, so that a solver crash
or overrun cannot take a command down; small linear programmes are solved in this process (set cover certifies
thousands of agents, one LP each).
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["BACKENDS", "SOLVERS", "ChildJob", "GurobiBackend", "HighsBackend", "Job",
        "LicenceLimitError", "ScipBackend", "SolverOutcome", "available", "backend", "chosen", "pack", "solve"],
        ".backends"),
    **dict.fromkeys(["INF", "MIP_GAP", "Formulation", "FormulationBuilder", "QuadraticRow"], ".formulation"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["BACKENDS", "ChildJob", "Formulation", "FormulationBuilder", "GurobiBackend", "HighsBackend", "INF", "Job",
           "LicenceLimitError", "MIP_GAP", "QuadraticRow", "SOLVERS", "ScipBackend", "SolverOutcome", "available",
           "backend", "chosen", "pack", "solve"]
