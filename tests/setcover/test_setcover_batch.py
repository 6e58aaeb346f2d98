"""Set cover in batches (issue 20): the agents of a batch are certified with one Storm call for all their optima and
one for all their plans; each result keeps its own certificate and equals the single run's."""
import numpy as np
import pytest

from stormcf import storm
from stormcf.errors import SolverError
from stormcf.report import without_times
from stormcf.setcover import SetCoverInstance, SetCoverProblem, solve_setcover
from stormcf.setcover.data import agent_pool, paper_instance
from stormcf.setcover.solve import solve_setcovers


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


def test_batches_beyond_the_state_limit_take_more_calls(storm_calls, monkeypatch):
    inst = paper_instance(10, seed=1)
    problems = [SetCoverProblem(inst, x) for x in agent_pool(inst, 30, 0.5, 2)[:6]]
    monkeypatch.setattr("stormcf.setcover.solve.STATE_LIMIT", 1)          # one projected MDP per call
    results = solve_setcovers(problems)
    assert len(storm_calls) == len(problems) + 1
    assert [r.optimal_cost for r in results] == pytest.approx([solve_setcover(p).optimal_cost for p in problems])


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
