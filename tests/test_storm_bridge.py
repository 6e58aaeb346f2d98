"""The Storm bridge: loading, the UMB extraction against the entry-by-entry loop, properties, exact builds."""
from fractions import Fraction

import numpy as np
import pytest
from stormpy.examples.files import _path as stormpy_example

import stormcf
from stormcf import storm

SHIPPED = [
    (stormpy_example("mdp", "die_selection.nm"), None),
    (stormpy_example("mdp", "coin2.nm"), "K=2"),
    (stormpy_example("mdp", "firewire.nm"), "delay=3,fast=0.5"),
    (stormpy_example("mdp", "maze_2.nm"), None),
    (stormpy_example("mdp", "slipgrid.nm"), None),
    (stormpy_example("mdp", "two_dice.nm"), None),
    (stormpy_example("dtmc", "die.jani"), None),
    (stormcf.example_path("loan.prism"), None),
]


def _same_model(a: stormcf.ExplicitModel, b: stormcf.ExplicitModel) -> None:
    assert a.n_states == b.n_states and a.n_choices == b.n_choices
    np.testing.assert_array_equal(a.row_groups, b.row_groups)
    np.testing.assert_array_equal(a.transitions.indptr, b.transitions.indptr)
    np.testing.assert_array_equal(a.transitions.indices, b.transitions.indices)
    np.testing.assert_array_equal(a.transitions.data, b.transitions.data)       # bit-identical doubles
    assert [a.action(r) for r in range(a.n_choices)] == [b.action(r) for r in range(b.n_choices)]
    assert a.labels.keys() == b.labels.keys()
    for k in a.labels:
        np.testing.assert_array_equal(a.labels[k], b.labels[k])
    assert a.rewards.keys() == b.rewards.keys()
    for k in a.rewards:
        for part in ("state", "choice", "transition"):
            x, y = getattr(a.rewards[k], part), getattr(b.rewards[k], part)
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_array_equal(x, y)
    assert a.initial_state == b.initial_state


@pytest.mark.parametrize("path,constants", SHIPPED, ids=lambda x: str(x).split("/")[-1] if x else "")
def test_umb_extraction_equals_entry_loop(path, constants):
    fast = stormcf.load_model(path, constants=constants)
    slow = stormcf.load_model(path, constants=constants, extraction="iteration")
    _same_model(fast, slow)
    assert fast.n_transitions == storm.storm_model_of(fast).nr_transitions
    rows = fast.transitions.sum(axis=1).A1
    np.testing.assert_allclose(rows, 1.0, atol=1e-12)


def test_umb_extraction_with_expression_labels_booleans_and_rewards(tmp_path):
    prism = tmp_path / "m.prism"
    prism.write_text("""mdp
module m
  x : [0..3] init 0;
  b : bool init false;
  [go]   x<3 -> 0.3 : (x'=x+1) + 0.7 : (x'=x);
  [flip] true -> 0.5 : (b'=!b) + 0.5 : true;
endmodule
rewards "t"
  [go] x=1 : 2;
  x>0 : 1;
endrewards
""")
    props = ['Pmax=? [F x/2>=1 & !b]']
    fast = stormcf.load_model(prism, properties=props)
    slow = stormcf.load_model(prism, properties=props, extraction="iteration")
    _same_model(fast, slow)
    expression = next(k for k in fast.labels if "x / 2" in k)
    p = stormcf.parse_property(fast, 'Pmax=? [F x/2>=1 & !b]')
    np.testing.assert_array_equal(p.target, fast.labels[expression])
    np.testing.assert_array_equal(p.target, (fast.valuations["x"] >= 2) & ~fast.valuations["b"])
    assert fast.valuations["b"].dtype == bool
    assert fast.rewards["t"].state is not None and fast.rewards["t"].choice is not None


def test_unlabelled_commands_get_module_command_names(tmp_path):
    f = tmp_path / "u.nm"
    f.write_text("mdp\nmodule m\n x : [0..1] init 0;\n [] x=0 -> (x'=1);\n [] x=0 -> 0.5:(x'=1) + 0.5:(x'=0);\n"
                 " [go] x=1 -> true;\nendmodule\n")
    m = stormcf.load_model(f)
    s0 = m.state_index({"x": 0})
    assert sorted(m.enabled_actions(s0)) == ["m_cmd_0", "m_cmd_1"]


def test_exact_transition_values_are_rational(loan):
    values = storm.exact_transition_values(loan)
    assert len(values) == loan.n_transitions
    assert Fraction(19, 20) in values and Fraction(1, 20) in values
    np.testing.assert_allclose([float(v) for v in values], loan.transitions.data, rtol=0, atol=1e-15)


def test_model_rebuilt_from_arrays_gives_same_values(loan):
    derived = stormcf.ExplicitModel(loan.transitions, loan.row_groups, loan.choice_actions, loan.action_names,
                                    loan.labels, loan.valuations, loan.rewards, loan.initial_state)
    a = stormcf.reach_probability(loan, "rejected", "min")
    b = stormcf.reach_probability(derived, "rejected", "min")
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_parse_property_fields(loan):
    p = stormcf.parse_property(loan, 'P<=0.2 [F "rejected"]')
    assert (p.operator, p.comparison, p.threshold, p.path) == ("P", "<=", Fraction(1, 5), "eventually")
    assert p.target.sum() == 1 and p.target[loan.state_index({"s": 8})]
    assert p.satisfied_by(Fraction(1, 5)) and not p.satisfied_by(0.2000001)
    q = stormcf.parse_property(loan, 'Pmax=? [!"granted" U<=3 "rejected"]')
    assert (q.optimization, q.path, q.step_bound, q.comparison) == ("max", "bounded_until", 3, None)
    assert q.constraint.sum() == loan.n_states - 1
    r = stormcf.parse_property(loan, 'R{"steps"}min=? [C<=4]')
    assert (r.operator, r.reward_model, r.path) == ("R", "steps", "cumulative")


