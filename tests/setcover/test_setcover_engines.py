"""The exact engines against the paper's example, the hand instances of notes §6.1 and brute force."""
import math

import numpy as np
import pytest
from hypothesis import given, settings

from stormcf.errors import SolverError
from stormcf.setcover import (DEFAULT_METHOD, EXACT, METHODS, SetCoverInstance, SetCoverProblem, run_engine,
                              solve_setcover)
from stormcf.setcover.branch import dominated
from stormcf.setcover.data import agent_pool, paper_instance
from stormcf.setcover.engines import lp_bound

from setcover_cases import example, instances


def solve_all(inst, x, methods=METHODS):
    return {m: solve_setcover(SetCoverProblem(inst, x), m) for m in methods}


def test_t1_paper_example_is_13_with_a2_a4_a7_and_tied_through_the_no_op(paper):
    for method, r in solve_all(paper, [0, 0, 0, 0, 1]).items():
        assert r.status == "optimal" and r.actions == (2, 4, 7), method
        assert r.cost == pytest.approx(13.0) and r.optimal_cost == pytest.approx(13.0)
        assert r.final_state.tolist() == [1, 1, 1, 1, 1]
        assert [c.value for c in r.checks] == pytest.approx([13.0, 13.0])     # Storm: Rmin and the plan
        if method != "greedy":
            assert r.unique is False, method                                   # {2,4,6,7} is optimal too


def test_t1_printed_ilp_without_x_costs_15(paper):
    """Regression guard of notes §4.1: the paper's ILP without x asks the actions to cover all five features."""
    assert solve_setcover(SetCoverProblem(paper, [0, 0, 0, 0, 0]), "milp").cost == pytest.approx(15.0)


def test_t2_greedy_is_beaten():
    inst = SetCoverInstance.from_arrays([1] * 4, [[1, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]],
                                        [3, 2.1, 2.1, 1.5])
    results = solve_all(inst, [0, 0, 0, 0])
    for method in EXACT:
        assert results[method].actions == (1, 2) and results[method].cost == pytest.approx(4.2)
        assert results[method].unique is True
    greedy = results["greedy"]
    assert greedy.actions == (0, 3) and greedy.cost == pytest.approx(4.5) and greedy.status == "suboptimal"
    assert greedy.gap == pytest.approx(4.5 / 4.2 - 1)


def test_t3_positive_agent_is_trivial(paper):
    for r in solve_all(paper, [1, 1, 1, 1, 1]).values():
        assert r.status == "trivial" and r.actions == () and r.cost == 0.0 and r.checks[0].value == 0.0


def test_t4_uncoverable_feature_is_infeasible(paper):
    data = paper.to_dict()
    for a in data["actions"]:
        a["effect"][0] = 0
    inst = SetCoverInstance.from_dict(data)
    for method, r in solve_all(inst, [0, 0, 0, 0, 1]).items():
        assert r.status == "infeasible" and math.isinf(r.cost), method
        assert math.isinf(r.checks[0].value)                                   # Storm's Rmin = inf


def test_t5_features_with_zero_threshold_are_irrelevant():
    inst = SetCoverInstance.from_arrays([1, 1, 0, 0], [[1, 1, 1, 1], [1, 0, 0, 0], [0, 1, 0, 0]], [2.5, 1, 1])
    for method, r in solve_all(inst, [0, 0, 0, 0]).items():
        assert r.actions == (1, 2) and r.cost == pytest.approx(2.0), method


def test_t6_tie_is_reported_and_the_fewest_actions_win():
    inst = SetCoverInstance.from_arrays([1, 1], [[1, 0], [0, 1], [1, 1]], [1, 1, 2])
    for method, r in solve_all(inst, [0, 0], EXACT).items():
        assert r.actions == (2,) and r.unique is False and r.cost == pytest.approx(2.0), method


def test_t7_over_covered_agent(paper):
    for method, r in solve_all(paper, [0, 0, 1, 0, 1], EXACT).items():
        assert r.actions == (2, 4, 7) and r.cost == pytest.approx(13.0), method
        assert r.final_state.tolist() == [1, 1, 2, 1, 1]


def test_t9_zero_cost_useful_action_is_taken():
    inst = example({6: ([0, 1, 0, 0, 0], 0)})
    for method, r in solve_all(inst, [0, 0, 0, 0, 1], EXACT).items():
        assert r.actions == (2, 6, 7) and r.cost == pytest.approx(12.0) and r.unique is True, method


def test_groups_restrict_the_actions(paper):
    data = paper.to_dict()
    data["groups"] = {"g0": ["a5", "a3"], "g1": ["a2", "a4", "a7", "a8", "a1"]}
    inst = SetCoverInstance.from_dict(data)
    for method in EXACT:
        assert run_engine(SetCoverProblem(inst, [0, 0, 0, 0, 1], "g0"), method).actions == (5,)
        assert run_engine(SetCoverProblem(inst, [0, 0, 0, 0, 1], "g1"), method).actions == (2, 4, 7)


