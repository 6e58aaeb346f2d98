"""``stormcf setcover``, ``setcover-data``, ``setcover-learn``, ``setcover-evaluate``: output, JSON, exit codes."""
import json

from setcover_cases import PAPER


def test_setcover_paper_example_json(tmp_path, cli):
    code, out, err = cli("setcover", PAPER, "--agent", "0,0,0,0,1", "--method", "milp", "--json",
                         tmp_path / "r.json")
    assert code == 0 and err == ""
    assert "Optimal counterfactual explanation (cost 13): a2, a4, a7" in out and "not unique" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["command"] == "setcover" and data["status"] == "optimal" and data["actions"] == ["a2", "a4", "a7"]
    assert data["cost"] == 13.0 and data["final_state"] == [1, 1, 1, 1, 1] and data["unique"] is False
    assert data["method"] == "milp" and data["time_s"] >= 0 and all(c["agrees"] is not False for c in data["checks"])


def test_setcover_json_to_stdout_is_one_document(cli):
    code, out, _ = cli("setcover", PAPER, "--agent", "1,1,1,1,1", "--json", "-")
    assert code == 0 and json.loads(out)["status"] == "trivial"


def test_setcover_bad_input_is_one_line_and_exit_2(tmp_path, cli):
    for argv, words in [(["--agent", "0,0,1"], "expected 5 entries"), (["--agent", "0,x,0,0,1"], "integers"),
                        (["--agent", "0,0,0,0,1", "--group", "g"], "unknown group")]:
        code, out, err = cli("setcover", PAPER, *argv)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"features": ["a"], "thresholds": [1], "actions": [{"name": "x", "effect": [1], "cost": -1}]}')
    code, _, err = cli("setcover", bad, "--agent", "0")
    assert code == 2 and "action 'x': cost must be a finite number >= 0" in err
    bad.write_text('{"features": ["a"],\n "thresholds": [1,]}')
    code, _, err = cli("setcover", bad, "--agent", "0")
    assert code == 2 and "bad.json:2:" in err


def test_learning_pipeline(tmp_path, cli):
    data, gen = tmp_path / "d.npz", tmp_path / "g.npz"
    code, out, _ = cli("setcover-data", data, "-n", 10, "-A", 20, "--draws", 2000, "--seed", 3,
                       "--instance-out", tmp_path / "i.json")
    assert code == 0 and "labelled by storm" in out
    code, out, _ = cli("setcover", tmp_path / "i.json", "--agent", "0,0,0,0,0,1,1,1,1,1")
    assert code == 0 and "status: optimal" in out
    code, out, _ = cli("setcover-learn", data, "--generator", "mc", "--hidden", "32", "--epochs", 3,
                       "--augment", 20, "--out", gen)
    assert code == 0 and (tmp_path / "g.test.npz").exists()
    code, out, _ = cli("setcover-evaluate", gen, tmp_path / "g.test.npz", "--top-k", 5, "--certify", "lp",
                       "--json", "-")
    metrics = json.loads(out)["facts"]
    assert code == 0 and metrics["guaranteed_valid_rate"] == 1.0 and metrics["top_k"] == 5
    code, _, err = cli("setcover-evaluate", gen, PAPER)
    assert code == 2 and "not a labelled set-cover data set" in err
