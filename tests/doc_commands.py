"""The shell commands of the README and the docs pages, extracted and run as written in an empty directory.

Every fenced block marked ``sh`` in README.md and docs/**/*.md is runnable documentation:

- each line (``\\`` continues it) that starts with ``stormcf`` is run, in the order of its page, in one fresh empty
  directory per page (later commands read what earlier ones wrote), with the shipped examples found through the
  ``prism_models/NAME`` fallback; a trailing ``# comment`` is not part of the command;
- lines starting with ``#`` right after a command are the output the page shows: they must be lines of the real
  output, in order, where ``...`` stands for any text and a line ``...`` for any lines (:func:`unmatched`; not for
  commands run with quick options); explanations belong outside the block;
- a command exits with 0, or with the code its comment names (``# ... exit code 3 ...``);
- other lines of an ``sh`` block must start with one of :data:`NOT_RUN` (set-up, container and developer commands,
  which CI and the smoke scripts run); anything else is an error, so that no command is skipped unnoticed;
- usage synopses with placeholders (``MODEL``, ``[--k-max 10]``) belong in ``text`` blocks, which are not run.

Commands that take minutes as written are listed in :data:`QUICK` with the options that make them quick: the test
(tests/test_doc_commands.py) runs them so, ``--full`` as written. Every entry must match a documented command.

Commands that need an extra (``--plot``: matplotlib, ``--backend dask``, an ``.xes`` log: pm4py, ``--dot x.png``:
Graphviz, ``setcover-learn`` with a network generator: PyTorch) are recognised by their arguments (:data:`EXTRAS`)
and skipped with ``--without EXTRA,...``.

Run it on an installed stormcf (scripts/fresh_install_smoke.sh does, in a fresh virtual environment):
``python tests/doc_commands.py --stormcf VENV/bin/stormcf [--full] [--without plot,dask] [PAGE ...]``. This module
imports nothing of stormcf, so it runs against whichever installation the given executable belongs to.
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]

#: the first words of lines of ``sh`` blocks that are documented but not run here (installing, building, testing)
NOT_RUN = ("pip ", "make ", "make\n", "docker ", "python ", "bash ", "git ", "scripts/", ".ci/", "cd ")

#: documented command (its words joined by single spaces, quotes removed) -> the options appended so that it runs in
#: seconds
QUICK: dict[str, list[str]] = {
    "stormcf recourse --dataset adult --instances prism_models/adult.instances.jsonl --workers 2":
        ["--generations", "3", "--offspring", "20", "--mutants", "5", "--no-exact"],
    "stormcf recourse --dataset adult --instance 0": ["--generations", "3", "--offspring", "20", "--mutants", "5"],
    "stormcf explain-path prism_models/sepsis.prism --paths prism_models/sepsis.paths.jsonl --reward r --k 2 "
    "--workers 2": ["--explanations", "20"],
    "stormcf setcover-data d20.npz -n 20 --instance-out i20.json": ["--draws", "3000"],
    "stormcf setcover-learn d20.npz --generator mc --augment 200 --out mc.npz --time-limit 1500": ["--hidden", "16",
                                                                                                    "--epochs", "2"],
    "stormcf setcover-data g20.npz -n 20 --groups manual": ["--draws", "3000"],
}

def _after(argv: Sequence[str], flag: str) -> str:
    """The value given to ``flag`` ("" without it)."""
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else ""


#: what a command needs beyond the core install: extra -> a test of its arguments
EXTRAS: dict[str, Callable[[Sequence[str]], bool]] = {
    "plot": lambda argv: "--plot" in argv,
    "dask": lambda argv: _after(argv, "--backend") == "dask",
    "xes": lambda argv: any(a.endswith(".xes") for a in argv),
    "graphviz": lambda argv: _after(argv, "--dot").lower().endswith((".png", ".svg", ".pdf")),
    "learn": lambda argv: ((argv[:1] == ["setcover-learn"] and _after(argv, "--generator") != "knn")
                           or (argv[:1] == ["setcover-evaluate"] and len(argv) > 1
                               and Path(argv[1]).name.startswith(NETWORK_FILES))),
}
#: the documentation names a network generator's file by its kind (mc.npz): evaluating it needs its training first
NETWORK_FILES = ("mc", "na", "fa", "seq2seq")


@dataclass(frozen=True)
class Command:
    """One documented command: where it is (page, line), its text as written, its words and the exit code its
    comment names."""

    page: str
    line: int
    text: str
    argv: tuple[str, ...]
    exit_code: int
    shown: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def needs(self) -> set[str]:
        """The extras (:data:`EXTRAS`) the command needs."""
        return {extra for extra, test in EXTRAS.items() if test(list(self.argv))}


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


_FENCE = re.compile(r"^```(\w*)\s*$")


def sh_lines(page: Path) -> list[tuple[int, str]]:
    """(line number, logical line) of the ``sh`` blocks of a page: continuations joined, output lines and blank
    lines left out."""
    out: list[tuple[int, str]] = []
    language, pending, start = None, "", 0
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        fence = _FENCE.match(line)
        if fence:
            language = None if language is not None else fence.group(1)
            continue
        if language != "sh":
            continue
        if not pending:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((start, pending + line))
        pending = ""
    return out


def shown_output(page: Path) -> dict[int, list[str]]:
    """The output a page shows for its commands: the line of a command of an ``sh`` block -> the ``#`` lines right
    after it, without the ``# `` (a command followed by a line that does not start with ``#`` shows none)."""
    shown: dict[int, list[str]] = {}
    lines = page.read_text(encoding="utf-8").splitlines()
    starts = {number for number, _ in sh_lines(page)}
    for number in starts:
        end = number - 1
        while lines[end].rstrip().endswith("\\"):
            end += 1
        output = []
        for line in lines[end + 1:]:
            if not line.startswith("#"):
                break
            output.append(line[2:] if line.startswith("# ") else line[1:])
        if output:
            shown[number] = output
    return shown


