"""``stormcf info`` on hostile model files: Storm's crashes (signals) are refused before Storm sees them."""
import os

import pytest

from . import models
from .hostile import LOAN, Case, write, zero_device

CASES = [
    Case("integer constant 1/0", lambda d: ["info", models.int_division(d)], 2,
         "div.prism:2: division by zero in the constant z"),
    Case("double constant 0/0", lambda d: ["info", models.double_division(d)], 2,
         "div2.prism:2: division by zero in the constant p"),
    Case("mod(3, 0)", lambda d: ["info", models.mod_zero(d)], 2, "mod.prism:2: division by zero in the constant k"),
    Case("1/(1-1) in a guard", lambda d: ["info", models.guard_division(d)], 2, "guard.prism:4: division by zero"),
    Case("--constants p=1/0", lambda d: ["info", models.undefined_p(d), "-c", "p=1/0"], 2,
         "division by zero in the value of the constant p (p=1/0)"),
    Case("--constants p=0/0", lambda d: ["info", models.undefined_p(d), "-c", "p=0/0"], 2,
         "division by zero in the value of the constant p"),
    Case("--constants p=1/(2-2)", lambda d: ["info", models.undefined_p(d), "-c", "p=1/(2-2)"], 2,
         "division by zero in the value of the constant p"),
    Case("a guard nested 3000 deep", lambda d: ["info", models.nested(d)], 2, "deep.prism:4: expression nested 3000"),
    Case("a guard nested 400 deep is fine", lambda d: ["info", models.nested(d, 400)], 0, "DTMC with 2 states"),
    Case("a division by a constant that is not zero", lambda d: ["info", models.undefined_p(d), "-c", "p=1/4"], 0,
         "DTMC with 2 states"),
    Case("not a model", lambda d: ["info", write(d, "x.prism", "hello\n")], 2, "x.prism:1:1: syntax error"),
    Case("empty file", lambda d: ["info", write(d, "e.prism", "")], 2, "e.prism"),
    Case("binary file", lambda d: ["info", write(d, "b.prism", bytes(range(256)))], 2, "b.prism"),
    Case("a directory", lambda d: ["info", d], 2, "is a directory"),
    Case("an unused variable of range [5..1] (was: DTMC with 1 states)",
         lambda d: ["info", models.declared(d, "s : [5..1] init 5;")], 2,
         "decl.prism:4: the variable s has the empty range [5..1]"),
    Case("an unused variable initialised outside its range (was: DTMC with 1 states)",
         lambda d: ["info", models.declared(d, "s : [0..2] init 5;")], 2,
         "decl.prism:4: the initial value 5 of the variable s is outside its range [0..2]"),
    Case("a variable initialised outside its range (was: no single initial state)",
         lambda d: ["info", models.declared(d, "s : [0..2] init 5;", used=True)], 2,
         "decl.prism:4: the initial value 5 of the variable s is outside its range [0..2]"),
    Case("an initial value outside a range of constants",
         lambda d: ["info", models.declared(d, "s : [0..N] init N+1;", used=True)], 2,
         "the initial value 3 of the variable s is outside its range [0..2]"),
    Case("a range of constants and an initial value within it",
         lambda d: ["info", models.declared(d, "s : [0..N] init N;", used=True)], 0, "DTMC with 1 states"),
    Case("a FIFO (was: file not found)", lambda d: ["info", _fifo(d, "m.prism")], 2,
         "m.prism: is a FIFO, not a regular file"),
    Case("a device like /dev/zero (was: file not found)", lambda d: ["info", zero_device(d)], 2,
         "zero: is a character device, not a regular file"),
    Case("--time-limit 1e18 (was: a traceback of the timer thread)",
         lambda d: ["info", LOAN, "--time-limit", "1e18"], 2, "at most 1e9 (about 31 years), got 1e18"),
    Case("--time-limit 1e9 is fine", lambda d: ["info", LOAN, "--time-limit", "1e9"], 0, "MDP with 9 states"),
    Case("--state-names '{s.__class__}'", lambda d: ["info", LOAN, "--state-names", "{s.__class__}"], 2,
         "attribute access and indexing are not allowed"),
    Case("--state-names '{s.foo}'", lambda d: ["info", LOAN, "--state-names", "{s.foo}"], 2,
         "attribute access and indexing are not allowed"),
    Case("--state-names '{s[0]}'", lambda d: ["info", LOAN, "--state-names", "{s[0]}"], 2,
         "attribute access and indexing are not allowed"),
    Case("--state-names '{0}'", lambda d: ["info", LOAN, "--state-names", "{0}"], 2, "positional fields"),
    Case("--state-names '{x}'", lambda d: ["info", LOAN, "--state-names", "{x}"], 2, "'x' is not a variable"),
    Case("--state-names '{s:{s}}'", lambda d: ["info", LOAN, "--state-names", "{s:{s}}"], 2, "nested fields"),
    Case("--state-names '{s:abc}'", lambda d: ["info", LOAN, "--state-names", "{s:abc}"], 2,
         "Invalid format specifier"),
    Case("--state-names '{s:>3}/{{s}}' is fine", lambda d: ["info", LOAN, "--state-names", "{s:>3}/{{s}}"], 0,
         "initial state:   0/{s}"),
    Case("--json onto the model", lambda d: ["info", write(d, "m.prism", open(LOAN).read()), "--json", "m.prism"], 2,
         "--json m.prism: is also the input MODEL"),
]


def _fifo(folder, name):
    """A FIFO nobody writes to: reading it would wait for ever."""
    os.mkfifo(folder / name)
    return folder / name


@pytest.mark.parametrize("case", CASES, ids=str)
def test_info(case, hostile):
    hostile(case)


def test_the_crashes_do_kill_storm_itself(tmp_path):
    """The reason for the pre-checks (docs/storm-upstream.md): Storm dies by SIGFPE on the first file. If a new
    Storm fixes this, the upstream notes and the pre-check's comments need updating."""
    import subprocess
    import sys
    path = models.int_division(tmp_path)
    proc = subprocess.run([sys.executable, "-c", f"import stormpy; stormpy.parse_prism_program({str(path)!r})"],
                          capture_output=True)
    assert proc.returncode == -8                      # SIGFPE
