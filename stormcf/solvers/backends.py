"""Solver back ends with one interface: ``backend.solve(formulation, time_limit) -> SolverOutcome``, and
:func:`solve`, the one entry point for every programme: the solver chosen by name (:data:`SOLVERS`), the time limit
what is left of the active :class:`~stormcf.run.Run` unless given.

- :class:`GurobiBackend`: gurobipy, in this process, non-convex MIQCQP (``NonConvex=2``). The pip wheel carries a
  size-limited licence (about 2,000 variables and constraints); :class:`LicenceLimitError` says so when an instance
  is larger (never a fallback to another solver).
- :class:`ScipBackend`: PySCIPOpt, open source, no size limit, spatial branch-and-bound for bilinear constraints; in
  a child process (a SCIP crash or overrun cannot take the command down), except for small LPs (no integer
  variables, fewer than :data:`CHILD_PROCESS_SIZE` variables: a child costs 30 times their solve).
- :class:`HighsBackend`: highspy (or scipy's HiGHS, always installed), linear programmes only (LPs and MILPs), no
  size limit; in this process below :data:`CHILD_PROCESS_SIZE` variables.

All run on one thread with the formulation's relative optimality gap (5e-5 by default, :data:`MIP_GAP`; set cover
asks for 1e-10) and feasibility tolerance (1e-6 by default; the counterfactual encodings': 1e-4·γ, between 1e-9
and 1e-6, :func:`programs.tolerance`).
Status: ``optimal`` (proven, within the gap); ``suboptimal`` (a solution, not proven optimal: a time or solution
limit, or the user's request); ``infeasible``; ``unbounded``; ``timeout`` (no solution within the limit);
``crashed`` (the solver's child process died); ``failed`` (the solver stopped for another reason, named in
``note``; its solution, if any, is not proven feasible).
"""
from __future__ import annotations

import contextlib
import importlib.util
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import interrupt
from ..errors import SolverError, TimeLimitReached
from ..run import Run
from . import worker
from .formulation import Formulation

