"""Batches keep every finished item however they end (issue 37, item 4): the time limit (the batch's own check, and
the outer stop at the limit), Ctrl-C, SIGTERM and a worker's death leave one JSON line per item in input order, those
done with their answers and the others ``timeout``, ``interrupted`` or ``error`` lines saying what stopped them.

Time bounds are generous (the machine is shared): what a test asks of a time limit is that the items it stopped say
so, not when."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conformance import builtin_cases, processes_of

import stormcf
from stormcf.batch import BatchSummary, Outcome
from stormcf.paths import simulate

from .conftest import IMPATIENT, LOAN, SEPSIS

#: the batch's time limit in the runs that it stops (seconds)
LIMIT = 5
#: what a document that a time limit, the user or a signal ended without an answer has as status
STOPPED = ("timeout", "interrupted")


def lines_of(file) -> list[dict]:
    return [json.loads(line) for line in Path(file).read_text().splitlines()]


def status_column(row: str) -> int:
    """Where the third column (the status) of a row of the summary table starts."""
    return re.match(r"\S+\s+\S+\s+", row).end()


def in_order(documents: list[dict], count: int) -> bool:
    return [d["batch"]["index"] for d in documents] == list(range(count))


@pytest.fixture(scope="module")
def short_paths(tmp_path_factory):
    """300 observed paths of 3 steps in Sepsis (quick items: the first is done well within the limit, all of
    them take far longer than it)."""
    model = stormcf.load_model(SEPSIS)
    uniform = stormcf.Strategy.uniform(model)
    file = tmp_path_factory.mktemp("paths") / "short.jsonl"
    file.write_text("".join(json.dumps(simulate(model, uniform, 3, seed=i).to_dict()) + "\n" for i in range(300)))
    return str(file)


def _repeated(folder: Path, name: str, line: str, count: int) -> str:
    path = folder / name
    path.write_text((line + "\n") * count)
    return str(path)


def hard_setcover(folder: Path) -> str:
    """The instance of set cover's conformance case: branch and bound works for many seconds on an agent of zeros."""
    return builtin_cases()["setcover"].slow(folder)[1]


STRATEGY = Path(IMPATIENT).read_text().replace("\n", " ")
DIE = str(Path(stormcf.example_path("loan.prism")).with_name("die.pm"))
#: per batched command: its argv on many quick items (the folder, the short paths) and how many items
BATCHES = {
    "explain-path": lambda d, p: (["explain-path", SEPSIS, "--paths", p, "--reward", "r", "--k", "1",
                                   "--explanations", "20"], 300),
    "icfmdp": lambda d, p: (["icfmdp", SEPSIS, "--paths", p, "--reward", "r"], 300),
    "check": lambda d, p: (["check", LOAN, "--strategies", _repeated(d, "s.jsonl", STRATEGY, 1000), "-p",
                            'P=? [F "rejected"]'], 1000),
    "strategy": lambda d, p: (["strategy", LOAN, "--strategies", _repeated(d, "s.jsonl", STRATEGY, 300), "-p",
                               'P<=0.2 [F "rejected"]', "-w", "0,0,1"], 300),
    "recourse": lambda d, p: (["recourse", "--dataset", "german", "--instances", _repeated(d, "i.jsonl", "0", 300),
                               "--generations", "3", "--offspring", "16", "--mutants", "4", "--no-exact"], 300),
    "repair": lambda d, p: (["repair", DIE, "-p", 'P<=0.25 [F "five"]', "--instances",
                             _repeated(d, "n.jsonl", '{"nominal": {"p": 0.45, "q": 0.55}}', 300)], 300),
    # set cover certifies a chunk of agents with one Storm call: a serial batch is one chunk, done or not as a whole
    "setcover": lambda d, p: (["setcover", hard_setcover(d), "--agents", _repeated(d, "a.jsonl", str([0] * 40), 3)],
                              3),
}


def test_every_batched_command_has_a_case():
    """Every analysis whose inputs come as batch items (its ``items``) has a case here, or this names it."""
    from stormcf.analysis import registry
    batched = {name for name, analysis in registry().items() if analysis.items}
    assert not batched - set(BATCHES), f"no batch ending case for {sorted(batched - set(BATCHES))}"
    assert set(BATCHES) <= batched


