"""``stormcf explain-path``: the O6/O7 numbers end to end, the JSON keys, and one line with exit code 2 for bad input."""
import json
import subprocess
import sys

import pytest

import stormcf

TREAT = str(stormcf.example_path("treat.prism"))
TREAT_PATH = str(stormcf.example_path("treat.path.json"))
ADAPTIVE = str(stormcf.example_path("adaptive.prism"))
ADAPTIVE_PATH = str(stormcf.example_path("adaptive.path.json"))
DEADLOCK = str(stormcf.example_path("deadlock.prism"))



def test_text_output(cli):
    code, out, err = cli("explain-path", TREAT, "--path", TREAT_PATH, "--reward", "health", "--k", "1",
                         "--k-max", "3", "--verify", "--baselines", "--explanations", "500")
    assert code == 0 and err == ""
    assert "best expected outcome with at most k changed actions, k = 0..3: 3, 3.6, 4.2, 4.2" in out
    assert "expected outcome 3.6 (Storm on the DTMC the policy induces: 3.6)" in out
    assert "1: coin -> drug" in out and "agrees with the DP" in out and "baseline greedy" in out


def test_json_keys_and_values(tmp_path, cli):
    out_file = tmp_path / "r.json"
    code, out, _ = cli("explain-path", ADAPTIVE, "--path", ADAPTIVE_PATH, "--reward", "r", "--k", "2",
                       "--k-max", "3", "--json", str(out_file), "--seed", "4")
    assert code == 0 and "best expected outcome with at most k changed actions" in out
    data = json.loads(out_file.read_text())
    for key in ("path", "value", "values_by_k", "improvement", "explanations", "policy", "timings"):
        assert key in data
    assert data["path"]["outcome"] == 2 and data["value"] == pytest.approx(514 / 81, rel=1e-9)
    assert [data["values_by_k"][str(k)] for k in range(4)] == pytest.approx([2, 368 / 81, 514 / 81, 574 / 81])
    assert data["improvement"] == pytest.approx(514 / 81 - 2)
    assert {tuple(e["actions"]) for e in data["explanations"]["explanations"]} == {
        ("a0", "a0", "a0"), ("a0", "a1", "a1"), ("a0", "a1", "a0")}
    first = data["policy"][0]
    assert first == {**first, "t": 0, "state": {"s": 0}, "l": 0, "action": "a0", "change": True, "probability": 1.0}
    assert sum(e["probability"] for e in data["policy"] if e["t"] == 2) == pytest.approx(1.0)
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["policy"]["value"] == data["value"] and checks["policy"]["expected"] == pytest.approx(data["value_dp"])
    assert checks["policy"]["agrees"] is True and data["command"] == "explain-path" and data["schema"] == "stormcf/1"


def test_json_to_stdout_and_mc(cli):
    code, out, _ = cli("explain-path", TREAT, "--path", TREAT_PATH, "--k", "2", "--estimator", "mc",
                       "--mc-samples", "400", "--json", "-", "--minimize")
    data = json.loads(out)
    assert code == 0 and data["estimator"] == {"name": "mc", "samples": 400, "seed": 0}
    assert data["optimization"] == "minimize" and data["value"] == 3.0 and data["approximate"] is True


def test_pins_and_forbid(cli):
    code, out, _ = cli("explain-path", TREAT, "--path", TREAT_PATH, "--k", "1", "--pin", "1:coin",
                       "--forbid", "coin")
    assert code == 0 and "0: coin -> drug" in out


@pytest.mark.parametrize("argv, message", [
    (["--k", "-1"], "argument --k: expected an integer >= 0, got -1"),
    (["--k", "1", "--k-max", "0"], "k_max"),
    (["--k", "1", "--pin", "7:coin"], "pin 7:coin"),
    (["--k", "1", "--pin", "one:coin"], "bad pin 'one:coin'"),
    (["--k", "1", "--pin", "0:pill"], "'pill' is not an action"),
    (["--k", "1", "--reward", "wealth"], 'unknown reward model "wealth"'),
    (["--k", "1", "--mc-samples", "0", "--estimator", "mc"], "argument --mc-samples: expected a positive integer"),
    (["--k", "1", "--explanations", "-5"], "argument --explanations: expected an integer >= 0"),
    (["--k", "1", "--seed", "-1"], "argument --seed: expected an integer >= 0"),
    (["--k", "0", "--pin", "1:drug"], "no counterfactual policy with at most k = 0 changes"),
])
def test_bad_parameters(argv, message, cli):
    code, out, err = cli("explain-path", TREAT, "--path", TREAT_PATH, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("steps, message", [
    ([{"state": {"s": 0}, "action": "stay"}, {"state": {"s": 2}, "action": ""}],
     "step 0: action 'stay' in state s=0 reaches s=2 with probability 0"),
    ([{"state": {"s": 2}, "action": "go"}], "step 0: action 'go' is not enabled in state s=2"),
    ([{"state": {"s": 1}, "action": "go"}], "step 0: no reachable state s=1"),
])
def test_bad_paths(tmp_path, steps, message, cli):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"steps": steps}))
    code, _, err = cli("explain-path", DEADLOCK, "--path", str(path), "--k", "1")
    assert code == 2 and message in err and err.count("\n") == 1


def test_subprocess_exit_code(tmp_path):
    bad = tmp_path / "p.json"
    bad.write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "stormcf", "explain-path", TREAT, "--path", str(bad), "--k", "1"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "not valid JSON" in done.stderr and done.stderr.count("\n") == 1
