"""The one backward induction on every kind of counterfactual MDP: interval rows with a budget of changes (robust
k-change policies, which neither paper computes), both optimization directions and both natures, against Storm's
optimum of the unrolled (t, s, l) interval model and the exact evaluation of the returned policy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf
from icfmdp.helpers import random_mdps
from stormcf.counterfactual_mdp import evaluate, optimal_policy, unroll
from stormcf.icfmdp import interval_cfmdp


def _close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


@given(random_mdps(max_states=4, max_actions=3, max_steps=4), st.integers(0, 2),
       st.sampled_from(["max", "min"]), st.sampled_from(["pessimistic", "optimistic"]))
@settings(max_examples=25)
def test_budgeted_interval_policies_equal_storm(case, budget, optimization, nature):
    model, path = case
    ic = interval_cfmdp(path)
    rewards = model.step_rewards("r")
    policy = optimal_policy(ic, rewards, "r", optimization, nature, budget=budget)
    unrolled = unroll(ic, rewards, budget)
    for k in range(budget + 1):
        value = policy.value(k)
        assert _close(evaluate(ic, rewards, policy.weight_function(), k, optimization, nature), value)
    check = unrolled.optimum(optimization, nature, expected=policy.value(budget))
    assert check.agrees, (check.value, check.expected)
    assert unrolled.policy_value(policy.weight_function(), optimization, nature,
                                 expected=policy.value(budget)).agrees


def test_unbudgeted_policy_ignores_the_budget_argument():
    from stormcf.icfmdp import mdp_from_arrays, path_from_arrays
    P = np.zeros((2, 2, 2))
    P[:, 0] = [[0.5, 0.5], [0.5, 0.5]]
    P[:, 1] = [[1.0, 0.0], [0.0, 1.0]]
    model = mdp_from_arrays(P, np.array([[0.0, 1.0], [2.0, 0.0]]))
    path = path_from_arrays(model, [0, 1], [0, 0], [1, 0])
    ic = interval_cfmdp(path)
    policy = optimal_policy(ic, model.step_rewards("r"), "r")
    assert policy.budget is None and policy.value() == policy.value(5)
    with pytest.raises(stormcf.OptionError):
        optimal_policy(ic, model.step_rewards("r"), "r", budget=-1)