@pytest.mark.parametrize("command", sorted(BATCHES))
def test_a_time_limit_keeps_the_finished_items_and_times_out_the_others(command, short_paths, tmp_path, cli,
                                                                       monkeypatch):
    """The batch's own check: the items done before the limit keep their answers, the one running then and those
    not started are ``timeout`` lines naming the batch's limit; exit code 5; the table has a row per item."""
    monkeypatch.setattr("stormcf.cli._hard_limit", lambda deadline: None)     # the outer stop would end pytest
    argv, count = BATCHES[command](tmp_path, short_paths)
    code, out, err = cli(*argv, "--time-limit", LIMIT, "--json", tmp_path / "out.jsonl")
    documents = lines_of(tmp_path / "out.jsonl")
    assert code == 5 and err == "" and in_order(documents, count)
    statuses = [d["status"] for d in documents]
    done = next(k for k, status in enumerate(statuses) if status in STOPPED)
    assert set(statuses[done:]) == {"timeout"} and not set(statuses[:done]) & {"error", *STOPPED}
    assert command == "setcover" or done > 0, "no item was done within the limit"
    for document in documents[done:]:           # an anytime search's own timeout result has no error: no answer
        message = document.get("error", {}).get("message", f"the batch's time limit of {LIMIT} s was reached")
        assert f"the batch's time limit of {LIMIT} s was reached" in message and "0.001" not in message
    assert "error" in documents[-1]                 # not started (set cover: each agent stopped in its engine)
    assert "error" not in documents[0] or command == "setcover"
    rows = out.splitlines()[-count - 2:-2]
    assert len(rows) == count and len({status_column(row) for row in rows}) == 1


def test_an_item_limit_is_named_in_its_items_messages(cli, short_paths, tmp_path):
    paths = tmp_path / "two.jsonl"
    paths.write_text("".join(Path(short_paths).read_text().splitlines(keepends=True)[:2]))
    code, _, _ = cli("icfmdp", SEPSIS, "--paths", paths, "--reward", "r", "--item-time-limit", "0.001", "--json",
                     tmp_path / "out.jsonl")
    documents = lines_of(tmp_path / "out.jsonl")
    assert code == 5 and [d["status"] for d in documents] == ["timeout"] * 2
    assert all("the item time limit of 0.001 s was reached" in d["error"]["message"] for d in documents)


def test_the_summary_table_stays_aligned_with_long_inputs_and_messages():
    summary = BatchSummary(["value"])
    for index in range(12):
        document = {"status": "ok"} if index < 2 else {"status": "timeout", "error": {"message": "not started"}}
        summary.add(Outcome(index, f"paths.jsonl:{index + 1}", document, 0.5, {"value": 1.25}))
    rows = summary.text().splitlines()[:-1]
    assert len({status_column(row) for row in rows}) == 1 and rows[-1].split()[:3] == ["11", "paths.jsonl:12", "timeout"]
    assert rows[0].index("value") == rows[1].index("1.25")


# ================================================================================================ in a process
def start(argv: list[str], folder: Path, python: str | None = None) -> subprocess.Popen:
    """``stormcf argv`` in a fresh process (or the Python code ``python`` given the argv), its temporary files in
    ``folder/tmp``."""
    scratch = folder / "tmp"
    scratch.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "stormcf"] if python is None else [sys.executable, "-c", python]
    return subprocess.Popen(command + [str(a) for a in argv], cwd=folder, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(scratch)})


