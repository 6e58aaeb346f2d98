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


# ============================================================================================ verdicts on bounds
#: the deterministic loan strategy s0 Consult, s3 Consult, s4 Apply, s5 Submit: P(F "rejected") = 1/50 exactly, which
#: Storm's floating-point value iteration gives as 0.020000000000000004
ONE_IN_FIFTY = {"states": [{"state": {"s": 0}, "actions": {"Consult": 1}},
                           {"state": {"s": 3}, "actions": {"Consult": 1}},
                           {"state": {"s": 4}, "actions": {"Apply": 1}},
                           {"state": {"s": 5}, "actions": {"Submit": 1}}], "default": "error"}


@pytest.fixture(scope="module")
def one_in_fifty(loan):
    return Strategy.from_dict(loan, ONE_IN_FIFTY)


def test_decide_is_three_valued(loan):
    at_most = stormcf.parse_property(loan, 'P<=1/50 [F "rejected"]')
    below = stormcf.parse_property(loan, 'P<1/50 [F "rejected"]')
    assert at_most.decide(Fraction(1, 50)) is True and below.decide(Fraction(1, 50)) is False
    assert at_most.decide(0.02) is False                      # the float 0.02 is above 1/50, compared exactly
    assert at_most.decide(0.020000000000000004, 2e-12) is None and below.decide(0.02, 2e-12) is None
    assert at_most.decide(0.0199, 2e-12) is True and at_most.decide(0.0201, 2e-12) is False
    certain = stormcf.parse_property(loan, 'P>=1 [F "granted" | "rejected"]')
    assert certain.decide(1.0, 1e-10) is None and certain.decide(Fraction(1)) is True
    assert stormcf.parse_property(loan, 'P<=1 [F "rejected"]').decide(1.0, 1e-10) is True   # cut to [0, 1]
    steps = stormcf.parse_property(loan, 'R{"steps"}<=3 [F "granted"]')
    assert steps.decide(float("inf")) is False and steps.decide(float("nan")) is None


@pytest.mark.parametrize("bound, holds", [("P<=0.02", True), ("P<0.02", False), ("P>=1/50", True), ("P>0.02", False)])
def test_a_value_exactly_at_the_bound_is_decided_exactly(one_in_fifty, monkeypatch, bound, holds):
    """Storm's float value 0.020000000000000004 cannot decide P<=0.02: the check says undecided (without the
    re-check), is re-checked exactly on a small model, and is exact with exact=True."""
    prop = f'{bound} [F "rejected"]'
    exact = check_strategy(one_in_fifty, prop, exact=True)
    assert exact.exact == Fraction(1, 50) and exact.holds is holds and not exact.undecided
    settled = check_strategy(one_in_fifty, prop)
    assert settled.exact == Fraction(1, 50) and settled.holds is holds and "re-check" in settled.method
    monkeypatch.setattr(stormcf.verify, "EXACT_RECHECK_STATES", 0)
    undecided = check_strategy(one_in_fifty, prop)
    assert undecided.holds is None and undecided.exact is None and undecided.verdict == "undecided"
    assert "undecided at relative precision 1e-10" in undecided.undecided and "1/50" in undecided.undecided
    assert undecided.to_dict()["holds"] is None and undecided.to_dict()["undecided"] == undecided.undecided


def test_storm_decides_bounds_0_and_1_by_graph_analysis(tmp_path):
    """P>=1 [F goal] where the float value is 1 but goal is missed with probability 1e-20: Storm's qualitative
    answer (exact), not an undecided float."""
    path = tmp_path / "tiny.prism"
    path.write_text('dtmc\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> 1e-20 : (s\'=2) + (1-1e-20) : (s\'=1);\n'
                    '  [] s>0 -> true;\nendmodule\nlabel "goal" = s=1;\n')
    model = stormcf.load_model(path)
    check = stormcf.check_model(model, 'P>=1 [F "goal"]')
    assert check.value == pytest.approx(1.0, abs=1e-15) and check.holds is False
    assert stormcf.check_model(model, 'P<1 [F "goal"]').holds is True


def test_exact_checks_read_rewards_written_as_fractions_exactly(tmp_path):
    """A PRISM reward 1/3 (state) plus 1/7 (state-action) is 10/21 in the exact check of a strategy, as in Storm's
    exact check of the model (it was the decimals of the floats, 9523809523809523/2e16)."""
    path = tmp_path / "rewards.prism"
    path.write_text('mdp\nmodule m\n  s : [0..2] init 0;\n  [a] s=0 -> 1/2 : (s\'=1) + 1/2 : (s\'=2);\n'
                    '  [b] s=0 -> (s\'=2);\n  [] s>0 -> true;\nendmodule\nlabel "done" = s>0;\n'
                    'rewards "r"\n  s=0 : 1/3;\n  [a] true : 1/7;\nendrewards\n')
    model = stormcf.load_model(path)
    sigma = Strategy.from_dict(model, {"states": [{"state": {"s": 0}, "actions": {"a": 1}}]})
    assert check_strategy(sigma, 'R{"r"}=? [F "done"]', exact=True).exact == Fraction(10, 21)
    assert stormcf.check_model(model, 'R{"r"}max=? [F "done"]', exact=True).exact == Fraction(10, 21)
    assert check_strategy(sigma, 'R{"r"}<=10/21 [F "done"]').holds is True        # settled exactly
