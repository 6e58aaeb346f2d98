import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import stormcf

# Deterministic example generation in CI; Storm calls are too slow for hypothesis' default deadline.
settings.register_profile("stormcf", derandomize=True, deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "stormcf"))


@pytest.fixture(scope="session")
def loan():
    return stormcf.load_model(stormcf.example_path("loan.prism"))


@pytest.fixture(scope="session")
def impatient(loan):
    return stormcf.Strategy.load(loan, stormcf.example_path("loan.impatient.json"))


def _shared() -> Path:
    """../shared beside the checkout (CI puts it there; worktrees may sit deeper); STORMCF_SHARED overrides."""
    if "STORMCF_SHARED" in os.environ:
        return Path(os.environ["STORMCF_SHARED"])
    for parent in Path(__file__).resolve().parents[1:]:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared"
    return Path(__file__).resolve().parents[2] / "shared"


SHARED = _shared()


@pytest.fixture(scope="session")
def reference_instances() -> Path:
    """The seed authors' outputs (../shared/data/reference-instances)."""
    folder = SHARED / "data" / "reference-instances"
    assert folder.is_dir(), f"reference instances not found at {folder} (set STORMCF_SHARED)"
    return folder


@pytest.fixture
def cli(capsys):
    """Run the command line in-process: ``cli("check", MODEL, ...)`` -> (exit code, stdout, stderr)."""
    from stormcf.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run