@given(instances())
def test_every_engine_equals_brute_force(case):
    inst, x = case
    truth = run_engine(SetCoverProblem(inst, x), "bruteforce") if not inst.is_positive(x) else None
    results = solve_all(inst, x)
    for method, r in results.items():
        if truth is None:
            assert r.status == "trivial"
            continue
        if not truth.feasible:
            assert r.status == "infeasible", method
            continue
        assert inst.is_valid(x, r.actions), method
        assert r.cost == pytest.approx(inst.cost(r.actions), rel=1e-9)
        if method == "greedy":
            assert r.cost >= truth.value - 1e-9
            continue
        assert r.cost == pytest.approx(truth.value, rel=1e-8, abs=1e-9), method
        assert r.actions == truth.actions and r.unique == truth.unique, method


@given(instances(integer=True, max_actions=7))
def test_integer_thresholds_multicover(case):
    inst, x = case
    if inst.is_positive(x):
        return
    truth = run_engine(SetCoverProblem(inst, x), "bruteforce")
    for method in ("bnb", "dp", "milp", "storm"):
        r = run_engine(SetCoverProblem(inst, x), method)
        assert r.value == pytest.approx(truth.value, rel=1e-8) and r.actions == truth.actions, method


@given(instances(success=True, max_actions=7))
def test_stochastic_effects_storm_equals_expected_cost_set_cover(case):
    """With success probabilities, Storm's Rmin on the stochastic MDP equals the set cover with costs c_i / p_i."""
    inst, x = case
    if inst.is_positive(x):
        return
    truth = run_engine(SetCoverProblem(inst, x), "bruteforce")
    r = solve_setcover(SetCoverProblem(inst, x), "storm")
    if not truth.feasible:
        assert r.status == "infeasible"
        return
    assert r.cost == pytest.approx(truth.value, rel=1e-8) and r.actions == truth.actions
    bnb = run_engine(SetCoverProblem(inst, x), "bnb")
    assert bnb.value == pytest.approx(truth.value, rel=1e-8) and bnb.actions == truth.actions


def _best_sequence(inst, x, available):
    """Ordered brute force: the cheapest sequence of distinct actions respecting the preconditions."""
    import itertools
    best = math.inf
    idx = [i for i in range(inst.n_actions) if available[i]]
    for r in range(len(idx) + 1):
        for seq in itertools.permutations(idx, r):
            s, ok = np.array(x), True
            for i in seq:
                if np.any(np.minimum(s, np.maximum(inst.thresholds, inst.requires.max(0))) < inst.requires[i]):
                    ok = False
                    break
                s = s + inst.effects[i]
            if ok and inst.is_positive(s):
                best = min(best, inst.cost(seq))
    return best


@settings(max_examples=25)
@given(instances(requires=True, max_actions=5, max_features=4, zero_costs=False))
def test_ordered_actions_dp_and_storm_equal_sequence_brute_force(case):
    inst, x = case
    if inst.is_positive(x):
        return
    truth = _best_sequence(inst, x, np.ones(inst.n_actions, bool))
    for method in ("dp", "storm"):
        r = solve_setcover(SetCoverProblem(inst, x), method)
        assert r.cost == pytest.approx(truth, rel=1e-8) if math.isfinite(truth) else r.status == "infeasible"
        if math.isfinite(truth):
            s = np.array(x)
            for i in r.plan:       # the plan respects the preconditions in its order
                assert np.all(np.minimum(s, np.maximum(inst.thresholds, inst.requires.max(0))) >= inst.requires[i])
                s = s + inst.effects[i]


def test_ordered_instance_refuses_set_engines():
    inst = SetCoverInstance.from_arrays([1, 1], [[1, 0], [0, 1]], [1, 1], requires=[[0, 0], [1, 0]])
    with pytest.raises(SolverError, match="order"):
        run_engine(SetCoverProblem(inst, [0, 0]), "milp")
    r = solve_setcover(SetCoverProblem(inst, [0, 0]), "storm")
    assert r.plan == (0, 1) and r.cost == pytest.approx(2.0)


@given(instances(zero_costs=False))
def test_invariants_lp_opt_greedy_harmonic(case):
    """notes §6.3 (1): LP <= OPT <= greedy <= H(k)·OPT, k the largest number of missing features one action gives."""
    inst, x = case
    p = SetCoverProblem(inst, x)
    if p.positive:
        return
    opt = run_engine(p, "dp").value
    if not math.isfinite(opt):
        return
    greedy = run_engine(p, "greedy").value
    k = int(p.coverage().sum(axis=1).max())
    assert lp_bound(p) <= opt + 1e-7 and opt <= greedy + 1e-9
    assert greedy <= sum(1 / j for j in range(1, k + 1)) * opt + 1e-9


