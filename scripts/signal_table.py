#!/usr/bin/env python3
"""The signal table (issue 38): how commands end when they get Ctrl-C (SIGINT) once or twice, or SIGTERM, at given
times after they started, on whatever load the machine has.

Each run starts ``python -m stormcf ...`` in a process group of its own, with a private ``TMPDIR`` and working
directory, and sends the signals to the whole group at the given wall-clock times after the start, as a terminal
does to its foreground job:

- ``int``: one SIGINT (the first Ctrl-C: the best checked answer, status ``interrupted``, or exit code 130 where
  there is none yet);
- ``int,int``: two SIGINTs ``--gap`` seconds apart (the second Ctrl-C: exit code 130, no output file, whatever the
  command was doing, also while it printed or wrote its answer);
- ``term``: one SIGTERM (exit code 143 and the line ``stormcf: terminated``, also during Python's start-up).

For each run the table shows the exit code, the CPU seconds of the whole process tree (the command and every
process it started, reaped or not) from the last signal to the end (the bound is 2 s: wall-clock time on a loaded
machine says more about the load than about the command), the wall-clock seconds, what was left behind (files in
its ``TMPDIR``, temporary files beside its outputs, processes of its group) and the verdict. This script is a
subreaper (``PR_SET_CHILD_SUBREAPER``), so that the CPU time of processes orphaned by the command is counted too.

    python scripts/signal_table.py                          # every case, signals at 1, 3 and 8 s
    python scripts/signal_table.py --cases strategy-highs,recourse --at 3 --signals int,int
    python scripts/signal_table.py --quick                  # start-up SIGTERM and two Ctrl-C on frozenlake4

The cases (the inputs are made in a scratch directory first): ``strategy-highs`` and ``strategy-scip`` (the d0
MILP of a 50,000-state process MDP, ``--exact``), ``strategy-gurobi`` (frozenlake4, the mixed objective on Gurobi),
``setcover-learn`` (the MC generator on 12 features), ``recourse`` (Adult, instance 0, 100,000 generations: it
works at every signal), ``paths`` (``icfmdp
--paths``, 40 Sepsis paths), ``frozenlake8`` (``strategy``, no time limit given: the messages must name the user's
Ctrl-C), and the slow case of every other analysis of ``tests/test_conformance.py`` (``check``, ``icfmdp``,
``explain-path``, ``setcover``, ``learn``).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "prism_models"                # the checkout's examples (the package's in an install)
#: the environment of every stormcf process this script starts: the stormcf of this checkout
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
#: the CPU seconds a command may use between the signal and its end
CPU_BOUND = 2.0
#: seconds of wall-clock time a command gets after its last signal before it is killed (a hang)
PATIENCE = 120.0
PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")


# ================================================================================================ inputs
def drn_text(model) -> str:
    """An :class:`stormcf.ExplicitModel` MDP as Storm's DRN text (floating-point probabilities, labels)."""
    P = model.transitions.tocsr()
    lines = ["@type: MDP", "@parameters", "", "@reward_models", "", "@nr_states", str(model.n_states),
             "@nr_choices", str(model.n_choices), "@model"]
    labels = [[name for name, mask in model.labels.items() if mask[s]] for s in range(model.n_states)]
    for s in range(model.n_states):
        init = " init" if s == model.initial_state else ""
        lines.append(f"state {s}{init}" + "".join(f" {label}" for label in labels[s]))
        for c in range(model.row_groups[s], model.row_groups[s + 1]):
            lines.append(f"\taction {model.action_names[model.choice_actions[c]]}")
            lo, hi = P.indptr[c], P.indptr[c + 1]
            lines += [f"\t\t{t} : {p!r}" for t, p in zip(P.indices[lo:hi].tolist(), P.data[lo:hi].tolist())]
    return "\n".join(lines) + "\n"


def process_drn(folder: Path, states: int) -> str:
    """The process MDP of ``states`` states (scripts/process_mdp.py, seed 3) as a DRN file."""
    path = folder / f"process{states}.drn"
    if not path.exists():
        sys.path.insert(0, str(ROOT / "scripts"))
        from process_mdp import process_mdp
        path.write_text(drn_text(process_mdp(states, seed=3)))
    return str(path)


def uniform(folder: Path) -> str:
    path = folder / "uniform.json"
    path.write_text('{"states": [], "default": "uniform"}')
    return str(path)


