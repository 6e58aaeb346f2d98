"""Set cover in batches (issue 20): the agents of a batch are certified with one Storm call for all their optima and
one for all their plans (the optima in chunks of a bounded number of choices, issue 34); each result keeps its own
certificate and equals the single run's."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stormcf import storm
from stormcf.errors import SolverError
from stormcf.report import without_times
from stormcf.setcover import SetCoverInstance, SetCoverProblem, solve_setcover
from stormcf.setcover.data import agent_pool, paper_instance
from stormcf.setcover.solve import plan_dtmcs, solve_setcovers
from stormcf.verify import check_model_states

from setcover_cases import instances


@pytest.fixture
def storm_calls(monkeypatch):
    """Every model-checking call of the bridge, counted (Storm still answers each)."""
    calls = []
    check = storm.check
    monkeypatch.setattr(storm, "check", lambda *args, **kwargs: calls.append(args[0]) or check(*args, **kwargs))
    return calls


def test_a_batch_takes_two_storm_calls_and_equals_the_single_runs(storm_calls):
    inst = paper_instance(12, seed=3)
    problems = [SetCoverProblem(inst, x) for x in agent_pool(inst, 40, 0.5, 4)[:12]]
    singles = [solve_setcover(problem) for problem in problems]
    assert len(storm_calls) == 2 * len(problems)
    storm_calls.clear()
    batch = solve_setcovers(problems)
    assert len(storm_calls) == 2                              # the optima side by side, the plans side by side
    assert storm_calls[0].n_states == sum(r.mdp.n_states for r in batch)
    for one, many in zip(singles, batch):
        assert without_times(many.to_dict()) == without_times(one.to_dict())
        optimum, plan = many.checks
        assert optimum.subject == f"projected MDP ({many.mdp.n_states} states, {many.mdp.n_choices} choices)"
        assert plan.subject == f"DTMC of the plan ({len(many.plan) + 1} states)"
        assert optimum.value == pytest.approx(many.optimal_cost) and plan.value == pytest.approx(many.cost)
        assert optimum.agrees and plan.agrees


def test_the_chunk_size_does_not_change_the_certificates(storm_calls, monkeypatch):
    inst = paper_instance(10, seed=1)
    problems = [SetCoverProblem(inst, x) for x in agent_pool(inst, 30, 0.5, 2)[:6]]
    together = solve_setcovers(problems)
    assert len(storm_calls) == 2                                            # all agents in one chunk
    storm_calls.clear()
    monkeypatch.setattr("stormcf.setcover.solve.CERTIFICATE_CHOICES", 1)    # one projected MDP per call
    apart = solve_setcovers(problems)
    assert len(storm_calls) == len(problems) + 1
    for one, other in zip(together, apart):
        assert without_times(one.to_dict()) == without_times(other.to_dict())


def test_a_chunk_holds_at_most_the_choice_bound(storm_calls, monkeypatch):
    """Seven copies of one agent (m choices each) with a bound of 3m: ceil(7 / 3) calls of 3m, 3m and m choices."""
    inst = paper_instance(10, seed=1)
    problems = [SetCoverProblem(inst, agent_pool(inst, 30, 0.5, 2)[0])] * 7
    size = solve_setcover(problems[0]).mdp.n_choices
    storm_calls.clear()
    monkeypatch.setattr("stormcf.setcover.solve.CERTIFICATE_CHOICES", 3 * size)
    results = solve_setcovers(problems)
    optima, plans = storm_calls[:-1], storm_calls[-1]
    assert len(optima) == math.ceil(7 / 3) and [m.n_choices for m in optima] == [3 * size, 3 * size, size]
    assert plans.n_states == sum(len(r.plan) + 1 for r in results)
    assert len({r.optimal_cost for r in results}) == 1


def test_an_agent_the_engine_refuses_gets_its_error_the_others_their_results():
    inst = SetCoverInstance.from_arrays([1] * 22, np.eye(22, dtype=int), np.ones(22))
    one_missing = np.ones(22, dtype=int)
    one_missing[3] = 0
    positive, nothing = np.ones(22, dtype=int), np.zeros(22, dtype=int)
    small, big, trivial = solve_setcovers([SetCoverProblem(inst, x) for x in (one_missing, nothing, positive)],
                                          "bruteforce")
    assert small.status == "optimal" and small.actions == (3,) and [c.value for c in small.checks] == [1, 1]
    assert isinstance(big, SolverError) and "brute force enumerates" in str(big)     # 2^22 subsets
    assert trivial.status == "trivial" and [c.value for c in trivial.checks] == [0, 0]
    with pytest.raises(SolverError, match="brute force enumerates"):
        solve_setcover(SetCoverProblem(inst, nothing), "bruteforce")


@settings(max_examples=25)
@given(instances(integer=True, success=True, max_actions=6), st.lists(st.lists(st.integers(0, 5), max_size=4),
                                                                       min_size=1, max_size=4))
def test_the_plans_dtmcs_side_by_side_cost_what_walking_each_plan_costs(case, raw):
    """Storm's R=? [F "goal"] on each chain of the plans' union: the expected costs c_i / p_i of the plan's steps
    until the agent meets the thresholds (inf when it never does), walked agent by agent."""
    inst, x = case
    plans = [tuple(i % inst.n_actions for i in plan) for plan in raw]
    agents = [np.roll(x, k) for k in range(len(plans))]
    model, starts = plan_dtmcs([SetCoverProblem(inst, a) for a in agents], plans)
    values = [c.value for c in check_model_states(model, 'R{"cost"}=? [F "goal"]', starts.tolist(),
                                                   ["chain"] * len(plans))]
    for agent, plan, value in zip(agents, plans, values):
        state, cost = agent.copy(), 0.0
        for i in plan:
            if inst.is_positive(state):
                break
            state, cost = state + inst.effects[i], cost + inst.expected_costs[i]
        assert value == (pytest.approx(cost, rel=1e-9, abs=1e-9) if inst.is_positive(state) else math.inf)
