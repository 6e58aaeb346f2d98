"""``stormcf icfmdp``: output, JSON, and one-line errors with exit code 2."""
import json

import pytest

import stormcf
from stormcf.cli import main

GRID = str(stormcf.example_path("gridworld.prism"))
PATH = str(stormcf.example_path("gridworld.catastrophic.json"))


def test_json_has_the_documented_keys(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["icfmdp", GRID, "-c", "p=0.4", "--path", PATH, "--reward", "r", "--baseline", "gumbel",
                 "--optimistic", "--json", str(out), "--plot", str(tmp_path / "r.png")]) == 0
    data = json.loads(out.read_text())
    for key in ("schema", "command", "status", "model", "path", "icfmdp", "worst_case_value", "policy", "optimistic",
                "baseline", "timings", "checks"):
        assert key in data
    assert data["command"] == "icfmdp" and data["status"] == "ok" and data["approximate"] is False
    steps = data["policy"]["steps"]
    assert data["path"]["horizon"] == 10 and len(steps) == 10 and "mean_bound_width" in data["icfmdp"]
    assert steps[0] == [{"state": {"x": 0, "y": 0}, "action": steps[0][0]["action"], "value": steps[0][0]["value"]}]
    checks = {c["name"]: c for c in data["checks"]}
    assert data["worst_case_value"] == checks["robust_policy"]["value"]
    assert all(c["agrees"] for c in data["checks"])
    assert abs(data["worst_case_value"] - data["policy"]["value"]) <= 1e-9 * abs(data["worst_case_value"])
    assert data["baseline"]["value"] >= data["baseline"]["worst_case_value"]
    assert (tmp_path / "r.png").stat().st_size > 1000
    text = capsys.readouterr().out
    assert "worst-case value" in text and "Gumbel-max policy, exact probabilities" in text


def test_monte_carlo_baseline_is_labelled(capsys):
    assert main(["icfmdp", GRID, "-c", "p=0.9", "--path", PATH, "--baseline", "gumbel", "--estimator", "mc",
                 "--mc-samples", "200", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"]["samples_per_pair"] == 200 and "Monte Carlo" in data["baseline"]["approximate"]
    assert data["approximate"] is True and any("estimates" in note for note in data["notes"])


def test_lp_bounds_and_assumptions(capsys):
    assert main(["icfmdp", GRID, "-c", "p=0.9", "--path", PATH, "--bounds", "lp", "--assumptions", "cs",
                 "--json", "-"]) == 0
    lp = json.loads(capsys.readouterr().out)
    assert main(["icfmdp", GRID, "-c", "p=0.9", "--path", PATH, "--assumptions", "cs", "--json", "-"]) == 0
    closed = json.loads(capsys.readouterr().out)
    assert lp["icfmdp"]["bounds"] == "lp" and abs(lp["worst_case_value"] - closed["worst_case_value"]) < 1e-6


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["steps"][1].update(action="jump"), "step 1: action 'jump' is not enabled"),
    (lambda d: d["steps"][2].update(state={"x": 3, "y": 3}), "step 1"),
    (lambda d: d["steps"][0].update(state={"x": 7, "y": 0}), "step 0"),
])
def test_bad_paths_exit_2_with_one_line(tmp_path, capsys, edit, message):
    data = json.loads(open(PATH).read())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["icfmdp", GRID, "-c", "p=0.9", "--path", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err and "bad.json" in err


def test_unknown_reward_exits_2(capsys):
    assert main(["icfmdp", GRID, "-c", "p=0.9", "--path", PATH, "--reward", "cost"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and 'unknown reward model "cost"' in err
    assert main(["icfmdp", GRID, "-c", "p=0.9", "--path", PATH, "--mc-samples", "0"]) == 2
    assert "positive integer" in capsys.readouterr().err


def test_transition_rewards_are_rejected():
    """Storm's PRISM parser has no transition rewards (they come from JANI/explicit models): the API rejects them
    with a PropertyError (the CLI turns it into one line, exit 2)."""
    import numpy as np
    P = np.array([[[0.5, 0.5]], [[0.0, 1.0]]])
    model = stormcf.icfmdp.mdp_from_arrays(P)
    model = stormcf.ExplicitModel(model.transitions, model.row_groups, model.choice_actions, model.action_names, {},
                                  model.valuations, {"tr": stormcf.RewardModel("tr", transition=[1.0, 2.0, 0.0])}, 0)
    path = stormcf.icfmdp.path_from_arrays(model, [0], [0], [1])
    with pytest.raises(stormcf.PropertyError, match="transition rewards"):
        stormcf.icfmdp.ICFMDPProblem(path, "tr")


def test_plot_has_the_observed_outcome_as_reference():
    """The values panel shows the observed path's reward from each step on: at t = 0 the observed outcome."""
    pytest.importorskip("matplotlib")
    from stormcf.icfmdp.plots import analysis_figure
    from stormcf.icfmdp.task import IntervalCounterfactualMDP
    model = stormcf.load_model(GRID, constants="p=0.4")
    result = IntervalCounterfactualMDP(reward="r")(model, json.loads(open(PATH).read()), PATH)
    fig = analysis_figure(result)
    observed = [line for line in fig.axes[1].get_lines() if line.get_label().startswith("observed path")]
    assert len(observed) == 1 and f"outcome {result.observed_reward:.6g}" in observed[0].get_label()
    rewards = result.problem.rewards[result.problem.path.choices]
    assert list(observed[0].get_ydata()) == pytest.approx([rewards[t:].sum() for t in range(len(rewards))])
    assert observed[0].get_ydata()[0] == pytest.approx(result.to_dict()["path"]["outcome"])
