"""``stormcf recourse``: both fronts end to end, the JSON keys, the plot, and one line with exit code 2 for bad
input."""
import json
import os

import pytest

import stormcf
from stormcf.cli import main

PERSON = str(stormcf.example_path("person.prism"))
SMALL = ["--generations", "15", "--offspring", "80", "--mutants", "30"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_prism_front_text(capsys):
    code, out, err = run(capsys, "recourse", PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost",
                         "--effort", "effort", *SMALL)
    assert code == 0 and err == ""
    assert "least cost: 22.5 (Storm: R{\"cost\"}min=? [F \"accept\"]" in out and "gap 0" in out
    assert "1. getDegree: edu 0 → 1; effort 5 x discount 0.5 = cost 2.5" in out
    assert "3. changeJob: job 0 → 1; effort 10 x discount 0.5 = cost 5" in out


def test_prism_front_json_to_stdout(capsys):
    code, out, _ = run(capsys, "recourse", PERSON, "-c", "p=0.8", "--target", "accept", "--cost", "cost",
                       "--threshold", "0.8", "--json", "-", *SMALL)
    data = json.loads(out)
    assert code == 0 and data["command"] == "recourse" and data["status"] == "feasible"
    for key in ("front", "optimal_cost", "gap", "generations", "evaluations", "time_s", "checks", "timings"):
        assert key in data
    best = data["front"][0]
    assert best["actions"] == ["getDegree", "moveUS", "changeJob"]
    assert best["cost"] == pytest.approx(23.0) and best["p_accept"] == pytest.approx(0.8)
    assert {"values", "effort", "gower", "freq", "states"} <= set(best)
    assert best["states"][1] == [{"state": {"edu": 0, "job": 0, "loc": 0}, "probability": pytest.approx(0.2)},
                                 {"state": {"edu": 1, "job": 0, "loc": 0}, "probability": pytest.approx(0.8)}]
    assert data["optimal_cost"] is None and data["gap"] is None
    assert data["generations"] == 15 and data["evaluations"] > 0


def test_dataset_front_with_grid_json_and_plot(capsys, tmp_path):
    out_file, plot = tmp_path / "r.json", tmp_path / "front.png"
    code, out, _ = run(capsys, "recourse", "--dataset", "adult", "--instance", "2", "--grid", "5", *SMALL,
                       "--json", str(out_file), "--plot", str(plot), "--storm-front")
    assert code == 0 and "least cost:" in out and plot.stat().st_size > 10_000
    assert "every plan of the front lies inside it" in out
    data = json.loads(out_file.read_text())
    assert data["optimal_cost"] == pytest.approx(data["front"][0]["cost"])
    assert data["gap"] == pytest.approx(data["ga_cost"] - data["optimal_cost"])
    assert data["model"] is None and data["exact_model"]["states"] > 1
    assert data["storm_front"]["front_inside"] and min(p[0] for p in data["storm_front"]["points"]) == \
        pytest.approx(data["optimal_cost"], abs=1e-6)


@pytest.mark.parametrize("argv, message", [
    ([], "give either a PRISM MODEL"),
    ([PERSON, "-c", "p=1", "--target", "accept"], "needs --target LABEL and --cost REWARD"),
    ([PERSON, "-c", "p=1", "--target", "acc", "--cost", "cost"], 'unknown label "acc"'),
    ([PERSON, "-c", "p=1", "--target", "accept", "--cost", "money"], 'unknown reward model "money"'),
    ([PERSON, "--target", "accept", "--cost", "cost"], "undefined constants p"),
    ([PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost", "--objectives", "gower"], "must include cost"),
    ([PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost", "--bias", "2"], "bias must lie in [0, 1]"),
    ([PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost", "--generations", "0"], "generations"),
    (["--dataset", "german", "--instance", "5000"], "instance must lie in"),
    ([PERSON, "--dataset", "adult"], "give either a PRISM MODEL"),
])
def test_bad_input_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "recourse", *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_ctrl_c_while_the_classifier_trains_ends_the_command(tmp_path):
    """scikit-learn trains the data set's classifier (Adult: 24 CPU s) without safe points, and its training loop
    catches KeyboardInterrupt: the first Ctrl-C ends the command there (exit code 130, no answer yet), and no
    half-trained classifier is cached. Before, the training went on to its end and the command after it."""
    import signal
    import subprocess
    import sys
    cache, out = tmp_path / "cache", tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "stormcf", "recourse", "--dataset", "adult", "--instance", "0",
                             "-v", "--json", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "STORMCF_CACHE": str(cache)})
    assert next((line for line in proc.stderr if "training the adult classifier" in line), None), proc.wait()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130 and stderr.endswith("stormcf: interrupted\n"), stderr
    assert not out.exists() and not list(cache.rglob("*.npz"))
