"""Robust / optimistic value iteration against Storm's robust model checking, LPs, and the Gumbel-max baseline."""
import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf
from stormcf.counterfactual_mdp import (build_cfmdp, gumbel_cfmdp, interval_expectation, sample_cfmdp, sample_paths)
from stormcf.icfmdp import (evaluate_policies, interval_cfmdp, policy_changes, policy_value, robust_value_iteration,
                            storm_value)
from stormcf.modes import Minimize, Optimistic

from helpers import random_mdps, reference_model


def _close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("name", ["lally_gridworld_0.9_repo_suboptimal.npz", "lally_gridworld_0.4_sampled_seed0.npz",
                                  "lally_frozen_lake_repo_suboptimal.npz", "lally_aircraft_sampled_seed0.npz"])
def test_storm_robust_model_checking_agrees(reference_instances, name):
    """stormcf's vectorised robust/optimistic VI = Storm's robust/cooperative interval-MDP checking of R[C<=T] on
    the time-unrolled model, for the optimum and for the fixed policies."""
    _, model, path = reference_model(reference_instances, name)
    ic = interval_cfmdp(path)
    robust, optimistic = robust_value_iteration(ic), robust_value_iteration(ic, nature=Optimistic)
    assert _close(storm_value(ic).value, robust.value())
    assert _close(storm_value(ic, policy=robust).value, robust.value())
    assert _close(storm_value(ic, nature=Optimistic).value, optimistic.value())
    assert _close(storm_value(ic, policy=optimistic, nature=Optimistic).value, optimistic.value())
    g = gumbel_cfmdp(path, layers=ic.layers)
    gp = robust_value_iteration(g)
    assert _close(storm_value(g, policy=gp).value, gp.value()) and _close(storm_value(g).value, gp.value())
    assert _close(storm_value(ic, policy=gp).value, policy_value(gp, ic))


@given(random_mdps(max_states=5, max_actions=3, max_steps=4))
@settings(max_examples=15)
def test_storm_agrees_on_random_models(case):
    _, path = case
    for assumptions in ("cs+m", "none"):
        ic = interval_cfmdp(path, assumptions)
        for optimization in ("max", "min"):
            for nature in ("pessimistic", "optimistic"):
                policy = robust_value_iteration(ic, optimization=optimization, nature=nature)
                assert _close(storm_value(ic, optimization=optimization, nature=nature).value, policy.value())
                assert _close(storm_value(ic, policy=policy, nature=nature).value, policy.value())


