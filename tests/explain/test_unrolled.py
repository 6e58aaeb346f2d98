"""Oracle O8: Storm's optimum of the explicitly built unrolled (t, s, l) MDP equals the DP; Storm's value of the
returned policy (and of the baselines) on the DTMC it induces equals the exact policy evaluation."""
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf
from random_models import random_mdps
from stormcf.explain import BASELINES, baseline_policy, counterfactual_mdp, explain_path, k_change_dp, unrolled_model

from .conftest import exact_value, load_synthetic, problem, storm_optimum, storm_policy_value, synthetic_path


def _storm_agrees(path, reward, K, minimize=False, **kw):
    prob = problem(path, reward, K, minimize=minimize, **kw)
    cf = counterfactual_mdp(prob)
    policy = k_change_dp(prob, cf)
    for k in range(K + 1):
        unrolled = unrolled_model(prob, cf, k)
        assert unrolled.point_model.n_states == unrolled.n_states and unrolled.index[-1].shape[1] == k + 1
        assert storm_optimum(prob, cf, k) == pytest.approx(policy.value(k), rel=1e-9, abs=1e-9)
        assert storm_policy_value(prob, cf, k, policy.weight_function()) == pytest.approx(policy.value(k), rel=1e-9,
                                                                                          abs=1e-9)
    return policy


def test_o8_treat_and_adaptive(treat, adaptive):
    np.testing.assert_allclose([_storm_agrees(treat, "health", 3).value(k) for k in range(4)], [3, 3.6, 4.2, 4.2])
    np.testing.assert_allclose([_storm_agrees(adaptive, "r", 3).value(k) for k in range(4)],
                               [2, 368 / 81, 514 / 81, 574 / 81], rtol=1e-14)


def test_o8_minimize(treat, adaptive):
    """Rmin on the unrolled MDP equals the minimizing DP; on treat.prism the best for cost 's+1' is to keep coin."""
    policy = _storm_agrees(treat, "health", 3, minimize=True)
    assert [policy.value(k) for k in range(4)] == [3, 3, 3, 3]
    policy = _storm_agrees(adaptive, "r", 3, minimize=True)
    assert [policy.value(k) for k in range(4)] == [2, 0, 0, 0]     # a1 instead of a0 at t = 2 earns nothing
    assert str(policy.value(1)) == "0.0"


def test_unrolled_states(adaptive):
    """(t, s, l) states reachable within the budget, choices limited by the budget, rewards R(s, a)."""
    prob = problem(adaptive, "r", 1)
    e = unrolled_model(prob, counterfactual_mdp(prob), 1).point_model
    t, l = e.valuations["t"], e.valuations["l"]
    assert e.initial_state == 0 and t[0] == 0 and l[0] == 0
    assert set(zip(t.tolist(), l.tolist())) <= {(tt, ll) for tt in range(4) for ll in range(2)}
    for s in range(e.n_states):                           # with l = k only the observed action remains
        if l[s] == 1 and t[s] < 3:
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
    prob = problem(path, "r", 2, estimator="mc", samples=300)
    cf = counterfactual_mdp(prob)
    policy = k_change_dp(prob, cf)
    assert storm_optimum(prob, cf, 2) == pytest.approx(policy.value(2), rel=1e-9)


def test_baselines_checked_by_storm(adaptive):
    prob = problem(adaptive, "r", 3)
    cf = counterfactual_mdp(prob)
    policy = k_change_dp(prob, cf)
    for k in range(4):
        for name in BASELINES:
            weights = baseline_policy(prob, cf, name)
            value = exact_value(prob, cf, k, weights)
            assert storm_policy_value(prob, cf, k, weights) == pytest.approx(value, rel=1e-9)
            assert value <= policy.value(k) + 1e-12
            if k == 0:
                assert value == 2.0
    # O7 by hand: greedy at t = 0 compares a0: 2 + 5/9·2 + 4/9·3 and a1: 0 + 1·2, so it changes to a0
    assert exact_value(prob, cf, 2, baseline_policy(prob, cf, "greedy")) == pytest.approx(514 / 81)


def test_explain_path_reports_storm_numbers(adaptive):
    result = explain_path(problem(adaptive, "r", 2, k_max=3), explanations=200, cross_check=True, baselines=True)
    assert result.value == result.check("policy").value == pytest.approx(514 / 81)
    assert "Storm" in result.check("policy").method
    assert all(c.agrees for c in result.checks)
    assert {c.name for c in result.checks} == {"policy", "optimum_k0", "optimum_k1", "optimum_k2", "optimum_k3"} | \
        {f"baseline_{name}" for name in BASELINES}
    assert set(result.baselines) == set(BASELINES)
    assert all(result.baselines[name] == result.check(f"baseline_{name}").value for name in BASELINES)
