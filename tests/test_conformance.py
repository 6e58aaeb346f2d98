"""The analysis contract, checked for every registered analysis (``stormcf.analysis.registry()``), as scikit-learn's
``check_estimator`` checks every estimator:

- a tiny ``--time-limit`` ends the command within the limit plus slack, with an honest status: an answer found in
  time (exit code 0) or status ``timeout`` (exit code 5), and the JSON document either way;
- the first Ctrl-C gives status ``interrupted`` with the best checked answer (analyses that stop at safe points) or
  exit code 130; the second Ctrl-C, whatever the command is doing then (printing, writing its answer, tearing down),
  gives exit code 130 and no output file; SIGTERM gives exit code 143 and leaves no output file, no temporary file
  and no process behind, also during Python's start-up (its imports);
- a bad input is one line on stderr and exit code 2 (the first refusal of the command's fuzz table, tests/fuzz);
- a batch of one item gives the document of the single run.

Every registered analysis needs a :class:`Case` here: a new analysis without one fails
:func:`test_every_registered_analysis_has_a_case`. Time bounds allow generous slack (CI machines are shared): what
they catch is a command that runs on minutes past its limit, not a slow machine.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pytest

import stormcf
from stormcf.analysis import registry
from stormcf.report import without_times

from fuzz.hostile import command_cases

LOAN = str(stormcf.example_path("loan.prism"))
IMPATIENT = str(stormcf.example_path("loan.impatient.json"))
SEPSIS = str(stormcf.example_path("sepsis.prism"))
SEPSIS_PATH = str(stormcf.example_path("sepsis.sampled.json"))
FROZENLAKE = str(stormcf.example_path("frozenlake4.prism"))
PERSON = str(stormcf.example_path("person.prism"))
PAPER_EXAMPLE = str(Path(__file__).parent / "data" / "setcover" / "paper_example.json")
#: the time limit the runs get, and the slack allowed on top of it (start-up, a loaded machine)
LIMIT, SLACK = 3.0, 60.0


def uniform(folder: Path) -> str:
    path = folder / "uniform.json"
    path.write_text('{"states": [], "default": "uniform"}')
    return str(path)


def hard_setcover(folder: Path) -> str:
    """40 features, 300 unit-cost actions of random effects: branch and bound works for many seconds."""
    rng = np.random.default_rng(7)
    effects = (rng.random((300, 40)) < 0.1).astype(int)
    actions = [{"name": f"a{i}", "effect": e.tolist(), "cost": 1.0} for i, e in enumerate(effects)]
    instance = {"features": [f"f{j}" for j in range(40)], "thresholds": [1] * 40, "actions": actions}
    path = folder / "hard.json"
    path.write_text(json.dumps(instance))
    return str(path)


def big_log(folder: Path) -> str:
    """300,000 cases sampled from sepsis.prism (paired form): IOAlergia and Storm's build work for about 9 s on an
    idle machine (100,000 cases took 4.5 s, and the command sometimes ended before the test's signal)."""
    from stormcf.learn import sample_log
    model = stormcf.load_model(SEPSIS)
    path = folder / "sepsis_log.csv"
    sample_log(model, stormcf.Strategy.uniform(model), 300_000, seed=1).to_csv(path)
    return str(path)


@dataclass(frozen=True)
class Case:
    """How to exercise one analysis: ``slow(folder)`` is a command line that works for longer than a few seconds,
    ``single``/``batch`` a quick single run and the batch of that one item (None where a batch does not apply),
    ``stoppable`` whether the first Ctrl-C gives the best answer so far (else exit code 130)."""

    slow: Callable[[Path], Sequence[str]]
    stoppable: bool = False
    single: Callable[[Path], Sequence[str]] | None = None
    batch: Callable[[Path], Sequence[str]] | None = None


def _lines(folder: Path, name: str, *lines: str) -> str:
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


CASES: dict[str, Case] = {
    "check": Case(
        # about 7 s on the 2-core machine (N=900 took 4.4 s idle: finished before _working's 4 s)
        slow=lambda d: ["check", str(stormcf.example_path("grid.prism")), "-c", "N=1200", "-p", 'Pmax=? [F "goal"]'],
        single=lambda d: ["check", LOAN, "-s", IMPATIENT, "-p", 'P=? [F "rejected"]'],
        batch=lambda d: ["check", LOAN, "--strategies", _lines(d, "s.jsonl", Path(IMPATIENT).read_text().replace(
            "\n", " ")), "-p", 'P=? [F "rejected"]']),
    "strategy": Case(
        slow=lambda d: ["strategy", FROZENLAKE, "-s", uniform(d), "-p", 'P<=0.5 [F "hole"]'], stoppable=True,
        single=lambda d: ["strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]', "-w", "0,0,1"],
        batch=lambda d: ["strategy", LOAN, "--strategies", _lines(d, "s.jsonl", Path(IMPATIENT).read_text().replace(
            "\n", " ")), "-p", 'P<=0.2 [F "rejected"]', "-w", "0,0,1"]),
    "icfmdp": Case(
        slow=lambda d: ["icfmdp", SEPSIS, "--path", SEPSIS_PATH, "--baseline", "gumbel", "--estimator", "mc",
                        "--mc-samples", "200000"],
        single=lambda d: ["icfmdp", SEPSIS, "--path", SEPSIS_PATH],
        batch=lambda d: ["icfmdp", SEPSIS, "--paths", _lines(d, "p.jsonl", Path(SEPSIS_PATH).read_text().replace(
            "\n", " "))]),
    "explain-path": Case(
        slow=lambda d: ["explain-path", SEPSIS, "--path", SEPSIS_PATH, "--k", "2", "--estimator", "mc",
                        "--mc-samples", "200000"],
        single=lambda d: ["explain-path", SEPSIS, "--path", SEPSIS_PATH, "--k", "1", "--explanations", "100"],
        batch=lambda d: ["explain-path", SEPSIS, "--paths", _lines(d, "p.jsonl", Path(SEPSIS_PATH).read_text().replace(
            "\n", " ")), "--k", "1", "--explanations", "100"]),
    "setcover": Case(
        slow=lambda d: ["setcover", hard_setcover(d), "--agent", ",".join(["0"] * 40)],
        single=lambda d: ["setcover", PAPER_EXAMPLE, "--agent", "0,0,0,0,1"],
        batch=lambda d: ["setcover", PAPER_EXAMPLE, "--agents", _lines(d, "a.jsonl", "[0, 0, 0, 0, 1]")]),
    "recourse": Case(
        slow=lambda d: ["recourse", PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost", "--generations",
                        "1000000", "--offspring", "20", "--mutants", "5"], stoppable=True),
    "learn": Case(slow=lambda d: ["learn", big_log(d), "--out", str(d / "learned.prism")]),
}


#: keys of a document that name where its input came from (a file for a single run, FILE.jsonl:N in a batch)
ORIGIN = {"check": ("strategy",)}


def test_every_registered_analysis_has_a_case():
    assert set(CASES) == set(registry())


def start(argv: Sequence[str], folder: Path, *extra: str) -> subprocess.Popen:
    """``python -m stormcf`` with its temporary files in ``folder/tmp`` (to find any left behind)."""
    scratch = folder / "tmp"
    scratch.mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "stormcf", *argv, *extra], cwd=folder, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(scratch)})


