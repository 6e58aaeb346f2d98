"""``stormcf setcover-evaluate`` on hostile data sets and options (the generator files themselves are the generators'
tests)."""
import numpy as np
import pytest

from . import setcover_files as files
from .hostile import Case, write


def generator(folder):
    """A knn generator trained on the valid data set (through the command line, as a user makes one)."""
    from stormcf.cli import main
    assert main(["setcover-learn", str(files.data_file(folder, "train.npz")), "--generator", "knn", "--neighbours", "1",
                 "--out", str(folder / "g.npz"), "-q"]) == 0
    return folder / "g.npz"


def evaluate(data_of, *args):
    return lambda d: ["setcover-evaluate", generator(d), data_of(d), *args]


X, ACTIONS, COST = (files.data_arrays()[k] for k in ("X", "actions", "cost"))

CASES = [
    Case("a valid data set", evaluate(files.data_file), 0, "exact_match"),
    Case("not an npz", evaluate(lambda d: write(d, "x.npz", "PK\x03\x04 not really")), 2,
         "not a labelled set-cover data set"),
    Case("truncated", evaluate(files.truncated), 2, "not a labelled set-cover data set"),
    Case("a NaN cost", evaluate(lambda d: files.data_file(d, cost=np.where(COST == 2.5, np.nan, COST))), 2,
         "cost[6] = nan"),
    Case("labels that contradict the agents", evaluate(lambda d: files.data_file(d, X=X[::-1].copy())), 2,
         "does not turn agent"),
    Case("no agents", evaluate(lambda d: files.data_file(d, X=X[:0], actions=ACTIONS[:0], cost=COST[:0])), 2,
         "has no agents"),
    Case("a data set of another instance", evaluate(lambda d: files.data_file(
        d, X=np.zeros((1, 2), dtype=np.int8), actions=np.array([[0]]), cost=np.array([1.0]),
        instance=np.array('{"features": ["a", "b"], "thresholds": [1, 1], "actions": '
                          '[{"name": "x", "effect": [1, 1], "cost": 1}]}'))), 2, "the generator was trained on"),
    Case("--top-k 0", evaluate(files.data_file, "--top-k", "0"), 2, "expected a positive integer"),
    Case("--json onto the data set", lambda d: ["setcover-evaluate", generator(d), files.data_file(d), "--json",
                                                d / "data.npz"], 2, "is also the input DATA.npz"),
    Case("the generator as the data set", lambda d: ["setcover-evaluate", generator(d), d / "g.npz"], 2,
         "the array 'X' is missing"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_setcover_evaluate(case, hostile):
    hostile(case)
