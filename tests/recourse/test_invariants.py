"""Invariants of notes §6.3 on random small problems (hypothesis), Storm's least cost = the brute-force minimum on
the Python front, and determinism of the GA."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stormcf.recourse import (Action, BRKGASettings, Feature, Plans, RecourseProblem, RelationGraph, ValueDomain,
                              brkga, brute_force, decode, solve_recourse)
from stormcf.recourse.brkga import dominates, first_front
from stormcf.recourse.exact import achievable_set, inside, optimum, plan_mdp
from stormcf.recourse.objectives import simulate
from stormcf.solvers import available

from .oracles import numeric2


@st.composite
def problems(draw, graph: bool = True):
    """N <= 4 actions with <= 3 values each on 3 integer features, random efforts, conditions, relation graph and a
    linear classifier."""
    features = [Feature.numeric(name, 0, 6) for name in "xyz"]
    actions = []
    for a in range(draw(st.integers(2, 4))):
        main = draw(st.sampled_from("xyz"))
        values = sorted(set(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3))))
        scale = draw(st.integers(1, 3))
        side = draw(st.sampled_from(["", "x", "y", "z"]))
        relative = draw(st.booleans())
        guard = draw(st.sampled_from(["", "x", "y", "z"]))

        def effect(x, v, main=main, side=side, relative=relative):
            new = np.minimum(x[main] + v, 6) if relative else v
            out = {main: new}
            if side and side != main:
                out[side] = np.minimum(x[side] + 1, 6)
            return out

        def effort(x, y, v, main=main, scale=scale):
            return scale * (np.abs(y[main] - x[main]) + 1)

        pre = (lambda x, guard=guard: x[guard] < 4) if guard else None
        actions.append(Action(f"a{a}", ValueDomain.finite(values), effect, effort, pre=pre, feature=main))
    edges = {}
    if graph:
        for k, h in draw(st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from("xyz")), max_size=3,
                                  unique=True)):
            if k != h:
                level, low = draw(st.integers(1, 5)), draw(st.sampled_from([0.0, 0.25, 0.5, 0.75]))
                edges[(k, h)] = lambda x, k=k, level=level, low=low: np.where(x[k] >= level, low, 1.0)
    weights = [draw(st.integers(0, 2)) for _ in range(3)]
    bound = draw(st.integers(1, 10))
    return RecourseProblem(features, {"x": 0, "y": 1, "z": 0},
                           lambda X: (X @ np.array(weights, dtype=float) >= bound).astype(int), 1, actions,
                           RelationGraph(edges), objectives=draw(st.sampled_from(["cost,gower,freq", "cost,gower",
                                                                                  "cost"])))


@settings(max_examples=30)
@given(problems())
def test_ga_front_is_feasible_reproducible_and_not_beaten_by_brute_force(problem):
    bf = brute_force(problem)
    space = len(bf.plans)
    result = brkga(problem, BRKGASettings(n_offspring=max(40, space // 10), n_mutants=20, generations=30, seed=3))
    evaluation = result.population.evaluation
    F = evaluation.F[result.front]
    assert np.all(evaluation.feasible[result.front])
    again = problem.evaluate(result.population.plans.take(result.front))
    assert np.array_equal(again.F, F)
    for i, j in itertools.permutations(range(len(F)), 2):
        assert not dominates(F[i], F[j])
    assert len({tuple(f) for f in F}) == len(F)                        # objective dedupe: distinct vectors
    feasible = bf.evaluation.F[bf.evaluation.feasible]
    reference = {tuple(f) for f in feasible}
    assert all(tuple(f) in reference for f in F)
    if result.evaluations >= 10 * space:              # enough budget: no feasible plan beats a returned one
        assert not any(dominates(g, f) for g in feasible for f in F)


@settings(max_examples=30)
@given(problems())
def test_discount_is_a_fraction_and_never_raises_the_cost(problem):
    bf = brute_force(problem)
    simulation = simulate(problem, bf.plans, record=True)
    for _, _, out, _ in simulation.steps:
        assert np.all((out.discount >= 0) & (out.discount <= 1))
    assert np.all(simulation.evaluation.cost <= simulation.evaluation.effort + 1e-12)


@settings(max_examples=20)
@given(problems(graph=False))
def test_without_graph_cscf_is_scf_and_order_is_free_of_cost(problem):
    bf = brute_force(problem)
    evaluation = bf.evaluation
    assert np.array_equal(evaluation.cost, problem.variant(discounted=False).evaluate(bf.plans).cost)
    by_set: dict = {}
    for k in np.flatnonzero(evaluation.violations == 0):
        by_set.setdefault(frozenset(bf.plans.steps(k)), []).append(k)
    for ks in by_set.values():
        # valid permutations of actions on distinct features without side effects cost the same
        touched = [problem.actions[i].feature for i, _ in bf.plans.steps(ks[0])]
        if len(set(touched)) == len(touched) and all(_no_side_effects(problem, bf.plans, k) for k in ks):
            assert np.allclose(evaluation.cost[ks], evaluation.cost[ks[0]])


def _no_side_effects(problem, plans, k):
    simulation = simulate(problem, plans.take(np.array([k])), record=True)
    return all(out.changed[0].sum() == 1 for _, _, out, _ in simulation.steps)


@settings(max_examples=25)
@given(problems())
def test_storm_least_cost_equals_brute_force_minimum(problem):
    bf = brute_force(problem)
    feasible = bf.evaluation.feasible
    mdp = plan_mdp(problem)
    answer = optimum(mdp)
    if problem.accepts(problem.state0[None])[0]:
        return
    if not feasible.any():
        assert answer.value == np.inf
        return
    assert answer.value == pytest.approx(bf.evaluation.cost[feasible].min(), rel=1e-9, abs=1e-12)
    plan = problem.evaluate(Plans.from_steps([answer.plan], len(problem.actions)))
    assert plan.feasible[0] and plan.cost[0] == pytest.approx(answer.value, rel=1e-9, abs=1e-12)


@settings(max_examples=20)
@given(problems())
def test_no_plan_lies_beyond_storms_achievable_set(problem):
    """Storm's multi-objective over-approximation of the achievable (cost, Gower) set contains every feasible plan
    (brute force) and every plan of the GA's front; its cost-extreme point is the least cost."""
    bf = brute_force(problem)
    feasible = bf.evaluation.feasible
    if not feasible.any() or problem.accepts(problem.state0[None])[0]:
        return
    mdp = plan_mdp(problem)
    answer = achievable_set(mdp)
    points = np.column_stack([bf.evaluation.cost, bf.evaluation.gower])[feasible]
    assert inside(points, answer.over_approximation, 1e-6).all()
    assert answer.points[:, 0].min() == pytest.approx(optimum(mdp).value, abs=1e-6)
    result = solve_recourse(problem, BRKGASettings(n_offspring=40, n_mutants=20, generations=10), achievable=True)
    assert result.storm_front["front_inside"]


