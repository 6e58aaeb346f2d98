"""``stormcf learn`` end to end: both input forms, the files it writes, and the existing analyses on its output."""
import json
from fractions import Fraction

import numpy as np
import pytest

import stormcf
from stormcf.cli import main
from stormcf.learn import LearnError, LearnProblem, learn_mdp, read_log
from stormcf.storm import exact_transition_values

LOAN_ACTIONS = "Apply,Consult,Quit,Submit"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_learn_paired_form_then_counterfactual(tmp_path, capsys, data):
    model, sigma = tmp_path / "learned.prism", tmp_path / "sigma.json"
    code, out, err = run(capsys, "learn", data / "loan_paired.csv", "--out", model, "--strategy-out", sigma,
                         "--label", "negative=rejected", "--reward", "cost=Submit:2.5,Consult:1", "--json",
                         tmp_path / "r.json")
    assert code == 0 and err == ""
    assert "learned by IOAlergia" in out and 'P=? [F "negative"] = ' in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["command"] == "learn" and doc["status"] == "ok" and doc["schema"] == "stormcf/1"
    learned = doc["learned"]
    assert learned["states"] == doc["model"]["states"] == 8 and learned["max_out_degree"] == 2
    assert doc["coverage"]["cases_replayed"] == doc["coverage"]["cases"] == 300
    assert doc["reward_models"] == ["cost", "steps"]
    assert doc["checks"][0]["property"] == 'P=? [F "negative"]'
    # the existing analyses run on the learned model and strategy unchanged
    code, out, err = run(capsys, "check", model, "--strategy", sigma, "--prop", 'P=? [F "negative"]')
    assert code == 0 and f"= {doc['checks'][0]['value']:.6g}" in out
    code, out, err = run(capsys, "strategy", model, "--strategy", sigma, "--prop", 'P<=0.2 [F "negative"]',
                         "--controllable-actions", "Submit,Quit,Consult", "--state-names", "labels", "--json", "-")
    assert code == 0, err
    cf = json.loads(out)
    assert cf["status"] == "optimal" and cf["probability"] <= 0.2 + 1e-9
    assert {c["name"] for c in cf["changes"]} <= {"Rework", "Error"}


def test_learn_activity_form_gives_the_same_model(tmp_path, capsys, data):
    """The activity twin of the paired log: the same automaton, with the provider's step as 'continue'."""
    paired = learn_mdp(LearnProblem(read_log(data / "loan_paired.csv")))
    code, out, err = run(capsys, "learn", data / "loan_activity.csv", "--actions", LOAN_ACTIONS,
                         "--out", tmp_path / "a.prism", "--json", "-")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["log"]["form"] == "activity" and doc["log"]["implicit"]["continue"] > 0
    activity = stormcf.load_model(tmp_path / "a.prism")
    assert activity.n_states == paired.model.n_states and activity.n_transitions == paired.model.n_transitions
    assert sorted(activity.action_names) == sorted(
        "continue" if a == "Provider" else a for a in paired.model.action_names)
    for prop in ('P=? [F "rejected"]', 'P=? [F "granted"]'):
        assert stormcf.check_model(activity, "Pmax" + prop[1:]).value == pytest.approx(
            stormcf.check_model(paired.model, "Pmax" + prop[1:]).value, abs=1e-12)