#: seconds a solver in a child process stops before its time limit (at most 10% of it), to return its best solution
KILL_GRACE = 5.0
#: HiGHS runs in a child process from this many variables on (SCIP from this many, and on every MILP and MIQCQP)
CHILD_PROCESS_SIZE = 10_000
#: the solvers by name; ``auto``: HiGHS for linear programmes, Gurobi (else SCIP) for bilinear ones
SOLVERS = ("auto", "highs", "scip", "gurobi")


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
    note: str | None = None

    @property
    def optimal(self) -> bool:
        """Whether the solver proved ``x`` optimal (within the formulation's relative gap)."""
        return self.status == "optimal"

    def proven(self, what: str) -> SolverOutcome:
        """This outcome when the solver proved its answer (``optimal`` or ``infeasible``). A solve its time limit
        stopped raises :class:`~stormcf.errors.TimeLimitReached` (:class:`~stormcf.interrupt.Interrupted` when the
        user asked to stop), any other end a :class:`SolverError` naming the status; ``what`` names the programme
        in these messages."""
        if self.status in ("optimal", "infeasible"):
            return self
        if self.status in ("suboptimal", "timeout"):
            Run.current().check(what)
            raise TimeLimitReached(f"{self.backend} reached its time limit before it solved {what}")
        why = f": {self.note}" if self.note else ""
        raise SolverError(f"{self.backend} did not solve {what} (status {self.status}{why})")

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

    def start(self, f: Formulation, time_limit: float, child: bool = False) -> Job:
        return Job(self.solve(f, time_limit))

    def solve(self, f: Formulation, time_limit: float) -> SolverOutcome:
        try:
            import gurobipy as gp
        except ImportError:
            raise SolverError("gurobipy is not installed (pip install gurobipy)") from None
        t0 = time.perf_counter()
        try:   # gurobipy writes its log to Python's sys.stdout: with -v it goes to stderr, as native output does
            with contextlib.redirect_stdout(sys.stderr), gp.Env(empty=True) as env:
                env.setParam("OutputFlag", int(Run.current().solver_logs))
                env.start()
                with gp.Model(env=env) as m:
                    return self._run(gp, m, f, time_limit, t0)
        except gp.GurobiError as err:
            if err.errno == gp.GRB.Error.SIZE_LIMIT_EXCEEDED:
                s = f.sizes()
                raise LicenceLimitError(
                    f"the instance ({s['variables']} variables, {s['constraints']} constraints, {s['bilinear_terms']} "
                    f"bilinear terms) is too large for the installed size-limited Gurobi licence (the pip wheel's "
                    f"allows 2,000 variables and 2,000 linear constraints, and only 200 variables when there are "
                    f"quadratic terms); install a full licence or use SCIP") from None
            raise SolverError(f"Gurobi failed: {err}") from None

    def _run(self, gp, m, f: Formulation, time_limit: float, t0: float) -> SolverOutcome:
        GRB = gp.GRB
        x = m.addMVar(f.n_vars, lb=f.lb, ub=f.ub, vtype=np.where(f.integer, GRB.INTEGER, GRB.CONTINUOUS))
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
        p.NonConvex, p.TimeLimit, p.Threads = 2, min(max(time_limit, 0.01), GRB.INFINITY), 1
        p.MIPGap, p.FeasibilityTol, p.IntFeasTol = f.gap, max(f.tolerance, 1e-9), max(f.tolerance, 1e-9)
        _optimize(GRB, m, f)
        if m.Status == GRB.INF_OR_UNBD:     # presolve's dual reductions left it open: decide which
            p.DualReductions = 0
            _optimize(GRB, m, f)
        status = _gurobi_status(GRB, m.Status)
        has = m.SolCount > 0 and status not in ("infeasible", "unbounded")
        if status == "limit":
            status = "suboptimal" if has else "timeout"
        bound = None
        if (m.IsMIP or m.IsQCP) and status in ("optimal", "suboptimal", "timeout"):
            bound = float(m.ObjBound)
        elif status == "optimal":
            bound = float(m.ObjVal)
        note = None if status != "failed" else f"Gurobi stopped with the status code {m.Status}"
        return SolverOutcome(status, np.array(x.X) if has else None, float(m.ObjVal) if has else None,
                             bound, time.perf_counter() - t0, self.name, note)


def _optimize(GRB, m, f: Formulation) -> None:
    m._stopped = False
    with Run.current().activity(f"Gurobi, {f.n_vars} variables"), interrupt.deferred_signals():
        m.optimize(_stop_when_asked)
    if m.Status == GRB.INTERRUPTED and not m._stopped:     # Gurobi caught the user's Ctrl-C itself
        interrupt.caught_elsewhere()


def _gurobi_status(GRB, code: int) -> str:
    """Gurobi's status code in the solver layer's words (``limit``: stopped with or without a solution)."""
    limits = (GRB.TIME_LIMIT, GRB.SOLUTION_LIMIT, GRB.INTERRUPTED, GRB.NODE_LIMIT, GRB.ITERATION_LIMIT,
              GRB.USER_OBJ_LIMIT, GRB.WORK_LIMIT, GRB.MEM_LIMIT, GRB.SUBOPTIMAL)
    words = {GRB.OPTIMAL: "optimal", GRB.INFEASIBLE: "infeasible", GRB.UNBOUNDED: "unbounded"}
    return words.get(code, "limit" if code in limits else "failed")


def _stop_when_asked(model, where) -> None:
    """Gurobi's callback: end the solve when the user asked to stop (a SIGTERM or Ctrl-C that Python's handler
    recorded while Gurobi worked); ``model._stopped`` tells this apart from a Ctrl-C Gurobi caught itself (both end
    with the status INTERRUPTED)."""
    if interrupt.requested():
        model._stopped = True
        model.terminate()


