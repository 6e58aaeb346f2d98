"""How the conformance suite (tests/conformance.py) exercises ``setcover``."""
import json
from pathlib import Path

import numpy as np

from conformance import Case, lines_file

PAPER_EXAMPLE = str(Path(__file__).resolve().parents[1] / "data" / "setcover" / "paper_example.json")


def hard_setcover(folder: Path) -> str:
    """40 features, 300 unit-cost actions of random effects: branch and bound works for many seconds."""
    rng = np.random.default_rng(7)
    effects = (rng.random((300, 40)) < 0.1).astype(int)
    actions = [{"name": f"a{i}", "effect": e.tolist(), "cost": 1.0} for i, e in enumerate(effects)]
    instance = {"features": [f"f{j}" for j in range(40)], "thresholds": [1] * 40, "actions": actions}
    path = folder / "hard.json"
    path.write_text(json.dumps(instance))
    return str(path)


CASES = {"setcover": Case(
    slow=lambda d: ["setcover", hard_setcover(d), "--agent", ",".join(["0"] * 40)],
    single=lambda d: ["setcover", PAPER_EXAMPLE, "--agent", "0,0,0,0,1"],
    batch=lambda d: ["setcover", PAPER_EXAMPLE, "--agents", lines_file(d, "a.jsonl", "[0, 0, 0, 0, 1]")])}
