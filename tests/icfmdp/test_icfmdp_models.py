"""The shipped PRISM models against the environments they transcribe: the authors' GridWorld and Sepsis matrices,
gymnasium's FrozenLake tables."""
import re
from pathlib import Path

import numpy as np
import pytest

import stormcf

SEPSIS_ACTIONS = ["none", "V", "E", "EV", "A", "AV", "AE", "AEV"]



@pytest.mark.parametrize("p", ["0.9", "0.4"])
def test_gridworld_is_the_authors_environment(reference_instances, p):
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants=f"p={p}")
    d = np.load(reference_instances / f"lally_gridworld_{p}_sampled_seed0.npz")
    index = 4 * model.valuations["y"] + model.valuations["x"]
    assert model.n_states == 16 and model.n_transitions == int((d["P"] > 0).sum())
    names = ["up", "right", "down", "left"]
    M = model.transitions.toarray()
    for r in range(model.n_choices):
        s = int(model.state_of_choice[r])
        mine = np.zeros(16)
        mine[index] = M[r]
        # Storm evaluates (1-p)/3 exactly; the authors' floats differ in the last bit
        np.testing.assert_allclose(mine, d["P"][index[s], names.index(model.action(r))], atol=1e-16, rtol=0)
    assert np.array_equal(model.rewards["r"].state, d["state_rewards"][index])
    assert model.label("goal").sum() == 1 and index[model.label("danger")][0] == 6


@pytest.mark.parametrize("name,key,n", [("frozenlake4", "P4", 4), ("frozenlake8", "P8", 8)])
def test_frozenlake_is_gymnasiums_table(name, key, n):
    table = np.load(Path(__file__).parent / "data" / "frozenlake_gymnasium.npz")[key]
    model = stormcf.load_model(stormcf.example_path(f"{name}.prism"))
    index = n * model.valuations["y"] + model.valuations["x"]
    assert model.n_states == n * n
    names = ["left", "down", "right", "up"]
    M = model.transitions.toarray()
    for r in range(model.n_choices):
        mine = np.zeros(n * n)
        mine[index] = M[r]
        np.testing.assert_allclose(mine, table[index[model.state_of_choice[r]], names.index(model.action(r))],
                                   atol=1e-15, rtol=0)


def test_frozenlake4_success_probability():
    """The optimal probability of reaching the goal on the slippery 4x4 lake is 14/17 (known for FrozenLake-v1)."""
    model = stormcf.load_model(stormcf.example_path("frozenlake4.prism"))
    assert stormcf.reach_probability(model, "goal", "max")[model.initial_state] == pytest.approx(14 / 17, abs=1e-9)


NON_DIABETIC = {"diabetic": 0, "hr0": 0, "bp0": 1, "o20": 0, "glu0": 2, "abx0": 0, "vaso0": 1, "vent0": 0}


@pytest.mark.parametrize("patient", [None, NON_DIABETIC])
def test_sepsis_is_the_simulators_mdp(reference_instances, tmp_path, patient):
    """The reference Sepsis P is Oberst & Sontag's estimate from 10,000 simulator draws per (s, a) (multiples of
    1e-4). The PRISM model gives the exact probabilities: every entry agrees within 5.5 binomial standard errors,
    every transition of the estimate exists in the model, and the model's transitions the estimate never drew are
    rare (probability <= 1.5e-3, so 10,000 draws miss them with probability >= 3e-7)."""
    file = stormcf.example_path("sepsis.prism")
    if patient is not None:      # the patient is set in the model's constants (defaults: the authors' state 1348)
        text = file.read_text()
        for name, value in patient.items():
            text = re.sub(rf"const int {name} = \d+;", f"const int {name} = {value};", text)
        file = tmp_path / "sepsis.prism"
        file.write_text(text)
    model = stormcf.load_model(file)
    d = np.load(reference_instances / "lally_sepsis_sampled_seed0.npz")
    v = model.valuations
    diabetic = 1 if patient is None else 0
    index = 720 * diabetic + 240 * v["hr"] + 80 * v["bp"] + 40 * v["o2"] + 8 * v["glu"] + 4 * v["abx"] \
        + 2 * v["vaso"] + v["vent"]
    assert model.n_states > 300
    M = model.transitions.toarray()
    mine = np.zeros((model.n_choices, 1440))
    mine[:, index] = M
    ref = d["P"][index[model.state_of_choice], [SEPSIS_ACTIONS.index(model.action(r)) for r in range(model.n_choices)]]
    se = np.sqrt(np.maximum(mine * (1 - mine), 1e-12) / 10_000)
    assert np.all(np.abs(mine - ref) <= 5.5 * se + 1e-12)
    assert not np.any((ref > 0) & (mine == 0))
    assert mine[(mine > 0) & (ref == 0)].max() <= 1.5e-3
    assert np.array_equal(model.rewards["r"].state, d["state_rewards"][index])
    assert np.array_equal(model.label("absorbing"), d["sink_state"][index])
