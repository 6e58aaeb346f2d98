"""Every ``python`` block of docs/python-api.md runs as written, each in a fresh Python process started in an empty
directory, and prints what the ``text`` block after it shows (``...`` stands for text left out:
doc_commands.unmatched). Nothing reaches the process's stdout but what Python prints: the snippet's ``sys.stdout``
writes to another file, and the file descriptor 1 is captured, so a solver's banner or Storm's log written from C
code while an analysis runs fails the test."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from doc_commands import ROOT, unmatched

PAGE = ROOT / "docs" / "python-api.md"

#: runs the file argv[1] as __main__ with Python's stdout on the file descriptor argv[2] (fd 1 stays the process's)
RUNNER = ("import sys; sys.stdout = open(int(sys.argv[2]), 'w', buffering=1, encoding='utf-8', closefd=False); "
          "sys.argv = sys.argv[1:2]; "
          "exec(compile(open(sys.argv[0], encoding='utf-8').read(), sys.argv[0], 'exec'), {'__name__': '__main__'})")


@dataclass(frozen=True)
class Snippet:
    line: int
    code: str
    shown: tuple[str, ...]


def snippets(page: Path = PAGE) -> list[Snippet]:
    """The ``python`` blocks of a page, each with the lines of the ``text`` block right after it (if any)."""
    text = page.read_text(encoding="utf-8")
    found: list[Snippet] = []
    follows_python = False
    for block in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        language, body = block.group(1), block.group(2)
        if language == "python":
            found.append(Snippet(text.count("\n", 0, block.start()) + 1, body, ()))
        elif language == "text" and follows_python:
            found[-1] = Snippet(found[-1].line, found[-1].code, tuple(body.splitlines()))
        follows_python = language == "python"
        end = block.end()
        follows_python = follows_python and not text[end:text.find("```", end)].strip()
    return found


def test_every_analysis_has_a_snippet():
    code = "\n".join(s.code for s in snippets())
    for entry in ("solve_counterfactual", "solve_icfmdp", "explain_path", "solve_recourse", "solve_setcover",
                  "learn_mdp", "time_limit=", "run=", "to_dict()"):
        assert entry in code, entry
    assert all(s.shown for s in snippets()), "a snippet without the output it prints"


def run_fresh(code: str, folder: Path) -> tuple[str, str]:
    """Run ``code`` in a fresh Python process in an empty folder: (what Python printed, what reached the file
    descriptor 1 otherwise). Fails on a non-zero exit code."""
    work = folder / "empty"
    work.mkdir()
    script, printed = folder / "snippet.py", folder / "printed.txt"
    script.write_text(code, encoding="utf-8")
    with open(printed, "w", encoding="utf-8") as out:
        proc = subprocess.run([sys.executable, "-c", RUNNER, str(script), str(out.fileno())], cwd=work,
                              capture_output=True, text=True, pass_fds=(out.fileno(),), stdin=subprocess.DEVNULL,
                              env={**os.environ, "STORMCF_PROGRESS_SECONDS": "3600"}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return printed.read_text(encoding="utf-8"), proc.stdout


@pytest.mark.parametrize("snippet", snippets(), ids=lambda s: f"python-api.md:{s.line}")
def test_snippet_runs_as_written_and_prints_what_the_page_shows(snippet, tmp_path):
    output, native = run_fresh(snippet.code, tmp_path)
    assert native == "", f"written to stdout by native code: {native[:500]!r}"
    missing = unmatched(snippet.shown, output)
    assert missing is None, f"the page shows {missing!r}, which the output lacks:\n{output}"


#: analyses with every solver they can use (HiGHS through scipy and highspy, SCIP, Gurobi when installed)
EVERY_SOLVER = """
import importlib.util
import stormcf
from stormcf.icfmdp import ICFMDPSettings
from stormcf.setcover import SetCoverInstance

model = stormcf.load_model(stormcf.example_path("loan.prism"))
sigma = stormcf.Strategy.load(model, stormcf.example_path("loan.impatient.json"))
solvers = [("highs", "1,0,0"), ("auto", "0,1,0"), ("scip", "1,1,1")]
solvers += [("gurobi", "1,1,1")] if importlib.util.find_spec("gurobipy") else []
for solver, weights in solvers:
    problem = stormcf.CounterfactualProblem(sigma, 'P<=0.2 [F "rejected"]', weights=weights)
    print(solver, weights, stormcf.solve_counterfactual(problem, solver=solver).status)
instance = SetCoverInstance.load(stormcf.example_path("setcover.paper.json"))
for method in ("milp", "storm"):
    print(method, stormcf.solve_setcover(stormcf.SetCoverProblem(instance, [0, 0, 0, 0, 1]), method).status)
treat = stormcf.load_model(stormcf.example_path("treat.prism"))
path = stormcf.ObservedPath.load(treat, stormcf.example_path("treat.path.json"))
print("icfmdp", stormcf.solve_icfmdp(stormcf.ICFMDPProblem(path, reward="health"), ICFMDPSettings(bounds="lp")).status)
"""


def test_no_solver_writes_to_a_python_users_stdout(tmp_path):
    """HiGHS's banner, SCIP's and Gurobi's logs, Storm's output: none reaches stdout while an analysis runs."""
    output, native = run_fresh(EVERY_SOLVER, tmp_path)
    assert native == "", f"written to stdout by native code: {native[:500]!r}"
    assert output.count("optimal") >= 5 and "icfmdp ok" in output, output