@pytest.mark.parametrize("command", sorted(CASES))
def test_a_tiny_time_limit_ends_the_command_with_an_honest_status(command, tmp_path):
    argv = CASES[command].slow(tmp_path)
    out = tmp_path / "out.json"
    began = time.perf_counter()
    proc = start(argv, tmp_path, "--time-limit", str(LIMIT), "--json", str(out))
    _, stderr = proc.communicate(timeout=LIMIT + SLACK + 120)
    assert time.perf_counter() - began < LIMIT + SLACK, f"{command} ran past its limit"
    assert proc.returncode in (0, 5), stderr
    document = json.loads(out.read_text())
    assert document["command"] == command and document["schema"] == "stormcf/1"
    if proc.returncode == 5:
        assert document["status"] == "timeout"
        if "error" in document:                     # no answer at all: one line says why
            assert "time limit" in document["error"]["message"]
            assert stderr.startswith("stormcf: timeout:") and stderr.count("\n") == 1
    else:
        assert document["status"] not in ("timeout", "error")
    assert _left_behind(tmp_path) == []


@pytest.mark.parametrize("command", sorted(CASES))
def test_sigterm_ends_the_command_with_143_and_leaves_nothing(command, tmp_path):
    argv = CASES[command].slow(tmp_path)
    before = set(os.listdir(tmp_path))
    out = tmp_path / "out.json"
    proc = start(argv, tmp_path, "--json", str(out))
    _working(proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert stderr.endswith("stormcf: terminated\n")
    assert not out.exists() and _left_behind(tmp_path) == [] and set(os.listdir(tmp_path)) <= before | {"tmp"}
    assert _processes_of(tmp_path) == []


@pytest.mark.parametrize("command", sorted(CASES))
def test_the_first_ctrl_c_reports_the_best_answer_or_exits_130(command, tmp_path):
    case = CASES[command]
    out = tmp_path / "out.json"
    proc = start(case.slow(tmp_path), tmp_path, "--json", str(out))
    _working(proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    if case.stoppable and proc.returncode == 0:
        assert json.loads(out.read_text())["status"] == "interrupted"
    else:
        assert proc.returncode == 130 and stderr.endswith("stormcf: interrupted\n"), stderr
        assert not out.exists()
    assert _left_behind(tmp_path) == [] and _processes_of(tmp_path) == []


@pytest.mark.parametrize("command", sorted(CASES))
def test_the_second_ctrl_c_exits_130_and_writes_nothing(command, tmp_path):
    """The second Ctrl-C as soon as the first one was taken (the line saying so, in the commands that stop at safe
    points): exit code 130 and no output file, also when it comes while the answer is being printed or written or
    the process tears down (where Python's default handler came back: killed by SIGINT). Only a command that had
    ended before the second Ctrl-C was sent may exit 0 (its file then predates the signal)."""
    case = CASES[command]
    out = tmp_path / "out.json"
    proc = start(case.slow(tmp_path), tmp_path, "--json", str(out))
    _working(proc)
    proc.send_signal(signal.SIGINT)
    if case.stoppable:                              # the first one was taken (or the command has ended)
        next((line for line in proc.stderr if "stopping at the next safe point" in line), None)
    sent = time.time()
    proc.send_signal(signal.SIGINT)                 # nothing when the command has ended (Popen.send_signal polls)
    _, stderr = proc.communicate(timeout=120)
    if proc.returncode == 0 and case.stoppable:     # it ended first, its answer written before the signal
        assert out.stat().st_ctime <= sent
    else:
        assert proc.returncode == 130 and stderr.endswith("stormcf: interrupted\n"), stderr
        assert not out.exists()
    assert _left_behind(tmp_path) == [] and _processes_of(tmp_path) == []


def test_sigterm_during_start_up_exits_143_with_a_line(tmp_path):
    """SIGTERM while Python imports the command's modules (numpy, scipy, Storm), right after stormcf's first module
    was imported (``-X importtime`` says when): 143 and the line, not the default action (no line) or an ImportError
    ("initialization failed") of the module whose import the signal interrupted (exit code 1)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "stormcf", "info", LOAN], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(scratch)})
    for line in proc.stderr:
        if line.rstrip().endswith("| stormcf.limits"):          # imported right after the handlers are in
            proc.send_signal(signal.SIGTERM)
            break
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 143 and stderr.endswith("stormcf: terminated\n"), stderr[-500:]
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("command", sorted(CASES))
def test_a_bad_input_is_one_line_and_exit_code_2(command, tmp_path, cli):
    refusal = next(case for case in command_cases()[command] if case.code == 2 and not case.fresh_process)
    code, out, err = cli(*refusal.argv(tmp_path))
    assert code == 2 and err.startswith("stormcf: error: ") and err.count("\n") == 1, err
    assert refusal.phrase in err


@pytest.mark.parametrize("command", sorted(c for c in CASES if CASES[c].batch))
def test_a_batch_of_one_item_gives_the_single_document(command, tmp_path, cli):
    case = CASES[command]
    single, batch = tmp_path / "single.json", tmp_path / "batch.jsonl"
    code, _, err = cli(*case.single(tmp_path), "--json", single)
    assert code == 0, err
    code, _, err = cli(*case.batch(tmp_path), "--json", batch)
    assert code == 0, err
    document, alone = json.loads(batch.read_text().splitlines()[0]), json.loads(single.read_text())
    document.pop("batch")
    for key in ORIGIN.get(command, ()):            # where the item came from: a file here, a line there
        assert document.pop(key) != alone.pop(key)
    assert without_times(document) == without_times(alone)


def _working(proc: subprocess.Popen, seconds: float = 4.0) -> None:
    """Let the command start working (past Python's start-up), and make sure it still does."""
    time.sleep(seconds)
    assert proc.poll() is None, proc.communicate()[1]


def _left_behind(folder: Path) -> list[str]:
    """Temporary files left in the run's TMPDIR or beside its outputs (atomic writes' ``.NAME.xxxx.tmp``)."""
    scratch = folder / "tmp"
    left = [str(p) for p in scratch.rglob("*")] if scratch.exists() else []
    return left + [p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def _processes_of(folder: Path, wait: float = 5.0) -> list[str]:
    """Processes still running whose command line or environment names the run's folder (solver workers, Storm
    children, loky workers), after a short grace for the kernel to deliver their parent's death."""
    end = time.monotonic() + wait
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environment = f.read()
            except OSError:
                continue
            if str(folder).encode() in environment and int(pid) != os.getpid():
                found.append(pid)
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.2)
