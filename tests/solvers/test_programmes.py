"""Every kind of programme (LP, MILP, MIQCQP) on every installed solver through the one entry point
``stormcf.solvers.solve``: the optimum of an independent oracle (vertices, enumeration of the integer points), honest
status words (a solve stopped by its time limit is never ``optimal``; infeasible and unbounded programmes are named
so) and Gurobi's size-limited licence as one typed error."""
import numpy as np
import pytest
import scipy.sparse as sp

from stormcf.errors import SolverError, TimeLimitReached
from stormcf.solvers import FormulationBuilder, LicenceLimitError, QuadraticRow, available, chosen, solve

from .oracles import enumerated_optimum, feasible
from .test_interrupt import market_split

SOLVERS = [pytest.param(name, marks=pytest.mark.skipif(not available(name), reason=f"{name} is not installed"))
           for name in ("highs", "scip", "gurobi")]


def random_programme(seed: int, kind: str):
    """Three variables x (integer in [0, u] for a MILP or MIQCQP) and y in [0, 2]: three random <= rows and a
    covering row, a random linear objective; the MIQCQP adds binaries z with Σ w_i z_i y >= r."""
    rng = np.random.default_rng(seed)
    fb = FormulationBuilder()
    x = fb.variables(3, ub=rng.integers(1, 4, 3).astype(float), integer=kind != "lp")
    y = fb.variables(1, ub=2.0)
    xy = np.concatenate([x, y])
    fb.rows(sp.csr_matrix(rng.integers(-3, 4, (3, 4)).astype(float)), xy, rhs=rng.integers(2, 8, 3).astype(float))
    fb.rows(sp.csr_matrix(np.ones((1, 4))), xy, lhs=rng.uniform(2.0, 5.0))
    c = np.round(rng.normal(size=4), 2)
    if kind == "miqcqp":
        z = fb.variables(2, integer=True)
        w = rng.uniform(1.0, 2.0, 2)
        fb.quadratic(QuadraticRow(np.zeros(0, dtype=np.int64), np.zeros(0), z, np.repeat(y, 2), w, 1.2, np.inf))
        c = np.concatenate([c, rng.uniform(0.5, 1.5, 2)])
    return fb.build(c, offset=0.5)


@pytest.mark.parametrize("kind", ["lp", "milp", "miqcqp"])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("solver", SOLVERS)
def test_each_solver_finds_the_oracles_optimum(solver, seed, kind):
    f = random_programme(seed, kind)
    if solver == "highs" and kind == "miqcqp":
        with pytest.raises(SolverError, match="linear programmes only"):
            solve(f, solver, 30.0)
        return
    truth = enumerated_optimum(f)
    out = solve(f, solver, 30.0)
    assert out.backend == solver
    if not np.isfinite(truth):
        assert out.status == "infeasible" and out.x is None and not out.optimal
        return
    assert out.status == "optimal" and out.optimal
    assert out.objective == pytest.approx(truth, abs=1e-6) and f.objective_value(out.x) == pytest.approx(truth, abs=1e-6)
    assert feasible(f, out.x, 1e-6) and np.allclose(out.x[f.integer], np.round(out.x[f.integer]), atol=1e-6)
    assert out.bound <= out.objective + 1e-6 and out.gap <= 1e-4


def test_the_random_programmes_are_feasible_and_infeasible_both():
    """The oracle test above sees both outcomes."""
    optima = [enumerated_optimum(random_programme(seed, kind)) for seed in range(5) for kind in ("lp", "milp")]
    assert any(np.isfinite(optima)) and not all(np.isfinite(optima))


@pytest.mark.parametrize("solver", SOLVERS)
def test_an_unbounded_lp_is_named_unbounded(solver):
    fb = FormulationBuilder()
    x = fb.variables(2, ub=np.inf)
    fb.rows(sp.csr_matrix(np.ones((1, 2))), x, lhs=1.0)
    out = solve(fb.build(-np.ones(2)), solver, 30.0)
    assert out.status == "unbounded" and out.x is None and out.bound is None


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_solve_stopped_by_its_time_limit_is_not_optimal(solver):
    """Market split (minutes to prove on every solver) with half a second: a solution or none, never a proof; the
    analyses' ``proven`` turns it into the time limit's error."""
    out = solve(market_split(), solver, 0.5)
    assert out.status in ("suboptimal", "timeout") and not out.optimal
    if out.status == "suboptimal":
        assert out.bound is None or out.bound < out.objective
    with pytest.raises(TimeLimitReached, match=f"{solver} reached its time limit before it solved the market split"):
        out.proven("the market split")


def test_auto_is_highs_for_linear_programmes_and_a_miqcqp_solver_else():
    assert chosen("auto", linear=True) == "highs" and chosen("scip", linear=True) == "scip"
    assert chosen("auto", linear=False) == ("gurobi" if available("gurobi") else "scip")
    assert solve(random_programme(0, "milp"), time_limit=30.0).backend == "highs"
    with pytest.raises(SolverError, match="unknown solver 'cplex' \\(solvers: auto, highs, scip, gurobi\\)"):
        solve(random_programme(0, "lp"), "cplex")


def licence_sized_lp(n: int = 2500):
    """An LP beyond the pip licence of Gurobi (2,000 variables): min Σ x, x_i >= 1."""
    fb = FormulationBuilder()
    x = fb.variables(n, ub=2.0)
    fb.rows(sp.identity(n, format="csr"), x, lhs=1.0)
    return fb.build(np.ones(n))


@pytest.mark.skipif(not available("gurobi"), reason="gurobipy is not installed")
def test_a_programme_beyond_the_gurobi_licence_is_one_typed_error():
    try:
        out = solve(licence_sized_lp(), "gurobi", 30.0)
    except LicenceLimitError as err:
        message = str(err)
        assert "2500 variables" in message and "too large for the installed size-limited Gurobi licence" in message
        assert "\n" not in message and isinstance(err, SolverError)
        return
    assert out.optimal                      # a full licence: the instance is solved
    pytest.skip("the installed Gurobi licence is not size-limited")


@pytest.mark.parametrize("kind", ["lp", "milp"])
def test_scipys_highs_answers_as_highspy_does(kind):
    """Without highspy (a core install) HiGHS runs through scipy: the same status words and optima."""
    pytest.importorskip("highspy")
    from stormcf.solvers import pack
    from stormcf.solvers.worker import _highs, _scipy_milp
    for seed in range(5):
        data = pack(random_programme(seed, kind), time_limit=30.0)
        ours, theirs = _scipy_milp(data), _highs(data)
        assert ours["status"] == theirs["status"] in ("optimal", "infeasible")
        if ours["status"] == "optimal":
            assert ours["objective"] == pytest.approx(theirs["objective"], abs=1e-6)
    unbounded = FormulationBuilder()
    x = unbounded.variables(1, ub=np.inf, integer=kind == "milp")
    unbounded.rows(sp.csr_matrix(np.ones((1, 1))), x, lhs=1.0)
    answer = _scipy_milp(pack(unbounded.build(-np.ones(1)), 30.0))
    if kind == "lp":
        assert answer["status"] == "unbounded"
    else:                                   # HiGHS's MIP solver: "infeasible or unbounded", no proof either way
        assert answer["status"] == "failed" and "unbounded" in answer["note"]
