from pathlib import Path

import pytest

import stormcf

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="session")
def data() -> Path:
    return DATA


@pytest.fixture(scope="session")
def loan_labels():
    """loan.prism with states named by their labels (the observations of sampled logs)."""
    return stormcf.load_model(stormcf.example_path("loan.prism")).with_naming("labels")


@pytest.fixture(scope="session")
def impatient_labels(loan_labels):
    return stormcf.Strategy.load(loan_labels, stormcf.example_path("loan.impatient.json"))
