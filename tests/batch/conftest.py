"""Batch inputs shared by the batch tests: seeded observed paths of Sepsis and strategies of the loan model, each
file with a line that is not a valid item and a line that is not JSON."""
import json

import pytest

import stormcf
from stormcf.paths import simulate

SEPSIS = str(stormcf.example_path("sepsis.prism"))
LOAN = str(stormcf.example_path("loan.prism"))
IMPATIENT = str(stormcf.example_path("loan.impatient.json"))


@pytest.fixture(scope="session")
def sepsis():
    return stormcf.load_model(SEPSIS)


@pytest.fixture(scope="session")
def sepsis_paths(sepsis, tmp_path_factory):
    """6 paths of 6 steps under the uniform strategy (seeds 0-5, ids p0-p5), then an empty path and a line that is
    not JSON: 8 items."""
    file = tmp_path_factory.mktemp("paths") / "paths.jsonl"
    uniform = stormcf.Strategy.uniform(sepsis)
    lines = [json.dumps({**simulate(sepsis, uniform, 6, seed=i).to_dict(), "id": f"p{i}"}) for i in range(6)]
    file.write_text("\n".join(lines + ['{"steps": []}', "", "{not json"]) + "\n")
    return file


@pytest.fixture(scope="session")
def loan_strategies(tmp_path_factory):
    """The uniform strategy, the impatient one, and one naming a state the model does not have."""
    file = tmp_path_factory.mktemp("strategies") / "strategies.jsonl"
    impatient = json.loads(open(IMPATIENT).read())
    lines = [{"states": [], "default": "uniform", "id": "uniform"}, {**impatient, "id": "impatient"},
             {"states": [{"state": {"s": 99}, "actions": {"Apply": 1}}]}]
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return file
