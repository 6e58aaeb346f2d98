"""The parametric bridge (stormcf.storm.parametric): which constants are parameters, the transition functions'
shape and where a box changes the graph, Storm's values, solution functions and region bounds at valuations (the
bounds contain the true extremes on a grid, parameter lifting and robust lifting), and Storm's worker process that
gives up on a crawling call and answers the next one."""
from fractions import Fraction
from pathlib import Path

import pytest

import stormcf
from stormcf.errors import ParameterError, PropertyError
from stormcf.storm import load_parametric, stormpy_example
from stormcf.storm.parametric import EXACT_LIFTING, LIFTING, ROBUST_LIFTING, exact_text

DATA = Path(__file__).resolve().parents[1] / "data" / "repair"
DIE = stormcf.example_path("die.pm")


def test_parameters_are_the_undefined_doubles_the_bounds_depend_on():
    brp = load_parametric(stormpy_example("pdtmc", "brp16_2.pm"), "TOMsg=0")
    assert brp.undefined == ("pL", "pK", "TOAck")
    build = brp.build(["P<=0.01 [F s=5]"])
    assert build.parameters == ("pL", "pK") and build.model_type == "dtmc"
    assert build.not_multiaffine() is None and build.not_polynomial() is None
    with pytest.raises(ParameterError, match="no parameters"):
        load_parametric(stormcf.example_path("loan.prism"))


def test_a_parametric_reward_is_refused():
    model = load_parametric(stormpy_example("pdtmc", "brp_rewards16_2.pm"))
    with pytest.raises(ParameterError, match="repair changes transition probabilities only"):
        model.build(['R<=10 [F "target"]'])


def test_the_shape_of_the_transition_functions():
    herman = load_parametric(stormpy_example("pdtmc", "herman5.pm")).build(['P>=0.5 [F "stable"]'])
    assert herman.not_multiaffine() is not None and herman.not_polynomial() is None
    die = load_parametric(DIE).build(['P>=0.1 [F "one"]'])
    one, half = Fraction(1), Fraction(1, 2)
    assert die.graph_change({"p": Fraction(1, 1000), "q": half}, {"p": Fraction(999, 1000), "q": half}) is None
    assert "(p) vanishes at p=0" in die.graph_change({"p": Fraction(0), "q": half}, {"p": half, "q": half})
    assert "vanishes at p=1" in die.graph_change({"p": half, "q": half}, {"p": one, "q": half})


def test_values_and_the_solution_function_agree_exactly():
    build = load_parametric(DIE).build(['P>=0.1 [F "two"]'])
    point = {"p": Fraction(2, 5), "q": Fraction(1, 3)}
    try:
        exact = build.values(point, exact=True)[0]
        floating = build.values(point)[0]
    finally:
        build.close()
    solution = build.solution_function(0, point)
    p, q = point["p"], point["q"]
    assert exact == solution.value == p * p * (1 - q) / (1 - p * q)              # P(two) of the two-coin die
    assert abs(floating - exact) <= 1e-9 * exact
    assert solution.gradient["p"] == (2 * p * (1 - q) * (1 - p * q) + p * p * (1 - q) * q) / (1 - p * q) ** 2


@pytest.mark.parametrize("engine", [LIFTING, EXACT_LIFTING, ROBUST_LIFTING])
def test_region_bounds_contain_the_extremes_over_the_box(engine):
    build = load_parametric(DIE).build(['P>=0.1 [F "two"]'])
    lo, hi = {"p": Fraction(3, 10), "q": Fraction(2, 5)}, {"p": Fraction(1, 2), "q": Fraction(3, 5)}
    checker = build.region_checker(0, engine)
    try:
        low, high = checker.extremum(lo, hi, "min"), checker.extremum(lo, hi, "max")
    finally:
        build.close()
    f = lambda p, q: p * p * (1 - q) / (1 - p * q)                                 # noqa: E731
    grid = [f(lo["p"] + (hi["p"] - lo["p"]) * i / 10, lo["q"] + (hi["q"] - lo["q"]) * j / 10)
            for i in range(11) for j in range(11)]
    assert low <= min(grid) and high >= max(grid)
    assert high - low <= 2 * (max(grid) - min(grid))                                # and they are not vacuous
    assert checker.proves is (engine != ROBUST_LIFTING)


def test_robust_lifting_bounds_a_function_that_is_not_monotone():
    """herman's p^5-style functions: the extremes over a box are not at its vertices; robust lifting's bounds still
    contain the values of Storm's solution function on a grid of the box."""
    build = load_parametric(stormpy_example("pdtmc", "herman5.pm")).build(['R{"steps"}<=2.5 [F "stable"]'])
    lo, hi = Fraction(3, 10), Fraction(7, 10)
    checker = build.region_checker(0, ROBUST_LIFTING)
    try:
        low, high = checker.extremum({"p": lo}, {"p": hi}, "min"), checker.extremum({"p": lo}, {"p": hi}, "max")
        values = [build.values({"p": lo + (hi - lo) * k / 20})[0] for k in range(21)]
    finally:
        build.close()
    assert low <= min(values) and high >= max(values)


def test_the_worker_gives_up_on_a_crawling_call_and_answers_the_next():
    """Robust lifting of herman's expected steps over a box reaching p = 0.001 crawls for minutes: the call answers
    None after its seconds, and the next call (a new worker process) answers."""
    build = load_parametric(stormpy_example("pdtmc", "herman5.pm")).build(['R{"steps"}<=2.5 [F "stable"]'])
    checker = build.region_checker(0, ROBUST_LIFTING)
    try:
        assert checker.extremum({"p": Fraction(1, 1000)}, {"p": Fraction(999, 1000)}, "max", seconds=0.5) is None
        assert checker.extremum({"p": Fraction(2, 5)}, {"p": Fraction(1, 2)}, "max", seconds=30) > 0
    finally:
        build.close()


def test_an_unsupported_bound_is_one_line():
    model = load_parametric(DIE)
    with pytest.raises(PropertyError, match="needs a bound"):
        model.build(['P=? [F "one"]'])


def test_exact_values_are_written_as_storm_reads_them():
    assert [exact_text(Fraction(x)) for x in ("3/8", "1/3", "-5/2", "7", "1/1000")] == \
        ["0.375", "1/3", "-2.5", "7", "0.001"]
