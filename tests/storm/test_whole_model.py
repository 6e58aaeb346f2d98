"""The model does not depend on the property (issue 8): one build of the whole model, every property checked on it,
on QVBS wlan.0 and stormpy's slipgrid."""
from pathlib import Path

import pytest

import stormcf
from stormcf import storm
from stormcf.cli import main

QVBS = Path(__file__).resolve().parents[1] / "data" / "qvbs"


@pytest.fixture(scope="module")
def wlan():
    return stormcf.load_model(QVBS / "wlan.0.prism", constants="COL=0")


def test_wlan_has_the_states_of_info_for_every_property(wlan, capsys):
    assert wlan.n_states == 2954                                    # QVBS: Storm, 2,954 states
    p = stormcf.parse_property(wlan, "Pmax=? [F s1=12]")
    assert stormcf.check_model(wlan, p).value == pytest.approx(1.0, abs=1e-9)
    assert main(["check", str(QVBS / "wlan.0.prism"), "-c", "COL=0", "--prop", "Pmax=? [F s1=12]"]) == 0
    out = capsys.readouterr().out
    assert "MDP with 2954 states" in out and "Pmax=? [F s1=12] = 1" in out      # as written


def test_wlan_qvbs_reference_values(wlan):
    """QVBS reference results (Storm/exact) for COL=0: cost_min = 7625, num_collisions = 256/209, time_min = 1325."""
    target = "s1=12 & s2=12"
    assert stormcf.check_model(wlan, f'R{{"cost"}}min=? [F {target}]').value == pytest.approx(7625, rel=1e-9)
    assert stormcf.check_model(wlan, f'R{{"collisions"}}max=? [F {target}]').value == pytest.approx(256 / 209, rel=1e-9)
    assert stormcf.check_model(wlan, f'R{{"time"}}min=? [F {target}]').value == pytest.approx(1325, rel=1e-9)
    assert stormcf.check_model(wlan, f"Pmin>=1 [F {target}]").holds


def test_property_expressions_give_the_same_values_as_storms_build_for_the_property(wlan):
    """Storm's own build for a property (terminal targets) gives the same initial-state value."""
    import stormpy
    program = stormpy.parse_prism_program(str(QVBS / "wlan.0.prism"))
    program, _ = stormpy.instantiate_constants(program, "COL=0")
    text = 'R{"time"}max=? [F s1=12]'
    props = stormpy.parse_properties(text, program)
    built = stormpy.build_model(program, options=stormpy.BuilderOptions(props, build_full=True))
    theirs = stormpy.model_checking(built, props[0]).get_value(built.initial_states[0])
    assert built.nr_states == 2833 < wlan.n_states                   # the 2,833 states
    assert stormcf.check_model(wlan, text).value == pytest.approx(theirs, rel=1e-8)


def test_full_strategy_file_of_slipgrid_is_accepted_for_a_label_property(tmp_path):
    slip = stormcf.load_model(storm.stormpy_example("mdp", "slipgrid.nm"))
    sigma = stormcf.Strategy.random(slip, seed=3)
    sigma.save(tmp_path / "s.json")
    again = stormcf.Strategy.load(slip, tmp_path / "s.json")
    assert again.allclose(sigma, atol=1e-15)
    goal = slip.state_index({"x": 4, "y": 4})
    assert slip.choice_counts[goal] >= 2               # Storm's build for F "goal" would make it terminal
    check = stormcf.check_strategy(again, 'P=? [F "goal"]')
    assert 0 < check.value <= 1
    assert main(["check", str(storm.stormpy_example("mdp", "slipgrid.nm")), "--strategy", str(tmp_path / "s.json"),
                 "--prop", 'P=? [F "goal"]']) == 0


def test_d1_divides_by_the_decision_states_of_the_whole_model():
    slip = stormcf.load_model(storm.stormpy_example("mdp", "slipgrid.nm"))
    a, b = stormcf.Strategy.uniform(slip), stormcf.Strategy.random(slip, seed=1)
    d = stormcf.strategy_distance(a, b)
    per_state = [sum(abs(a.probabilities[r] - b.probabilities[r]) for r in slip.choices(s)) / 2      # TV
                 for s in range(slip.n_states) if slip.decision_states[s]]
    assert slip.decision_states.sum() == 16                         # every cell of the 4x4 grid, goal included
    assert d.d1 == pytest.approx(sum(per_state) / 16, rel=1e-12)


def test_checks_never_change_the_users_storm_model(wlan):
    model = storm.storm_model_of(wlan)
    labels = set(model.labeling.get_labels())
    for k in range(100):
        target = wlan.valuations["x1"] == k % 11
        stormcf.reach_probability(wlan, target, "max")
        stormcf.prob01_states(wlan, target, "min")
    stormcf.check_model(wlan, "Pmax=? [F s1=12 & s2=12]")
    stormcf.parse_property(wlan, "Pmin=? [X x1=3]")
    assert set(model.labeling.get_labels()) == labels
    assert storm.storm_model_of(wlan) is model


def test_expressions_on_induced_dtmcs_and_optimal_schedulers(wlan):
    """The expression label travels with the property: Storm checks it on the DTMC a strategy induces too, and
    Storm's optimal scheduler for it attains the optimum there."""
    text = 'R{"time"}min=? [F s1=12 & s2=12]'
    values, best = stormcf.optimal_strategy(wlan, text)
    assert values[wlan.initial_state] == pytest.approx(1325, rel=1e-9)
    assert stormcf.check_strategy(best, 'R{"time"}=? [F s1=12 & s2=12]').value == pytest.approx(1325, rel=1e-9)
