"""Batch inputs of every analysis command on the command line: the summary table, JSON lines in input order equal
to the single runs' documents, exit code 4 when an item failed, and one-line refusals (exit 2)."""
import json
from pathlib import Path

import pytest

import stormcf
from stormcf.report import without_times

from .conftest import IMPATIENT, LOAN, SEPSIS

SETCOVER = str(Path(__file__).resolve().parents[1] / "data" / "setcover" / "paper_example.json")


def json_lines(file):
    return [json.loads(line) for line in Path(file).read_text().splitlines()]


def single(cli, *argv):
    """The document of a single run (``--json -``)."""
    code, out, _ = cli(*argv, "--json", "-")
    assert code == 0
    return json.loads(out)


def same(batch_document, single_document, *differ):
    """Equal but for the ``batch`` key, the times, and the keys ``differ`` (e.g. the name of the input file)."""
    strip = lambda d: without_times({k: v for k, v in d.items() if k not in {"batch", *differ}})   # noqa: E731
    return strip(batch_document) == strip(single_document)


def test_icfmdp_paths_table_json_lines_and_exit_code(cli, sepsis_paths, tmp_path):
    out_file = tmp_path / "out.jsonl"
    code, out, err = cli("icfmdp", SEPSIS, "--paths", sepsis_paths, "--reward", "r", "--json", out_file)
    assert code == 4 and err == ""                                   # some items failed: exit code 4
    lines = out.splitlines()
    assert lines[0].startswith("sepsis.prism: MDP with 636 states")
    assert lines[1].split() == ["#", "input", "status", "worst", "case", "outcome", "changes", "at", "t", "pairs",
                                "seconds"]
    assert lines[2].split()[:3] == ["0", f"{sepsis_paths}:1", "ok"]
    assert lines[8].split()[2] == "error" and f"{sepsis_paths}:7: expected an object" in lines[8]
    assert lines[10].startswith("8 items: 6 ok, 2 error;") and "(serial)" in lines[10]
    documents = json_lines(out_file)
    assert [d["batch"]["index"] for d in documents] == list(range(8))
    first_path = tmp_path / "p0.json"
    first = json.loads(Path(sepsis_paths).read_text().splitlines()[0])
    first.pop("id")                                                  # the batch's key, not part of a path file
    first_path.write_text(json.dumps(first))
    assert same(documents[0], single(cli, "icfmdp", SEPSIS, "--path", first_path, "--reward", "r"))


def test_json_lines_on_stdout_hold_nothing_else(cli, sepsis_paths):
    code, out, _ = cli("explain-path", SEPSIS, "--paths", sepsis_paths, "--reward", "r", "--k", "1",
                       "--explanations", "20", "--json", "-")
    documents = [json.loads(line) for line in out.splitlines()]
    assert code == 4 and len(documents) == 8
    assert [d["status"] for d in documents] == ["ok"] * 6 + ["error"] * 2
    assert all(d["command"] == "explain-path" and d["schema"] == "stormcf/1" for d in documents)


def test_all_items_ok_exits_with_zero(cli, sepsis_paths, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(Path(sepsis_paths).read_text().splitlines()[:2]) + "\n")
    code, out, _ = cli("icfmdp", SEPSIS, "--paths", good, "--reward", "r", "--workers", "2")
    assert code == 0 and "2 items: 2 ok;" in out and "(loky, 2 workers)" in out


def test_check_strategies_with_fail_if_violated(cli, loan_strategies, tmp_path):
    out_file = tmp_path / "c.jsonl"
    argv = ["check", LOAN, "--strategies", loan_strategies, "-p", 'P=? [F "rejected"]', "-p",
            'P<=0.42 [F "rejected"]', "--fail-if-violated", "--json", out_file]
    code, out, _ = cli(*argv)
    assert code == 4                                                 # an item failed: 4 takes precedence over 3
    documents = json_lines(out_file)
    assert [d["status"] for d in documents] == ["violated", "holds", "error"]
    assert same(documents[1], single(cli, "check", LOAN, "-s", IMPATIENT, "-p", 'P=? [F "rejected"]', "-p",
                                     'P<=0.42 [F "rejected"]'), "strategy")
    assert documents[1]["strategy"] == f"{loan_strategies}:2"
    two = tmp_path / "two.jsonl"
    two.write_text("".join(Path(loan_strategies).read_text().splitlines(keepends=True)[:2]))
    assert cli(*argv[:3], two, *argv[4:])[0] == 3                    # a violated bound, no failed item


def test_check_table_has_one_column_per_property_headed_by_its_name_or_text(cli, loan_strategies):
    code, out, _ = cli("check", LOAN, "--strategies", loan_strategies, "-p", '"risk": P<=0.42 [F "rejected"]', "-p",
                       'R{"steps"}=? [F "granted" | "rejected"]')
    header, uniform, impatient = out.splitlines()[1:4]
    assert code == 4 and header.split()[3:] == ["risk", 'R{"steps"}=?', "[F", '"granted"', "|", '"rejected"]',
                                                "seconds"]
    risk = stormcf.check_strategy(stormcf.Strategy.load(stormcf.load_model(LOAN), IMPATIENT), 'P=? [F "rejected"]')
    assert f"{risk.value:.6g} (holds)" in impatient and "(violated)" in uniform
    assert header.index("risk") == impatient.index(f"{risk.value:.6g}")             # the value under its heading


