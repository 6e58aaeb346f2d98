"""``stormcf examples --copy DIR`` and ``stormcf demo-learn --dir DIR``: a directory option given something else."""
import pytest

from .hostile import Case, write

CASES = [
    Case("examples --copy a file (was: no such directory)",
         lambda d: ["examples", "--copy", write(d, "f", "x").name], 2, "--copy f: is a file, not a directory"),
    Case("examples --copy a missing folder", lambda d: ["examples", "--copy", d / "missing"], 2, "no such directory"),
    Case("demo-learn --dir a file (was: no such directory)", lambda d: ["demo-learn", "--dir", write(d, "f", "x").name],
         2, "--dir f: is a file, not a directory"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_examples(case, hostile):
    hostile(case)