def test_probabilities_are_the_exact_frequencies(data):
    """Storm's exact build of the written PRISM file has the log's frequencies n(s,a,s')/n(s,a) as fractions."""
    result = learn_mdp(LearnProblem(read_log(data / "loan_paired.csv")))
    exact = exact_transition_values(result.model)
    a = result.automaton
    totals = {}
    for s, act, n in zip(a.source.tolist(), a.action.tolist(), a.count.tolist()):
        totals[s, act] = totals.get((s, act), 0) + n
    expected = {}
    for s, act, t, n in zip(a.source.tolist(), a.action.tolist(), a.target.tolist(), a.count.tolist()):
        expected[s, result.problem.action_ids[result.problem.log.actions[act]], t] = Fraction(n, totals[s, act])
    m = result.model
    learned = m.valuations["s"]
    P = m.transitions
    seen = 0
    for row in range(m.n_choices):
        s = int(learned[m.state_of_choice[row]])
        for k in range(P.indptr[row], P.indptr[row + 1]):
            key = (s, m.action(row), int(learned[P.indices[k]]))
            if m.action(row):
                assert exact[k] == expected[key]
                seen += 1
            else:
                assert exact[k] == 1 and key[0] == key[2]        # the self-loop of a state without successors
    assert seen == a.source.size
    assert any(not_decimal(v) for v in exact)                     # e.g. 141/287, no finite decimal


def not_decimal(x: Fraction) -> bool:
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d > 1


def test_drn_output_is_the_same_model(tmp_path, data):
    result = learn_mdp(LearnProblem(read_log(data / "loan_paired.csv"), rewards={"cost": {"Submit": "1/3"}},
                                    model_path=tmp_path / "m.prism", drn_path=tmp_path / "m.drn",
                                    labels={"bad": ["rejected"]}))
    drn = stormcf.load_model(tmp_path / "m.drn")
    prism = result.model
    assert (drn.n_states, drn.n_choices, drn.n_transitions) == (prism.n_states, prism.n_choices, prism.n_transitions)
    for prop in ('Pmax=? [F "bad"]', 'Pmin=? [F "granted"]', 'R{"steps"}max=? [F "deadlock"]'):
        assert stormcf.check_model(drn, prop).value == pytest.approx(stormcf.check_model(prism, prop).value,
                                                                     abs=1e-12)
    assert stormcf.check_model(drn, 'R{"cost"}max=? [C<=10]').value == pytest.approx(
        stormcf.check_model(prism, 'R{"cost"}max=? [C<=10]').value, abs=1e-12)
    assert (tmp_path / "m.drn").read_text() == result.drn and "@type: MDP" in result.drn


def test_final_only_labels(tmp_path):
    """'rejected' ends case 1 but not case 2: the final-only label holds only where a case ended with it."""
    path = tmp_path / "log.csv"
    path.write_text("case,action,observation\n1,,s\n1,a,rejected\n2,,s\n2,a,rejected\n2,retry,granted\n"
                    "3,,s\n3,a,granted\n")
    result = learn_mdp(LearnProblem(read_log(path), labels={"negative": ["rejected"], "any_rejected": ["rejected"]},
                                    final_only={"negative"}))
    values = {c.property: c.value for c in result.checks}
    assert values['P=? [F "negative"]'] == pytest.approx(1 / 3)
    assert values['P=? [F "any_rejected"]'] == pytest.approx(2 / 3)
    m = result.model
    assert np.sum(m.labels["rejected"]) == 2 and np.sum(m.labels["negative"]) == 1


