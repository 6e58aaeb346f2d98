"""The exact d∞ special case against an independent LP oracle (tv_ball_oracle): stormpy's example MDPs (every one
Storm builds), random cyclic MDPs, and the slipgrid instance of issue 10 (end components)."""
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import stormcf
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.storm import stormpy_example

from random_models import random_mdps
from tv_ball_oracle import ball_min_reach

#: stormpy's example MDPs with a target for which σ = uniform is not already optimal (constants where needed)
EXAMPLES = [
    ("SmallPrismTest.nm", None, "s1=3"),
    ("coin2-2.nm", None, '"all_coins_equal_1"'),
    ("coin2.nm", "K=3", '"all_coins_equal_1"'),
    ("die_c1.nm", None, '"five"'),
    ("die_selection.nm", None, '"one"'),
    ("maze_2.nm", None, '"goal"'),
    ("maze_2_multigoal.nm", None, '"goalalt1"'),
    ("multiobjective1.nm", None, "s=1"),
    ("multiobjective2.nm", None, "s=2"),
    ("scheduler_generation.nm", None, '"target"'),
    ("slipgrid.nm", None, '"goal"'),
    ("tiny_rewards.nm", None, '"target"'),
    ("wlan0_collide.nm", "COL=2,TRANS_TIME_MAX=10", '"twoCollisions"'),
]
#: example MDPs where every strategy reaches the target with the same probability as σ: Storm decides them
DECIDED = [
    ("csma2-2.nm", None, '"collision_max_backoff"'),
    ("firewire.nm", "delay=3,fast=0.5", '"elected"'),
    ("firewire3-0.5.nm", None, '"elected"'),
    ("leader3.nm", None, '"elected"'),
    ("leader4.nm", None, '"elected"'),
    ("two_dice.nm", None, '"seven"'),
    ("wlan0-2-2.nm", None, '"twoCollisions"'),
    ("slipgrid_sketch.nm", "V=1", '"target"'),
]


def agrees_with_oracle(model, sigma, prop):
    """The bisection's d∞ is optimal within 1e-4 (relative) and its lower bound is valid, by the LP oracle."""
    r = solve_counterfactual(CounterfactualProblem(sigma, prop, weights="0,0,1"), time_limit=120)
    target, gamma = r.problem.target, float(r.problem.bound)
    assert r.status == "optimal" and r.verification.holds and r.probability <= gamma
    assert "bisection" in r.solver_reason
    p = sigma.probabilities
    assert ball_min_reach(model, p, target, r.distance.dinf * (1 + 1e-12)) <= gamma + 1e-9   # (d∞ rounded)
    if r.distance.dinf > 1e-6:
        assert ball_min_reach(model, p, target, r.distance.dinf * (1 - 1e-4)) > gamma
        assert ball_min_reach(model, p, target, r.distance_lower_bound * (1 - 1e-7)) > gamma
    return r


def test_slipgrid_dinf_is_one_third():
    """Issue 10: uniform σ, P<=0.5 [F "goal"]: d∞ = 1/3 (the two states next to the goal drop the action into it, an
    end component that never reaches it); the old extraction returned 0.75 as suboptimal."""
    model = stormcf.load_model(stormpy_example("mdp", "slipgrid.nm"))
    r = agrees_with_oracle(model, stormcf.Strategy.uniform(model), 'P<=0.5 [F "goal"]')
    assert r.distance.dinf == pytest.approx(1 / 3, abs=1e-12) and r.probability == 0
    assert r.distance_lower_bound == pytest.approx(1 / 3, rel=1e-6)
    assert not any("rejected" in n for n in r.notes)


@pytest.mark.parametrize("name, constants, target", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_stormpy_example_dinf_against_lp_oracle(name, constants, target):
    model = stormcf.load_model(stormpy_example("mdp", name), constants=constants)
    sigma = stormcf.Strategy.uniform(model)
    value = stormcf.check_strategy(sigma, f"P=? [F {target}]").value
    pmin = stormcf.check_model(model, f"Pmin=? [F {target}]").value
    assert value - pmin > 0.01
    agrees_with_oracle(model, sigma, f"P<={(value + pmin) / 2:.6f} [F {target}]")


@pytest.mark.parametrize("name, constants, target", DECIDED, ids=[e[0] for e in DECIDED])
def test_stormpy_example_decided_by_storm(name, constants, target):
    model = stormcf.load_model(stormpy_example("mdp", name), constants=constants)
    sigma = stormcf.Strategy.uniform(model)
    value = stormcf.check_strategy(sigma, f"P=? [F {target}]").value
    above = solve_counterfactual(CounterfactualProblem(sigma, f"P<={min(value + 1e-3, 1):.6f} [F {target}]"))
    assert above.status == "trivial"
    if value > 1e-3:
        below = solve_counterfactual(CounterfactualProblem(sigma, f"P<={value - 1e-3:.6f} [F {target}]"))
        assert below.status == "infeasible" and below.strategy is None


@pytest.mark.slow                            # 30-80 s of CPU: not in the fast tier (make test-fast)
@settings(max_examples=30, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(random_mdps(max_states=7), st.integers(0, 2**16))
def test_random_cyclic_mdps_against_lp_oracle(mdp, seed):
    with tempfile.TemporaryDirectory() as tmp:
        model = stormcf.load_model(mdp.write(Path(tmp)))
    sigma = stormcf.Strategy.random(model, seed)
    target = model.label("goal")
    value = stormcf.check_strategy(sigma, 'P=? [F "goal"]').value
    pmin = stormcf.check_model(model, 'Pmin=? [F "goal"]').value
    assume(value - pmin > 0.02)
    agrees_with_oracle(model, sigma, f'P<={(value + pmin) / 2:.6f} [F "goal"]')
    assert target.any()