@pytest.mark.parametrize("text,needle", [
    ('P=? [F "nolabel"]', 'unknown label "nolabel"'),
    ('R{"cost"}=? [F "granted"]', 'unknown reward model "cost"'),
    ('P=? [F "granted"', "cannot parse property"),
    ('P=? [F s>=7]', "pass the property when loading the model"),
])
def test_bad_properties_raise_property_error(loan, text, needle):
    with pytest.raises(stormcf.PropertyError, match=needle):
        stormcf.parse_property(loan, text)


def test_expression_property_given_at_load(tmp_path):
    m = stormcf.load_model(stormcf.example_path("loan.prism"), properties=["P=? [F s>=7]"])
    p = stormcf.parse_property(m, "Pmin=? [F s>=7]")
    assert p.target.sum() == 2


@pytest.mark.parametrize("text,error,needle", [
    ("mdp\nmodule m\n s : [0..2] init 0;\n [a] s=0 -> 0.5:(s'=1) + 0.5 (s'=2);\nendmodule\n",
     stormcf.ModelError, r"bad.prism:4:\d+: syntax error"),
    ("mdp\nconst int N;\nmodule m\n s : [0..N] init 0;\n [a] s<N -> (s'=s+1);\nendmodule\n",
     stormcf.ConstantsError, "undefined constants N"),
    ("ctmc\nmodule m\n s : [0..1] init 0;\n [] s=0 -> 2:(s'=1);\nendmodule\n",
     stormcf.ModelError, "CTMC"),
    ("mdp\nmodule m\n s : [0..2] init 0;\n [a] s=0 -> 0.5:(s'=1) + 0.6:(s'=2);\nendmodule\n",
     stormcf.ModelError, "probabilities of action 'a' in state s=0 sum to 1.1, not 1"),
])
def test_bad_models(tmp_path, text, error, needle):
    f = tmp_path / "bad.prism"
    f.write_text(text)
    with pytest.raises(error, match=needle):
        stormcf.load_model(f)


def test_constants_errors():
    fw = stormpy_example("mdp", "firewire.nm")
    with pytest.raises(stormcf.ConstantsError, match="undefined constants delay"):
        stormcf.load_model(fw)
    with pytest.raises(stormcf.ConstantsError, match="nope"):
        stormcf.load_model(fw, constants="delay=3,fast=0.5,nope=1")
    m = stormcf.load_model(fw, constants={"delay": 3, "fast": 0.5})
    assert m.n_states == 4093 and m.source == "firewire.nm (delay=3,fast=0.5)"


def test_missing_file():
    with pytest.raises(stormcf.ModelError, match="nowhere.prism: file not found"):
        stormcf.load_model("nowhere.prism")


def test_shipped_example_resolves_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = stormcf.load_model("prism_models/loan.prism")
    assert m.n_states == 9


def test_drn_mdp_with_action_names_and_rewards(tmp_path):
    f = tmp_path / "m.drn"
    f.write_text("""@type: MDP
@parameters

@reward_models
cost
@nr_states
3
@nr_choices
4
@model
state 0 [0] init
\taction go [2]
\t\t1 : 0.25
\t\t2 : 0.75
\taction stay [1]
\t\t0 : 1
state 1 [0] goal
\taction done [0]
\t\t1 : 1
state 2 [0]
\taction done [0]
\t\t2 : 1
""")
    m = stormcf.load_model(f)
    assert (m.n_states, m.n_choices, m.valuations) == (3, 4, {})
    assert sorted(m.enabled_actions(0)) == ["go", "stay"]
    np.testing.assert_array_equal(m.expected_choice_rewards("cost"), [2, 1, 0, 0])
    assert m.state_name(2) == "state 2"
    go = stormcf.Strategy.deterministic(m, [m.choice_of(0, "go"), 2, 3])
    assert stormcf.check_strategy(go, 'P=? [F "goal"]', exact=True).exact == Fraction(1, 4)
    with pytest.raises(stormcf.StateError, match="no state valuations"):
        m.state_index({"s": 0})
    with pytest.raises(stormcf.ConstantsError, match="DRN files have no constants"):
        stormcf.load_model(f, constants="N=1")


def test_jani_with_transient_variables(tmp_path):
    """A JANI model (exported by Storm from loan.prism) has transient variables for labels and rewards: they are
    not state variables."""
    import stormpy
    import stormpy.io
    program = stormpy.parse_prism_program(str(stormcf.example_path("loan.prism")))
    jani, _ = program.to_jani([])
    stormpy.io.export_jani_to_file(str(tmp_path / "loan.jani"), jani, [])
    m = stormcf.load_model(tmp_path / "loan.jani")
    assert "steps" not in m.valuations and "rejected" not in m.valuations and "s" in m.valuations
    assert m.rewards["steps"].state is not None
    sigma = stormcf.Strategy.load(m, stormcf.example_path("loan.impatient.json"))
    assert stormcf.check_strategy(sigma, 'P=? [F "rejected"]', exact=True).exact == Fraction(411, 1000)


def test_reward_property_without_name_uses_the_only_reward_model(loan):
    p = stormcf.parse_property(loan, 'Rmax=? [C<=3]')
    assert p.reward_model == "steps" and p.path == "cumulative"
