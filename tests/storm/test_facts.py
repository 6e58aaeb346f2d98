"""The facts ``stormcf info`` reads straight from Storm's model (stormcf.storm.facts) against the same facts read from
the explicit model (ModelFacts.of): equal on the example models, stormpy's, a model with several choices of one
action in a state, PRISM transition rewards, JANI and DRN, under every naming scheme."""
from pathlib import Path

import pytest

import stormcf
from stormcf import storm
from stormcf.modelinfo import ModelFacts
from stormcf.storm import stormpy_example

from .test_load import test_drn_mdp_with_action_names_and_rewards as _drn_test
from .test_rewards import ISSUE_MODEL, MIXED_MODEL

MODELS = [(stormcf.example_path(name), constants) for name, constants in (
    ("loan.prism", None), ("sepsis.prism", None), ("frozenlake4.prism", None), ("gridworld.prism", "p=0.9"),
    ("adaptive.prism", None), ("treat.prism", None), ("deadlock.prism", None), ("person.prism", "p=0.8"),
    ("die.pm", "p=0.5,q=0.3"), ("stiff.pm", None), ("grid.prism", "N=4"))] + [
    (stormpy_example("mdp", "two_dice.nm"), None), (stormpy_example("mdp", "coin2.nm"), "K=2"),
    (stormpy_example("dtmc", "die.jani"), None)]
ZEROCONF = Path(__file__).parents[1] / "data" / "qvbs" / "zeroconf.prism"     # 5 states with two 'rec' choices


def _same_facts(path, constants=None, naming="valuation"):
    facts = storm.model_facts(path, constants, naming)
    model = stormcf.load_model(path, constants)
    assert facts == ModelFacts.of(model.with_naming(naming) if naming != "valuation" else model)
    assert facts.summary() == model.summary()
    assert set(facts.timings) >= {"build", "build_cpu", "extract"}
    return facts


@pytest.mark.parametrize(("path", "constants"), MODELS, ids=lambda x: getattr(x, "name", x))
def test_the_facts_from_storm_are_the_explicit_models(path, constants):
    _same_facts(path, constants)


@pytest.mark.parametrize("naming", ["valuation", "labels", "index", "{s:>3}/{{s}}"])
def test_every_naming_scheme(naming):
    facts = _same_facts(stormcf.example_path("loan.prism"), naming=naming)
    assert facts.initial_name == {"valuation": "s=0", "labels": "s0", "index": "state 0"}.get(
        naming, "  0/{s}")


def test_several_choices_of_one_action():
    facts = _same_facts(ZEROCONF, "N=20,K=2,reset=true")
    assert facts.shared_action_states == 5 and facts.shared_example[1] == ["rec#0", "rec#1"]


@pytest.mark.parametrize("text", [ISSUE_MODEL, MIXED_MODEL], ids=["transition rewards", "mixed rewards"])
def test_prism_transition_rewards(text, tmp_path):
    f = tmp_path / "tr.nm"
    f.write_text(text)
    assert "transition" in _same_facts(f).reward_models["r"]


def test_drn_and_refusals(tmp_path):
    _drn_test(tmp_path)
    facts = _same_facts(tmp_path / "m.drn")
    assert facts.initial_state == 0 and facts.variables == {} and facts.actions == ["done", "go", "stay"]
    with pytest.raises(stormcf.ModelError, match="'x' is not a variable"):
        storm.model_facts(stormcf.example_path("loan.prism"), naming="{x}")
    with pytest.raises(stormcf.ConstantsError, match="undefined constants N"):
        storm.model_facts(stormcf.example_path("grid.prism"))


def test_a_choice_with_several_labels(tmp_path):
    """A DTMC state whose commands [a] and [b] Storm merges into one choice labelled with both: named ``a,b``."""
    f = tmp_path / "ab.pm"
    f.write_text("dtmc\nmodule m\n s : [0..2] init 0;\n [a] s=0 -> 0.5 : (s'=1) + 0.5 : (s'=2);\n"
                 " [b] s=0 -> (s'=1);\n [] s>0 -> true;\nendmodule\n")
    assert _same_facts(f).actions == ["a,b"]