@given(st.integers(1, 6), st.integers(0, 10_000))
def test_interval_expectation_is_the_lp_optimum(m, seed):
    """The greedy inner problem (sort successors by value, fill from the lower bounds) = the LP over the
    interval polytope, both directions."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(m))
    lo = p * rng.uniform(0, 1, m)
    hi = np.minimum(1, p + rng.uniform(0, 0.5, m))
    v = rng.normal(size=m) * 10
    model = stormcf.icfmdp.mdp_from_arrays(np.vstack([p, np.eye(m)[1:]]).reshape(m, 1, m) if m > 1
                                           else np.ones((1, 1, 1)))
    path = stormcf.icfmdp.path_from_arrays(model, [0], [0], [int(np.argmax(p))])
    P = model.transitions
    bounds = lambda t, rows, entries, row, k: (lo[P.indices[entries]], hi[P.indices[entries]])      # noqa: E731
    step = build_cfmdp(path, bounds, "interval", "test", layers="all").steps[0]
    for pessimistic, sign in ((True, 1), (False, -1)):
        got = interval_expectation(step, v, pessimistic)[0]
        lp = scipy.optimize.linprog(sign * v, A_eq=np.ones((1, m)), b_eq=[1], bounds=list(zip(lo, hi)), method="highs")
        assert abs(got - sign * lp.fun) <= 1e-9 * max(1, abs(got))


@given(random_mdps(max_states=5, max_actions=3, max_steps=4))
@settings(max_examples=20)
def test_gumbel_max_lies_between_robust_and_optimistic_under_cs(case):
    """The exact Gumbel-max CFMDP is entailed by the CS-only ICFMDP, so for the Gumbel-max policy π:
    worst_cs(π) <= E_gumbel(π) <= best_cs(π), and robust_cs <= optimum_gumbel <= optimistic_cs."""
    _, path = case
    ic = interval_cfmdp(path, "cs")
    gp = robust_value_iteration(gumbel_cfmdp(path, layers=ic.layers))
    assert policy_value(gp, ic) <= gp.value() + 1e-9 <= policy_value(gp, ic, Optimistic) + 2e-9
    assert robust_value_iteration(ic).value() <= gp.value() + 1e-9 <= \
        robust_value_iteration(ic, nature=Optimistic).value() + 2e-9


@given(random_mdps(max_states=5, max_actions=3, max_steps=4), st.integers(0, 1000))
@settings(max_examples=20)
def test_sampled_cfmdps_are_entailed_and_bounded_by_the_robust_value(case, seed):
    _, path = case
    ic = interval_cfmdp(path)
    robust = robust_value_iteration(ic)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        cf = sample_cfmdp(ic, rng)
        for sampled, interval in zip(cf.steps, ic.steps):
            assert np.all(sampled.lower >= interval.lower - 1e-12) and np.all(sampled.lower <= interval.upper + 1e-12)
            np.testing.assert_allclose(np.add.reduceat(sampled.lower, sampled.indptr[:-1]), 1.0, atol=1e-12)
        assert cf.validity_violations() == [] and cf.approximate
        assert policy_value(robust, cf) >= robust.value() - 1e-9


def test_point_intervals_make_robust_optimistic_and_plain_vi_agree(reference_instances):
    _, model, path = reference_model(reference_instances, "lally_gridworld_0.4_sampled_seed0.npz")
    g = gumbel_cfmdp(path, layers="nominal")
    point = build_cfmdp(path, lambda t, rows, entries, row, k: (g.steps[t].lower, g.steps[t].lower.copy()), "interval",
                        "point intervals", layers="nominal")
    assert not point.steps[0].is_point
    values = [robust_value_iteration(point).values, robust_value_iteration(point, nature=Optimistic).values,
              robust_value_iteration(g).values]
    for t in range(path.T):
        np.testing.assert_allclose(values[0][t], values[2][t], rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(values[1][t], values[2][t], rtol=1e-12, atol=1e-10)


def test_simulated_paths_match_the_exact_expectation(reference_instances):
    _, model, path = reference_model(reference_instances, "lally_gridworld_0.4_repo_suboptimal.npz")
    ic = interval_cfmdp(path)
    robust = robust_value_iteration(ic)
    cf = sample_cfmdp(ic, np.random.default_rng(3))
    r = sample_paths(cf, robust, 20_000, np.random.default_rng(4)).outcomes
    exact = policy_value(robust, cf)
    assert abs(r.mean() - exact) <= 5 * r.std() / np.sqrt(r.size)


def test_evaluation_reports_robust_at_least_its_worst_case(reference_instances):
    _, model, path = reference_model(reference_instances, "lally_gridworld_0.4_sampled_seed0.npz")
    ic = interval_cfmdp(path)
    robust = robust_value_iteration(ic)
    gp = robust_value_iteration(gumbel_cfmdp(path, layers=ic.layers))
    ev = evaluate_policies(ic, {"robust": robust, "gumbel-max": gp}, cfmdps=10, paths=500, seed=1)
    stats = {s.name: s for s in ev.statistics}
    assert stats["robust"].expected_min >= robust.value() - 1e-9
    assert stats["gumbel-max"].expected_min >= policy_value(gp, ic) - 1e-9
    assert ev.observed_reward == 24.0 and "Monte Carlo" in str(ev)


def test_policy_prefers_the_observed_action_on_ties():
    """In the absorbing danger state all actions are equivalent: the policy keeps the observed one."""
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.9")
    path = stormcf.ObservedPath.load(model, stormcf.example_path("gridworld.catastrophic.json"))
    robust = robust_value_iteration(interval_cfmdp(path))
    assert policy_changes(robust) == [0, 1, 2]


def test_minimizing_a_cost_is_maximizing_its_negation():
    """icfmdp minimises too: the robust policy for the cost -r is the robust policy for r, value negated."""
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.4")
    path = stormcf.ObservedPath.load(model, stormcf.example_path("gridworld.catastrophic.json"))
    ic = interval_cfmdp(path)
    negated = stormcf.ExplicitModel(model.transitions, model.row_groups, model.choice_actions, model.action_names,
                                    model.labels, model.valuations,
                                    {"cost": stormcf.RewardModel("cost", state=-model.rewards["r"].state)},
                                    model.initial_state)
    cost_path = stormcf.ObservedPath(negated, path.states, path.choices, path.final_state)
    best = robust_value_iteration(ic)
    cheapest = robust_value_iteration(interval_cfmdp(cost_path), optimization=Minimize)
    assert _close(cheapest.value(), -best.value())
    assert all(np.array_equal(a, b) for a, b in zip(best.actions, cheapest.actions))
    check = storm_value(interval_cfmdp(cost_path), policy=cheapest, optimization=Minimize)
    assert check.property.startswith('R{"r"}min') and _close(check.value, cheapest.value())


def test_reward_errors():
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.9")
    path = stormcf.ObservedPath.load(model, stormcf.example_path("gridworld.catastrophic.json"))
    with pytest.raises(stormcf.PropertyError, match="unknown reward model"):
        robust_value_iteration(interval_cfmdp(path), "nope")
