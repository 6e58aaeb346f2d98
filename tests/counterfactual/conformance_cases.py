"""How the conformance suite (tests/conformance.py) exercises ``strategy``."""
from pathlib import Path

import stormcf

from conformance import Case, lines_file, one_line

LOAN, IMPATIENT = str(stormcf.example_path("loan.prism")), str(stormcf.example_path("loan.impatient.json"))


def uniform(folder: Path) -> str:
    path = folder / "uniform.json"
    path.write_text('{"states": [], "default": "uniform"}')
    return str(path)


CASES = {"strategy": Case(
    slow=lambda d: ["strategy", str(stormcf.example_path("frozenlake4.prism")), "-s", uniform(d), "-p",
                    'P<=0.5 [F "hole"]'],
    working="MIQCQP",                 # past the pre-analysis and the special cases: a checked strategy to report
    single=lambda d: ["strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]', "-w", "0,0,1"],
    batch=lambda d: ["strategy", LOAN, "--strategies", lines_file(d, "s.jsonl", one_line(IMPATIENT)), "-p",
                     'P<=0.2 [F "rejected"]', "-w", "0,0,1"])}
