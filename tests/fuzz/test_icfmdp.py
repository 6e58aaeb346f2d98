"""``stormcf icfmdp`` on hostile paths, models and batch options."""
import pytest

from . import models
from .hostile import GRID, GRID_PATH, Case, fifo_with_reader, write
from .paths import long_grid_path


def icfmdp(path_of, *args):
    return lambda d: ["icfmdp", GRID, "-c", "p=0.4", "--path", path_of(d), *args]


CASES = [
    Case("the catastrophic path", icfmdp(lambda d: GRID_PATH), 0, "checked by Storm"),
    Case("a path of 20,000 steps", icfmdp(long_grid_path), 2, "stormcf accepts paths of at most about"),
    Case("--plot a FIFO (PNG seeks while it is written)",
         lambda d: icfmdp(lambda _: GRID_PATH, "--plot", fifo_with_reader(d, "v.png"))(d), 0, "plot written to"),
    Case("a path of 300 steps is fine", icfmdp(lambda d: long_grid_path(d, 300), "-q"), 0, "checked by Storm"),
    Case("--constants p=1/0 (Storm: SIGFPE)", lambda d: ["icfmdp", GRID, "-c", "p=1/0", "--path", GRID_PATH], 2,
         "division by zero in the value of the constant p"),
    Case("a path that is not JSON", icfmdp(lambda d: write(d, "p.json", "{")), 2, "not valid JSON"),
    Case("a path with NaN", icfmdp(lambda d: write(d, "p.json", '{"steps": [{"state": {"x": NaN, "y": 0}, '
                                                               '"action": "up"}]}')), 2, "NaN is not a JSON number"),
    Case("--workers 64", lambda d: ["icfmdp", GRID, "-c", "p=0.4", "--paths",
                                    write(d, "p.jsonl", open(GRID_PATH).read().replace("\n", "") + "\n"),
                                    "--workers", "64"], 2, "64 worker processes on a machine with"),
    Case("--plot onto the path", lambda d: ["icfmdp", GRID, "-c", "p=0.4", "--path",
                                            write(d, "p.png", open(GRID_PATH).read()), "--plot", "p.png"], 2,
         "is also --path"),
    Case("a model nested 3000 deep", lambda d: ["icfmdp", models.nested(d), "--path", GRID_PATH], 2,
         "nested 3000 deep"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_icfmdp(case, hostile):
    hostile(case)
