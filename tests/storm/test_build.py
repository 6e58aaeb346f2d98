"""From arrays to Storm (stormcf.storm.build): models rebuilt from arrays, exact values, interval MDPs."""
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import stormcf
from stormcf import storm


def test_exact_transition_values_are_rational(loan):
    values = storm.exact_transition_values(loan)
    assert len(values) == loan.n_transitions
    assert Fraction(19, 20) in values and Fraction(1, 20) in values
    np.testing.assert_allclose([float(v) for v in values], loan.transitions.data, rtol=0, atol=1e-15)


def test_model_rebuilt_from_arrays_gives_same_values(loan):
    derived = stormcf.ExplicitModel(loan.transitions, loan.row_groups, loan.choice_actions, loan.action_names,
                                    loan.labels, loan.valuations, loan.rewards, loan.initial_state)
    a = stormcf.reach_probability(loan, "rejected", "min")
    b = stormcf.reach_probability(derived, "rejected", "min")
    np.testing.assert_allclose(a, b, atol=1e-12)


def _random_interval_mdp(seed: int, states: int = 30, actions: int = 3):
    rng = np.random.default_rng(seed)
    rows = states * actions
    dense = rng.random((rows, states)) * (rng.random((rows, states)) < 0.2)
    dense[np.arange(rows), rng.integers(0, states, rows)] += 0.1               # every row has a successor
    dense /= dense.sum(axis=1, keepdims=True)
    P = sp.csr_matrix(dense)
    lower, upper = P.copy(), P.copy()
    lower.data = np.maximum(P.data - rng.random(P.nnz) * 0.1, P.data / 2)        # graph-preserving
    upper.data = np.minimum(P.data + rng.random(P.nnz) * 0.1, 1.0)
    return lower, upper, np.arange(0, rows + 1, actions), rng.random(rows), {"goal": rng.random(states) < 0.2}


def _entries(imdp):
    return [(r, e.column, e.value.lower(), e.value.upper()) for r in range(imdp.nr_choices)
            for e in imdp.transition_matrix.get_row(r)]


@pytest.mark.parametrize("seed", range(5))
def test_interval_mdp_in_bulk_equals_the_per_interval_builder(seed):
    lower, upper, row_groups, reward, labels = _random_interval_mdp(seed)
    bulk = storm.interval_mdp(lower, upper, row_groups, {"r": reward}, labels, 2)
    slow = storm.interval_mdp(lower, upper, row_groups, {"r": reward}, labels, 2, construction="builder")
    assert _entries(bulk) == _entries(slow)
    assert list(bulk.initial_states) == list(slow.initial_states) == [2]
    assert set(bulk.labeling.get_states("goal")) == set(slow.labeling.get_states("goal"))
    for formula in ('R{"r"}max=? [C<=7]', 'R{"r"}min=? [C<=7]', 'Pmax=? [F<=4 "goal"]', 'Pmin=? [F "goal"]'):
        for nature in ("ROBUST", "COOPERATIVE"):
            np.testing.assert_array_equal(storm.check_interval_mdp(bulk, formula, nature),
                                          storm.check_interval_mdp(slow, formula, nature))


def test_interval_mdp_needs_equal_sparsity():
    lower, upper, row_groups, reward, labels = _random_interval_mdp(0)
    upper = upper.tolil()
    upper[0, np.flatnonzero(lower[0].toarray() == 0)[0]] = 0.5
    with pytest.raises(stormcf.StormcfError, match="same sparsity"):
        storm.interval_mdp(lower, sp.csr_matrix(upper), row_groups, {"r": reward}, labels, 0)


@pytest.mark.parametrize("seed", range(3))
def test_dtmc_in_bulk_equals_the_matrix_builder(seed):
    """The DTMC written to Storm as a UMB archive (what check_strategy uses) gives Storm's values of the same DTMC
    built entry by entry through stormpy's matrix builder (state and state-action rewards, labels)."""
    rng = np.random.default_rng(seed)
    n = 40
    dense = rng.random((n, n)) * (rng.random((n, n)) < 0.15)
    dense[np.arange(n), rng.integers(0, n, n)] += 0.1
    P = sp.csr_matrix(dense / dense.sum(axis=1, keepdims=True))
    goal = rng.random(n) < 0.1
    state, choice = rng.random(n), rng.random(n)
    built = stormcf.ExplicitModel(P, np.arange(n + 1), np.zeros(n, dtype=np.int64), ("",), {"goal": goal}, {},
                                  {"r": stormcf.RewardModel("r", state=state, choice=choice)}, 0, model_type="dtmc")
    for text in ('P=? [F "goal"]', 'R{"r"}=? [C<=7]', 'P=? [F<=5 "goal"]', 'R{"r"}=? [F "goal"]'):
        prop = stormcf.parse_property(built, text)
        bulk = storm.check_dtmc(P, built, prop, {"r": state}, {"r": choice})
        builder = storm.check(built, prop)                     # the DTMC through stormpy's SparseMatrixBuilder
        np.testing.assert_allclose(bulk.values, builder.values, rtol=1e-12, atol=1e-12, err_msg=text)


def test_load_timings_name_storm_and_stormcf_phases(loan):
    timings = storm.load_timings(loan)
    cpu = storm.load_timings(loan, cpu=True)
    assert set(timings) == set(cpu) == {"parse", "build", "extract"}
    assert all(t >= 0 for t in [*timings.values(), *cpu.values()])
    derived = stormcf.ExplicitModel(loan.transitions, loan.row_groups, loan.choice_actions, loan.action_names,
                                    loan.labels, loan.valuations, loan.rewards, loan.initial_state)
    assert storm.load_timings(derived) == {}
