"""From arrays to Storm (stormcf.storm.build): models rebuilt from arrays, exact values, interval MDPs."""
from fractions import Fraction

import numpy as np

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
