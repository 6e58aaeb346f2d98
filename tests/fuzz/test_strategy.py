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
    Case("--weights -1,1,1 is a value (was: expected one argument)", strategy("-p", BOUND, "--weights", "-1,1,1"), 2,
         "weights must be non-negative numbers, got -1,1,1"),
    Case("a bound written as 1/5 (was read as 0: infeasible)", strategy("-p", 'P<=1/5 [F "rejected"]'), 0,
         "d = 1.69408"),
    Case("a bound that is exactly the optimum", strategy("-p", 'P<=0.02 [F "rejected"]', "-w", "0,0,1"), 0,
         "You can reach it with probability 0.02"),
    Case("a bound that is exactly the optimum, --exact",
         strategy("-p", 'P<=0.02 [F "rejected"]', "-w", "0,0,1", "--exact"), 0,
         'exact check: P<=1/50 [F "rejected"] = 1/50 (= 0.02) (holds)'),
    Case("a strict bound at the optimum", strategy("-p", 'P<0.02 [F "rejected"]'), 0,
         "the least probability any actionable strategy achieves is exactly 1/50 (Storm, exact arithmetic)"),
    Case("a probability bound above 1", strategy("-p", 'P<=1.5 [F "rejected"]'), 2,
         "the probability bound 3/2 is outside [0, 1]"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_strategy(case, hostile):
    hostile(case)
