"""How the conformance suite (tests/conformance.py) exercises ``icfmdp``."""
import stormcf

from conformance import Case, lines_file, one_line

SEPSIS, SEPSIS_PATH = str(stormcf.example_path("sepsis.prism")), str(stormcf.example_path("sepsis.sampled.json"))

CASES = {"icfmdp": Case(
    slow=lambda d: ["icfmdp", SEPSIS, "--path", SEPSIS_PATH, "--baseline", "gumbel", "--estimator", "mc",
                    "--mc-samples", "200000"],
    single=lambda d: ["icfmdp", SEPSIS, "--path", SEPSIS_PATH],
    batch=lambda d: ["icfmdp", SEPSIS, "--paths", lines_file(d, "p.jsonl", one_line(SEPSIS_PATH))])}
