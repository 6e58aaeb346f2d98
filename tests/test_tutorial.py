"""docs/tutorial.ipynb runs from top to bottom (nbclient, a fresh kernel) and shows the loan example's numbers."""
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "tutorial.ipynb"


def cell_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_tutorial_notebook_runs_and_shows_storms_numbers(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                   ).execute()
    outputs = "\n".join(cell_text(c) for c in notebook.cells if c.cell_type == "code")
    assert not [o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert "<ExplicitModel loan.prism: MDP, 9 states, 13 choices, 17 transitions>" in outputs
    assert 'P=? [F "rejected"] = 411/1000 (= 0.411)' in outputs and "Fraction(411, 1000)" in outputs
    assert "Pmin from the initial state: 0.02" in outputs
    assert 'P<=1/5 [F "rejected"] = 0.2' in outputs
    assert "You can reach it with probability 0.2 as follows:" in outputs and "status: optimal" in outputs
    assert "'schema': 'stormcf/1'" in outputs or '"schema": "stormcf/1"' in outputs
