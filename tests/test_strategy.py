"""Strategies: validation, constructors, the JSON format, distances (seed 000's Example 3)."""
import json

import numpy as np
import pytest

import stormcf
from stormcf import Strategy


def test_impatient_strategy(loan, impatient):
    rework = loan.state_index({"s": 5})
    assert impatient.distribution(rework) == {"Submit": 0.3, "Quit": 0.7} or \
        impatient.distribution(rework) == {"Quit": 0.7, "Submit": 0.3}
    assert not impatient.is_deterministic


def test_json_round_trip(loan, impatient, tmp_path):
    f = tmp_path / "s.json"
    impatient.save(f)
    assert Strategy.load(loan, f).allclose(impatient, atol=0)
    r = Strategy.random(loan, seed=3)
    r.save(f)
    assert Strategy.load(loan, f).allclose(r, atol=0)          # repr() of floats round-trips exactly


def test_same_named_choices_round_trip(tmp_path):
    """QVBS zeroconf: a state with two 'rec' choices; σ is written as rec#0 / rec#1 and read back unchanged (not as
    one lossy 'rec' key)."""
    from pathlib import Path
    z = stormcf.load_model(Path(__file__).parent / "data" / "qvbs" / "zeroconf.prism", constants="N=20,K=2,reset=true")
    assert z.shared_action_states.sum() == 5
    sigma = Strategy.random(z, seed=7)
    s = int(np.flatnonzero(z.shared_action_states)[0])
    entry = next(e for e in sigma.to_dict()["states"] if z.state_index(e["state"]) == s)
    assert set(entry["actions"]) == {"rec#0", "rec#1"} and sum(entry["actions"].values()) == pytest.approx(1)
    sigma.save(tmp_path / "z.json")
    assert Strategy.load(z, tmp_path / "z.json").allclose(sigma, atol=0)
    bad = {"states": [{"state": z.valuation(s), "actions": {"rec": 1.0}}]}
    with pytest.raises(stormcf.StrategyError, match="has 2 choices of action 'rec': name them 'rec#0', 'rec#1'"):
        Strategy.from_dict(z, bad)
    check = stormcf.check_strategy(sigma, "Pmax=? [F l=4 & ip=1]".replace("max", ""))
    assert 0 <= check.value <= 1


def test_default_uniform_and_single_action_states(loan):
    s = Strategy.from_dict(loan, {"states": [{"state": {"s": 0}, "actions": {"Apply": 1}}]})
    err = loan.state_index({"s": 3})
    assert s.distribution(err) == {"Consult": 0.5, "Quit": 0.5}
    # listing a single-action state is fine if it plays its only action
    t = Strategy.from_dict(loan, {"states": [{"state": {"s": 1}, "actions": {"Provider": 1.0}}], "default": "uniform"})
    assert t.allclose(Strategy.uniform(loan))


BAD = [
    ({"states": [{"state": {"s": 12}, "actions": {"Apply": 1}}]}, "states\\[0\\]: no reachable state s=12"),
    ({"states": [{"state": {"t": 0}, "actions": {"Apply": 1}}]}, "unknown variable 't'"),
    ({"states": [{"state": {"s": 0}, "actions": {"Fly": 1}}]}, "action 'Fly' is not enabled in state s=0"),
    ({"states": [{"state": {"s": 0}, "actions": {"Apply": 1.2, "Consult": -0.2}}]}, "'Consult' is negative"),
    ({"states": [{"state": {"s": 0}, "actions": {"Apply": 0.5, "Consult": 0.4}}]}, "sum to 0.9, not 1"),
    ({"states": [{"state": {"s": 0}, "actions": {"Apply": 1}}, {"state": {"s": 0}, "actions": {"Apply": 1}}]},
     "states\\[1\\] \\(s=0\\): state given twice \\(also states\\[0\\]\\)"),
    ({"states": [{"state": {"s": 0}, "actions": {"Apply": 1}}], "default": "error"}, "3 decision state"),
    ({"states": [], "default": "random"}, "default"),
    ({"states": [{"state": {"s": 0}, "actions": {"Apply": "1"}}]}, "must be a number"),
    ({"strategy": []}, "expected an object"),
]


@pytest.mark.parametrize("data,message", BAD)
def test_bad_strategies_name_the_problem(loan, data, message):
    with pytest.raises(stormcf.StrategyError, match=message):
        Strategy.from_dict(loan, data, source="S.json")


