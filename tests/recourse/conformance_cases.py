"""How the conformance suite (tests/conformance.py) exercises ``recourse``."""
import stormcf

from conformance import Case, lines_file

PERSON = str(stormcf.example_path("person.prism"))
FRONT = [PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost", "--offspring", "20", "--mutants", "5"]

CASES = {"recourse": Case(
    slow=lambda d: ["recourse", *FRONT, "--generations", "1000000"],
    working="BRKGA generations",      # the GA has a front of plans to report
    single=lambda d: ["recourse", *FRONT, "--generations", "5"])}
GERMAN = ["--dataset", "german", "--generations", "3", "--offspring", "16", "--mutants", "4", "--no-exact"]
CASES["recourse"] = Case(
    slow=CASES["recourse"].slow, working=CASES["recourse"].working,
    single=lambda d: ["recourse", *GERMAN, "--instance", "1"],
    batch=lambda d: ["recourse", *GERMAN, "--instances", lines_file(d, "i.jsonl", '{"instance": 1}')],
)