def test_storm_pareto_points_are_the_pure_front_on_o4():
    answer = achievable_set(plan_mdp(numeric2()))
    assert answer.points == pytest.approx(np.array([[6.3, 0.348925], [7.0, 0.254839]]), abs=1e-6)


def test_first_front_agrees_with_pairwise_dominance():
    rng = np.random.default_rng(0)
    for _ in range(50):
        F = rng.integers(0, 4, size=(rng.integers(1, 40), rng.integers(1, 5))).astype(float)
        expected = [not any(dominates(F[j], F[i]) for j in range(len(F))) for i in range(len(F))]
        assert first_front(F).tolist() == expected


def test_decoder_active_set_is_binomial():
    rng = np.random.default_rng(7)
    n_actions, n = 4, 200_000
    plans = decode(rng.random((n, 2 * n_actions)), [ValueDomain.fixed(0.0)] * n_actions)
    lengths = plans.lengths
    assert abs((lengths == 0).mean() - 0.5 ** n_actions) < 0.003
    assert abs(lengths.mean() - n_actions / 2) < 0.01
    assert np.all((plans.order[:, :-1] >= 0) | (plans.order[:, 1:] < 0))   # steps first, then -1


def test_ga_is_deterministic_for_a_seed():
    problem = numeric2()
    settings_ = BRKGASettings(n_offspring=100, n_mutants=30, generations=20, seed=11)
    a, b = brkga(problem, settings_), brkga(problem, settings_)
    assert np.array_equal(a.population.genotypes, b.population.genotypes)
    assert np.array_equal(a.front, b.front) and a.evaluations == b.evaluations
    c = brkga(problem, BRKGASettings(n_offspring=100, n_mutants=30, generations=20, seed=12))
    assert not np.array_equal(a.population.genotypes[:5], c.population.genotypes[:5])


