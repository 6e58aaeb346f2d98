"""stormcf/ type-checks: mypy, configured in pyproject.toml, finds no error (issue 38). Libraries without type
information (stormpy, scipy, tqdm) are Any to it; a ``# type: ignore`` says its reason on its line."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error(tmp_path):
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_every_type_ignore_names_its_code_and_reason():
    bare = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "stormcf").rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), start=1)
            if "# type: ignore" in line and not re.search(r"# type: ignore\[[a-z-, ]+\]\s+#\s*\S", line)]
    assert not bare, "a '# type: ignore' without its error code and reason: " + ", ".join(bare)
