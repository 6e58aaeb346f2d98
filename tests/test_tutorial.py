"""docs/tutorial.ipynb runs from top to bottom (nbclient, a fresh kernel), shows the loan example's numbers, and its
stored outputs (what a reader sees on GitHub without running it) are those of a fresh run, up to what differs between
runs (times; the gap a solver proves, which depends on the solver installed: :func:`normalised`).

After a change of what the notebook prints, store a fresh run's outputs: ``python tests/test_tutorial.py --store``."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "tutorial.ipynb"

#: what differs between two runs of the notebook: times, and the gap to a proven bound (each solver proves its own)
VOLATILE = [(re.compile(r"\b\d+(\.\d+)?(e-?\d+)? ?(s|ms|seconds)\b"), "<time>"),
            (re.compile(r"gap \d+(\.\d+)?(e-?\d+)?"), "gap <gap>")]


def executed(folder: Path) -> nbformat.NotebookNode:
    """The notebook run in a fresh kernel in ``folder``."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def cell_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def normalised(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def test_tutorial_notebook_runs_shows_storms_numbers_and_stores_its_outputs(tmp_path):
    notebook = executed(tmp_path)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    outputs = "\n".join(cell_text(c) for c in code)
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert "<ExplicitModel loan.prism: MDP, 9 states, 13 choices, 17 transitions>" in outputs
    assert 'P=? [F "rejected"] = 411/1000 (= 0.411)' in outputs and "Fraction(411, 1000)" in outputs
    assert "Pmin from the initial state: 0.02" in outputs
    assert 'P<=1/5 [F "rejected"] = 0.2' in outputs
    assert "You can reach it with probability 0.2 as follows:" in outputs and "status: optimal" in outputs
    assert "'schema': 'stormcf/1'" in outputs or '"schema": "stormcf/1"' in outputs
    assert not re.search(r"HiGHS|Gurobi|SCIP|Copyright", outputs), "a solver's own output in the notebook"
    stored = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    assert len(stored) == len(code)
    for number, (fresh, kept) in enumerate(zip(code, stored), 1):
        assert kept.get("outputs"), f"code cell {number} has no stored output: python tests/test_tutorial.py --store"
        assert normalised(cell_text(kept)) == normalised(cell_text(fresh)), (
            f"code cell {number}'s stored output differs from a fresh run: python tests/test_tutorial.py --store")


def store() -> None:
    """Run the notebook and store its outputs in docs/tutorial.ipynb."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        notebook = executed(Path(folder))
    nbformat.write(notebook, NOTEBOOK)


if __name__ == "__main__":
    if sys.argv[1:] != ["--store"]:
        sys.exit("usage: python tests/test_tutorial.py --store")
    store()