def left_behind(folder: Path) -> list[str]:
    """Temporary files left in the run's TMPDIR or beside its outputs."""
    return [str(p) for p in (folder / "tmp").rglob("*")] + [p.name for p in folder.iterdir() if p.suffix == ".tmp"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_outer_stop_at_the_time_limit_keeps_the_lines(workers, short_paths, tmp_path):
    """An item that cannot stop at the limit (sampling many explanations checks no deadline) is stopped from outside
    (here at the limit itself, not 3% later): every line is written all the same, and no worker is left behind."""
    code = ("import sys, stormcf.cli as cli\ncli.OVERRUN_SECONDS = cli.OVERRUN_SHARE = 0.0\n"
            "sys.exit(cli.main(sys.argv[1:]))")
    out = tmp_path / "out.jsonl"
    proc = start(["explain-path", SEPSIS, "--paths", short_paths, "--reward", "r", "--k", "2", "--explanations",
                  "400000", "--time-limit", LIMIT, "--json", out, "--workers", workers], tmp_path, python=code)
    _, err = proc.communicate(timeout=300)
    documents = lines_of(out)
    assert proc.returncode == 5 and in_order(documents, 300)
    assert err == (f"stormcf: timeout: the batch's time limit of {LIMIT} s was reached; the items not done by then "
                   "have status timeout\n")
    statuses = [d["status"] for d in documents]
    assert set(statuses) == {"ok", "timeout"} or set(statuses) == {"timeout"}
    if workers == "1":                              # serially the items done come first; in parallel each worker's
        done = statuses.index("timeout")           # chunk has its own
        assert set(statuses[:done]) <= {"ok"} and set(statuses[done:]) == {"timeout"}
    assert left_behind(tmp_path) == [] and processes_of(tmp_path) == []


def _lines_until(proc: subprocess.Popen, count: int) -> list[str]:
    return [proc.stdout.readline() for _ in range(count)]


@pytest.mark.parametrize("how, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_and_sigterm_keep_the_finished_lines(how, code, word, short_paths, tmp_path):
    proc = start(["icfmdp", SEPSIS, "--paths", short_paths, "--reward", "r", "--json", "-"], tmp_path)
    first = _lines_until(proc, 2)                   # two items done
    proc.send_signal(how)
    rest, err = proc.communicate(timeout=120)
    documents = [json.loads(line) for line in first + rest.splitlines()]
    assert proc.returncode == code and err.endswith(f"stormcf: {word}\n") and in_order(documents, 300)
    statuses = [d["status"] for d in documents]
    done = statuses.index("interrupted")
    assert done >= 2 and set(statuses[:done]) == {"ok"} and set(statuses[done:]) == {"interrupted"}
    assert documents[-1]["error"]["type"] == ("Interrupted" if how == signal.SIGINT else "Terminated")
    assert left_behind(tmp_path) == []


def _spooled(folder: Path, size: int) -> None:
    """Wait until the workers' notes (the batch's spool, in the command's folder in TMPDIR) hold ``size`` bytes: items
    started or done."""
    end = time.monotonic() + 240
    while sum(f.stat().st_size for f in (folder / "tmp").glob("**/stormcf-batch-*/*.notes")) < size:
        assert time.monotonic() < end, "the workers noted nothing"
        time.sleep(0.1)


def test_sigterm_keeps_the_items_done_in_workers_chunks(short_paths, tmp_path):
    """With --workers 2 the items a worker finished in a chunk that has not come back are kept (from the spool)."""
    out = tmp_path / "out.jsonl"
    proc = start(["icfmdp", SEPSIS, "--paths", short_paths, "--reward", "r", "--workers", "2", "--json", out],
                 tmp_path)
    _spooled(tmp_path, 2000)                        # an outcome is done in a worker (its note is kilobytes)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    documents = lines_of(out)
    assert proc.returncode == 143 and err.endswith("stormcf: terminated\n") and in_order(documents, 300)
    statuses = [d["status"] for d in documents]
    assert "ok" in statuses and set(statuses) == {"ok", "interrupted"}
    assert left_behind(tmp_path) == [] and processes_of(tmp_path) == []


def test_a_killed_worker_costs_only_the_items_it_ran(short_paths, tmp_path):
    paths = tmp_path / "few.jsonl"
    paths.write_text("".join(Path(short_paths).read_text().splitlines(keepends=True)[:24]))
    proc = start(["icfmdp", SEPSIS, "--paths", paths, "--reward", "r", "--workers", "2", "--json", "-"], tmp_path)
    _spooled(tmp_path, 100)                         # the workers have started items
    os.kill(_worker_in_an_item(proc.pid, tmp_path), signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    documents = [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 4 and in_order(documents, 24), err
    failed = [d for d in documents if d["status"] != "ok"]
    assert failed and {d["status"] for d in failed} == {"error"} and len(failed) <= 2     # one running per worker
    assert all(d["error"]["type"] == "WorkerDied" and "a worker process of the batch died while this item ran "
               "(exit codes {SIGKILL(-9)}" in d["error"]["message"] for d in failed)
    assert left_behind(tmp_path) == []


def _worker_in_an_item(batch: int, folder: Path) -> int:
    """A loky worker of the batch process that is running an item: the workers are stopped (SIGSTOP) while their
    notes are read, so the one whose chunk's last note is a start is still in that item when it is killed; the others
    go on (SIGCONT). Workers that are all between items are let go on and looked at again."""
    end = time.monotonic() + 240
    while time.monotonic() < end:
        workers = [pid for pid in _children(batch) if b"popen_loky" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        running = [note["pid"] for note in map(_last_note, (folder / "tmp").glob("**/stormcf-batch-*/*.notes"))
                   if note and "started" in note and note["pid"] in workers]
        for pid in workers:
            if pid not in running[:1]:
                os.kill(pid, signal.SIGCONT)
        if running:
            return running[0]
        time.sleep(0.01)
    raise AssertionError("no worker was found in an item")


def _last_note(file: Path) -> dict | None:
    lines = file.read_text().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[1].split()[1] == str(pid):
                found.append(int(entry))
        except OSError:
            continue
    return found
