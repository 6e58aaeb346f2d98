"""The command line: the loan numbers, and one clear line with exit code 2 for every bad input."""
import json
import subprocess
import sys

import pytest

import stormcf

LOAN = str(stormcf.example_path("loan.prism"))
IMPATIENT = str(stormcf.example_path("loan.impatient.json"))



def test_check_reports_0411_and_exact_fraction(cli):
    code, out, err = cli("check", LOAN, "--strategy", IMPATIENT, "--prop", 'P=? [F "rejected"]')
    assert code == 0 and err == ""
    assert 'P=? [F "rejected"] = 0.411\n' in out
    code, out, _ = cli("check", LOAN, "--strategy", IMPATIENT, "--prop", 'P=? [F "rejected"]', "--exact")
    assert code == 0 and "= 411/1000" in out


def test_check_json(cli):
    code, out, _ = cli("check", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]', "--exact", "--json", "-")
    data = json.loads(out)
    assert code == 0 and data["status"] == "violated" and data["strategy"] == IMPATIENT
    result, = data["results"]
    assert result["exact"] == "411/1000" and result["holds"] is False
    assert result["value"] == pytest.approx(0.411) and data["checks"] == data["results"]


def test_check_several_properties_on_one_build(cli, tmp_path):
    """Several --prop and a .props file (Storm's format: comments, names), and --fail-if-violated's exit code 3."""
    props = tmp_path / "loan.props"
    props.write_text('// the loan model\n"bad": P<=0.2 [F "rejected"];\nR{"steps"}=? [F "granted" | "rejected"]\n')
    code, out, _ = cli("check", LOAN, "-s", IMPATIENT, "-p", 'P=? [F "rejected"]', "--props", props, "--json", "-")
    data = json.loads(out)
    assert code == 0 and [r["property"] for r in data["results"]] == [
        'P=? [F "rejected"]', 'P<=1/5 [F "rejected"]', 'R{"steps"}=? [F ("granted" | "rejected")]']
    assert cli("check", LOAN, "-s", IMPATIENT, "--props", props, "--fail-if-violated")[0] == 3
    assert cli("check", LOAN, "-s", IMPATIENT, "-p", 'P<=0.5 [F "rejected"]', "--fail-if-violated")[0] == 0
    code, _, err = cli("check", LOAN)
    assert code == 2 and "no property given" in err


def test_check_mdp_without_strategy(cli):
    code, out, _ = cli("check", LOAN, "--prop", 'Pmin=? [F "rejected"]', "--exact")
    assert code == 0 and "= 1/50" in out


def test_info(cli):
    code, out, _ = cli("info", LOAN)
    assert code == 0
    assert "9 states, 13 choices, 17 transitions (4 decision states)" in out
    assert '"granted"' in out and "Apply, Consult, Provider, Quit, Submit" in out
    code, out, _ = cli("info", LOAN, "--json", "-")
    data = json.loads(out)
    assert data["model"]["states"] == 9 and data["reward_models"] == {"steps": ["state"]} and data["variables"] == {"s": [0, 8]}


def test_demo(cli):
    code, out, _ = cli("demo")
    assert code == 0
    assert "0.411 (exactly 411/1000)" in out and "Rework" in out


def _write(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text)
    return str(f)


def _strategy(tmp_path, entries, default="uniform"):
    return _write(tmp_path, f"s{len(list(tmp_path.iterdir()))}.json", json.dumps({"states": entries, "default": default}))


