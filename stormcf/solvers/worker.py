"""Run SCIP or HiGHS on a formulation packed as arrays: :func:`solve`, in this process or in a child process
(``python worker.py SOLVER IN.npz OUT.npz [BOUND.txt]``).

The back ends (:mod:`stormcf.solvers.backends`) run SCIP always, and HiGHS on large programmes, as a child
process, so that a crash inside the solver (SCIP 10's NLP heuristics abort the process with a heap corruption on
some bilinear programmes) or a solve that overruns its time limit cannot take the command down with it: the parent
kills the child when the command's deadline has passed and keeps the answers it already has. The script imports
only numpy and the solver (not stormcf), so it starts quickly. Input and output are ``numpy.savez`` archives of
the arrays of :func:`backends.pack`; the output holds ``status`` in the solver layer's words (``optimal``,
``infeasible``, ``unbounded``, ``limit``: stopped by a time, solution or node limit or the user's request, or
``failed``: stopped for another reason, with the solver's own word in ``note``), ``x`` and ``objective`` when a
solution was found, ``bound`` and ``seconds``.
With the optional fourth argument, HiGHS writes every bound it proves on a MILP to that text file while it runs, so
that a solve the parent has to stop still yields its bound.
"""
from __future__ import annotations

import os
import signal
import sys
import time
import warnings

import numpy as np


def _constraint(model, expr, lhs: float, rhs: float) -> None:
    if np.isfinite(lhs) and lhs == rhs:
        model.addCons(expr == float(rhs))
        return
    if np.isfinite(lhs):
        model.addCons(expr >= float(lhs))
    if np.isfinite(rhs):
        model.addCons(expr <= float(rhs))


#: SCIP's words for a stop at a limit (time, solutions, nodes, memory) or at the user's request
SCIP_LIMITS = frozenset({"timelimit", "userinterrupt", "sollimit", "bestsollimit", "nodelimit", "totalnodelimit",
                         "stallnodelimit", "memlimit", "restartlimit", "primallimit", "duallimit"})


def solve(solver: str, data: dict, progress: str | None = None, in_process: bool = False) -> dict:
    """Run ``solver`` (``"scip"`` or ``"highs"``) on the packed formulation ``data``; HiGHS writes its proven bound
    to the file ``progress`` each time it rises (:func:`_report_bounds`). ``in_process``: SCIP leaves Ctrl-C to
    the caller's handler (in a child process it stops its solve itself)."""
    return _scip(data, catch_ctrl_c=not in_process) if solver == "scip" else _highs(data, progress)


def _failed(out: dict, word: str) -> dict:
    """``out`` with the status ``failed`` and the solver's own word for it."""
    return {**out, "status": "failed", "note": f"the solver stopped with the status '{word}'"}


