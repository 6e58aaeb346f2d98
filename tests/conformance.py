"""The analysis contract as reusable checks, as scikit-learn's ``check_estimator`` checks every estimator. Each check
takes a command, its :class:`Case` (how to exercise it) and a temporary folder:

- :func:`check_time_limit`: a tiny ``--time-limit`` ends the command within the limit plus slack, with an honest
  status: an answer found in time (exit code 0) or status ``timeout`` (exit code 5), and the JSON document either way;
- :func:`check_sigterm`: SIGTERM gives exit code 143 and leaves no output file, no temporary file, no process;
- :func:`check_ctrl_c`: the first Ctrl-C gives status ``interrupted`` with the best checked answer (an analysis that
  is ``stoppable``), else exit code 130 and no output file;
- :func:`check_second_ctrl_c`: the second Ctrl-C gives exit code 130 and no output file, whatever the command is
  doing then (printing or writing its answer, tearing down);
- :func:`check_bad_input`: a bad input is one line on stderr and exit code 2;
- :func:`check_batch_of_one`: a batch of one item gives the document of the single run;
- :func:`check_schema`: the single run's ``--json`` document is valid under the published JSON Schema.

Where a check needs no signal it runs the command in this process (:func:`stormcf.cli.main`); otherwise in a fresh
``python -m stormcf`` whose progress lines (``STORMCF_PROGRESS_SECONDS``) say when it works, so that no check waits
a fixed time. The cases of stormcf's own analyses live beside their tests (``tests/<package>/conformance_cases.py``,
``CASES``: command -> Case, found by :func:`builtin_cases`); a plugin's test passes its own case.
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

TESTS = Path(__file__).resolve().parent
SCHEMA = TESTS.parent / "stormcf" / "schema" / "stormcf-1.json"     # stormcf.report.schema_path()
#: the time limit the runs get, and the slack allowed on top of it (start-up, a loaded machine)
LIMIT, SLACK = 3.0, 60.0

Argv = Callable[[Path], Sequence[str]]


@dataclass(frozen=True)
class Case:
    """How to exercise one analysis's command.

    Attributes:
        slow: a command line that works for longer than a few seconds (given the folder to write files in).
        working: a phrase of the progress line that shows the command is where a Ctrl-C finds an answer to report
            (a stoppable analysis past its first answer); any progress line when empty.
        single, batch: a quick single run and the batch of that one item (None where a batch does not apply).
        refusal: a bad input and a phrase of its one-line message (default: the first refusal of the command's
            fuzz table, ``tests/fuzz``).
        origin: keys of the document that name where its input came from (a file for a single run, FILE.jsonl:N in
            a batch), which the batch-of-one check does not compare.
        env: environment variables of the command's process (a plugin's PYTHONPATH).
    """

    slow: Argv
    working: str = ""
    single: Argv | None = None
    batch: Argv | None = None
    refusal: tuple[Argv, str] | None = None
    origin: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


def builtin_cases() -> dict[str, Case]:
    """Every ``CASES`` of ``tests/*/conformance_cases.py``."""
    cases: dict[str, Case] = {}
    for path in sorted(TESTS.glob("*/conformance_cases.py")):
        spec = importlib.util.spec_from_file_location(f"conformance_cases_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases.update(module.CASES)
    return cases


def lines_file(folder: Path, name: str, *lines: str) -> str:
    """A JSON lines file of ``lines`` in ``folder``."""
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def one_line(path: str | os.PathLike) -> str:
    """The JSON document of a file on one line (a batch item)."""
    return json.dumps(json.loads(Path(path).read_text()))


# ================================================================================================ the checks
def check_time_limit(command: str, case: Case, folder: Path) -> None:
    out = folder / "out.json"
    began = time.perf_counter()
    run = Started(case.slow(folder), folder, case.env, "--time-limit", str(LIMIT), "--json", str(out))
    code, stderr = run.finish(LIMIT + SLACK + 120)
    assert time.perf_counter() - began < LIMIT + SLACK, f"{command} ran past its limit"
    assert code in (0, 5), stderr
    document = json.loads(out.read_text())
    assert document["command"] == command and document["schema"] == "stormcf/1"
    if code == 5:
        assert document["status"] == "timeout"
        if "error" in document:                     # no answer at all: one line says why
            assert f"the time limit of {LIMIT:g} s" in document["error"]["message"]
            assert stderr.startswith("stormcf: timeout:") and stderr.count("\n") == 1, stderr
    else:
        assert document["status"] not in ("timeout", "error")
    assert left_behind(folder) == []


def check_sigterm(command: str, case: Case, folder: Path) -> None:
    argv = case.slow(folder)                        # the inputs it writes are there before the run
    before = set(os.listdir(folder))
    out = folder / "out.json"
    run = Started(argv, folder, case.env, "--json", str(out))
    run.wait_until_working()
    run.process.send_signal(signal.SIGTERM)
    code, stderr = run.finish(60)
    assert code == 143, stderr
    assert stderr.endswith("stormcf: terminated\n"), stderr
    assert not out.exists() and left_behind(folder) == [] and set(os.listdir(folder)) <= before | {"tmp"}
    assert processes_of(folder) == []


def check_ctrl_c(command: str, case: Case, folder: Path, stoppable: bool) -> None:
    """A stoppable analysis must answer (exit code 0, status interrupted, its answer checked); any other must end
    with 130 and no output file: no other ending passes."""
    out = folder / "out.json"
    run = Started(case.slow(folder), folder, case.env, "--json", str(out))
    run.wait_until_working(case.working)
    run.process.send_signal(signal.SIGINT)
    code, stderr = run.finish(120)
    if stoppable:
        assert code == 0, stderr
        assert json.loads(out.read_text())["status"] == "interrupted"
    else:
        assert code == 130 and stderr.endswith("stormcf: interrupted\n"), stderr
        assert not out.exists()
    assert left_behind(folder) == [] and processes_of(folder) == []


def check_second_ctrl_c(command: str, case: Case, folder: Path, stoppable: bool) -> None:
    """The second Ctrl-C as soon as the first one was taken (the line saying so, in a stoppable analysis): exit code
    130 and no output file, also when it comes while the answer is printed or written or the process tears down.
    Only a command that had ended before the second Ctrl-C was sent may exit 0 (its file then predates it)."""
    out = folder / "out.json"
    run = Started(case.slow(folder), folder, case.env, "--json", str(out))
    run.wait_until_working(case.working)
    run.process.send_signal(signal.SIGINT)
    if stoppable:
        run.wait_until_working("stopping at the next safe point")
    sent = time.time()
    run.process.send_signal(signal.SIGINT)          # nothing when the command has ended (Popen.send_signal polls)
    code, stderr = run.finish(120)
    if code == 0 and stoppable:
        assert out.stat().st_ctime <= sent
    else:
        assert code == 130 and stderr.endswith("stormcf: interrupted\n"), stderr
        assert not out.exists()
    assert left_behind(folder) == [] and processes_of(folder) == []


def check_bad_input(command: str, case: Case, folder: Path) -> None:
    argv, phrase = case.refusal if case.refusal is not None else fuzz_refusal(command)
    code, out, err = in_process(argv(folder), case.env)
    assert code == 2 and err.startswith("stormcf: error: ") and err.count("\n") == 1, err
    assert phrase in err


def check_batch_of_one(command: str, case: Case, folder: Path) -> None:
    from stormcf.report import without_times
    single, batch = folder / "single.json", folder / "batch.jsonl"
    code, _, err = in_process([*case.single(folder), "--json", str(single)], case.env)
    assert code == 0, err
    code, _, err = in_process([*case.batch(folder), "--json", str(batch)], case.env)
    assert code == 0, err
    document, alone = json.loads(batch.read_text().splitlines()[0]), json.loads(single.read_text())
    document.pop("batch")
    for key in case.origin:                        # where the item came from: a file here, a line there
        assert document.pop(key) != alone.pop(key)
    assert without_times(document) == without_times(alone)


def check_schema(command: str, case: Case, folder: Path) -> None:
    import jsonschema
    out = folder / "doc.json"
    code, _, err = in_process([*case.single(folder), "--json", str(out)], case.env)
    assert code == 0, err
    document = json.loads(out.read_text())
    assert document["command"] == command
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))