def test_sum_tolerance(loan):
    ok = {"states": [{"state": {"s": 0}, "actions": {"Apply": 0.5, "Consult": 0.5 + 5e-10}}]}
    Strategy.from_dict(loan, ok)
    bad = {"states": [{"state": {"s": 0}, "actions": {"Apply": 0.5, "Consult": 0.5 + 5e-9}}]}
    with pytest.raises(stormcf.StrategyError):
        Strategy.from_dict(loan, bad)


def test_load_errors(loan, tmp_path):
    with pytest.raises(stormcf.StrategyError, match="file not found"):
        Strategy.load(loan, tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(stormcf.StrategyError, match="not valid JSON"):
        Strategy.load(loan, tmp_path / "x.json")


def test_constructors(loan):
    u = Strategy.uniform(loan)
    assert u.distribution(0) == {"Apply": 0.5, "Consult": 0.5}
    r1, r2 = Strategy.random(loan, seed=7), Strategy.random(loan, seed=7)
    assert r1.allclose(r2, atol=0) and not r1.allclose(Strategy.random(loan, seed=8))
    with pytest.raises(stormcf.StrategyError):
        Strategy(loan, np.full(loan.n_choices, 0.5))
    with pytest.raises(stormcf.StrategyError, match="one enabled choice per state"):
        Strategy.deterministic(loan, np.zeros(loan.n_states, dtype=int))
    noisy = u.probabilities + 1e-9 * np.sign(np.sin(np.arange(loan.n_choices)))
    clean = Strategy.from_solution(loan, noisy)
    np.testing.assert_allclose(clean.probabilities, u.probabilities, atol=1e-8)


def test_example_3_distances(loan, impatient):
    """Seed 000, Example 3: σ* changes Rework to Quit 0.14 / Submit 0.86: Δ = 0.56, d0 = 1, d1 = 0.14, d∞ = 0.56."""
    data = json.loads(stormcf.example_path("loan.impatient.json").read_text())
    data["states"][3]["actions"] = {"Quit": 0.14, "Submit": 0.86}
    cf = Strategy.from_dict(loan, data)
    d = stormcf.strategy_distance(impatient, cf)
    assert d.d0 == 1
    assert d.d1 == pytest.approx(0.14)
    assert d.dinf == pytest.approx(0.56)
    assert d.weighted() == pytest.approx(1 + 0.14 + 0.56)
    assert list(d.changed_states) == [loan.state_index({"s": 5})]
    assert stormcf.strategy_distance(impatient, impatient).weighted() == 0


def test_bulk_reading_equals_reading_entry_by_entry():
    """The vectorised reading of a strategy file (every entry a full valuation) gives the strategy the entry-by-entry
    reading gives, on QVBS eajs (1,817 states with several choices of one action, named a#k)."""
    from pathlib import Path
    from stormcf.strategy import _StrategyReader
    eajs = stormcf.load_model(Path(__file__).parent / "data" / "qvbs" / "eajs.2.prism", constants="energy_capacity=100")
    assert (eajs.choices_named(eajs.state_of_choice, eajs.choice_names) == np.arange(eajs.n_choices)).all()
    assert (eajs.choices_named([0, 0], ["no such action", eajs.choice_name(1)]) == -1).all()
    data = json.loads(json.dumps(Strategy.random(eajs, seed=5).to_dict()))
    reader = _StrategyReader(eajs, "s.json")
    bulk = reader.read_entries(data["states"])
    one_by_one = np.full(eajs.n_choices, np.nan)
    seen = {}
    for i, entry in enumerate(data["states"]):
        seen[reader.read_entry(i, entry, one_by_one, seen)] = i
    assert bulk is not None and np.array_equal(bulk, one_by_one, equal_nan=True)


@pytest.mark.parametrize("change, message", [
    (lambda e: e["actions"].update(Quit=True), "probability of 'Quit' must be a number, got True"),
    (lambda e: e["state"].update(s=True), "variable 's' is an integer; got True"),
    (lambda e: e["actions"].update(Quit=5.0), "probability of .Quit. is 5, more than 1"),
    (lambda e: e["actions"].update(Fly=0.0), "action 'Fly' is not enabled in state"),
])
def test_a_bad_entry_among_good_ones_is_named(loan, change, message):
    """A strategy the bulk reading refuses is read entry by entry, whose message names the entry."""
    data = json.loads(json.dumps(Strategy.uniform(loan).to_dict()))
    k = next(i for i, e in enumerate(data["states"]) if "Quit" in e["actions"])
    change(data["states"][k])
    with pytest.raises(stormcf.StrategyError, match=rf"states\[{k}\].*{message}"):
        Strategy.from_dict(loan, data)
