"""Allowed actions: pins, forbidden actions, actions not enabled in counterfactual states, forced moves (deadlocks),
infeasible budgets, and the validation of the problem."""
import numpy as np
import pytest
import scipy.sparse as sp

import stormcf
from stormcf.explain import (ExplanationError, ExplanationProblem, explain_path, k_change_dp, parse_pins, summarize,
                             unrolled_model)

from .conftest import problem, sample, storm_optimum


def _values(path, reward, K, **kw):
    prob = problem(path, reward, K, **kw)
    policy = k_change_dp(prob)
    return [policy.value(k) for k in range(K + 1)], policy, prob


def test_pin_to_the_observed_action(treat):
    """Pinning step 1 to coin removes the tie of O6 (k = 1): the change moves to t = 0 with the same value 3.6."""
    values, policy, _ = _values(treat, "health", 3, pins={1: "coin"})
    np.testing.assert_allclose(values, [3, 3.6, 3.6, 3.6], rtol=1e-14)
    summary = summarize(sample(policy, 1, 500, seed=0))
    assert [e.actions for e in summary.explanations] == [("drug", "coin", "coin")]


def test_pin_to_another_action_forces_a_change(treat):
    values, policy, prob = _values(treat, "health", 2, pins={1: "drug"})
    assert values[0] == -np.inf and values[1] == pytest.approx(3.6) and values[2] == pytest.approx(4.2)
    assert storm_optimum(prob, policy.cfmdp, 1) == pytest.approx(3.6)
    with pytest.raises(ExplanationError, match="smallest feasible budget is k = 1"):
        explain_path(problem(treat, "health", 0, k_max=2, pins={1: "drug"}))
    with pytest.raises(ExplanationError, match="at most k = 0 changes"):
        explain_path(problem(treat, "health", 0, pins={-2: "drug"}))


def test_negative_pins_count_from_the_end(treat):
    assert problem(treat, "health", 1, pins={-1: "coin"}).pins == {2: "coin"}
    assert parse_pins(["0:STR", " -1 : END"]) == {0: "STR", -1: "END"}
    for bad in ("x:coin", "1", "1:"):
        with pytest.raises(ExplanationError, match="bad pin"):
            parse_pins([bad])
    with pytest.raises(ExplanationError, match="pinned to both"):
        problem(treat, "health", 1, pins={2: "coin", -1: "drug"})
    with pytest.raises(ExplanationError, match="steps 0..2"):
        problem(treat, "health", 1, pins={3: "coin"})
    with pytest.raises(ExplanationError, match="not an action"):
        problem(treat, "health", 1, pins={0: "pill"})


def test_forbidden_actions(treat):
    assert _values(treat, "health", 2, forbidden={"drug"})[0] == [3, 3, 3]
    # forbidding the observed action only forbids changing to it: keeping it stays allowed
    np.testing.assert_allclose(_values(treat, "health", 2, forbidden={"coin"})[0], [3, 3.6, 4.2])
    with pytest.raises(ExplanationError, match="forbidden action 'pill'"):
        problem(treat, "health", 1, forbidden={"pill"})


def test_deadlock_moves_are_forced_and_free():
    """deadlock.prism: the Storm-added self-loop of the deadlock s=2 is its only choice, so it is forced and never
    a change: after 'go' at t = 0 (one change) the path can sit in s=2 with no budget left."""
    model = stormcf.load_model(stormcf.example_path("deadlock.prism"))
    path = stormcf.ObservedPath.from_dict(model, {"steps": [{"state": {"s": 0}, "action": "stay"}] * 3})
    values, policy, prob = _values(path, "r", 2)
    assert values == [3, 4, 4]                          # 'go' at the last step: 1 + 1 + 2 (s=2 earns nothing)
    deadlock = int(model.state_index({"s": 2}))
    step = policy.cfmdp.steps[1]
    assert policy.values[1][step.local(np.array([deadlock]))[0], 0] == 0.0      # (t=1, s=2, no budget): feasible
    e = unrolled_model(prob, policy.cfmdp, 1).point_model
    assert any(e.valuations["t"][i] == 1 and e.valuations["state"][i] == deadlock and e.valuations["l"][i] == 1
               for i in range(e.n_states))
    # the observed path may itself play the deadlock loop; leaving s=2 at t = 0 makes t = 1 need another change
    stuck = stormcf.ObservedPath.from_dict(model, {"steps": [{"state": {"s": 0}, "action": "go"},
                                                             {"state": {"s": 2}, "action": ""}]})
    assert _values(stuck, "r", 2)[0] == [2, 2, 3]


def test_observed_action_not_enabled_needs_budget():
    """Observed (0,go), (2,""), (2,"") with the last step pinned to 'stay': the deadlock has no 'stay', so the path
    must leave s=2 for good: 'stay' at t = 0 (a change), then in s=0 the observed "" is not enabled (a change), and
    the pinned 'stay' differs from "" (a change): only k = 3 is feasible."""
    model = stormcf.load_model(stormcf.example_path("deadlock.prism"))
    path = stormcf.ObservedPath.from_dict(model, {"steps": [{"state": {"s": 0}, "action": "go"},
                                                            {"state": {"s": 2}, "action": ""},
                                                            {"state": {"s": 2}, "action": ""}]})
    values, policy, prob = _values(path, "r", 3, pins={2: "stay"})
    assert values == [-np.inf, -np.inf, -np.inf, 3]
    assert storm_optimum(prob, policy.cfmdp, 3) == 3
    with pytest.raises(ExplanationError, match="smallest feasible budget is k = 3"):
        explain_path(problem(path, "r", 1, k_max=3, pins={2: "stay"}))


def test_problem_validation(treat, adaptive):
    with pytest.raises(ExplanationError, match="k must be >= 0"):
        problem(treat, "health", -1)
    with pytest.raises(ExplanationError, match="k_max"):
        problem(treat, "health", 2, k_max=1)
    with pytest.raises(ExplanationError, match="estimator"):
        problem(treat, "health", 1, estimator="quadrature")
    with pytest.raises(ExplanationError, match="at least 1 sample"):
        problem(treat, "health", 1, estimator="mc", samples=0)
    with pytest.raises(stormcf.PropertyError, match="unknown reward model"):
        problem(treat, "wealth", 1)
    with pytest.raises(ExplanationError, match="sampled explanations"):
        explain_path(problem(treat, "health", 1), explanations=-1)


def test_transition_rewards_are_rejected():
    P = sp.csr_matrix(np.array([[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]))
    model = stormcf.ExplicitModel(P, [0, 2, 3], [0, 1, 0], ["a", "b"], {}, {"s": np.array([0, 1])},
                                  {"tr": stormcf.RewardModel("tr", transition=[1.0, 2.0, 0.0, 1.0, 3.0])}, 0)
    path = stormcf.ObservedPath(model, np.array([0, 1]), np.array([0, 2]))
    with pytest.raises(stormcf.PropertyError, match="transition rewards"):
        ExplanationProblem(path, "tr", k=1)
