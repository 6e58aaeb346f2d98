"""Oracle O8: Storm's optimum of the explicitly built enhanced (t, s, l) MDP equals the DP; Storm's value of the
returned policy (and of the baselines) on the DTMC it induces equals the exact policy evaluation."""
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf
from random_models import random_mdps
from stormcf.explain import (BASELINES, baseline_policy, counterfactual_mdp, enhanced_mdp, evaluate_policy,
                             explain_path, k_change_dp)

from .conftest import load_synthetic, problem, synthetic_path


def _storm_agrees(path, reward, K, minimize=False, **kw):
    cf = counterfactual_mdp(problem(path, reward, K, minimize=minimize, **kw))
    policy = k_change_dp(cf)
    for k in range(K + 1):
        enhanced = enhanced_mdp(cf, k)
        assert enhanced.model.labels["done"].sum() == 1
        assert enhanced.optimum().value == pytest.approx(policy.value(k), rel=1e-9, abs=1e-9)
        assert enhanced.policy_value(policy.weights).value == pytest.approx(policy.value(k), rel=1e-9, abs=1e-9)
    return policy


def test_o8_treat_and_adaptive(treat, adaptive):
    np.testing.assert_allclose([_storm_agrees(treat, "health", 3).value(k) for k in range(4)], [3, 3.6, 4.2, 4.2])
    np.testing.assert_allclose([_storm_agrees(adaptive, "r", 3).value(k) for k in range(4)],
                               [2, 368 / 81, 514 / 81, 574 / 81], rtol=1e-14)


def test_o8_minimize(treat, adaptive):
    """Rmin on the enhanced MDP equals the minimizing DP; on treat.prism the best for cost 's+1' is to keep coin."""
    policy = _storm_agrees(treat, "health", 3, minimize=True)
    assert [policy.value(k) for k in range(4)] == [3, 3, 3, 3]
    policy = _storm_agrees(adaptive, "r", 3, minimize=True)
    assert [policy.value(k) for k in range(4)] == [2, 0, 0, 0]     # a1 instead of a0 at t = 2 earns nothing
    assert str(policy.value(1)) == "0.0"


def test_enhanced_states(adaptive):
    """(t, s, l) states reachable within the budget, choices limited by the budget, rewards R(s, a)."""
    cf = counterfactual_mdp(problem(adaptive, "r", 1))
    e = enhanced_mdp(cf, 1).model
    t, l = e.valuations["t"], e.valuations["l"]
    assert e.initial_state == 0 and t[0] == 0 and l[0] == 0
    assert set(zip(t.tolist(), l.tolist())) <= {(tt, ll) for tt in range(3) for ll in range(2)} | {(3, -1)}
    for s in range(e.n_states - 1):                       # with l = k only the observed action remains
        if l[s] == 1:
            assert e.enabled_actions(s) == [adaptive.actions[t[s]]]


@settings(max_examples=15)
@given(random_mdps(max_states=4), st.integers(2, 4), st.integers(0, 10**6), st.booleans())
def test_o8_random_models(mdp, T, seed, minimize):
    with tempfile.TemporaryDirectory() as folder:
        model = stormcf.load_model(mdp.write(Path(folder)))
    path = stormcf.paths.simulate(model, stormcf.Strategy.uniform(model), T, seed)
    _storm_agrees(path, "r", 2, minimize)


def test_o8_reference_episode_mc(reference_instances, tmp_path):
    data = np.load(reference_instances / "tsirtsis_synth_alpha0.4_ps1_id0.npz")
    model = load_synthetic(tmp_path, data["P"].transpose(1, 0, 2), initial=int(data["s0"]))
    path = synthetic_path(model, data["states"], data["actions"])
    cf = counterfactual_mdp(problem(path, "r", 2, estimator="mc", samples=300))
    policy = k_change_dp(cf)
    assert enhanced_mdp(cf, 2).optimum().value == pytest.approx(policy.value(2), rel=1e-9)


def test_baselines_checked_by_storm(adaptive):
    cf = counterfactual_mdp(problem(adaptive, "r", 3))
    policy = k_change_dp(cf)
    for k in range(4):
        enhanced = enhanced_mdp(cf, k)
        for name in BASELINES:
            weights = baseline_policy(cf, name)
            value = evaluate_policy(cf, k, weights)[0, 0]
            assert enhanced.policy_value(weights).value == pytest.approx(value, rel=1e-9)
            assert value <= policy.value(k) + 1e-12
            if k == 0:
                assert value == 2.0
    # O7 by hand: greedy at t = 0 compares a0: 2 + 5/9·2 + 4/9·3 and a1: 0 + 1·2, so it changes to a0
    assert evaluate_policy(cf, 2, baseline_policy(cf, "greedy"))[0, 0] == pytest.approx(514 / 81)


def test_explain_path_reports_storm_numbers(adaptive):
    result = explain_path(problem(adaptive, "r", 2, k_max=3), explanations=200, cross_check=True, baselines=True)
    assert result.failures == []
    assert result.value == result.verification.value == pytest.approx(514 / 81)
    assert "Storm" in result.verification.method
    assert all(c["agrees"] for c in result.cross_check.values())
    assert set(result.baselines) == set(BASELINES) and all("storm" in b for b in result.baselines.values())
