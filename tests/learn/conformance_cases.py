"""How the conformance suite (tests/conformance.py) exercises ``learn``."""
from pathlib import Path

import stormcf

from conformance import Case

DATA = Path(__file__).resolve().parents[1] / "data"


def big_log(folder: Path) -> str:
    """300,000 cases sampled from sepsis.prism (paired form): IOAlergia and Storm's build work for about 9 s on an
    idle machine (100,000 cases took 4.5 s, and the command sometimes ended before the test's signal)."""
    from stormcf.learn import sample_log
    model = stormcf.load_model(stormcf.example_path("sepsis.prism"))
    path = folder / "sepsis_log.csv"
    sample_log(model, stormcf.Strategy.uniform(model), 300_000, seed=1).to_csv(path)
    return str(path)


CASES = {"learn": Case(
    slow=lambda d: ["learn", big_log(d), "--out", str(d / "learned.prism")],
    single=lambda d: ["learn", str(DATA / "loan_paired.csv"), "--out", str(d / "learned.prism")])}
