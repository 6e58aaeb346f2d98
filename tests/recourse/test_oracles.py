"""The seed-002 notes' oracles §6.2 (O1-O5, O7), by brute force over ordered subsets, and the decoder (O3)."""
import numpy as np
import pytest

from stormcf.recourse import BRKGASettings, Plans, brkga, brute_force, decode
from stormcf.recourse.brkga import survival, Population
from stormcf.recourse.bruteforce import count_plans
from stormcf.recourse.problem import ValueDomain

from .oracles import capital, figure2, numeric2

CHJOB, GETBSC, MOVEUS = 0, 1, 2


def names(problem, plans, k):
    return [problem.action_names[i] for i, _ in plans.steps(k)]


def evaluate_orders(problem, orders):
    plans = Plans.from_steps([[(i, problem.actions[i].domain.values[0]) for i in order] for order in orders],
                             len(problem.actions))
    return problem.evaluate(plans)


# ------------------------------------------------------------------------------------------------ O1
def test_o1_discounted_costs_of_all_six_orders():
    problem = figure2()
    orders = [(1, 2, 0), (1, 0, 2), (2, 1, 0), (0, 1, 2), (2, 0, 1), (0, 2, 1)]
    evaluation = evaluate_orders(problem, orders)
    assert evaluation.cost.tolist() == [22.5, 25.0, 25.0, 27.5, 27.5, 30.0]
    assert evaluation.effort.tolist() == [30.0] * 6
    assert np.all(evaluation.feasible)
    assert np.allclose(evaluation.gower, 1.0)
    assert np.array_equal(evaluation.freq, np.ones((6, 3)))


def test_o1_worked_example_discount_of_job_after_moving():
    """ĝ_1(x_1) = avg(τ_31 = 0.5, τ_21 = 1.0) = 0.75 in S1 = <a3, a1, a2> (paper §3.2)."""
    problem = figure2()
    evaluation = evaluate_orders(problem, [(MOVEUS,), (MOVEUS, CHJOB)])
    assert evaluation.cost[1] - evaluation.cost[0] == pytest.approx(10 * 0.75)


def test_o1_brute_force_pareto_set():
    bf = brute_force(figure2())
    assert len(bf.plans) == 15 and bf.n_feasible == 6
    assert [names(figure2(), bf.plans, k) for k in bf.front] == [["getBSc", "moveUS", "chJob"]]
    assert bf.evaluation.F[bf.front[0]].tolist() == [22.5, 1.0, 1.0, 1.0, 1.0]


def test_o1_undiscounted_all_orders_tie_and_dedupe_rules():
    problem = figure2(discounted=False)
    bf = brute_force(problem)
    assert len(bf.front) == 6
    assert np.all(bf.evaluation.F[bf.front] == [30.0, 1.0, 1.0, 1.0, 1.0])
    population = Population(np.zeros((6, 6)), bf.plans.take(bf.front), bf.evaluation.take(bf.front),
                            np.zeros(6, dtype=bool))
    assert len(survival(population, "objectives").elite) == 1
    assert survival(population, "phenotype").elite.sum() == 6


def test_o1_ga_with_phenotype_dedupe_finds_all_six_orders():
    problem = figure2(discounted=False)
    result = brkga(problem, BRKGASettings(n_offspring=200, n_mutants=50, generations=40, dedupe="phenotype"))
    orders = {tuple(names(problem, result.population.plans, k)) for k in result.front}
    assert len(orders) == 6


# ------------------------------------------------------------------------------------------------ O2
def test_o2_supporting_action_only_when_it_pays():
    problem = figure2(need_location=False)
    bf = brute_force(problem)
    assert bf.n_feasible == 8
    assert [names(problem, bf.plans, k) for k in bf.front] == [["getBSc", "chJob"]]
    assert bf.evaluation.F[bf.front[0]] == pytest.approx([10.0, 2 / 3, 1, 1, 0])


def test_o2_cheap_move_joins_the_front():
    problem = figure2(need_location=False, move_effort=1.0)
    bf = brute_force(problem)
    front = {tuple(names(problem, bf.plans, k)): bf.evaluation.F[k].tolist() for k in bf.front}
    assert front == {("getBSc", "moveUS", "chJob"): [8.5, 1.0, 1, 1, 1],
                     ("getBSc", "chJob"): pytest.approx([10.0, 2 / 3, 1, 1, 0])}
    costs = {tuple(names(problem, bf.plans, k)): bf.evaluation.cost[k] for k in np.flatnonzero(bf.evaluation.feasible)}
    assert costs[("getBSc", "chJob", "moveUS")] == costs[("moveUS", "getBSc", "chJob")] == 11
    assert costs[("chJob", "getBSc")] == 12.5
    assert costs[("chJob", "getBSc", "moveUS")] == costs[("moveUS", "chJob", "getBSc")] == 13.5
    assert costs[("chJob", "moveUS", "getBSc")] == 16