def pack(f: Formulation, time_limit: float, no_nlp: bool = False) -> dict[str, np.ndarray]:
    """The formulation as plain arrays for :mod:`worker`, with the solver settings."""
    quad = f.quadratic
    cat = lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa: E731
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    obj_i, obj_j, obj_w = f.objective_quadratic if f.objective_quadratic is not None else empty
    A = f.A.tocsr()
    sizes = lambda parts: np.concatenate([[0], np.cumsum([p.size for p in parts])]).astype(np.int64)  # noqa: E731
    return {"lb": f.lb, "ub": f.ub, "integer": f.integer, "A_indptr": A.indptr.astype(np.int64),
            "A_indices": A.indices.astype(np.int64), "A_data": A.data, "lhs": f.lhs, "rhs": f.rhs, "c": f.c,
            "offset": np.float64(f.offset), "q_ptr": sizes([q.q_val for q in quad]),
            "q_i": cat([q.q_i for q in quad], np.int64), "q_j": cat([q.q_j for q in quad], np.int64),
            "q_val": cat([q.q_val for q in quad], float), "q_lin_ptr": sizes([q.lin_val for q in quad]),
            "q_lin_idx": cat([q.lin_idx for q in quad], np.int64), "q_lin_val": cat([q.lin_val for q in quad], float),
            "q_lhs": np.array([q.lhs for q in quad], dtype=float),
            "q_rhs": np.array([q.rhs for q in quad], dtype=float),
            "obj_q_i": np.asarray(obj_i, dtype=np.int64), "obj_q_j": np.asarray(obj_j, dtype=np.int64),
            "obj_q_val": np.asarray(obj_w, dtype=float),
            "cutoff": np.float64(np.inf if f.objective_cutoff is None else f.objective_cutoff),
            "start": np.zeros(0) if f.start is None else np.asarray(f.start, dtype=float),
            "time_limit": np.float64(time_limit), "gap": np.float64(f.gap),
            "feastol": np.float64(f.tolerance), "no_nlp": np.bool_(no_nlp),
            "verbose": np.bool_(Run.current().solver_logs)}


class Job:
    """A solve under way: :meth:`done` (without waiting), :meth:`due` (done, or its time limit has passed, so that
    :meth:`result` returns at once), :meth:`result` (waits, at most until the time limit)."""

    def __init__(self, outcome: SolverOutcome | None = None) -> None:
        self._outcome = outcome

    def done(self) -> bool:
        return True

    def due(self) -> bool:
        return self.done()

    def result(self) -> SolverOutcome:
        assert self._outcome is not None                # a job started without its outcome overrides result()
        return self._outcome

    def cancel(self) -> None:
        """Stop the solve (its result is then not needed)."""


