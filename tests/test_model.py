"""The explicit model: immutability, state lookup, naming, labels."""
import numpy as np
import pytest

import stormcf


def test_loan_structure(loan):
    assert (loan.n_states, loan.n_choices, loan.n_transitions) == (9, 13, 17)
    assert loan.decision_states.sum() == 4
    rework = loan.state_index({"s": 5})
    assert sorted(loan.enabled_actions(rework)) == ["Quit", "Submit"]
    assert loan.action(loan.choice_of(rework, "Quit")) == "Quit"
    np.testing.assert_array_equal(loan.state_of_choice[loan.row_groups[:-1]], np.arange(loan.n_states))


def test_arrays_are_read_only(loan):
    with pytest.raises(ValueError):
        loan.transitions.data[0] = 0.5
    with pytest.raises(ValueError):
        loan.labels["granted"][0] = True
    with pytest.raises(TypeError):
        loan.labels["x"] = np.zeros(9, bool)


def test_state_lookup_errors(loan):
    with pytest.raises(stormcf.StateError, match="unknown variable 'q'"):
        loan.state_index({"q": 1})
    with pytest.raises(stormcf.StateError, match="no reachable state s=42"):
        loan.state_index({"s": 42})
    with pytest.raises(stormcf.StateError, match="is an integer"):
        loan.state_index({"s": "3"})
    with pytest.raises(stormcf.StateError, match="not enabled"):
        loan.choice_of(0, "Quit")


def test_partial_valuation_lookup(tmp_path):
    f = tmp_path / "g.prism"
    f.write_text("mdp\nmodule m\n x : [0..2] init 0;\n b : bool init false;\n"
                 " [go] x<2 -> (x'=x+1);\n [t] true -> (b'=!b);\nendmodule\n")
    m = stormcf.load_model(f)
    s = m.state_index({"x": 1, "b": True})
    assert m.valuation(s) == {"x": 1, "b": True} or m.valuation(s) == {"b": True, "x": 1}
    assert m.valuation_text(s) in ("x=1 & b", "b & x=1")
    with pytest.raises(stormcf.StateError, match="matches 2 states"):
        m.state_index({"x": 1})
    with pytest.raises(stormcf.StateError, match="is Boolean"):
        m.state_index({"x": 1, "b": 1})


def test_state_naming(loan):
    rework = loan.state_index({"s": 5})
    assert loan.state_name(rework) == "s=5"
    assert loan.with_naming("labels").state_name(rework) == "Rework"
    assert loan.with_naming("index").state_name(rework) == f"state {rework}"
    assert loan.with_naming("q{s}").state_name(rework) == "q5"
    with pytest.raises(stormcf.ModelError, match="does not fit"):
        loan.with_naming("{nope}").state_name(rework)
    with pytest.raises(stormcf.ModelError, match="unknown state naming"):
        loan.with_naming("fancy")


def test_labels_and_rewards(loan):
    assert loan.label("rejected").sum() == 1
    assert loan.label("init")[loan.initial_state]
    with pytest.raises(stormcf.PropertyError, match='unknown label "nope"'):
        loan.label("nope")
    assert loan.reward_model().name == "steps"
    with pytest.raises(stormcf.PropertyError, match='unknown reward model "cost"'):
        loan.reward_model("cost")


def test_bad_arrays_are_rejected():
    P = np.array([[0.5, 0.5], [0.0, 1.0]])
    ok = stormcf.ExplicitModel(P, [0, 1, 2], [0, 0], [""], {}, {}, {}, 0)
    assert ok.n_states == 2
    with pytest.raises(stormcf.ModelError, match="row groups"):
        stormcf.ExplicitModel(P, [0, 2, 2], [0, 0], [""], {}, {}, {}, 0)
    with pytest.raises(stormcf.ModelError, match="sum to 0.9"):
        stormcf.ExplicitModel(np.array([[0.5, 0.4], [0.0, 1.0]]), [0, 1, 2], [0, 0], [""], {}, {}, {}, 0)


def test_step_rewards(loan):
    r = loan.step_rewards("steps")
    np.testing.assert_array_equal(r, (loan.valuations["s"] < 7)[loan.state_of_choice].astype(float))
    P = np.array([[0.5, 0.5], [0.0, 1.0]])
    m = stormcf.ExplicitModel(P, [0, 1, 2], [0, 0], [""], {}, {}, {"tr": stormcf.RewardModel("tr", transition=[1, 2, 0])},
                              0)
    with pytest.raises(stormcf.PropertyError, match="transition rewards"):
        m.step_rewards("tr")
    np.testing.assert_allclose(m.expected_choice_rewards("tr"), [1.5, 0.0])