@pytest.mark.parametrize("case", [
    "missing file", "syntax error", "undefined constants", "unknown constant", "unknown label", "unknown state",
    "unknown action", "negative", "not summing to 1", "state twice", "bad json", "missing strategy", "bad option",
])
def test_user_errors_exit_2_with_one_line(tmp_path, case, cli):
    prop = 'P=? [F "rejected"]'
    good = _strategy(tmp_path, [])
    argv = {
        "missing file": ["check", str(tmp_path / "nope.prism"), "--prop", prop],
        "syntax error": ["info", _write(tmp_path, "bad.prism", "mdp\nmodule m\n s : [0..1] init 0;\n"
                                        " [a] s=0 -> 0.5:(s'=1) + 0.5 (s'=0);\nendmodule\n")],
        "undefined constants": ["info", _write(tmp_path, "c.prism", "mdp\nconst int N;\nmodule m\n s : [0..N] init 0;"
                                               "\n [a] s<N -> (s'=s+1);\nendmodule\n")],
        "unknown constant": ["info", LOAN, "--constants", "N=3"],
        "unknown label": ["check", LOAN, "--strategy", good, "--prop", 'P=? [F "approved"]'],
        "unknown state": ["check", LOAN, "--strategy", _strategy(tmp_path, [{"state": {"s": 9}, "actions": {"Quit": 1}}]),
                          "--prop", prop],
        "unknown action": ["check", LOAN, "--strategy",
                           _strategy(tmp_path, [{"state": {"s": 5}, "actions": {"Retry": 1}}]), "--prop", prop],
        "negative": ["check", LOAN, "--strategy",
                     _strategy(tmp_path, [{"state": {"s": 5}, "actions": {"Quit": 1.5, "Submit": -0.5}}]),
                     "--prop", prop],
        "not summing to 1": ["check", LOAN, "--strategy",
                             _strategy(tmp_path, [{"state": {"s": 5}, "actions": {"Quit": 0.5, "Submit": 0.4}}]),
                             "--prop", prop],
        "state twice": ["check", LOAN, "--strategy",
                        _strategy(tmp_path, [{"state": {"s": 5}, "actions": {"Quit": 1}},
                                             {"state": {"s": 5}, "actions": {"Submit": 1}}]), "--prop", prop],
        "bad json": ["check", LOAN, "--strategy", _write(tmp_path, "j.json", "{"), "--prop", prop],
        "missing strategy": ["check", LOAN, "--strategy", str(tmp_path / "none.json"), "--prop", prop],
        "bad option": ["check", LOAN, "--prop", prop, "--frobnicate"],
    }[case]
    expected = {
        "missing file": "nope.prism: file not found",
        "syntax error": "bad.prism:4:",
        "undefined constants": "undefined constants N",
        "unknown constant": "unknown undefined constant 'N'",
        "unknown label": 'unknown label "approved"',
        "unknown state": "no reachable state s=9",
        "unknown action": "action 'Retry' is not enabled in state s=5",
        "negative": "'Submit' is negative",
        "not summing to 1": "sum to 0.9, not 1",
        "state twice": "state given twice",
        "bad json": "not valid JSON",
        "missing strategy": "none.json: file not found",
        "bad option": "unrecognized arguments: --frobnicate",
    }[case]
    code, out, err = cli(*argv)
    assert code == 2
    assert expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_internal_error_exits_1(monkeypatch, cli):
    import stormcf.cli.info as info

    def boom(args):
        raise RuntimeError("unexpected")
    monkeypatch.setattr(info, "facts_from_args", boom)
    code, out, err = cli("info", LOAN)
    assert code == 1 and "internal error" in err and "Traceback" not in err


def test_running_out_of_memory_as_the_temporary_folder_is_removed_adds_no_second_line(monkeypatch, cli):
    """At the address-space limit, the command's own "out of memory" line may be followed by another MemoryError
    as its temporary folder is removed: the exit code stays the command's and nothing more is said (a clean-clone
    run of the memory sweep in tests/learn printed two lines). After a successful command, the same teardown error
    is one line and exit code 2."""
    import contextlib

    import stormcf.cli.info as info
    from stormcf import interrupt

    @contextlib.contextmanager
    def scratch_folder_without_memory_at_exit():
        yield
        raise MemoryError

    def out_of_memory(args):
        raise MemoryError
    monkeypatch.setattr(interrupt, "scratch_folder", scratch_folder_without_memory_at_exit)
    monkeypatch.setattr(info, "facts_from_args", out_of_memory)
    code, out, err = cli("info", LOAN)
    assert code == 2 and err.startswith("stormcf: error: out of memory") and err.count("\n") == 1 and out == ""
    monkeypatch.undo()
    monkeypatch.setattr(interrupt, "scratch_folder", scratch_folder_without_memory_at_exit)
    with pytest.raises(MemoryError):          # python -m stormcf says that one (stormcf/__main__.py)
        cli("info", LOAN)


def test_console_script_runs_without_traceback(tmp_path):
    """The installed entry point, in a fresh process, from a directory without the example files."""
    proc = subprocess.run([sys.executable, "-m", "stormcf", "check", "prism_models/loan.prism", "--strategy",
                           "prism_models/loan.impatient.json", "--prop", 'P=? [F "rejected"]', "--exact"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "411/1000" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "stormcf", "info", "missing.prism"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr == "stormcf: error: missing.prism: file not found\n"
    assert proc.stdout == ""
