"""The fuzz cases of every command as tables: a hostile input, the exit code it must give and a phrase of the one
line on stderr (issue 22: no silent wrong answer, no crash, no hang).

A :class:`Case` builds its files in a temporary folder (``argv(folder)`` returns the command line) so that the hostile
files are tiny and made in the test. Each ``tests/fuzz/test_<command>.py`` has a module-level list ``CASES`` and runs
it through :func:`run_case`: in this process through :func:`stormcf.cli.main` (fast), or, for what only shows in a
fresh process (a signal, a resource limit), with ``python -m stormcf``. :func:`command_cases` collects every table,
for a conformance suite that runs them for every registered command.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import resource
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import stormcf

LOAN = str(stormcf.example_path("loan.prism"))
IMPATIENT = str(stormcf.example_path("loan.impatient.json"))
GRID = str(stormcf.example_path("gridworld.prism"))
GRID_PATH = str(stormcf.example_path("gridworld.catastrophic.json"))
DATA = Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class Case:
    """One hostile input of a command.

    Attributes:
        name: what is hostile about it (the test's id).
        argv: the command line, given the folder to write its files in (``folder -> [command, args...]``).
        code: the exit code it must give (2: bad input, one line; 0: accepted).
        phrase: a phrase of the message on stderr (exit code != 0) or of stdout (exit code 0).
        fresh_process: run ``python -m stormcf`` in a new process (signals, resource limits, file descriptors).
        limits: resource limits of the fresh process, e.g. ``{resource.RLIMIT_FSIZE: 1000}``.
        stdout: where the fresh process's stdout goes: "pipe" (default), "full" (``/dev/full``), "closed".
        env: environment variables to set, given the folder (``folder -> {name: value}``).
    """

    name: str
    argv: Callable[[Path], Sequence[object]]
    code: int
    phrase: str
    fresh_process: bool = False
    limits: Mapping[int, int] = field(default_factory=dict)
    stdout: str = "pipe"
    env: Callable[[Path], Mapping[str, str]] | None = None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def run_case(case: Case, folder: Path, capsys=None) -> Outcome:
    """Run ``case`` with its files in ``folder`` (the working directory of a fresh process)."""
    argv = [str(a) for a in case.argv(folder)]
    env = dict(case.env(folder)) if case.env else {}
    if not case.fresh_process:
        from stormcf.cli import main
        cwd, saved = os.getcwd(), {name: os.environ.get(name) for name in env}
        os.chdir(folder)
        os.environ.update(env)
        try:
            code = main(argv)
        finally:
            os.chdir(cwd)
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        out, err = capsys.readouterr() if capsys is not None else ("", "")
        return Outcome(code, out, err)
    return _fresh(case, argv, folder, env)


def _fresh(case: Case, argv: list[str], folder: Path, env: Mapping[str, str]) -> Outcome:
    def limit() -> None:
        for which, value in case.limits.items():
            resource.setrlimit(which, (value, value))
        if case.stdout == "closed":
            os.close(1)
    stdout = open("/dev/full", "w") if case.stdout == "full" else subprocess.PIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "stormcf", *argv], stdout=stdout, stderr=subprocess.PIPE,
                              text=True, cwd=folder, preexec_fn=limit, stdin=subprocess.DEVNULL, timeout=600,
                              env={**os.environ, **env})
    finally:
        if stdout is not subprocess.PIPE:
            stdout.close()
    return Outcome(proc.returncode, proc.stdout or "", proc.stderr)


def check_outcome(case: Case, outcome: Outcome) -> None:
    """The contract: the expected exit code; an error is one line on stderr starting with ``stormcf:`` and holding
    the phrase (``stormcf: error: ...``, or argparse's ``stormcf COMMAND: error: ...`` for a malformed option), and
    no signal ever (a negative code)."""
    assert outcome.code >= 0, f"{case.name}: killed by signal {-outcome.code}: {outcome.err[-500:]}"
    assert outcome.code == case.code, f"{case.name}: exit code {outcome.code}, expected {case.code}: " \
                                      f"{outcome.err[-800:]}"
    if case.code == 0:
        assert case.phrase in outcome.out, f"{case.name}: {case.phrase!r} not in {outcome.out[-800:]!r}"
        return
    lines = outcome.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stormcf"), f"{case.name}: not one line: {outcome.err[-800:]}"
    assert "Traceback" not in outcome.err and "internal error" not in outcome.err or case.code == 1
    assert case.phrase in lines[0], f"{case.name}: {case.phrase!r} not in {lines[0]!r}"


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    return path


def fifo_with_reader(folder: Path, name: str) -> Path:
    """A FIFO ``folder/name`` that a daemon thread drains into ``folder/name.read`` (the reader a pipeline gives)."""
    path = folder / name
    os.mkfifo(path)

    def drain() -> None:
        with open(path, "rb") as fifo, open(folder / f"{name}.read", "wb") as copy:
            copy.write(fifo.read())
    threading.Thread(target=drain, daemon=True).start()
    return path


def full_device(folder: Path, name: str = "full") -> Path:
    """A device like ``/dev/full`` (every write fails with ENOSPC) made in ``folder``, never the machine's own."""
    return char_device(folder, name, 7)


def zero_device(folder: Path, name: str = "zero") -> Path:
    """A device like ``/dev/zero`` (endless zero bytes to read) made in ``folder``."""
    return char_device(folder, name, 5)


def char_device(folder: Path, name: str, minor: int) -> Path:
    """The memory device ``1,minor`` (``/dev/full``: 7, ``/dev/zero``: 5) as ``folder/name``; the test is skipped
    where devices cannot be made (not root, no CAP_MKNOD) or opened (a nodev mount)."""
    path = folder / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        os.close(os.open(path, os.O_RDWR))
    except OSError as err:
        import pytest
        pytest.skip(f"cannot make and open a character device here ({err.strerror})")
    return path


def command_cases() -> dict[str, list[Case]]:
    """Every command's table: ``{"info": [...], "check": [...], ...}`` from the modules ``test_<command>.py``."""
    tables = {}
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name.startswith("test_"):
            cases = getattr(importlib.import_module(f"{__package__}.{module.name}"), "CASES", None)
            if cases is not None:
                tables[module.name.removeprefix("test_").replace("_", "-")] = list(cases)
    return tables
