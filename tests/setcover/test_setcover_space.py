"""The projected MDP built from arrays (space.py): the dense and sorted searches agree, and Storm's Rmin on the
reduced model (pivot choices, dominated choices dropped) equals the DP over every effective action, in every state."""
import numpy as np
import pytest
from hypothesis import given, settings

from stormcf.setcover import SetCoverProblem
from stormcf.setcover import space as space_module
from stormcf.setcover.engines import agent_transitions, storm_values
from stormcf.setcover.space import StateSpace

from setcover_cases import instances


def family(inst, x):
    """The space of the agent x and of the all-zero agent (so some states are shared), all reachable states."""
    X = np.vstack([x, np.zeros_like(x)])
    space = StateSpace.for_agents(inst, X, inst.available())
    return space.reachable(space.encode(X))


@settings(max_examples=60)
@given(instances(max_actions=10))
def test_storm_on_the_reduced_model_equals_the_full_dp_in_every_state(case):
    trans = family(*case)
    model = trans.explicit_model(0)
    np.testing.assert_allclose(storm_values(model), trans.state_values(), rtol=1e-9, atol=1e-12)


@settings(max_examples=40)
@given(instances(integer=True, max_actions=7))
def test_multicover_reduced_model_equals_the_full_dp(case):
    trans = family(*case)
    np.testing.assert_allclose(storm_values(trans.explicit_model(0)), trans.state_values(), rtol=1e-9, atol=1e-12)


@settings(max_examples=40)
@given(instances(success=True, max_actions=7))
def test_stochastic_reduced_model_equals_the_full_dp(case):
    trans = family(*case)
    np.testing.assert_allclose(storm_values(trans.explicit_model(0)), trans.state_values(), rtol=1e-9, atol=1e-12)


@settings(max_examples=60)
@given(instances(integer=True, max_actions=10))
def test_choices_provide_the_pivot_and_are_not_dominated(case):
    """The choices of a state: its pivot's providers but those a lower-ranked provider dominates (a successor at
    least as high in every feature), by brute force over pairs."""
    inst, _ = case
    trans = family(*case)
    model = trans.explicit_model(0)
    space, costs = trans.space, inst.expected_costs
    provides = space.effects > 0
    count = provides.sum(axis=0)
    digits = space.decode(trans.codes)
    for s in np.flatnonzero(~trans.goal):
        rows = range(model.row_groups[s], model.row_groups[s + 1])
        missing = np.flatnonzero(digits[s] < space.thresholds)
        pivot = missing[np.argmin(count[missing])]          # fewest providers, then the first feature
        candidates = np.flatnonzero(trans.effective[s] & provides[:, pivot])
        if not candidates.size:                              # a dead end: one self-loop
            assert [model.choice_actions[r] for r in rows] == [0]
            continue
        high = digits[trans.successor[s]]
        kept = [i for i in candidates
                if not any((costs[j], j) < (costs[i], i) and np.all(high[j] >= high[i]) for j in candidates)]
        assert [model.choice_actions[r] - 1 for r in rows] == sorted(kept, key=lambda a: (costs[a], a))


@settings(max_examples=40)
@given(instances(success=True, integer=True, max_actions=8))
def test_the_reduced_search_keeps_rmin_at_the_agent(case):
    """Only the states Storm's model reaches from the agent: fewer states, the same Rmin there."""
    inst, x = case
    problem = SetCoverProblem(inst, x)
    full, s0 = agent_transitions(problem)
    reduced, r0 = agent_transitions(problem, reduced=True)
    assert reduced.n_states <= full.n_states and np.isin(reduced.codes, full.codes).all()
    assert storm_values(reduced.explicit_model(r0))[r0] == pytest.approx(full.state_values()[s0], rel=1e-9, abs=1e-12)


@settings(max_examples=40)
@given(instances(integer=True, max_actions=7))
def test_dense_and_sorted_searches_build_the_same_states(case):
    dense = family(*case)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(space_module, "DENSE_LIMIT", 0)
        sorted_ = family(*case)
        assert not sorted_.space.dense
        np.testing.assert_array_equal(sorted_.codes, dense.codes)
        np.testing.assert_array_equal(sorted_.successor, dense.successor)


def test_paper_example_pivot_choices(paper):
    """12 states; 34 choices with one per (state, successor) and a self-loop per goal state, 19 with the pivot and
    dominance; the reduced search reaches 4 of the states (6 choices), with the same Rmin at the agent."""
    trans, s0 = agent_transitions(SetCoverProblem(paper, [0, 0, 0, 0, 1]))
    model = trans.explicit_model(s0)
    state, action = np.nonzero(trans.effective & ~trans.goal[:, None])
    merged = len(set(zip(state.tolist(), trans.successor[state, action].tolist()))) + int(trans.goal.sum())
    assert model.n_states == 12 and merged == 34 and model.n_choices == 19
    reduced, r0 = agent_transitions(SetCoverProblem(paper, [0, 0, 0, 0, 1]), reduced=True)
    certificate = reduced.explicit_model(r0)
    assert certificate.n_states == 4 and certificate.n_choices == 6
    assert storm_values(certificate)[r0] == pytest.approx(13.0)
    assert storm_values(model)[s0] == pytest.approx(13.0)
