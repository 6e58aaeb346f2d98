"""Observed paths: the JSON format, validation naming the step, and the seeded simulator."""
import numpy as np
import pytest

import stormcf
from stormcf.paths import ObservedPath, simulate


@pytest.fixture(scope="module")
def treat():
    return stormcf.load_model(stormcf.example_path("treat.prism"))


def _step(s, a):
    return {"state": {"s": s}, "action": a}


def test_round_trip_and_queries(treat, tmp_path):
    data = {"steps": [_step(0, "coin"), _step(0, "coin"), _step(1, "drug")], "final_state": {"s": 1}}
    path = ObservedPath.from_dict(treat, data)
    assert path.T == 3 and path.actions == ["coin", "coin", "drug"]
    assert [treat.valuation(int(s))["s"] for s in path.next_states] == [0, 1, 1]
    np.testing.assert_allclose(path.transition_probabilities(), [0.5, 0.5, 0.8])
    assert path.outcome(treat.step_rewards("health")) == 1 + 1 + 2
    f = tmp_path / "p.json"
    path.save(f)
    again = ObservedPath.load(treat, f)
    assert again.to_dict() == data


def test_final_state_is_optional(treat):
    path = ObservedPath.from_dict(treat, {"steps": [_step(0, "coin"), _step(1, "coin")]})
    assert path.final_state is None and path.observed_transitions == 1 and path.next_states[-1] == -1


@pytest.mark.parametrize("data,message", [
    ({"steps": [_step(0, "coin"), _step(7, "coin")]}, "step 1: no reachable state s=7"),
    ({"steps": [_step(0, "fly")]}, "step 0: action 'fly' is not enabled in state s=0"),
    ({"steps": [{"state": {"s": 0}}]}, "step 0: expected"),
    ({"steps": []}, "at least one step"),
    ({"steps": [_step(0, "coin")], "final_state": {"s": 9}}, "final_state: no reachable state s=9"),
])
def test_bad_paths_name_the_step(treat, data, message):
    with pytest.raises(stormcf.PathError, match=message):
        ObservedPath.from_dict(treat, data, source="p.json")


def test_zero_probability_step(tmp_path):
    f = tmp_path / "det.prism"
    f.write_text("mdp\nmodule m\n x : [0..2] init 0;\n [go] x<2 -> (x'=x+1);\n [stay] true -> true;\nendmodule\n")
    m = stormcf.load_model(f)
    steps = [{"state": {"x": 0}, "action": "go"}, {"state": {"x": 2}, "action": "stay"}]
    with pytest.raises(stormcf.PathError, match="step 0: action 'go' in state x=0 reaches x=2 with probability 0"):
        ObservedPath.from_dict(m, {"steps": steps})


def test_simulator_is_seeded_and_follows_the_model(treat):
    sigma = stormcf.Strategy.uniform(treat)
    a, b = simulate(treat, sigma, 50, seed=3), simulate(treat, sigma, 50, seed=3)
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.choices, b.choices)
    assert a.T == 50 and a.final_state is not None and np.all(a.transition_probabilities() > 0)
    drug = stormcf.Strategy.deterministic(treat, [treat.choice_of(s, "drug") for s in range(treat.n_states)])
    long = simulate(treat, drug, 20_000, seed=1)
    healthy = np.mean([treat.valuation(int(s))["s"] == 1 for s in long.next_states])
    assert abs(healthy - 0.8) < 4 * np.sqrt(0.16 / 20_000)
    assert set(long.actions) == {"drug"}


def test_same_named_choices_in_paths(tmp_path):
    """A path through a zeroconf state with two 'rec' choices names the one taken rec#0 or rec#1."""
    from pathlib import Path
    z = stormcf.load_model(Path(__file__).parent / "data" / "qvbs" / "zeroconf.prism", constants="N=20,K=2,reset=true")
    s = int(np.flatnonzero(z.shared_action_states)[0])
    row = z.choice_of(s, "rec#1")
    succ = int(z.transitions[row].indices[0])
    data = {"steps": [{"state": z.valuation(s), "action": "rec#1"}], "final_state": z.valuation(succ)}
    path = ObservedPath.from_dict(z, data)
    assert path.actions == ["rec#1"] and int(path.choices[0]) == row
    path.save(tmp_path / "p.json")
    assert ObservedPath.load(z, tmp_path / "p.json").to_dict() == data