def _scip(data: dict, catch_ctrl_c: bool = True) -> dict:
    from pyscipopt import Model, quicksum

    start = time.perf_counter()
    m = Model()
    if not data["verbose"]:
        m.hideOutput()
    lb, ub, integer = data["lb"], data["ub"], data["integer"]
    xs = [m.addVar(lb=float(lb[i]) if np.isfinite(lb[i]) else None, ub=float(ub[i]) if np.isfinite(ub[i]) else None,
                   vtype="I" if integer[i] else "C") for i in range(lb.size)]
    indptr, indices, values = data["A_indptr"], data["A_indices"], data["A_data"]
    for r in range(indptr.size - 1):
        lo, hi = indptr[r], indptr[r + 1]
        expr = quicksum(v * xs[c] for c, v in zip(indices[lo:hi].tolist(), values[lo:hi].tolist()))
        _constraint(m, expr, data["lhs"][r], data["rhs"][r])
    qptr = data["q_ptr"]
    lptr = data["q_lin_ptr"]
    for k in range(qptr.size - 1):
        a, b = qptr[k], qptr[k + 1]
        c, d = lptr[k], lptr[k + 1]
        expr = quicksum(v * xs[i] * xs[j] for i, j, v in zip(data["q_i"][a:b].tolist(), data["q_j"][a:b].tolist(),
                                                               data["q_val"][a:b].tolist())) \
            + quicksum(v * xs[i] for i, v in zip(data["q_lin_idx"][c:d].tolist(), data["q_lin_val"][c:d].tolist()))
        _constraint(m, expr, data["q_lhs"][k], data["q_rhs"][k])
    cost = data["c"]
    objective = quicksum(float(v) * xs[i] for i, v in enumerate(cost.tolist()) if v) + float(data["offset"])
    epigraph = None
    if data["obj_q_i"].size:                        # SCIP wants a linear objective: an epigraph variable
        epigraph = m.addVar(lb=None, ub=None)
        m.addCons(quicksum(v * xs[a] * xs[b] for a, b, v in zip(data["obj_q_i"].tolist(), data["obj_q_j"].tolist(),
                                                                data["obj_q_val"].tolist())) <= epigraph)
        objective = objective + epigraph
    m.setObjective(objective, "minimize")
    if np.isfinite(data["cutoff"]):
        m.addCons(objective <= float(data["cutoff"]))
        m.setParam("limits/solutions", 1)
    m.setParam("limits/time", min(max(float(data["time_limit"]) - (time.perf_counter() - start), 0.01), 1e20))
    m.setParam("limits/gap", float(data["gap"]))
    m.setParam("numerics/feastol", float(data["feastol"]))
    m.setParam("nlp/disable", bool(data["no_nlp"]))
    m.setParam("misc/catchctrlc", catch_ctrl_c)
    x0 = data["start"]
    if x0.size and not np.isnan(x0).any():
        sol = m.createSol()
        for i, v in enumerate(x0.tolist()):
            m.setSolVal(sol, xs[i], v)
        if epigraph is not None:
            i, j, w = data["obj_q_i"], data["obj_q_j"], data["obj_q_val"]
            m.setSolVal(sol, epigraph, float(np.sum(w * x0[i] * x0[j])))
        m.addSol(sol, free=True)
    m.optimize()
    raw = m.getStatus()
    status = {"optimal": "optimal", "gaplimit": "optimal", "infeasible": "infeasible",
              "unbounded": "unbounded"}.get(raw, "limit" if raw in SCIP_LIMITS else raw)
    out = {"status": status, "seconds": time.perf_counter() - start}
    if status not in ("infeasible", "unbounded"):
        out["bound"] = float(m.getDualbound())
    if m.getNSols() > 0 and status != "unbounded":
        best = m.getBestSol()
        out["x"] = np.array([m.getSolVal(best, v) for v in xs])
        out["objective"] = float(m.getSolObjVal(best))
    return out if status in ("optimal", "infeasible", "unbounded", "limit") else _failed(out, raw)


def _native_output():
    """stormcf.console.native_output, also when this file runs as a script (a child process: no parent package)."""
    if not __package__:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        from stormcf.console import native_output
        return native_output
    from ..console import native_output
    return native_output


def _highs(data: dict, progress: str | None = None) -> dict:
    try:
        import highspy
    except ImportError:                             # HiGHS as bundled with scipy (always installed)
        return _scipy_milp(data)
    start = time.perf_counter()
    native_output = _native_output()
    with native_output(show=bool(data["verbose"])):    # the first Highs of a process prints a banner to stdout
        h = highspy.Highs()
    h.setOptionValue("output_flag", bool(data["verbose"]))
    for option, value in (("time_limit", max(float(data["time_limit"]), 0.01)), ("mip_rel_gap", float(data["gap"])),
                          ("threads", 1), ("mip_feasibility_tolerance", float(data["feastol"])),
                          ("primal_feasibility_tolerance", float(data["feastol"]))):
        h.setOptionValue(option, value)
    lp = highspy.HighsLp()
    n = data["lb"].size
    lp.num_col_, lp.num_row_ = n, data["lhs"].size
    lp.col_cost_, lp.offset_ = data["c"], float(data["offset"])
    lp.col_lower_, lp.col_upper_ = data["lb"], data["ub"]
    lp.row_lower_, lp.row_upper_ = data["lhs"], data["rhs"]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = data["A_indptr"], data["A_indices"], data["A_data"]
    integer = data["integer"]
    if integer.any():
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous for b in integer]
    h.passModel(lp)
    cost = data["c"]
    if np.isfinite(data["cutoff"]):
        used = np.flatnonzero(cost)
        h.addRow(-highspy.kHighsInf, float(data["cutoff"]) - float(data["offset"]), used.size, used, cost[used])
        h.setOptionValue("mip_max_improving_sols", 1)
    if progress is not None and integer.any():
        _report_bounds(h, highspy, progress)
    x0 = data["start"]
    if x0.size and not np.isnan(x0).any():
        sol = highspy.HighsSolution()
        sol.col_value = x0.tolist()
        h.setSolution(sol)
    h.run()
    info = h.getInfo()
    model_status = h.getModelStatus()
    status = _highs_status(highspy, model_status)
    out = {"status": status, "seconds": time.perf_counter() - start}
    has = info.primal_solution_status == 2
    if has and status != "unbounded":
        out["x"] = np.array(h.getSolution().col_value)[:n]
        out["objective"] = float(info.objective_function_value)
    if integer.any() and status not in ("infeasible", "unbounded"):
        out["bound"] = float(info.mip_dual_bound)
    elif status == "optimal":
        out["bound"] = out["objective"]
    return out if status != "failed" else _failed(out, h.modelStatusToString(model_status))