# ------------------------------------------------------------------------------------------------ O4
def test_o4_numeric_side_effects_two_edges():
    problem = numeric2()
    assert count_plans(problem) == 3541
    bf = brute_force(problem)
    assert len(bf.plans) == 3541 and bf.n_feasible == 848
    front = sorted((tuple(names(problem, bf.plans, k)), tuple(v for _, v in bf.plans.steps(k)),
                    round(float(bf.evaluation.cost[k]), 9), round(float(bf.evaluation.gower[k]), 6),
                    tuple(bf.evaluation.freq[k])) for k in bf.front)
    assert front == [(("addEdu",), (4.0,), 9.0, 0.282258, (1, 1, 0)),
                     (("addEdu", "increaseHours"), (3.0, 50.0), 7.0, 0.254839, (1, 1, 1)),
                     (("increaseHours", "addEdu"), (50.0, 3.0), 7.0, 0.254839, (1, 1, 1)),
                     (("reduceHours", "addEdu", "increaseHours"), (20.0, 4.0, 30.0), 6.3, 0.348925, (1, 1, 2))]


def test_o4_undiscounted_front_drops_the_supporting_plan():
    problem = numeric2(discounted=False)
    bf = brute_force(problem)
    assert sorted(round(float(bf.evaluation.cost[k]), 9) for k in bf.front) == [7.0, 7.0, 9.0]
    plan = Plans.from_steps([[(1, 20.0), (0, 4.0), (2, 30.0)]], 4)
    assert problem.evaluate(plan).cost[0] == pytest.approx(11.0)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_o4_ga_with_reference_parameters_recovers_the_front(seed):
    problem = numeric2()
    result = brkga(problem, BRKGASettings(seed=seed))
    found = {tuple(np.round(f, 6)) for f in result.population.evaluation.F[result.front]}
    bf = brute_force(problem)
    assert found == {tuple(np.round(f, 6)) for f in bf.evaluation.F[bf.front]}


# ------------------------------------------------------------------------------------------------ O5
def test_o5_preconditions_and_mutual_exclusion():
    problem = capital()
    bf = brute_force(problem)
    assert len(bf.plans) == 158 and bf.n_feasible == 21
    front = {tuple(names(problem, bf.plans, k)): bf.evaluation.F[k] for k in bf.front}
    assert set(front) == {("incCapGain",), ("addEdu",)}
    assert front[("incCapGain",)] == pytest.approx([1.375, 1 / 15, 1, 0, 0])
    assert front[("addEdu",)] == pytest.approx([4.0, 4 / 45, 0, 0, 1])
    orders = Plans.from_steps([[(2, 12.0), (0, 10000.0)], [(0, 10000.0), (2, 12.0)], [(1, 1000.0), (0, 20000.0)]], 3)
    evaluation = problem.evaluate(orders)
    assert evaluation.cost[:2] == pytest.approx([2.625, 2.6875])
    assert evaluation.feasible.tolist() == [True, True, False]
    assert evaluation.violations[2] == 1


# ------------------------------------------------------------------------------------------------ O7
def test_o7_gower_values():
    assert numeric2().evaluate(Plans.from_steps([[(0, 4.0)]], 4)).gower[0] == pytest.approx(0.2822581, abs=1e-7)
    assert figure2(False).evaluate(Plans.from_steps([[(1, 1.0), (0, 1.0)]], 3)).gower[0] == pytest.approx(2 / 3)


def test_o7_numeric_feature_of_range_zero_contributes_nothing():
    problem = numeric2().variant(gower_ranges={"age": 0.0})
    assert problem.evaluate(Plans.from_steps([[(0, 4.0)]], 4)).gower[0] == pytest.approx((0 + 3 / 4 + 0) / 3)


# ------------------------------------------------------------------------------------------------ O3
def test_o3_decoder_figure3():
    domains = [ValueDomain.interval(10, 40), ValueDomain.finite([1, 2, 3, 4]), ValueDomain.interval(0, 50)]
    plans = decode(np.array([[0.70, 0.45, 0.02, 0.12, 0.80, 0.68]]), domains)
    assert plans.order[0].tolist() == [2, 1, -1]
    assert plans.steps(0) == [(2, pytest.approx(34.0)), (1, 4.0)]
    assert plans.values[0, 0] == pytest.approx(10 + 0.12 * 30)


def test_o3_threshold_ties_and_empty():
    domains = [ValueDomain.fixed(0.0)] * 3
    assert decode(np.array([[0.5, 0.5000001, 0.1, 0, 0, 0]]), domains).order[0].tolist() == [2, 0, -1]
    assert decode(np.array([[0.6, 0.7, 0.9, 0, 0, 0]]), domains).order[0].tolist() == [-1, -1, -1]
    assert decode(np.array([[0.3, 0.3, 0.3, 0, 0, 0]]), domains).order[0].tolist() == [0, 1, 2]


def test_o3_categorical_value_gene_clamped_at_one():
    domain = ValueDomain.finite([7, 8, 9])
    assert domain.decode(np.array([0.0, 0.33, 0.34, 0.999, 1.0])).tolist() == [7, 7, 8, 9, 9]


def test_empty_plan_is_infeasible_with_the_authors_objectives():
    problem = figure2()
    evaluation = problem.evaluate(decode(np.array([[0.9, 0.9, 0.9, 0.1, 0.1, 0.1]]), problem.domains))
    assert not evaluation.feasible[0]
    assert evaluation.F[0].tolist() == [np.inf, 1.0, np.inf, np.inf, np.inf]