def setcover_data(folder: Path) -> str:
    path = folder / "d12.npz"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "stormcf", "setcover-data", str(path), "-n", "12", "-q"], check=True,
                       cwd=folder, env=ENV, stdout=subprocess.DEVNULL)
    return str(path)


def sepsis_paths(folder: Path, n: int) -> str:
    path = folder / "sepsis.paths.jsonl"
    if not path.exists():
        line = (MODELS / "sepsis.sampled.json").read_text().replace("\n", " ")
        path.write_text((line + "\n") * n)
    return str(path)


def hard_setcover(folder: Path) -> str:
    """40 features, 300 unit-cost actions (the slow case of tests/test_conformance.py)."""
    path = folder / "hard.json"
    rng = np.random.default_rng(7)
    effects = (rng.random((300, 40)) < 0.1).astype(int)
    actions = [{"name": f"a{i}", "effect": e.tolist(), "cost": 1.0} for i, e in enumerate(effects)]
    path.write_text(json.dumps({"features": [f"f{j}" for j in range(40)], "thresholds": [1] * 40,
                                "actions": actions}))
    return str(path)


def sepsis_log(folder: Path, cases: int) -> str:
    path = folder / "sepsis_log.csv"
    if not path.exists():
        import stormcf
        from stormcf.learn import sample_log
        model = stormcf.load_model(MODELS / "sepsis.prism")
        sample_log(model, stormcf.Strategy.uniform(model), cases, seed=1).to_csv(path)
    return str(path)


#: case name -> (inputs folder -> command line without --json), whether it writes --json
CASES: dict[str, Callable[[Path], list[str]]] = {
    "strategy-highs": lambda d: ["strategy", process_drn(d, 50_000), "-s", uniform(d), "-p", 'P<=0.4 [F "negative"]',
                                 "-w", "1,0,0", "--solver", "highs", "--exact"],
    "strategy-scip": lambda d: ["strategy", process_drn(d, 50_000), "-s", uniform(d), "-p", 'P<=0.4 [F "negative"]',
                                "-w", "1,0,0", "--solver", "scip", "--exact"],
    "strategy-gurobi": lambda d: ["strategy", str(MODELS / "frozenlake4.prism"), "-s", uniform(d), "-p",
                                  'P<=0.5 [F "hole"]', "--solver", "gurobi", "--exact"],
    "frozenlake8": lambda d: ["strategy", str(MODELS / "frozenlake8.prism"), "-s", uniform(d), "-p",
                              'P<=0.5 [F "hole"]'],
    "setcover-learn": lambda d: ["setcover-learn", setcover_data(d), "--generator", "mc", "--out", "gen.npz"],
    "recourse": lambda d: ["recourse", "--dataset", "adult", "--instance", "0", "--generations", "100000"],
    "paths": lambda d: ["icfmdp", str(MODELS / "sepsis.prism"), "--paths", sepsis_paths(d, 40)],
    "check": lambda d: ["check", str(MODELS / "grid.prism"), "-c", "N=1200", "-p", 'Pmax=? [F "goal"]'],
    "icfmdp": lambda d: ["icfmdp", str(MODELS / "sepsis.prism"), "--path", str(MODELS / "sepsis.sampled.json"),
                         "--baseline", "gumbel", "--estimator", "mc", "--mc-samples", "200000"],
    "explain-path": lambda d: ["explain-path", str(MODELS / "sepsis.prism"), "--path",
                               str(MODELS / "sepsis.sampled.json"), "--k", "2", "--estimator", "mc",
                               "--mc-samples", "200000"],
    "setcover": lambda d: ["setcover", hard_setcover(d), "--agent", ",".join(["0"] * 40)],
    "learn": lambda d: ["learn", sepsis_log(d, 300_000), "--out", "learned.prism"],
}
#: commands whose first Ctrl-C gives the best checked answer (exit code 0, status interrupted) when they have one
STOPPABLE = ("strategy", "recourse", "setcover-learn")
#: batch cases, whose JSON lines may keep the items done however the batch ends (docs/batches.md)
BATCHES = ("paths",)


# ================================================================================================ one run
@dataclass
class Run:
    case: str
    signals: tuple[str, ...]
    at: float
    code: str = ""
    cpu: float = float("nan")
    wall: float = float("nan")
    left: list[str] = field(default_factory=list)
    last_line: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "ok" if not self.problems else "; ".join(self.problems)


