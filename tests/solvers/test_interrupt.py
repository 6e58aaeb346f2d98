"""The solver layer and the user's request to stop: Gurobi (in this process) ends its solve when the request comes
(its callback), and its own Ctrl-C handling turns into the request; child processes (SCIP, HiGHS) are stopped."""
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from stormcf import interrupt
from stormcf.solvers import FormulationBuilder, available, backend


def market_split(m: int = 5, seed: int = 3):
    """A market split instance (Cornuéjols & Dawande): Σ_j a_ij x_j + s_i⁺ − s_i⁻ = ⌊Σ_j a_ij / 2⌋ with x binary, min
    Σ (s⁺ + s⁻). Tiny (10(m − 1) binaries), within Gurobi's size-limited licence, and notoriously hard for
    branch and bound: every solver works on it for a long time."""
    rng = np.random.default_rng(seed)
    n = 10 * (m - 1)
    a = rng.integers(0, 100, size=(m, n))
    b = FormulationBuilder()
    x = b.variables(n, integer=True)
    slack = b.variables(2 * m, ub=np.inf)
    rows = sp.hstack([sp.csr_matrix(a), sp.eye(m), -sp.eye(m)]).tocsr()
    target = np.floor(a.sum(axis=1) / 2)
    b.rows(rows, np.concatenate([x, slack]), lhs=target, rhs=target)
    return b.build(np.concatenate([np.zeros(n), np.ones(2 * m)]))


@pytest.mark.parametrize("solver", ["gurobi", "scip", "highs"])
def test_a_request_to_stop_ends_the_solve_with_the_best_solution_so_far(solver):
    if not available(solver):
        pytest.skip(f"{solver} is not installed")
    formulation = market_split()
    timer = threading.Timer(1.5, interrupt.request)
    timer.start()
    start = time.perf_counter()
    try:
        job = backend(solver).start(formulation, 120.0, child=True)
        out = job.result()
    finally:
        timer.cancel()
        interrupt.clear()
    assert time.perf_counter() - start < 30        # not the 120 s limit (the instance takes minutes to prove)
    assert out.status in ("suboptimal", "timeout")
    if out.x is not None:
        assert np.allclose(formulation.A @ out.x, formulation.rhs, atol=1e-6)


GUROBI_CTRL_C = """
import os, signal, sys, threading
sys.path.insert(0, {folder!r})
from test_interrupt import market_split
from stormcf import interrupt
from stormcf.solvers import backend
threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
out = backend("gurobi").solve(market_split(), 120.0)
print(out.status, interrupt.requested())
"""


def test_gurobis_own_ctrl_c_handling_becomes_the_users_request():
    """Gurobi catches SIGINT itself while it solves (in this process): the solve ends, and stormcf learns of it as
    the user's request to stop (before, the run went on and ended "suboptimal" with no word of the Ctrl-C)."""
    import subprocess
    import sys
    from pathlib import Path
    if not available("gurobi"):
        pytest.skip("gurobipy is not installed")
    script = GUROBI_CTRL_C.format(folder=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["suboptimal", "True"]          # (Gurobi also says "Interrupt request")


def test_highs_stopped_past_its_time_limit_keeps_the_bound_it_reported():
    """HiGHS checks its time limit only between rounds of root cuts (25 s apart on the 10^5-state d0 MILP), so the
    parent must sometimes stop it: the last bound the child reported (worker._report_bounds) is kept."""
    from stormcf.solvers.backends import ChildJob

    f = market_split()
    job = ChildJob("highs", f, 60.0)
    try:
        while not job._progress.exists():
            assert not job.done(), "HiGHS ended on a market split instance"
            time.sleep(0.02)
        job.started -= 3600.0                           # as if its time limit had passed long ago
        out = job.result()
    finally:
        job.cancel()
    assert out.status == "timeout" and out.x is None
    assert out.bound is not None and 0.0 <= out.bound <= f.lhs.sum()       # x = 0 has the objective Σ target
    assert "the bound" in out.note and "is kept" in out.note


def test_highs_reports_bounds_between_the_relaxation_and_its_final_bound(tmp_path):
    """The reported bounds of a d0 MILP (process model, 2,000 states) lie between its LP relaxation and the bound
    HiGHS ends with: each is a proven lower bound."""
    import stormcf
    from stormcf.counterfactual import CounterfactualProblem
    from stormcf.counterfactual.preanalysis import preanalyse
    from stormcf.counterfactual.programs import d0_program
    from stormcf.solvers import worker
    from stormcf.solvers.backends import pack

    from process_models import process_mdp

    pytest.importorskip("highspy")
    model = process_mdp(2000, seed=3)
    enc = preanalyse(CounterfactualProblem(stormcf.Strategy.random(model, 0), 'P<=0.4 [F "negative"]')).encoding
    f = d0_program(enc, 0.4).formulation
    relaxed = backend("highs").solve(f.relaxation(), 60)
    progress = tmp_path / "bound.txt"
    out = worker.solve("highs", pack(f, 60), progress=str(progress))
    reported = float(progress.read_text())
    assert out["status"] == "optimal"
    assert relaxed.bound - 1e-6 <= reported <= out["bound"] + 1e-6 <= out["objective"] + 2e-6


def test_the_ctrl_c_after_the_one_gurobi_caught_quits(tmp_path):
    """Gurobi catches SIGINT itself while it solves (here the MIQCQP of frozenlake4, which runs to its time limit):
    that Ctrl-C is the user's first (said on stderr; the solve ends with the best strategy so far), and the next one
    is the second, which quits with 130 and no output file. Before, Python's handler counted the next one as the
    first, and the command exited 0 with its file. A command that had ended before the second Ctrl-C was sent may
    exit 0 (its file then predates the signal)."""
    import signal
    import subprocess
    import sys

    import stormcf
    if not available("gurobi"):
        pytest.skip("gurobipy is not installed")
    uniform, out = tmp_path / "uniform.json", tmp_path / "cf.json"
    uniform.write_text('{"states": [], "default": "uniform"}')
    proc = subprocess.Popen([sys.executable, "-m", "stormcf", "strategy", str(stormcf.example_path("frozenlake4.prism")),
                             "-s", str(uniform), "-p", 'P<=0.5 [F "hole"]', "--solver", "gurobi", "-w", "0,0,1", "-v",
                             "--time-limit", "120", "--json", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    next(line for line in proc.stderr if "Optimize a model" in line)         # Gurobi's log (-v: stderr): it solves
    proc.send_signal(signal.SIGINT)
    assert any("stopping at the next safe point" in line for line in proc.stderr)
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    if proc.returncode == 0:
        assert out.stat().st_ctime <= sent
    else:
        assert proc.returncode == 130 and stderr.endswith("stormcf: interrupted\n") and not out.exists(), stderr
