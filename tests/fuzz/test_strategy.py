"""``stormcf strategy`` and ``stormcf strategy-file`` on hostile properties, expressions and outputs."""
import pytest

from . import models
from .hostile import IMPATIENT, LOAN, Case, write

BOUND = 'P<=0.3 [F "rejected"]'


def strategy(*args):
    return lambda d: ["strategy", LOAN, "-s", IMPATIENT, *args]


CASES = [
    Case("a bound nested 2000 deep", strategy("-p", f"P<=0.3 [F {models.nested_formula(2000)}]"), 2,
         "nested 2001 deep"),
    Case("a bound with a step bound 1/0", strategy("-p", 'P<=0.3 [F<=1/0 "rejected"]'), 2, "division by zero"),
    Case("controllable states nested 2000 deep", strategy("-p", BOUND, "--controllable-states",
                                                          models.nested_formula(2000, "s=1")), 2, "nested 2000 deep"),
    Case("--dot onto the strategy", lambda d: ["strategy", LOAN, "-s", write(d, "s.json", open(IMPATIENT).read()),
                                               "-p", BOUND, "--dot", "s.json"], 2, "--dot s.json: is also --strategy"),
    Case("--dot and --json on one file", strategy("-p", BOUND, "--dot", "x", "--json", "x"), 2,
         "is also --json x"),
    Case("strategy-file --out onto the model", lambda d: ["strategy-file", write(d, "m.prism", open(LOAN).read()),
                                                          "--uniform", "--out", "m.prism"], 2,
         "is also the input MODEL"),
    Case("strategy-file --optimal with 1/0", lambda d: ["strategy-file", LOAN, "--optimal",
                                                        'Pmin=? [F<=1/0 "rejected"]', "--out", "s.json"], 2,
         "division by zero"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_strategy(case, hostile):
    hostile(case)