@given(instances(zero_costs=False))
def test_invariants_monotone_and_invariant(case):
    """notes §6.3 (3, 4, 6): monotone in the agent and the catalogue; permutations and scaling."""
    inst, x = case
    p = SetCoverProblem(inst, x)
    base = run_engine(p, "dp")
    if p.positive or not base.feasible:
        return
    better = np.maximum(x, inst.thresholds * (np.arange(inst.n_features) % 2))
    assert run_engine(SetCoverProblem(inst, better), "dp").value <= base.value + 1e-9
    bigger = SetCoverInstance.from_arrays(inst.thresholds, np.vstack([inst.effects, np.ones(inst.n_features, int)]),
                                          np.append(inst.costs, 5.0))
    assert run_engine(SetCoverProblem(bigger, x), "dp").value <= base.value + 1e-9
    dearer = SetCoverInstance.from_arrays(inst.thresholds, inst.effects, inst.costs + 1.0)
    assert run_engine(SetCoverProblem(dearer, x), "dp").value >= base.value - 1e-9
    perm_f, perm_a = np.arange(inst.n_features)[::-1], np.arange(inst.n_actions)[::-1]
    permuted = SetCoverInstance.from_arrays(inst.thresholds[perm_f], inst.effects[perm_a][:, perm_f],
                                            3.5 * inst.costs[perm_a])
    other = run_engine(SetCoverProblem(permuted, np.asarray(x)[perm_f]), "dp")
    assert other.value == pytest.approx(3.5 * base.value, rel=1e-9)
    if base.unique:
        assert sorted(perm_a[list(other.actions)]) == list(base.actions)


def test_bruteforce_refuses_large_catalogues():
    inst = SetCoverInstance.from_arrays([1] * 3, np.ones((25, 3), int), np.arange(1, 26))
    with pytest.raises(SolverError, match="brute force"):
        run_engine(SetCoverProblem(inst, [0, 0, 0]), "bruteforce")


# ==================================================================================================== branch and bound
@settings(max_examples=40)
@given(instances(max_features=14, max_actions=40))
def test_bnb_equals_dp_beyond_brute_force(case):
    """Catalogues of up to 40 actions (2^40 subsets): branch and bound against the DP over the projected MDP."""
    inst, x = case
    p = SetCoverProblem(inst, x)
    bnb, dp = run_engine(p, "bnb"), run_engine(p, "dp")
    assert bnb.feasible == dp.feasible
    if dp.feasible:
        assert bnb.value == pytest.approx(dp.value, rel=1e-9, abs=1e-12)
        assert bnb.actions == dp.actions and bnb.unique == dp.unique


def test_bnb_equals_dp_and_milp_on_the_paper_distribution():
    inst = paper_instance(20, seed=4)
    for x in agent_pool(inst, 12, 0.68, seed=5):
        p = SetCoverProblem(inst, x)
        bnb, dp, milp = (run_engine(p, m) for m in ("bnb", "dp", "milp"))
        assert bnb.value == pytest.approx(dp.value, rel=1e-9) == milp.value
        assert bnb.actions == dp.actions == milp.actions and bnb.unique == dp.unique == milp.unique


def test_bnb_keeps_equal_actions_so_the_tie_is_seen():
    """Two actions with the same cover and cost: neither dominates the other (both are optimal)."""
    inst = SetCoverInstance.from_arrays([1, 1], [[1, 1], [1, 1], [1, 0]], [2, 2, 3])
    r = run_engine(SetCoverProblem(inst, [0, 0]), "bnb")
    assert r.actions == (0,) and r.unique is False and r.value == 2.0


def test_dominance_drops_only_strictly_worse_actions():
    cov = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]])
    costs = np.array([2.0, 3.0, 2.0, 0.0])
    # a1 gives less than a0 for more; a0 and a2 are equal (both kept); a3 is the only one giving the last unit
    assert dominated(cov, costs, 1e-9).tolist() == [False, True, False, False]
    multi = np.array([[2, 1], [1, 1], [2, 0]])
    assert dominated(multi, np.array([1.0, 1.5, 0.5]), 1e-9).tolist() == [False, True, False]


def test_bnb_refuses_beyond_its_node_limit(monkeypatch):
    import stormcf.setcover.branch as branch
    monkeypatch.setattr(branch, "NODE_LIMIT", 3)
    inst = paper_instance(20, seed=1)
    with pytest.raises(SolverError, match="use the MILP engine"):
        for x in agent_pool(inst, 20, 0.68, seed=2):
            run_engine(SetCoverProblem(inst, x), "bnb")


def test_default_method_is_bnb(paper):
    r = solve_setcover(SetCoverProblem(paper, [0, 0, 0, 0, 1]))
    assert r.method == DEFAULT_METHOD == "bnb" and r.actions == (2, 4, 7) and r.unique is False
