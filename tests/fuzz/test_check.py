"""``stormcf check`` on hostile properties, property files and outputs."""
import json

import pytest

import stormcf

from . import models
from .hostile import IMPATIENT, LOAN, Case, write, zero_device
from .test_info import _fifo

#: the loan strategy with P(F "rejected") = 1/50 exactly (Storm's floating-point value is 0.020000000000000004)
FIFTY = json.dumps({"states": [{"state": {"s": 0}, "actions": {"Consult": 1}},
                               {"state": {"s": 3}, "actions": {"Consult": 1}},
                               {"state": {"s": 4}, "actions": {"Apply": 1}},
                               {"state": {"s": 5}, "actions": {"Submit": 1}}], "default": "error"})


def check(*args):
    return ["check", LOAN, "-s", IMPATIENT, *args]


CASES = [
    Case("step bound 1/0 (Storm: SIGFPE)", lambda d: check("-p", 'P=? [F<=1/0 "rejected"]'), 2,
         "division by zero in property"),
    Case("step bound mod(1,0)", lambda d: check("-p", 'P=? [F<=mod(1,0) "rejected"]'), 2,
         "division by zero in property"),
    Case("a property nested 2000 deep (Storm: SIGSEGV)",
         lambda d: check("-p", f"P=? [F {models.nested_formula(2000)}]"), 2, "nested 2001 deep"),
    Case("5000 conjuncts (Storm: SIGSEGV)", lambda d: check("-p", f"P=? [F {models.conjuncts(5000)}]"), 2,
         "chains 4999 operators"),
    Case("1000 expression conjuncts (was a RecursionError)",
         lambda d: check("-p", f"P=? [F {models.conjuncts(1000, 's=1')}]"), 0, "P=? [F"),
    Case("a property file with a crash in it",
         lambda d: check("--props", write(d, "p.props", 'P=? [F<=1/0 "rejected"]\n')), 2, "division by zero"),
    Case("a property of 1,000,000 characters", lambda d: check("-p", "P=? [F " + "x" * 1_000_000 + "]"), 2,
         "characters"),
    Case("--json onto the strategy", lambda d: ["check", LOAN, "-s", write(d, "s.json", open(IMPATIENT).read()),
                                                "-p", 'P=? [F "rejected"]', "--json", "s.json"], 2,
         "--json s.json: is also --strategy"),
    Case("--json onto the property file",
         lambda d: ["check", LOAN, "--props", write(d, "p.props", 'Pmax=? [F "rejected"]\n'), "--json", "p.props"], 2,
         "--json p.props: is also --props"),
    Case("--json onto the model by another name (a link)", lambda d: _linked(d), 2, "is also the input MODEL"),
    Case("a FIFO as the strategy", lambda d: ["check", LOAN, "-s", _fifo(d, "s.json"), "-p", 'P=? [F "rejected"]'],
         2, "s.json: is a FIFO, not a regular file"),
    Case("a device as the strategy", lambda d: ["check", LOAN, "-s", zero_device(d), "-p", 'P=? [F "rejected"]'],
         2, "zero: is a character device, not a regular file"),
    Case("a stiff S=? under a short time limit (was: no answer)",
         lambda d: ["check", str(stormcf.example_path("stiff.pm")), "-p", 'S=? ["good"]', "--time-limit", "60"], 0,
         "S=? [\"good\"] = 999999999/1999999999"),
    Case("a bound written as 1/5 (was read as 0)",
         lambda d: ["check", LOAN, "-s", write(d, "f.json", FIFTY), "-p", 'P<=1/5 [F "rejected"]'], 0,
         'P<=1/5 [F "rejected"] = 0.02  [holds]'),
    Case("a value exactly at the bound", lambda d: ["check", LOAN, "-s", write(d, "f.json", FIFTY), "-p",
                                                    'P<=0.02 [F "rejected"]', "--fail-if-violated"], 0,
         "= 1/50 (= 0.02)  [holds]"),
    Case("a strict bound at the value", lambda d: ["check", LOAN, "-s", write(d, "f.json", FIFTY), "-p",
                                                   'P<0.02 [F "rejected"]'], 0, "= 1/50 (= 0.02)  [does not hold]"),
    Case("a probability bound above 1", lambda d: check("-p", 'P<=1.5 [F "rejected"]'), 2,
         "the probability bound 3/2 is outside [0, 1]"),
    Case("a negative probability bound", lambda d: check("-p", 'P>=-1/10 [F "rejected"]'), 2, "outside [0, 1]"),
    Case("one name for two properties",
         lambda d: check("-p", '"a": P=? [F "rejected"]', "-p", '"a": P=? [F "granted"]'), 2,
         'the property name "a" is given twice'),
    Case("one name in --prop and in --props", lambda d: check("-p", '"a": P=? [F "rejected"]', "--props",
                                                             write(d, "p.props", '"a": Pmax=? [F "granted"];\n')), 2,
         'the property name "a" is given twice'),
]


def _linked(folder):
    model = write(folder, "m.prism", open(LOAN).read())
    (folder / "link.prism").symlink_to(model)
    return ["check", "link.prism", "-p", 'Pmax=? [F "rejected"]', "--json", "m.prism"]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_check(case, hostile):
    hostile(case)