class ChildJob(Job):
    """:mod:`worker` in a child process, stopped when its time limit has passed (the solver itself is told
    to stop :data:`KILL_GRACE` seconds, at most 10%, earlier, so that it can return its best solution); a crash or
    a stop comes back as the status ``crashed`` / ``timeout`` with a ``note``."""

    def __init__(self, solver: str, f: Formulation, time_limit: float, no_nlp: bool = False) -> None:
        super().__init__()
        self.solver, self.started, self.time_limit, self.size = solver, time.perf_counter(), time_limit, f.n_vars
        self._tmp = tempfile.TemporaryDirectory(prefix="stormcf-solver-")
        interrupt.track_path(self._tmp.name)
        source, self._target = Path(self._tmp.name) / "in.npz", Path(self._tmp.name) / "out.npz"
        self._progress = Path(self._tmp.name) / "bound.txt"
        arrays = pack(f, time_limit - min(KILL_GRACE, 0.1 * time_limit), no_nlp)
        np.savez(source, **arrays)      # type: ignore[arg-type]  # numpy's stubs: a key could be allow_pickle (a bool)
        command = [sys.executable, str(Path(__file__).with_name("worker.py")), solver, str(source),
                   str(self._target), str(self._progress)]
        # the solver's log (with -v) goes to the inherited stdout, which the command line routes to stderr
        logs = Run.current().solver_logs
        with interrupt.signals_blocked():
            self._process = subprocess.Popen(command, stdout=None if logs else subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, text=True, preexec_fn=interrupt.die_with_parent)
        interrupt.track_child(self._process.pid)

    def done(self) -> bool:
        return self._process.poll() is not None

    def due(self) -> bool:
        return self.done() or interrupt.requested() or time.perf_counter() - self.started >= self.time_limit

    def cancel(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.communicate()
        self._cleanup()

    def _cleanup(self) -> None:
        interrupt.untrack_child(self._process.pid)
        self._tmp.cleanup()
        interrupt.untrack_path(self._tmp.name)

    def raw(self) -> dict:
        """The worker's arrays, or ``{status, note}`` when it crashed or had to be stopped."""
        try:
            name = self.solver.upper() if self.solver == "scip" else "HiGHS"
            with Run.current().activity(f"{name}, {self.size} variables"):
                stderr = self._wait()
        except BaseException:                   # Ctrl-C or SIGTERM in the parent: the child stops with it
            self.cancel()
            raise
        if stderr is None:
            bound = self._last_bound()
            self.cancel()
            why = "at the user's request" if interrupt.requested() else "as it did not stop at its time limit"
            if bound is None:
                return {"status": "timeout", "note": f"{self.solver} was stopped {why}"}
            return {"status": "timeout", "bound": bound,
                    "note": f"{self.solver} was stopped {why}; the bound {bound:.10g} it had proven is kept"}
        try:
            if self._process.returncode != 0 or not self._target.exists():
                why = (stderr.strip().splitlines() or [f"exit code {self._process.returncode}"])[-1]
                return {"status": "crashed", "note": f"{self.solver} crashed ({why[:120]})"}
            with np.load(self._target, allow_pickle=False) as result:
                return {k: (str(result[k]) if k == "status" else result[k]) for k in result.files}
        finally:
            self._cleanup()

    def _last_bound(self) -> float | None:
        """The last proven bound the child reported (HiGHS on MILPs: :func:`worker._report_bounds`), or None."""
        try:
            return float(self._progress.read_text())
        except (OSError, ValueError):
            return None

    def _wait(self) -> str | None:
        """The child's stderr once it ends; None when its time limit passes or the user asks to stop first."""
        while not interrupt.requested():
            left = self.time_limit - (time.perf_counter() - self.started)
            try:
                return self._process.communicate(timeout=min(max(left, 0.0), 0.2))[1]
            except subprocess.TimeoutExpired:
                if left <= 0.2:
                    return None
        return None

    def result(self) -> SolverOutcome:
        return _outcome(self.raw(), time.perf_counter() - self.started, self.solver)


def _outcome(raw: dict, seconds: float, name: str) -> SolverOutcome:
    """The worker's answer (:mod:`worker`: ``limit`` for a stop with or without a solution) as an outcome."""
    x = raw.get("x")
    status = raw["status"]
    if status in ("limit", "timeout"):
        status = "suboptimal" if x is not None else "timeout"
    bound = float(raw["bound"]) if "bound" in raw and status not in ("infeasible", "unbounded", "failed") else None
    objective = float(raw["objective"]) if "objective" in raw else None
    return SolverOutcome(status, x, objective, bound, seconds, name, note=raw.get("note"))


class ScipBackend:
    """SCIP in a child process (:mod:`worker`), or in this process for a small LP (no integer variables, fewer than
    :data:`CHILD_PROCESS_SIZE` variables) unless ``child`` is asked: an LP needs no branch and bound that the user's
    request to stop would have to end, and none of SCIP's NLP heuristics. A crash in the child is retried once
    without the NLP heuristics (their Ipopt interface is where SCIP 10 corrupts its heap on some bilinear
    programmes)."""

    name = "scip"

    def start(self, f: Formulation, time_limit: float, child: bool = False) -> Job:
        if importlib.util.find_spec("pyscipopt") is None:
            raise SolverError("PySCIPOpt is not installed (pip install pyscipopt)")
        if child or not f.is_linear or f.integer.any() or f.n_vars >= CHILD_PROCESS_SIZE:
            return _ScipJob(f, time_limit)
        return _in_process(self.name, f, time_limit)

    def solve(self, f: Formulation, time_limit: float) -> SolverOutcome:
        return self.start(f, time_limit).result()


class _ScipJob(ChildJob):
    def __init__(self, f: Formulation, time_limit: float) -> None:
        super().__init__("scip", f, time_limit)
        self.formulation = f

    def result(self) -> SolverOutcome:
        raw = self.raw()
        left = self.time_limit - (time.perf_counter() - self.started)
        if raw["status"] == "crashed" and left > 1.0:
            retry = ChildJob("scip", self.formulation, left, no_nlp=True).raw()
            retry["note"] = f"{raw['note']}; re-run without SCIP's NLP heuristics" + (
                f": {retry['note']}" if "note" in retry else "")
            raw = retry
        return _outcome(raw, time.perf_counter() - self.started, self.solver)


class HighsBackend:
    """HiGHS (highspy, or scipy's bundled HiGHS when highspy is not installed), linear programmes only (the d0
    MILP); in a child process from :data:`CHILD_PROCESS_SIZE`
    variables on (large presolves can overrun the time limit, and the caller can work meanwhile) or when asked (side
    by side with another solver), in this process otherwise."""

    name = "highs"

    def start(self, f: Formulation, time_limit: float, child: bool = False) -> Job:
        """Start a solve; in a child process when ``child`` or when ``f`` is large."""
        if not f.is_linear:
            raise SolverError("HiGHS solves linear programmes only; the mixed objective has bilinear Bellman "
                              "constraints: use SCIP or Gurobi")
        if child or f.n_vars >= CHILD_PROCESS_SIZE:
            return ChildJob("highs", f, time_limit)
        return _in_process(self.name, f, time_limit)

    def solve(self, f: Formulation, time_limit: float) -> SolverOutcome:
        return self.start(f, time_limit).result()


def _in_process(solver: str, f: Formulation, time_limit: float) -> Job:
    """:mod:`worker` in this process: the finished solve."""
    t0 = time.perf_counter()
    raw = worker.solve(solver, pack(f, time_limit), in_process=True)
    return Job(_outcome(raw, time.perf_counter() - t0, solver))


BACKENDS = {"gurobi": GurobiBackend, "scip": ScipBackend, "highs": HighsBackend}


def available(name: str) -> bool:
    """Whether the back end's package is installed (HiGHS always is, through scipy)."""
    return name == "highs" or importlib.util.find_spec({"gurobi": "gurobipy", "scip": "pyscipopt"}[name]) is not None


def backend(name: str):
    """The back end called ``name`` (gurobi, scip, highs)."""
    try:
        return BACKENDS[name]()
    except KeyError:
        raise SolverError(f"unknown solver '{name}' (solvers: {', '.join(SOLVERS)})") from None


def chosen(solver: str, linear: bool) -> str:
    """The back end's name for the choice ``solver`` (:data:`SOLVERS`) on a linear programme or not: ``auto`` is
    HiGHS for a linear programme, Gurobi (when installed) else SCIP for a bilinear one."""
    if solver != "auto":
        return solver
    if linear:
        return "highs"
    return "gurobi" if available("gurobi") else "scip"


def solve(f: Formulation, solver: str = "auto", time_limit: float | None = None) -> SolverOutcome:
    """Solve the programme ``f`` with the solver chosen by name (:data:`SOLVERS`) within ``time_limit`` seconds
    (default: what is left of the active :class:`~stormcf.run.Run`). Raises :class:`SolverError` for an
    unknown or missing solver and :class:`LicenceLimitError` when ``f`` is too large for Gurobi's licence; a solve
    stopped by its time limit is ``suboptimal`` or ``timeout``, never ``optimal``."""
    limit = Run.current().budget() if time_limit is None else max(time_limit, 0.01)
    return backend(chosen(solver, f.is_linear)).solve(f, limit)
