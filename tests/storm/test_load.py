"""Loading (stormcf.storm.load): PRISM, JANI and DRN files, constants, names, errors, model types."""
from fractions import Fraction

import numpy as np
import pytest

import stormcf
from stormcf.storm import stormpy_example


def test_unlabelled_commands_get_module_command_names(tmp_path):
    f = tmp_path / "u.nm"
    f.write_text("mdp\nmodule m\n x : [0..1] init 0;\n [] x=0 -> (x'=1);\n [] x=0 -> 0.5:(x'=1) + 0.5:(x'=0);\n"
                 " [go] x=1 -> true;\nendmodule\n")
    m = stormcf.load_model(f)
    s0 = m.state_index({"x": 0})
    assert sorted(m.enabled_actions(s0)) == ["m_cmd_0", "m_cmd_1"]


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


@pytest.mark.parametrize("kind,name,type_name", [
    ("smg", "example_smg.nm", "SMG"),
    ("pomdp", "maze_2.prism", "POMDP"),
    ("ctmc", "tiny.sm", "CTMC"),
    ("ma", "simple.ma", "MA"),
    ("pomdp", "maze.drn", "POMDP"),
])
def test_unsupported_model_types_are_refused_in_one_line(kind, name, type_name):
    with pytest.raises(stormcf.ModelError) as err:
        stormcf.load_model(stormpy_example(kind, name))
    assert str(err.value) == f"{stormpy_example(kind, name)}: stormcf works on MDPs and DTMCs, not {type_name} models"


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
    assert stormcf.check_model(m, "Pmin=? [F s>=7]").value == pytest.approx(stormcf.check_model(
        stormcf.load_model(stormcf.example_path("loan.prism")), "Pmin=? [F s>=7]").value, abs=1e-12)


def test_info_shows_choice_names(capsys):
    from pathlib import Path
    from stormcf.cli import main
    zeroconf = Path(__file__).resolve().parents[1] / "data" / "qvbs" / "zeroconf.prism"
    assert main(["info", str(zeroconf), "-c", "N=20,K=2,reset=true"]) == 0
    out = capsys.readouterr().out
    assert "MDP with 670 states" in out                                  # QVBS: Storm, 670 states
    assert "choice names:  5 state(s) have several choices of one action" in out and "rec#0, rec#1 in state" in out


def test_a_model_with_an_init_block_loads_and_its_declarations_are_still_checked(tmp_path):
    """With ``init ... endinit`` the variables have no initial values of their own: reading one (to check it lies
    in the range) killed the process with SIGSEGV; the ranges are still checked."""
    text = "dtmc\nmodule m\n  x : [0..3];\n  [] x<3 -> (x'=x+1);\n  [] x=3 -> true;\nendmodule\ninit x=1 endinit\n"
    (tmp_path / "init.prism").write_text(text)
    model = stormcf.load_model(tmp_path / "init.prism")
    assert model.n_states == 3 and model.valuations["x"][model.initial_state] == 1
    (tmp_path / "empty.prism").write_text(text.replace("[0..3]", "[3..0]"))
    with pytest.raises(stormcf.ModelError, match=r"empty.prism:3: the variable x has the empty range \[3..0\]"):
        stormcf.load_model(tmp_path / "empty.prism")
