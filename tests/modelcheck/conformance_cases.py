"""How the conformance suite (tests/conformance.py) exercises ``check``."""

import stormcf

from conformance import Case, lines_file, one_line

LOAN, IMPATIENT = str(stormcf.example_path("loan.prism")), str(stormcf.example_path("loan.impatient.json"))

CASES = {"check": Case(
    # about 7 s on the 2-core machine (N=900 took 4.4 s idle)
    slow=lambda d: ["check", str(stormcf.example_path("grid.prism")), "-c", "N=1200", "-p", 'Pmax=? [F "goal"]'],
    single=lambda d: ["check", LOAN, "-s", IMPATIENT, "-p", 'P=? [F "rejected"]'],
    batch=lambda d: ["check", LOAN, "--strategies", lines_file(d, "s.jsonl", one_line(IMPATIENT)), "-p",
                     'P=? [F "rejected"]'],
    origin=("strategy",))}
