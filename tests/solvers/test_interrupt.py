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
    x = b.variables(n, binary=True)
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