def unmatched(shown: Sequence[str], output: str) -> str | None:
    """The first line of ``shown`` that the real ``output`` lacks, or None: every shown line must be a line of the
    output (trailing spaces aside), in the same order, where ``...`` stands for any text and a line ``...`` for any
    lines (shown output is an excerpt of the real one)."""
    real = [line.rstrip() for line in output.splitlines()]
    at = 0
    for line in shown:
        if line.strip() == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.rstrip().split("...")))
        while at < len(real) and not pattern.fullmatch(real[at]):
            at += 1
        if at == len(real):
            return line
        at += 1
    return None


def commands(page: Path, root: Path = ROOT) -> list[Command]:
    """The stormcf commands of a page's ``sh`` blocks. Raises ``ValueError`` for a line that is neither a stormcf
    command nor one of :data:`NOT_RUN`."""
    out = []
    shown = shown_output(page)
    for number, line in sh_lines(page):
        text = line.strip()
        where = f"{page.relative_to(root)}:{number}"
        if not text.startswith("stormcf"):
            if not (text + "\n").startswith(NOT_RUN):
                raise ValueError(f"{where}: '{text[:60]}' is neither a stormcf command nor a set-up command; "
                                 "put usage synopses into a text block")
            continue
        words = shlex.split(text, comments=True)
        code = re.search(r"exit code (\d+)", _comment(text))
        out.append(Command(str(page.relative_to(root)), number, " ".join(words), tuple(words[1:]),
                           int(code.group(1)) if code else 0, tuple(shown.get(number, ()))))
    return out


def _comment(text: str) -> str:
    """The trailing ``# comment`` of a shell line (outside quotes)."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            return text[i:]
    return ""


def documented(root: Path = ROOT) -> list[Command]:
    """Every documented stormcf command, page by page."""
    return [c for page in pages(root) for c in commands(page, root)]


def quick_argv(command: Command, full: bool = False) -> list[str]:
    """The arguments a command runs with: as written, plus its :data:`QUICK` options unless ``full``."""
    return [*command.argv, *([] if full else QUICK.get(command.text, []))]


@dataclass
class Outcome:
    command: Command
    code: int
    seconds: float
    output: str
    quick: bool = False

    @property
    def ok(self) -> bool:
        return self.code == self.command.exit_code and self.missing is None

    @property
    def missing(self) -> str | None:
        """The first line of the output the page shows that the real output lacks (:func:`unmatched`); the
        output of a command run with quick options is not compared."""
        if not self.command.shown or self.quick:
            return None
        return unmatched(self.command.shown, self.output)


def run_page(page_commands: Sequence[Command], run: Callable[[list[str], Path], tuple[int, str]],
             full: bool = False, without: Sequence[str] = ()) -> list[Outcome]:
    """Run one page's commands in order in a fresh empty directory; ``run(argv, folder)`` -> (exit code, output).
    Commands that need one of the extras ``without`` are skipped (no outcome)."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="stormcf-docs-") as folder:
        for command in page_commands:
            if command.needs & set(without):
                continue
            start = time.perf_counter()
            argv = quick_argv(command, full)
            code, output = run(argv, Path(folder))
            outcomes.append(Outcome(command, code, time.perf_counter() - start, output, argv != list(command.argv)))
    return outcomes


def subprocess_runner(executable: Sequence[str]) -> Callable[[list[str], Path], tuple[int, str]]:
    """Run ``executable ARGS`` in the folder, stdin closed; the output is stdout and stderr."""
    def run(argv: list[str], folder: Path) -> tuple[int, str]:
        proc = subprocess.run([*executable, *argv], cwd=folder, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout + proc.stderr
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help="pages to run (default: README.md and docs/**/*.md)")
    parser.add_argument("--stormcf", default="stormcf", help="the stormcf executable (default: on PATH)")
    parser.add_argument("--full", action="store_true", help="run the slow commands as written, not quick")
    parser.add_argument("--without", default="", metavar="EXTRA,...",
                        help=f"skip the commands that need these extras ({', '.join(EXTRAS)}): not installed")
    args = parser.parse_args(argv)
    chosen = [Path(p).resolve() for p in args.pages] or pages()
    run = subprocess_runner([args.stormcf])
    without = [w for w in args.without.split(",") if w]
    failed = ran = 0
    for page in chosen:
        for o in run_page(commands(page), run, args.full, without):
            ran += 1
            print(f"{'ok ' if o.ok else 'FAIL'} {o.seconds:6.1f} s  exit {o.code}  {o.command.where}  "
                  f"{o.command.text[:90]}", flush=True)
            if not o.ok:
                failed += 1
                if o.missing is not None:
                    print(f"      the page shows '{o.missing}', which the output lacks", flush=True)
                print("      " + "\n      ".join(o.output.strip().splitlines()[-5:]), flush=True)
    skipped = sum(len(commands(p)) for p in chosen) - ran
    print(f"{ran - failed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
          + (f" (needing {', '.join(without)})" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