def test_laplace_smoothing(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("case,action,observation\n" + "".join(f"{c},,s\n{c},{'a' if c < 3 else 'b'},t\n"
                                                          for c in range(4)))
    plain = learn_mdp(LearnProblem(read_log(path))).strategy
    smooth = learn_mdp(LearnProblem(read_log(path), laplace=1)).strategy
    s0 = plain.model.initial_state
    assert plain.distribution(s0) == pytest.approx({"a": 3 / 4, "b": 1 / 4})
    assert smooth.distribution(smooth.model.initial_state) == pytest.approx({"a": 4 / 6, "b": 2 / 6})


def test_every_decision_state_is_in_the_strategy_file(tmp_path, data):
    result = learn_mdp(LearnProblem(read_log(data / "loan_paired.csv"), strategy_path=tmp_path / "s.json"))
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["default"] == "error"
    assert len(saved["states"]) == int(result.model.decision_states.sum())
    back = stormcf.Strategy.load(result.model, tmp_path / "s.json")
    assert back.allclose(result.strategy)


@pytest.mark.parametrize("kwargs, message", [
    ({"labels": {"bad name": ["rejected"]}}, "label name 'bad name' is not a PRISM identifier"),
    ({"labels": {"neg": ["nope"]}}, "label 'neg': no observation 'nope'"),
    ({"labels": {"rejected": ["granted"]}}, "label 'rejected' is already the label of the observation 'rejected'"),
    ({"final_only": {"neg"}}, "final-only label 'neg' is not a grouped label"),
    ({"rewards": {"steps": {"Apply": 1}}}, "the reward model 'steps' (step counts) is written by stormcf"),
    ({"rewards": {"cost": {"Fly": 1}}}, "reward 'cost': no action 'Fly'"),
    ({"rewards": {"cost": {"Apply": "lots"}}}, "reward 'cost', action 'Apply': 'lots' is not a number"),
    ({"laplace": -1}, "Laplace pseudo-count must be a number >= 0"),
    ({"learner": "jalergia"}, "unknown learner 'jalergia'"),
    ({"model_path": "m.txt"}, "m.txt: the file name must end in .prism or .nm"),
    ({"model_path": "/no/such/dir/m.prism"}, "cannot write there"),
])
def test_bad_options(data, kwargs, message):
    with pytest.raises(LearnError) as err:
        LearnProblem(read_log(data / "loan_paired.csv"), **kwargs)
    assert message in str(err.value)


@pytest.mark.parametrize("argv, message", [
    (["--alpha", "lots"], "--alpha: 'lots' is neither a number nor 'auto'"),
    (["--alpha", "3"], "alpha must lie in (0, 2]"),
    (["--label", "negative"], "--label: expected NAME=OBS1,OBS2"),
    (["--reward", "cost=Submit"], "--reward cost: expected ACTION:VALUE"),
    (["--actions", "Apply"], "actions are given in the paired form's 'action' column"),
    (["--prop", 'P=? [F "nope"]'], "nope"),
])
def test_bad_arguments_exit_2(tmp_path, capsys, data, argv, message):
    code, out, err = run(capsys, "learn", data / "loan_paired.csv", "--out", tmp_path / "m.prism",
                         "--strategy-out", tmp_path / "s.json", *argv)
    assert code == 2 and err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []            # nothing written, no staged file left behind


def test_aalpy_learner_gives_the_same_model(data):
    log = read_log(data / "loan_paired.csv")
    ours, theirs = learn_mdp(LearnProblem(log)), learn_mdp(LearnProblem(log, learner="aalpy"))
    assert ours.automaton.same_as(theirs.automaton) and ours.prism.replace("(stormcf)", "") == \
        theirs.prism.replace("(aalpy)", "")


def test_demo_learn(capsys, tmp_path):
    code, out, err = run(capsys, "demo-learn", "--cases", "2000", "--dir", tmp_path)
    assert code == 0, err
    assert "learned model" in out and out.count("checked by Storm") == 2
    assert (tmp_path / "loan_log.csv").is_file() and (tmp_path / "learned.prism").is_file()
    assert "In state 'Rework'" in out.split("on the learned model:")[1]


def test_demo_learn_does_not_show_the_temporary_files_it_removes(capsys):
    import tempfile
    code, out, err = run(capsys, "demo-learn", "--cases", "300")
    assert code == 0, err
    assert "(in a temporary folder, removed at the end; --dir DIR keeps the files)" in out
    assert "written to learned.prism" in out and tempfile.gettempdir() not in out


def test_demo_learn_json_on_stdout_is_one_document():
    """A fresh process (HiGHS prints its banner from C on the first solve): stdout holds exactly the JSON."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "stormcf", "demo-learn", "--cases", "500", "--json", "-"],
                         capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    assert doc["command"] == "demo-learn" and doc["facts"]["learn"]["command"] == "learn"
    assert doc["facts"]["counterfactual"]["learned model"]["status"] == "optimal"