def _stat(pid: int) -> tuple[int, float] | None:
    """(process group, CPU seconds of the process and its reaped children) of a living process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[2]), sum(int(x) for x in fields[11:15]) / TICK


def _states(pgid: int) -> str:
    """The processes of a group with the state and kernel wait channel of each thread (to see where one hangs)."""
    out = []
    for pid in group_cpu(pgid)[1]:
        threads = []
        for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
            try:
                state = (task / "stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()
                threads.append(f"{(task / 'comm').read_text().strip()}:{state}:{(task / 'wchan').read_text()}")
            except OSError:
                continue
        out.append(f"{pid} [{' '.join(threads)}]")
    return "; ".join(out)


def _ended(pid: int) -> bool:
    """Whether a child process has ended (a zombie not yet reaped): a signal now would come after its end."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def group_cpu(pgid: int) -> tuple[float, list[int]]:
    """CPU seconds of the living processes of a group (with their reaped children), and their ids."""
    total, pids = 0.0, []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(int(name))
            if stat is not None and stat[0] == pgid:
                total += stat[1]
                pids.append(int(name))
    return total, pids


def _rusage_seconds(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def _reap_orphans() -> float:
    """Reap processes orphaned to this subreaper; their CPU seconds."""
    total = 0.0
    while True:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return total
        if pid == 0:
            return total
        total += _rusage_seconds(usage)


def run_case(case: str, argv: list[str], signals: tuple[str, ...], at: float, gap: float, folder: Path) -> Run:
    run = Run(case, signals, at)
    work = Path(tempfile.mkdtemp(prefix=f"{case}-", dir=folder))
    scratch = work / "tmp"
    scratch.mkdir()
    out = work / "out.json"
    writes_json = "--json" not in argv
    command = [sys.executable, "-m", "stormcf", *argv] + (["--json", str(out)] if writes_json else [])
    env = {**ENV, "TMPDIR": str(scratch)}
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    with open(work / "stdout", "w") as stdout, open(work / "stderr", "w") as stderr:
        began = time.monotonic()
        proc = subprocess.Popen(command, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                process_group=0)
    pgid, times = proc.pid, [at + gap * k for k in range(len(signals))]
    status, usage, sent, cpu_at_signal, signalled_at = None, None, 0, 0.0, 0.0
    try:
        while status is None:
            pid, raw, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = raw
                break
            now = time.monotonic() - began
            if sent < len(signals) and now >= times[sent] and not _ended(proc.pid):
                cpu_at_signal = group_cpu(pgid)[0] + _reap_orphans()
                os.killpg(pgid, signal.SIGINT if signals[sent] == "int" else signal.SIGTERM)
                sent, signalled, signalled_at = sent + 1, time.monotonic(), time.time()
            elif sent and time.monotonic() - signalled > PATIENCE and not run.problems:
                run.problems.append(f"hung: killed {PATIENCE:g} s after the signal ({_states(pgid)})")
                os.killpg(pgid, signal.SIGKILL)
            time.sleep(0.01)
    finally:
        if status is None:                       # this script was stopped: the run goes with it
            os.killpg(pgid, signal.SIGKILL)
    proc.returncode = os.waitstatus_to_exitcode(status)
    run.wall = time.monotonic() - (signalled if sent else began)
    cpu = _rusage_seconds(usage) + _settle(pgid, run)
    if sent:
        run.cpu = cpu - cpu_at_signal
    code = proc.returncode
    run.code = str(code) if code >= 0 else signal.Signals(-code).name
    lines = (work / "stderr").read_text(errors="replace").splitlines()
    run.last_line = lines[-1] if lines else ""
    run.left += [str(p.relative_to(scratch)) for p in scratch.rglob("*")]
    run.left += [p.name for p in work.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]
    _judge(run, argv[0], sent, code, out if writes_json else None, signalled_at, lines)
    shutil.rmtree(work, ignore_errors=True)
    return run


def _settle(pgid: int, run: Run, grace: float = 5.0) -> float:
    """Wait up to ``grace`` seconds for the rest of the group to end, kill what is left (reported), and reap the
    orphans: their CPU seconds."""
    end = time.monotonic() + grace
    cpu = 0.0
    while True:
        cpu += _reap_orphans()
        pids = group_cpu(pgid)[1]
        if not pids:
            return cpu
        if time.monotonic() > end:
            run.left += [f"process {pid}" for pid in pids]
            os.killpg(pgid, signal.SIGKILL)
            while group_cpu(pgid)[1] and time.monotonic() < end + 5.0:
                cpu += _reap_orphans()
                time.sleep(0.05)
            return cpu + _reap_orphans()
        time.sleep(0.05)


def _judge(run: Run, command: str, sent: int, code: int, out: Path | None, signalled_at: float,
           lines: list[str]) -> None:
    """What is wrong with the run's ending (``run.problems``); ``signalled_at``: the wall-clock time of the last
    signal (an output file put in place before it was written before the signal)."""
    p = run.problems
    if sent == 0:
        p.append(f"ended (exit {code}) before the signal")
        return
    written = out is not None and out.exists() and out.stat().st_ctime >= signalled_at
    if sent == 2 and code == 0 and out is not None and out.exists() and not written:
        sent = 1                                 # it had answered the first Ctrl-C before the second came
    last = run.signals[sent - 1]
    if run.cpu > CPU_BOUND:
        p.append(f"{run.cpu:.1f} CPU s after the signal")
    if run.left:
        p.append(f"left {len(run.left)}: {', '.join(run.left[:3])}")
    if last == "term":
        if code != 143 or not lines or lines[-1] != "stormcf: terminated":
            p.append("not 143 with 'stormcf: terminated'")
    elif sent == 2:
        if code != 130 or not lines or lines[-1] != "stormcf: interrupted":
            p.append("the second Ctrl-C: not 130 with 'stormcf: interrupted'")
    elif code == 0 and command in STOPPABLE:
        document = json.loads(out.read_text()) if out is not None and out.exists() else {}
        if document.get("status") != "interrupted":
            p.append(f"status {document.get('status')!r}, not interrupted")
        text = json.dumps(document) + "\n".join(lines)
        if "time limit" in text or "timeout" in text:
            p.append("a message blames the time limit")
    elif code != 130 or not lines or lines[-1] != "stormcf: interrupted":
        p.append("the first Ctrl-C: neither an answer nor 130")
    if code in (130, 143) and written and run.case not in BATCHES:
        p.append("an output file was written")


# ================================================================================================ the table
def table(runs: list[Run]) -> str:
    rows = [("case", "signals", "at s", "exit", "CPU s", "wall s", "left", "last line of stderr", "verdict")]
    for r in runs:
        rows.append((r.case, "+".join(r.signals), f"{r.at:g}", r.code, f"{r.cpu:.2f}", f"{r.wall:.1f}",
                     str(len(r.left)), r.last_line[:50], r.verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated case names (default: all)")
    ap.add_argument("--at", default="1,3,8", help="seconds after the start at which the (first) signal is sent")
    ap.add_argument("--signals", default="int;int,int;term",
                    help="semicolon-separated signal sequences (int, term), e.g. 'int;int,int;term'")
    ap.add_argument("--gap", type=float, default=0.5, help="seconds between the signals of a sequence")
    ap.add_argument("--quick", action="store_true", help="SIGTERM in start-up, two Ctrl-C on frozenlake4 (seconds)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))               # the inputs made here, too, by the stormcf of this checkout
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    # the runs get SIGINT's default action, as a terminal's foreground job (a job started in the background, e.g.
    # with nohup ... &, inherits SIGINT ignored, and stormcf keeps it ignored until its command's handlers are in)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    plan: list[tuple[str, list[str] | Callable, tuple[str, ...], float]] = []
    folder = Path(tempfile.mkdtemp(prefix="signal-table-"))
    try:
        if args.quick:
            quick = lambda d: ["strategy", str(MODELS / "frozenlake4.prism"), "-s", uniform(d), "-p",  # noqa: E731
                               'P<=0.5 [F "hole"]']
            plan = [("start-up", quick, ("term",), 0.2), ("frozenlake4", quick, ("int", "int"), 2.0)]
        else:
            for case in args.cases.split(","):
                for sequence in args.signals.split(";"):
                    for at in (float(a) for a in args.at.split(",")):
                        plan.append((case, CASES[case], tuple(sequence.split(",")), at))
        runs = []
        for case, make, signals, at in plan:
            runs.append(run_case(case, make(folder), signals, at, args.gap, folder))
            print(table(runs[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
        print(table(runs))
        bad = sum(bool(r.problems) for r in runs)
        print(f"\n{len(runs) - bad} of {len(runs)} runs ended as they must (within {CPU_BOUND:g} CPU s of the "
              f"process tree after the signal, nothing left behind)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
