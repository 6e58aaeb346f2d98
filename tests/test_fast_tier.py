"""The fast tier (``make test-fast``): every test that tests/slow_tests.txt leaves to the full suite exists, so that
the list cannot silently name tests that were renamed or removed (their replacements would then run in the fast tier
unnoticed, and the list would rot)."""
import ast
from pathlib import Path

from tiers import SLOW_MODULES, slow_tests

TESTS = Path(__file__).resolve().parent


def test_every_listed_slow_test_exists_outside_the_slow_modules():
    missing, redundant = [], []
    for entry in sorted(slow_tests()):
        module, function = entry.split("::")
        if module in SLOW_MODULES:
            redundant.append(entry)
        file = TESTS / module
        names = {node.name for node in ast.walk(ast.parse(file.read_text()))
                 if isinstance(node, ast.FunctionDef)} if file.exists() else set()
        if function not in names:
            missing.append(entry)
    assert not missing, f"tests/slow_tests.txt names tests that do not exist: {missing}"
    assert not redundant, f"tests/slow_tests.txt names tests of the slow modules (slow already): {redundant}"
