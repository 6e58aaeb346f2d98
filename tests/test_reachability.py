"""Reachability through Storm against brute force over deterministic strategies, and graph analyses."""
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

import stormcf

from random_models import random_mdps


def _brute_force(model: stormcf.ExplicitModel, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min/max over all memoryless deterministic strategies of P(F target), by numpy linear solves."""
    n = model.n_states
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    for rows in itertools.product(*[model.choices(s) for s in range(n)]):
        P = model.transitions[list(rows)].toarray()
        can = target.copy()
        while True:
            new = can | (P[:, can].sum(axis=1) > 0)
            if (new == can).all():
                break
            can = new
        x = target.astype(float)
        maybe = can & ~target
        if maybe.any():
            A = np.eye(maybe.sum()) - P[np.ix_(maybe, maybe)]
            x[maybe] = np.linalg.solve(A, P[np.ix_(maybe, target)].sum(axis=1))
        lo, hi = np.minimum(lo, x), np.maximum(hi, x)
    return lo, hi


@settings(max_examples=25)
@given(random_mdps(max_states=6))
def test_pmin_pmax_equal_brute_force(mdp):
    with tempfile.TemporaryDirectory() as tmp:
        model = stormcf.load_model(mdp.write(Path(tmp)))
    goal = model.label("goal")
    lo, hi = _brute_force(model, goal)
    np.testing.assert_allclose(stormcf.reach_probability(model, "goal", "min"), lo, atol=1e-9)
    np.testing.assert_allclose(stormcf.reach_probability(model, goal, "max"), hi, atol=1e-9)
    for direction, values in (("min", lo), ("max", hi)):
        zero, one = stormcf.prob01_states(model, "goal", direction)
        np.testing.assert_array_equal(zero, values < 1e-12)
        np.testing.assert_array_equal(one, values > 1 - 1e-12)
    np.testing.assert_array_equal(stormcf.can_reach(model, goal), hi > 1e-12)
    for direction, values in (("min", lo), ("max", hi)):
        best, strategy = stormcf.optimal_strategy(model, f'P{direction}=? [F "goal"]')
        assert strategy.is_deterministic
        np.testing.assert_allclose(best, values, atol=1e-9)
        v = stormcf.check_strategy(strategy, 'P=? [F "goal"]')
        assert v.value == pytest.approx(values[model.initial_state], abs=1e-9)


def test_reachable_states_on_arrays():
    # state 2 is not reachable from state 0
    P = np.array([[0.5, 0.5, 0], [0, 1, 0], [1, 0, 0]])
    m = stormcf.ExplicitModel(P, [0, 1, 2, 3], [0, 0, 0], [""], {"t": np.array([0, 1, 0], bool)}, {}, {}, 0,
                              model_type="dtmc")
    np.testing.assert_array_equal(stormcf.reachable_states(m), [True, True, False])
    np.testing.assert_array_equal(stormcf.can_reach(m, "t"), [True, True, True])
    np.testing.assert_allclose(stormcf.reach_probability(m, "t", "max"), [1, 1, 1])


def test_loan_optimum(loan):
    v = stormcf.reach_probability(loan, "rejected", "min")
    assert v[loan.initial_state] == pytest.approx(0.02, abs=1e-10)
    assert stormcf.reach_probability(loan, "rejected", "max")[loan.initial_state] == pytest.approx(1.0)


def test_bad_targets(loan):
    with pytest.raises(stormcf.PropertyError):
        stormcf.reach_probability(loan, "nope")
    with pytest.raises(stormcf.PropertyError, match="direction"):
        stormcf.reach_probability(loan, "rejected", "maximal")
    with pytest.raises(stormcf.PropertyError, match="shape"):
        stormcf.reach_probability(loan, np.zeros(3, bool))
    with pytest.raises(stormcf.PropertyError, match="no memoryless scheduler"):
        stormcf.optimal_strategy(loan, 'Pmax=? [F<=3 "rejected"]')


def test_target_equal_to_an_expression_label():
    m = stormcf.load_model(stormcf.example_path("loan.prism"))
    target = stormcf.parse_property(m, "Pmax=? [F s=8]").target
    assert stormcf.reach_probability(m, target, "min")[m.initial_state] == pytest.approx(0.02)
    zero, one = stormcf.prob01_states(m, target, "max")
    assert zero.sum() == 1