def test_strategy_with_several_bounds_is_a_batch(cli, tmp_path):
    out_file = tmp_path / "s.jsonl"
    code, out, _ = cli("strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]', "-p",
                       'P<=0.3 [F "rejected"]', "--json", out_file)
    assert code == 0 and "2 items: 2 optimal;" in out
    documents = json_lines(out_file)
    assert [d["batch"]["input"] for d in documents] == [IMPATIENT, IMPATIENT]
    assert same(documents[0], single(cli, "strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]'))
    assert documents[0]["distance"]["weighted"] == pytest.approx(1.69408, abs=1e-5)   # seed 000, Example 3


def test_setcover_agents(cli, tmp_path):
    agents = tmp_path / "agents.jsonl"
    agents.write_text('[0, 0, 0, 0, 1]\n{"agent": [1, 1, 1, 1, 1], "id": "positive"}\n[0, 0]\n')
    out_file = tmp_path / "a.jsonl"
    code, out, _ = cli("setcover", SETCOVER, "--agents", agents, "--json", out_file)
    documents = json_lines(out_file)
    assert code == 4 and [d["status"] for d in documents] == ["optimal", "trivial", "error"]
    assert documents[0]["cost"] == 13 and documents[0]["actions"] == ["a2", "a4", "a7"]   # seed 003, Section 3
    assert same(documents[0], single(cli, "setcover", SETCOVER, "--agent", "0,0,0,0,1"))
    assert documents[1]["batch"]["id"] == "positive"
    assert f"{agents}:3: expected 5 entries" in documents[2]["error"]["message"]
    assert "MDP" not in out.splitlines()[0]                          # no model line: the source is the instance


def test_recourse_instances(cli, tmp_path):
    instances = tmp_path / "instances.jsonl"
    instances.write_text('0\n{"instance": 1}\n-1\n')
    ga = ["--generations", "3", "--offspring", "16", "--mutants", "4", "--no-exact"]
    out_file = tmp_path / "r.jsonl"
    code, _, _ = cli("recourse", "--dataset", "german", "--instances", instances, *ga, "--json", out_file)
    documents = json_lines(out_file)
    assert code == 4 and [d["status"] != "error" for d in documents] == [True, True, False]
    assert same(documents[1], single(cli, "recourse", "--dataset", "german", "--instance", "1", *ga))
    assert documents[2]["error"]["message"].startswith(f"{instances}:3: german: instance must lie in")


@pytest.mark.parametrize("argv, message", [
    (["icfmdp", LOAN, "--path", "p.json", "--workers", "2"], "--workers, --backend, --scheduler and --item-time-limit apply"),
    (["icfmdp", SEPSIS, "--paths", "{paths}", "--plot", "x.png"], "--plot draws one analysis"),
    (["icfmdp", SEPSIS, "--paths", "{paths}", "--scheduler", "tcp://x:1"], "a scheduler address applies to the dask"),
    (["icfmdp", SEPSIS, "--paths", "{paths}", "--backend", "dask"], "the dask backend needs the address"),
    (["icfmdp", SEPSIS, "--paths", "nothing.jsonl"], "nothing.jsonl: file not found"),
    (["icfmdp", "nothing.prism", "--paths", "{paths}"], "nothing.prism: file not found"),
    (["strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]', "-p", 'P<=0.3 [F "rejected"]', "--dot",
      "x.dot"], "--dot and --plot draw one counterfactual"),
    (["recourse", str(stormcf.example_path("loan.prism")), "--instances", "{paths}"], "--instances lists instances"),
])
def test_refusals_are_one_line(cli, argv, message, sepsis_paths):
    code, out, err = cli(*[str(sepsis_paths) if a == "{paths}" else a for a in argv])
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_an_unreachable_scheduler_is_one_line(cli, sepsis_paths):
    code, _, err = cli("icfmdp", SEPSIS, "--paths", sepsis_paths, "--backend", "dask", "--scheduler",
                       "tcp://127.0.0.1:9")
    assert code == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err and err.count("\n") == 1


def test_json_lines_on_the_real_stdout_keep_solver_banners_out(tmp_path):
    """In a real process, what solvers print from C code (HiGHS's banner) goes to stderr; stdout holds the lines."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "stormcf", "strategy", LOAN, "-s", IMPATIENT, "-p",
                           'P<=0.2 [F "rejected"]', "-p", 'P<=0.3 [F "rejected"]', "--json", "-"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0
    documents = [json.loads(line) for line in done.stdout.splitlines()]
    assert [d["batch"]["index"] for d in documents] == [0, 1] and [d["status"] for d in documents] == ["optimal"] * 2


def test_batch_lines_are_read_as_strictly_as_files(tmp_path):
    """A line with a key given twice is that item's error (as a path file with it would be), not a silent choice."""
    from stormcf.batch import read_jsonl
    file = tmp_path / "dup.jsonl"
    file.write_text('{"states": [0], "states": [1]}\n{"a": NaN}\n')
    first, second = read_jsonl(str(file))
    assert first.error is not None and "appears twice" in first.error and first.error.startswith(f"{file}:1")
    assert second.error is not None and second.error.startswith(f"{file}:2")
