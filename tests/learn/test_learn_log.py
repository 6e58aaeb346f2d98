"""Reading event logs: both forms, the pairing rules, XES, and one clear line (exit 2) for every bad log."""
import importlib.util

import numpy as np
import pytest

from stormcf.cli import main
from stormcf.learn import EventLog, LogError, read_log

LOAN_ACTIONS = ["Apply", "Consult", "Quit", "Submit"]


def write(tmp_path, text, name="log.csv", mode="w"):
    p = tmp_path / name
    if mode == "wb":
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def test_paired_form(data):
    log = read_log(data / "loan_paired.csv")
    assert log.form == "paired" and log.n_cases == 300
    assert log.case(0) == ("s0", [("Apply", "Application"), ("Provider", "Rework"), ("Quit", "rejected")])
    assert log.events == log.n_steps + log.n_cases
    assert set(log.actions) == {"Apply", "Consult", "Provider", "Quit", "Submit"}


def test_activity_form_pairs_like_the_paired_form(data):
    """The activity log holds the same cases without the provider's action: it becomes the implicit continue."""
    paired = read_log(data / "loan_paired.csv")
    activity = read_log(data / "loan_activity.csv", LOAN_ACTIONS)
    assert activity.form == "activity" and activity.case_ids == paired.case_ids
    rename = {"Provider": "continue"}
    for c in range(paired.n_cases):
        o0, steps = paired.case(c)
        assert activity.case(c) == (o0, [(rename.get(a, a), o) for a, o in steps])
    assert activity.implicit["continue"] == int(np.sum(np.array(paired.actions)[paired.step_actions] == "Provider"))


def test_xes_reads_like_the_activity_csv(data):
    """The XES twin of loan_activity.csv (through pm4py when installed; else the clear error of the extra)."""
    if importlib.util.find_spec("pm4py") is None:
        with pytest.raises(LogError, match=r"loan_activity.xes: reading XES needs pm4py, an optional extra"):
            read_log(data / "loan_activity.xes", LOAN_ACTIONS)
        return
    xes = read_log(data / "loan_activity.xes", LOAN_ACTIONS)
    csv = read_log(data / "loan_activity.csv", LOAN_ACTIONS)
    assert xes.case_ids == csv.case_ids and xes.actions == csv.actions and xes.observations == csv.observations
    for k in ("initial", "offsets", "step_actions", "step_observations"):
        assert np.array_equal(getattr(xes, k), getattr(csv, k))


@pytest.mark.parametrize("events, expected", [
    (["o1", "A", "o2"], ("o1", [("A", "o2")])),
    (["o1", "o2", "o3"], ("o1", [("continue", "o2"), ("continue", "o3")])),
    (["o1", "A", "B", "o2"], ("o1", [("A", "A"), ("B", "o2")])),
    (["o1", "A"], ("o1", [("A", "A")])),
    (["A", "o1"], ("start", [("A", "o1")])),
])
def test_activity_pairing_rules(tmp_path, events, expected):
    rows = "".join(f"c,{e}\n" for e in events)
    log = read_log(write(tmp_path, "case,activity\n" + rows), [a for a in ("A", "B") if a in events])
    assert log.case(0) == expected


def test_cases_with_different_first_observations_share_a_start_state(tmp_path):
    log = read_log(write(tmp_path, "case,action,observation\n1,,x\n1,a,y\n2,,y\n2,a,x\n"))
    assert log.case(0) == ("start", [("continue", "x"), ("a", "y")])
    assert log.case(1) == ("start", [("continue", "y"), ("a", "x")])
    assert log.implicit == {"start": 2, "continue": 2}


def test_interleaved_cases_and_column_order(tmp_path):
    log = read_log(write(tmp_path, "observation,case,action\nx,1,\nx,2,\ny,1,a\nz,2,b\n"))
    assert log.case_ids == ("1", "2")
    assert log.case(0) == ("x", [("a", "y")]) and log.case(1) == ("x", [("b", "z")])


