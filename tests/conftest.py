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


#: ../shared beside the checkout (CI puts it there; a git worktree in <repo>/../wt/<name> finds it one level up);
#: STORMCF_SHARED overrides
_BESIDE = [p / "shared" for p in Path(__file__).resolve().parents[2:4]]
SHARED = Path(os.environ.get("STORMCF_SHARED") or next((p for p in _BESIDE if p.is_dir()), _BESIDE[0]))


@pytest.fixture(scope="session")
def reference_instances() -> Path:
    """The seed authors' outputs (../shared/data/reference-instances)."""
    folder = SHARED / "data" / "reference-instances"
    assert folder.is_dir(), f"reference instances not found at {folder} (set STORMCF_SHARED)"
    return folder
