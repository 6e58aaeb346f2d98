"""docs/architecture.md's analyses x contract table is what the code declares (tests/contract_table.py)."""
from __future__ import annotations

from pathlib import Path

from contract_table import HEADER, rows

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def test_the_contract_table_is_the_registrys():
    lines = PAGE.read_text().splitlines()
    start = lines.index(HEADER)
    shown = lines[start:start + len(rows())]
    assert shown == rows(), "docs/architecture.md's contract table is out of date: python tests/contract_table.py"
    assert not lines[start + len(shown)].startswith("|"), "the page's table has rows of analyses no longer registered"