def test_from_cases_and_csv_round_trip(tmp_path):
    log = EventLog.from_cases([("s", [("a", "t"), ("b", "s")]), ("s", [])])
    log.to_csv(tmp_path / "x.csv")
    back = read_log(tmp_path / "x.csv")
    assert [back.case(c) for c in range(2)] == [log.case(c) for c in range(2)]


BAD = [
    ("", "log.csv: empty file"),
    ("case,action,observation\n", "log.csv: no events"),
    ("case,action,observation\n1,a,x\n", "log.csv:2: case '1': the case has no initial observation"),
    ("case,action,observation,resource\n1,,x\n", "log.csv:1: unknown column 'resource'"),
    ("case,activity,timestamp\n1,x,2024-01-02\n1,a,2024-01-01\n",
     "log.csv:3: case '1': timestamp 2024-01-01 is earlier than the one of the case's previous event (line 2)"),
    ("case,activity,timestamp\n1,x,5\n1,a,yesterday\n", "log.csv:3: case '1': timestamp 'yesterday' is neither"),
    ('{"cases": [1, 2]}\n', "log.csv:1: not a CSV event log: the header has no 'case' column"),
    ("case,action,observation\n1,,x\n1,a\n", "log.csv:3: 2 fields, the header has 3"),
    ("case,action,observation\n1,,x\n1,a,\n", "log.csv:3: case '1': empty observation"),
    ("case,action,observation\n1,,x\n1,,y\n", "log.csv:3: case '1': empty action"),
    ("case,action,observation\n,,x\n", "log.csv:2: empty case identifier"),
    ("case,action,activity\n1,,x\n", "log.csv:1: the columns case,action,activity are neither form"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_bad_logs(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(LogError) as err:
        read_log(path, ["a"] if "activity" in text else None)
    assert message.replace("log.csv", str(path)) in str(err.value)


@pytest.mark.parametrize("text, message", BAD + [(b"\x89PNG\r\n\x1a\n\x00\x00", "log.csv: not a CSV text file")])
def test_bad_logs_on_the_command_line(tmp_path, capsys, text, message):
    path = write(tmp_path, text, mode="wb" if isinstance(text, bytes) else "w")
    code = main(["learn", str(path), "--out", str(tmp_path / "m.prism"), "--actions", "a"]
                if "activity" in (text if isinstance(text, str) else "") else
                ["learn", str(path), "--out", str(tmp_path / "m.prism")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("stormcf: error: ")
    assert message.replace("log.csv", str(path)) in err
    assert not (tmp_path / "m.prism").exists()


def test_activity_log_needs_actions(tmp_path):
    with pytest.raises(LogError, match="needs the list of activities that are actions"):
        read_log(write(tmp_path, "case,activity\n1,x\n"))
    with pytest.raises(LogError, match="the action 'B' does not occur in the log"):
        read_log(write(tmp_path, "case,activity\n1,x\n1,A\n"), ["A", "B"])


def test_implicit_names_must_be_free(tmp_path):
    with pytest.raises(LogError, match="observation named 'start'"):
        read_log(write(tmp_path, "case,action,observation\n1,,start\n2,,x\n"))
    with pytest.raises(LogError, match="action named 'continue'"):
        read_log(write(tmp_path, "case,activity\n1,x\n1,continue\n1,y\n1,z\n"), ["continue"])


def test_a_log_without_steps_has_nothing_to_learn(tmp_path, capsys):
    path = write(tmp_path, "case,action,observation\n1,,x\n2,,x\n")
    assert main(["learn", str(path), "--out", str(tmp_path / "m.prism")]) == 2
    assert "no case has a step after its initial observation; nothing to learn" in capsys.readouterr().err


def test_not_a_file(tmp_path):
    with pytest.raises(LogError, match="file not found"):
        read_log(tmp_path / "nope.csv")
    with pytest.raises(LogError, match="is a directory"):
        read_log(tmp_path)


def test_garbage_xes(tmp_path):
    path = write(tmp_path, "this is no XML", "log.xes")
    with pytest.raises(LogError, match=r"log.xes: (not a readable XES file|reading XES needs pm4py)"):
        read_log(path, ["a"])