def _highs_status(highspy, model_status) -> str:
    """HiGHS's model status in the solver layer's words (module docs)."""
    S = highspy.HighsModelStatus
    limits = (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt, S.kHighsInterrupt, S.kMemoryLimit,
              S.kObjectiveBound, S.kObjectiveTarget)
    words = {S.kOptimal: "optimal", S.kInfeasible: "infeasible", S.kUnbounded: "unbounded"}
    return words.get(model_status, "limit" if model_status in limits else "failed")


def _report_bounds(h, highspy, path: str) -> None:
    """Write HiGHS's proven lower bound (as text) to ``path`` each time it rises, at its log lines and limit checks,
    so that the parent keeps it when it must stop a solve that overran its time limit: HiGHS checks its limit only
    between rounds of root cuts, 25 s apart on the d0 MILP of the 10^5-state process model."""
    best = [-np.inf]

    def report(kind, message, out, into, user) -> None:
        bound = float(out.mip_dual_bound)
        if np.isfinite(bound) and bound > best[0]:
            best[0] = bound
            with open(path + ".part", "w") as f:
                f.write(repr(bound))
            os.replace(path + ".part", path)

    h.setCallback(report, None)
    for kind in (highspy.cb.HighsCallbackType.kCallbackMipLogging, highspy.cb.HighsCallbackType.kCallbackMipInterrupt):
        h.startCallback(kind)


def _scipy_milp(data: dict) -> dict:
    """HiGHS through ``scipy.optimize.milp`` (no warm start, no cutoff row)."""
    import scipy.sparse as sp
    from scipy.optimize import Bounds, LinearConstraint, milp

    start = time.perf_counter()
    n = data["lb"].size
    A = sp.csr_matrix((data["A_data"], data["A_indices"], data["A_indptr"]), shape=(data["lhs"].size, n))
    with warnings.catch_warnings():                 # the tolerance goes to HiGHS verbatim, as intended
        warnings.simplefilter("ignore", RuntimeWarning)
        result = milp(data["c"], integrality=data["integer"].astype(int), bounds=Bounds(data["lb"], data["ub"]),
                      constraints=LinearConstraint(A, data["lhs"], data["rhs"]),
                      options={"time_limit": max(float(data["time_limit"]), 0.01), "mip_rel_gap": float(data["gap"]),
                               "primal_feasibility_tolerance": float(data["feastol"]), "disp": bool(data["verbose"])})
    status = {0: "optimal", 1: "limit", 2: "infeasible", 3: "unbounded"}.get(result.status, "failed")
    out = {"status": status, "seconds": time.perf_counter() - start}
    if result.x is not None and status != "unbounded":
        out["x"] = np.asarray(result.x)
        out["objective"] = float(result.fun) + float(data["offset"])
    bound = getattr(result, "mip_dual_bound", None)
    if data["integer"].any() and bound is not None and np.isfinite(bound):
        out["bound"] = float(bound) + float(data["offset"])
    elif status == "optimal":
        out["bound"] = out["objective"]
    return out if status != "failed" else _failed(out, str(result.message))


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the terminal's Ctrl-C reaches us too: the parent decides
    solver, source, target = sys.argv[1], sys.argv[2], sys.argv[3]
    with np.load(source, allow_pickle=False) as archive:
        data = {k: archive[k] for k in archive.files}
    np.savez(target, **solve(solver, data, progress=sys.argv[4] if len(sys.argv) > 4 else None))


if __name__ == "__main__":
    main()
