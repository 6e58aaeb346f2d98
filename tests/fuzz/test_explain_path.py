"""``stormcf explain-path`` on hostile paths and options."""
import pytest

from .hostile import GRID, GRID_PATH, Case, write
from .paths import long_grid_path


def explain(path_of, *args):
    return lambda d: ["explain-path", GRID, "-c", "p=0.4", "--path", path_of(d), "--k", "1", *args]


CASES = [
    Case("the catastrophic path", explain(lambda d: GRID_PATH, "--explanations", "10"), 0, "Storm"),
    Case("a path of 20,000 steps", explain(long_grid_path), 2, "stormcf accepts paths of at most about"),
    Case("--k beyond the path", lambda d: ["explain-path", GRID, "-c", "p=0.4", "--path", GRID_PATH, "--k", "999"], 2,
         "exceeds the path's"),
    Case("--mc-samples 10^12", explain(lambda d: GRID_PATH, "--estimator", "mc", "--mc-samples", str(10 ** 12)), 2,
         "would need about"),
    Case("--json onto the path", lambda d: explain(lambda d: write(d, "p.json", open(GRID_PATH).read()),
                                                   "--json", "p.json")(d), 2, "is also --path"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_explain_path(case, hostile):
    hostile(case)
