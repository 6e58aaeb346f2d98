"""How the conformance suite (tests/conformance.py) exercises ``repair``."""
from pathlib import Path

from stormcf.storm import stormpy_example

from conformance import Case, lines_file

DIE = str(Path(__file__).resolve().parents[1] / "data" / "repair" / "knuth_yao.pm")
BRP = str(stormpy_example("pdtmc", "brp16_2.pm"))


CASES = {"repair": Case(
    # BRP's two parameters under l1 to a tolerance of 1e-12: the branch and bound works for minutes
    slow=lambda d: ["repair", BRP, "-c", "TOMsg=0,TOAck=0", "-p", "P<=0.01 [F s=5]", "--nominal", "pL=0.8,pK=0.9",
                    "--norm", "l1", "--tolerance", "1e-12"],
    working="best 0",                 # past the first answer: its progress line shows the best distance
    single=lambda d: ["repair", DIE, "-p", 'P>=0.2 [F "one"]', "--nominal", "p=0.5"],
    batch=lambda d: ["repair", DIE, "-p", 'P>=0.2 [F "one"]', "--instances",
                     lines_file(d, "nominal.jsonl", '{"nominal": {"p": 0.5}}')])}
