"""Solver back ends with one interface: ``backend.solve(formulation, time_limit) -> SolverOutcome``.

- :class:`GurobiBackend`: gurobipy, non-convex MIQCQP (``NonConvex=2``). The pip wheel carries a size-limited
  licence (about 2,000 variables and constraints); :class:`LicenceLimitError` says so when an instance is larger.
- :class:`ScipBackend`: PySCIPOpt, open source, no size limit, spatial branch-and-bound for bilinear constraints.
- :class:`HighsBackend`: highspy, linear programmes only (the d0 MILP), no size limit.

All run on one thread with a relative gap of 1e-4 and tight feasibility tolerances (the encodings' answers are
re-checked by Storm anyway). Status: ``optimal``; ``suboptimal`` (a solution, not proven optimal: time or
solution limit); ``infeasible``; ``timeout`` (no solution within the limit).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from .formulation import Formulation

#: relative optimality gap the back ends stop at (Gurobi's default; the paper used Gurobi's defaults)
MIP_GAP = 1e-4
#: primal feasibility tolerance asked from the back ends
FEASIBILITY_TOLERANCE = 1e-9


class LicenceLimitError(SolverError):
    """The installed Gurobi licence is too small for the instance."""


@dataclass
class SolverOutcome:
    """What a back end found: ``x`` is the best solution (None if none), ``bound`` the proven lower bound."""

    status: str
    x: np.ndarray | None
    objective: float | None
    bound: float | None
    time: float
    backend: str

    @property
    def gap(self) -> float | None:
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1e-10)


def _split_rows(f: Formulation):
    """Equality, <= and >= row blocks of the linear part: (matrix, rhs) each."""
    eq = np.isfinite(f.lhs) & (f.lhs == f.rhs)
    le = np.isfinite(f.rhs) & ~eq
    ge = np.isfinite(f.lhs) & ~eq
    return [(f.A[m], v[m], s) for m, v, s in ((eq, f.rhs, "="), (le, f.rhs, "<"), (ge, f.lhs, ">")) if m.any()]


class GurobiBackend:
    name = "gurobi"

    def solve(self, f: Formulation, time_limit: float) -> SolverOutcome:
        try:
            import gurobipy as gp
        except ImportError:
            raise SolverError("gurobipy is not installed (pip install gurobipy)") from None
        t0 = time.perf_counter()
        try:
            with gp.Env(empty=True) as env:
                env.setParam("OutputFlag", 0)
                env.start()
                with gp.Model(env=env) as m:
                    return self._run(gp, m, f, time_limit, t0)
        except gp.GurobiError as err:
            if err.errno == gp.GRB.Error.SIZE_LIMIT_EXCEEDED:
                s = f.sizes()
                raise LicenceLimitError(
                    f"the instance ({s['variables']} variables, {s['constraints']} constraints, {s['bilinear_terms']} "
                    f"bilinear terms) is too large for the installed size-limited Gurobi licence (the pip wheel's "
                    f"allows about 2,000 variables and constraints, and far fewer variables in quadratic terms); "
                    f"install a full licence or use --solver scip") from None
            raise SolverError(f"Gurobi failed: {err}") from None

    def _run(self, gp, m, f: Formulation, time_limit: float, t0: float) -> SolverOutcome:
        GRB = gp.GRB
        x = m.addMVar(f.n_vars, lb=f.lb, ub=f.ub, vtype=np.where(f.binary, GRB.BINARY, GRB.CONTINUOUS))
        for A, rhs, sense in _split_rows(f):
            m.addMConstr(A, x, sense, rhs)
        xs = x.tolist()
        for q in f.quadratic:
            expr = gp.QuadExpr()
            expr.addTerms(q.q_val.tolist(), [xs[i] for i in q.q_i], [xs[j] for j in q.q_j])
            expr.addTerms(q.lin_val.tolist(), [xs[i] for i in q.lin_idx])
            if np.isfinite(q.lhs):
                m.addQConstr(expr >= q.lhs)
            if np.isfinite(q.rhs):
                m.addQConstr(expr <= q.rhs)
        objective = gp.QuadExpr()
        objective.addTerms(f.c.tolist(), xs)
        if f.objective_quadratic is not None:
            i, j, w = f.objective_quadratic
            objective.addTerms(w.tolist(), [xs[a] for a in i], [xs[b] for b in j])
        m.setObjective(objective + f.offset, GRB.MINIMIZE)
        if f.objective_cutoff is not None:
            m.addQConstr(objective + f.offset <= f.objective_cutoff)
            m.Params.SolutionLimit = 1
        if f.start is not None:
            x.Start = np.where(np.isnan(f.start), GRB.UNDEFINED, f.start)
        p = m.Params
        p.NonConvex, p.TimeLimit, p.Threads = 2, max(time_limit, 0.01), 1
        p.MIPGap, p.FeasibilityTol, p.IntFeasTol = MIP_GAP, FEASIBILITY_TOLERANCE, FEASIBILITY_TOLERANCE
        m.optimize()
        has = m.SolCount > 0
        status = {GRB.OPTIMAL: "optimal", GRB.INFEASIBLE: "infeasible", GRB.INF_OR_UNBD: "infeasible"}.get(m.Status)
        if status is None:
            status = "suboptimal" if has else "timeout"
        bound = None
        if m.IsMIP or m.IsQCP:
            bound = float(m.ObjBound) if status in ("optimal", "suboptimal", "timeout") else None
        elif status == "optimal":
            bound = float(m.ObjVal)
        return SolverOutcome(status, np.array(x.X) if has else None, float(m.ObjVal) if has else None,
                             bound, time.perf_counter() - t0, self.name)


class ScipBackend:
    name = "scip"

    def solve(self, f: Formulation, time_limit: float) -> SolverOutcome:
        try:
            from pyscipopt import Model, quicksum
        except ImportError:
            raise SolverError("PySCIPOpt is not installed (pip install pyscipopt)") from None
        t0 = time.perf_counter()
        m = Model()
        m.hideOutput()
        ub = [None if not np.isfinite(u) else float(u) for u in f.ub]
        xs = [m.addVar(lb=float(f.lb[i]), ub=ub[i], vtype="B" if f.binary[i] else "C") for i in range(f.n_vars)]
        A = f.A
        for r in range(A.shape[0]):
            lo, hi = A.indptr[r], A.indptr[r + 1]
            expr = quicksum(v * xs[c] for c, v in zip(A.indices[lo:hi].tolist(), A.data[lo:hi].tolist()))
            self._add(m, expr, f.lhs[r], f.rhs[r])
        for q in f.quadratic:
            expr = quicksum(v * xs[i] * xs[j] for i, j, v in zip(q.q_i.tolist(), q.q_j.tolist(), q.q_val.tolist())) \
                + quicksum(v * xs[i] for i, v in zip(q.lin_idx.tolist(), q.lin_val.tolist()))
            self._add(m, expr, q.lhs, q.rhs)
        objective = quicksum(v * xs[i] for i, v in enumerate(f.c.tolist()) if v) + f.offset
        if f.objective_quadratic is not None:       # SCIP wants a linear objective: epigraph variable
            i, j, w = f.objective_quadratic
            t = m.addVar(lb=None, ub=None)
            m.addCons(quicksum(v * xs[a] * xs[b] for a, b, v in zip(i.tolist(), j.tolist(), w.tolist())) <= t)
            objective = objective + t
        m.setObjective(objective, "minimize")
        if f.objective_cutoff is not None:
            m.addCons(objective <= f.objective_cutoff)
            m.setParam("limits/solutions", 1)
        m.setParam("limits/time", max(time_limit - (time.perf_counter() - t0), 0.01))
        m.setParam("limits/gap", MIP_GAP)
        m.setParam("numerics/feastol", FEASIBILITY_TOLERANCE)
        if f.start is not None and not np.isnan(f.start).any():
            sol = m.createSol()
            for i, v in enumerate(f.start.tolist()):
                m.setSolVal(sol, xs[i], v)
            if f.objective_quadratic is not None:
                m.setSolVal(sol, t, f.objective_value(f.start) - float(f.c @ f.start) - f.offset)
            m.addSol(sol, free=True)
        m.optimize()
        raw = m.getStatus()
        has = m.getNSols() > 0
        status = {"optimal": "optimal", "gaplimit": "optimal", "infeasible": "infeasible"}.get(raw)
        if status is None:
            status = "suboptimal" if has else "timeout"
        x = objective_value = None
        if has:
            best = m.getBestSol()
            x = np.array([m.getSolVal(best, v) for v in xs])
            objective_value = float(m.getSolObjVal(best))
        bound = float(m.getDualbound()) if status != "infeasible" else None
        return SolverOutcome(status, x, objective_value, bound, time.perf_counter() - t0, self.name)

    @staticmethod
    def _add(m, expr, lhs: float, rhs: float) -> None:
        if np.isfinite(lhs) and lhs == rhs:
            m.addCons(expr == float(rhs))
            return
        if np.isfinite(lhs):
            m.addCons(expr >= float(lhs))
        if np.isfinite(rhs):
            m.addCons(expr <= float(rhs))


class HighsBackend:
    name = "highs"

    def solve(self, f: Formulation, time_limit: float) -> SolverOutcome:
        try:
            import highspy
        except ImportError:
            raise SolverError("highspy is not installed (pip install highspy)") from None
        if not f.is_linear:
            raise SolverError("HiGHS solves linear programmes only; the mixed objective has bilinear Bellman "
                              "constraints: use --solver scip or --solver gurobi")
        t0 = time.perf_counter()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for option, value in (("time_limit", max(float(time_limit), 0.01)), ("mip_rel_gap", MIP_GAP),
                              ("threads", 1), ("mip_feasibility_tolerance", FEASIBILITY_TOLERANCE),
                              ("primal_feasibility_tolerance", FEASIBILITY_TOLERANCE)):
            h.setOptionValue(option, value)
        inf = highspy.kHighsInf          # == float("inf"): the formulation's infinite bounds pass as they are
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = f.n_vars, f.A.shape[0]
        lp.col_cost_, lp.offset_ = f.c, f.offset
        lp.col_lower_, lp.col_upper_ = f.lb, f.ub
        lp.row_lower_, lp.row_upper_ = f.lhs, f.rhs
        A = f.A.tocsc()
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
        if f.binary.any():
            lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                               for b in f.binary]
        h.passModel(lp)
        if f.objective_cutoff is not None:
            h.addRow(-inf, f.objective_cutoff - f.offset, int(np.count_nonzero(f.c)), np.flatnonzero(f.c),
                     f.c[f.c != 0])
            h.setOptionValue("mip_max_improving_sols", 1)
        if f.start is not None and not np.isnan(f.start).any():
            sol = highspy.HighsSolution()
            sol.col_value = f.start.tolist()
            h.setSolution(sol)
        h.run()
        ms = h.getModelStatus()
        info = h.getInfo()
        has = info.primal_solution_status == 2
        S = highspy.HighsModelStatus
        status = {S.kOptimal: "optimal", S.kInfeasible: "infeasible"}.get(ms)
        if status is None:
            status = "suboptimal" if has else "timeout"
        x = np.array(h.getSolution().col_value) if has else None
        objective = float(info.objective_function_value) if has else None
        if f.binary.any():
            bound = float(info.mip_dual_bound) if status != "infeasible" else None
        else:
            bound = objective if status == "optimal" else None
        return SolverOutcome(status, x, objective, bound, time.perf_counter() - t0, self.name)


BACKENDS = {"gurobi": GurobiBackend, "scip": ScipBackend, "highs": HighsBackend}


def backend(name: str):
    """The back end called ``name`` (gurobi, scip, highs)."""
    try:
        return BACKENDS[name]()
    except KeyError:
        raise SolverError(f"unknown solver '{name}' (solvers: auto, {', '.join(BACKENDS)})") from None
