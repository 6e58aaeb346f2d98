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


DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def reference_instances() -> Path:
    """The seed authors' outputs (tests/data/reference-instances, see tests/data/README.md)."""
    return DATA / "reference-instances"


@pytest.fixture
def cli(capsys):
    """Run the command line in-process: ``cli("check", MODEL, ...)`` -> (exit code, stdout, stderr)."""
    from stormcf.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run