# ================================================================================================ running
def fuzz_refusal(command: str) -> tuple[Argv, str]:
    """The first refusal (exit code 2, in this process) of the command's fuzz table."""
    from fuzz.hostile import command_cases
    refusal = next(case for case in command_cases()[command] if case.code == 2 and not case.fresh_process)
    return refusal.argv, refusal.phrase


def in_process(argv: Sequence[object], env: Mapping[str, str] = {}) -> tuple[int, str, str]:
    """``stormcf ARGV`` through :func:`stormcf.cli.main` in this process: exit code, stdout, stderr (a plugin's
    PYTHONPATH joins ``sys.path`` meanwhile)."""
    import contextlib
    import io
    from stormcf.cli import main
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:0] = extra
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    finally:
        del sys.path[:len(extra)]
    return code, out.getvalue(), err.getvalue()


class Started:
    """``python -m stormcf ARGV`` with its temporary files in ``folder/tmp`` (to find any left behind) and a
    progress line every half second, whose stderr is read as it comes."""

    def __init__(self, argv: Sequence[str], folder: Path, env: Mapping[str, str], *extra: str) -> None:
        scratch = folder / "tmp"
        scratch.mkdir(exist_ok=True)
        environment = {**os.environ, "TMPDIR": str(scratch), "STORMCF_PROGRESS_SECONDS": "0.5", **env}
        if "PYTHONPATH" in env and os.environ.get("PYTHONPATH"):
            environment["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], os.environ["PYTHONPATH"]])
        self.process = subprocess.Popen([sys.executable, "-m", "stormcf", *argv, *extra], cwd=folder, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                        env=environment)
        self.stderr: list[str] = []
        self.stdout = ""
        self._line = threading.Condition()
        self._readers = [threading.Thread(target=self._read_stderr, daemon=True),
                         threading.Thread(target=self._read_stdout, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            with self._line:
                self.stderr.append(line)
                self._line.notify_all()

    def _read_stdout(self) -> None:
        self.stdout = self.process.stdout.read()

    def wait_until_working(self, phrase: str = "", seconds: float = 120.0) -> None:
        """Wait for a progress line (containing ``phrase``): the command works past its start-up."""
        end = time.monotonic() + seconds
        with self._line:
            while not any(line.startswith("stormcf: ") and phrase in line for line in self.stderr):
                assert self.process.poll() is None, f"the command ended before it worked: {''.join(self.stderr)}"
                assert time.monotonic() < end, f"no progress line with {phrase!r}: {''.join(self.stderr)}"
                self._line.wait(0.2)

    def finish(self, seconds: float) -> tuple[int, str]:
        """The exit code and stderr without its progress lines."""
        code = self.process.wait(seconds)
        for reader in self._readers:
            reader.join(10)
        return code, "".join(line for line in self.stderr if not _progress_line(line))


def _progress_line(line: str) -> bool:
    """``stormcf: 1m30s: ...`` or ``stormcf: 0s: ...``: a heartbeat line."""
    head = line.removeprefix("stormcf: ").split(":", 1)[0]
    return line.startswith("stormcf: ") and head[:1].isdigit() and head.endswith("s")


def left_behind(folder: Path) -> list[str]:
    """Temporary files left in the run's TMPDIR or beside its outputs (atomic writes' ``.NAME.xxxx.tmp``)."""
    scratch = folder / "tmp"
    left = [str(p) for p in scratch.rglob("*")] if scratch.exists() else []
    return left + [p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def processes_of(folder: Path, wait: float = 5.0) -> list[str]:
    """Processes still running whose environment names the run's folder (solver workers, Storm children, loky
    workers), after a short grace for the kernel to deliver their parent's death."""
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
