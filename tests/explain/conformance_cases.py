"""How the conformance suite (tests/conformance.py) exercises ``explain-path``."""
import stormcf

from conformance import Case, lines_file, one_line

SEPSIS, SEPSIS_PATH = str(stormcf.example_path("sepsis.prism")), str(stormcf.example_path("sepsis.sampled.json"))

CASES = {"explain-path": Case(
    slow=lambda d: ["explain-path", SEPSIS, "--path", SEPSIS_PATH, "--k", "2", "--estimator", "mc", "--mc-samples",
                    "200000"],
    single=lambda d: ["explain-path", SEPSIS, "--path", SEPSIS_PATH, "--k", "1", "--explanations", "100"],
    batch=lambda d: ["explain-path", SEPSIS, "--paths", lines_file(d, "p.jsonl", one_line(SEPSIS_PATH)), "--k", "1",
                     "--explanations", "100"])}
