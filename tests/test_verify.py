"""Verification by Storm on the induced DTMC, against independent numpy/scipy and `fractions` computations."""
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

import stormcf
from stormcf import Strategy, check_strategy

from random_models import random_mdps


def test_loan_impatient_probability(impatient):
    v = check_strategy(impatient, 'P=? [F "rejected"]')
    assert v.value == pytest.approx(0.411, abs=1e-10)
    e = check_strategy(impatient, 'P=? [F "rejected"]', exact=True)
    assert e.exact == Fraction(411, 1000)


def test_loan_counterfactual_of_example_2(loan, impatient):
    """Fig. 1c: Rework plays Quit 0.14 / Submit 0.86; the paper reports 0.198 (exactly 0.1982)."""
    cf = impatient.replace_states(loan.label("Rework"),
                                  Strategy.from_dict(loan, {"states": [{"state": {"s": 5},
                                                                        "actions": {"Quit": 0.14, "Submit": 0.86}}]}))
    v = check_strategy(cf, 'P<=0.2 [F "rejected"]', exact=True)
    assert v.exact == Fraction(991, 5000) and v.holds is True


def test_bound_and_rewards(loan, impatient):
    v = check_strategy(impatient, 'P<=0.2 [F "rejected"]')
    assert v.holds is False and v.value == pytest.approx(0.411)
    steps = check_strategy(impatient, 'R{"steps"}=? [F "granted" | "rejected"]', exact=True)
    # s0 -> {Application 0.95, Error 0.05}; Application -> {Granted, Rework}; Rework -> Quit 0.7 / Submit 0.3 -> ...
    rework = Fraction(1) + Fraction(3, 10) * 1           # Rework, then (Submit) Resubmit
    application = 1 + Fraction(1, 2) * rework
    error = 1 + Fraction(1, 5) * 1                       # Error, then (Consult) Consultation, which quits
    assert steps.exact == 1 + Fraction(95, 100) * application + Fraction(5, 100) * error
    assert check_strategy(impatient, 'P=? [F<=2 "rejected"]', exact=True).exact == Fraction(5, 100) * Fraction(4, 5)


def test_uniform_strategy_agrees_with_storm_on_mdp_with_single_actions(loan):
    """On a DTMC (every state one choice) the induced DTMC is the model itself."""
    v = stormcf.check_model(loan, 'Pmin=? [F "rejected"]', exact=True)
    assert v.exact == Fraction(1, 50)


@given(random_mdps())
def test_storm_verification_equals_independent_solve(mdp):
    with tempfile.TemporaryDirectory() as tmp:
        model = stormcf.load_model(mdp.write(Path(tmp)))
    sigma = Strategy.from_dict(model, mdp.strategy_json())
    floating = check_strategy(sigma, 'P=? [F "goal"]')
    assert floating.value == pytest.approx(mdp.reach_probability(exact=False), abs=1e-9)
    exact = check_strategy(sigma, 'P=? [F "goal"]', exact=True)
    assert exact.exact == mdp.reach_probability(exact=True)
    assert check_strategy(sigma, 'P=? [F<=4 "goal"]', exact=True).exact == mdp.bounded_reach(4, exact=True)
    assert check_strategy(sigma, 'R{"r"}=? [C<=3]', exact=True).exact == mdp.cumulative_reward(3, exact=True)
    assert check_strategy(sigma, 'R{"r"}=? [C<=3]').value == pytest.approx(mdp.cumulative_reward(3, exact=False), abs=1e-9)


def test_induced_dtmc_is_stochastic(loan):
    P = stormcf.induced_dtmc(Strategy.random(loan, seed=1))
    assert P.shape == (loan.n_states, loan.n_states)
    np.testing.assert_allclose(P.sum(axis=1).A1, 1.0, atol=1e-12)


def test_state_formula_and_unsupported_property(loan, impatient):
    v = check_strategy(impatient, '"s0"')
    assert v.holds is True
    with pytest.raises(stormcf.PropertyError):
        check_strategy(impatient, 'R{"steps"}=? [I=-1]')
