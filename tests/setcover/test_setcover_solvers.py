"""Set cover's programmes on every installed solver (``--solver``): the covering MILP and its LP relaxation against
brute force and the LP's vertices, the ``milp`` engine's canonical set against brute force, and Gurobi's licence."""
import json
import math

import numpy as np
import pytest

from stormcf.setcover import SetCoverInstance, SetCoverProblem, lp_bound, run_engine
from stormcf.setcover.engines import covering_programme
from stormcf.solvers import available, solve

from solvers.oracles import vertex_optimum

SOLVERS = [pytest.param(name, marks=pytest.mark.skipif(not available(name), reason=f"{name} is not installed"))
           for name in ("highs", "scip", "gurobi")]


def tiny(seed: int, top: int = 1) -> SetCoverProblem:
    """4 features, 6 actions with random effects (1..top on 40% of the features) and integer costs 0..5 (ties),
    one agent (thresholds 1..top)."""
    rng = np.random.default_rng(seed)
    thresholds = rng.integers(1, top + 1, 4)
    effects = rng.integers(1, top + 1, (6, 4)) * (rng.random((6, 4)) < 0.4)
    instance = SetCoverInstance.from_arrays(thresholds, effects, rng.integers(0, 6, 6).astype(float))
    return SetCoverProblem(instance, rng.integers(0, top + 1, 4) * (rng.random(4) < 0.3))


#: 0/1 instances with a unique optimum (seeds 0, 1), a tie (2), no cover (4); multicover with repeats (0, 5) and
#: without a cover (3)
CASES = [tiny(seed) for seed in (0, 1, 2, 4)] + [tiny(seed, top=3) for seed in (0, 3, 5)]


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_covering_milp_and_its_lp_bound_on_every_solver(solver):
    """The MILP's optimum is brute force's; the LP bound is the relaxation's vertex optimum, below the optimum."""
    for problem in CASES:
        if problem.positive:
            continue
        truth = run_engine(problem, "bruteforce").value
        out = solve(covering_programme(problem), solver, 30.0)
        assert out.backend == solver
        if math.isinf(truth):
            assert out.status == "infeasible"
        else:
            assert out.optimal and out.objective == pytest.approx(truth, abs=1e-6)
        bound = lp_bound(problem, solver)
        assert bound == pytest.approx(vertex_optimum(covering_programme(problem).relaxation()), abs=1e-6)
        assert bound <= truth + 1e-6


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_milp_engine_on_every_solver_is_brute_force(solver):
    """The canonical optimum among tied ones (fewest actions, then least indices), and repeats (multicover)."""
    for problem in (CASES[2], CASES[6]):
        truth = run_engine(problem, "bruteforce")
        answer = run_engine(problem, "milp", solver)
        assert (answer.actions, answer.unique) == (truth.actions, truth.unique)
        assert answer.value == pytest.approx(truth.value, rel=1e-9)


def test_the_lp_bound_of_a_multicover_instance_allows_repeats():
    """Threshold 3 met by one action of effect 1 taken three times: the LP bound is 3, not infinite (the relaxation
    keeps each action's repeat bound, not 1)."""
    instance = SetCoverInstance.from_arrays([3], [[1], [3]], [1.0, 5.0])
    problem = SetCoverProblem(instance, [0])
    assert run_engine(problem, "bruteforce").value == 3.0 and lp_bound(problem) == pytest.approx(3.0)


@pytest.mark.skipif(not available("gurobi"), reason="gurobipy is not installed")
def test_an_instance_beyond_the_gurobi_licence_is_one_line_and_exit_2(tmp_path, cli):
    """2,100 actions: the covering MILP has more variables than the pip licence of Gurobi allows."""
    rng = np.random.default_rng(0)
    instance = SetCoverInstance.from_arrays([1, 1, 1], rng.integers(0, 2, (2100, 3)), rng.uniform(1, 2, 2100))
    path = tmp_path / "large.json"
    path.write_text(json.dumps(instance.to_dict()))
    code, out, err = cli("setcover", path, "--agent", "0,0,0", "--method", "milp", "--solver", "gurobi")
    if code == 0:
        pytest.skip("the installed Gurobi licence is not size-limited")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "too large for the installed size-limited Gurobi licence" in err and "2100 variables" in err