def test_ga_draws_only_from_the_stable_uniform_stream():
    """The initial population is Generator(PCG64(seed)).random((1 + offspring + mutants, 2N)), whose doubles numpy
    keeps stable across versions (the first ones are pinned here)."""
    initial = np.random.default_rng(1).random((16, 8))
    assert initial[0, :3].tolist() == [0.5118216247002567, 0.9504636963259353, 0.14415961271963373]
    population = brkga(numeric2(), BRKGASettings(n_offspring=10, n_mutants=5, generations=1, seed=1)).population
    rows = [int(np.flatnonzero((initial == g).all(axis=1))[0]) for g in population.genotypes]
    assert rows == sorted(rows) and len(rows) >= 1


def test_solve_reports_storm_optimum_and_gap_on_finite_problem():
    result = solve_recourse(numeric2(), BRKGASettings(n_offspring=60, n_mutants=20, generations=10, seed=1))
    assert result.optimal_cost == pytest.approx(6.3)
    assert result.front[0].cost == pytest.approx(6.3)
    assert result.gap == pytest.approx(result.ga_cost - 6.3)
    assert result.status == ("optimal" if result.gap < 1e-9 else "suboptimal")
    assert all(c.agrees is not False for c in result.checks)
    document = result.to_dict()
    assert document["command"] == "recourse" and document["optimal_cost"] == pytest.approx(6.3)
    assert {"actions", "values", "cost", "effort", "gower", "freq", "states"} <= set(document["front"][0])


def test_infeasible_problem_is_proven_by_storm():
    problem = numeric2().variant(classifier=lambda X: np.zeros(len(X), dtype=int))
    result = solve_recourse(problem, BRKGASettings(n_offspring=30, n_mutants=10, generations=5))
    assert result.status == "infeasible" and result.front == []


def inside_the_hull(point: np.ndarray, vertices: np.ndarray, tolerance: float) -> bool:
    """Brute force in two dimensions: ``point`` lies in conv(vertices) + R²₊ iff a point of a segment between two
    vertices (or a vertex) is <= point + tolerance (moving down from a point of the hull, one meets its boundary)."""
    for a, b in itertools.combinations_with_replacement(vertices, 2):
        low, high = 0.0, 1.0                        # λ with λ·a + (1 − λ)·b <= point + tolerance
        for slope, room in zip(a - b, point + tolerance - b):
            if slope > 0:
                high = min(high, room / slope)
            elif slope < 0:
                low = max(low, room / slope)
            elif room < 0:
                high = -1.0
        if low <= high:
            return True
    return False


@pytest.mark.parametrize("solver", [
    pytest.param(name, marks=pytest.mark.skipif(not available(name), reason=f"{name} is not installed"))
    for name in ("highs", "scip", "gurobi")])
@pytest.mark.parametrize("seed", range(3))
def test_the_achievable_set_test_on_every_solver_is_brute_force(solver, seed):
    """``--solver`` of ``--storm-front``: each installed solver's feasibility LPs say what the segments say."""
    rng = np.random.default_rng(seed)
    vertices, points = rng.random((5, 2)), rng.random((40, 2)) * 1.4 - 0.2
    expected = [inside_the_hull(p, vertices, 1e-9) for p in points]
    assert any(expected) and not all(expected)
    assert inside(points, vertices, 1e-9, solver).tolist() == expected
