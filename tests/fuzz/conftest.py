import pytest

from .hostile import check_outcome, run_case


@pytest.fixture
def hostile(tmp_path, capsys):
    """Run a :class:`~tests.fuzz.hostile.Case` and check its outcome (exit code, one line, the phrase)."""
    def run(case):
        outcome = run_case(case, tmp_path, capsys)
        check_outcome(case, outcome)
        return outcome
    return run
