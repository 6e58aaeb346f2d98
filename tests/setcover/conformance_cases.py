"""How the conformance suite (tests/conformance.py) exercises ``setcover`` and the learning pipeline
(``setcover-data``, ``setcover-learn``, ``setcover-evaluate``)."""
import json
import tempfile
from pathlib import Path

import numpy as np

from conformance import Case, lines_file

PAPER_EXAMPLE = str(Path(__file__).resolve().parents[1] / "data" / "setcover" / "paper_example.json")
#: PyTorch keeps its compile cache (a folder it makes on import, ``torchinductor_USER``) in the temporary directory;
#: outside the run's own, which the suite checks for what stormcf leaves behind
TORCH_CACHE = str(Path(tempfile.gettempdir()) / "torchinductor_stormcf_tests")


def hard_setcover(folder: Path) -> str:
    """40 features, 300 unit-cost actions of random effects: branch and bound works for many seconds."""
    rng = np.random.default_rng(7)
    effects = (rng.random((300, 40)) < 0.1).astype(int)
    actions = [{"name": f"a{i}", "effect": e.tolist(), "cost": 1.0} for i, e in enumerate(effects)]
    instance = {"features": [f"f{j}" for j in range(40)], "thresholds": [1] * 40, "actions": actions}
    path = folder / "hard.json"
    path.write_text(json.dumps(instance))
    return str(path)


def data_set(folder: Path, n: int = 8, actions: int = 12, draws: int = 500) -> str:
    """A labelled data set of the paper's kind (a fraction of a second to make): 157 agents, or 2,689 with n = 14 and
    4,000 draws."""
    from stormcf.setcover.data import generate
    path = folder / f"data{n}.npz"
    generate(n, actions, draws=draws).save(path)
    return str(path)


def knn_generator(folder: Path, data: str) -> str:
    """The Hamming generator of ``data`` (no PyTorch)."""
    from stormcf.setcover.data import LabelledAgents
    from stormcf.setcover.generators import train
    path = folder / "knn.npz"
    train("knn", LabelledAgents.load(data)).save(path)
    return str(path)


def evaluation(folder: Path, *options: str, **size: int) -> list[str]:
    data = data_set(folder, **size)
    return ["setcover-evaluate", knn_generator(folder, data), data, *options]


CASES = {
    "setcover": Case(
        slow=lambda d: ["setcover", hard_setcover(d), "--agent", ",".join(["0"] * 40)],
        single=lambda d: ["setcover", PAPER_EXAMPLE, "--agent", "0,0,0,0,1"],
        batch=lambda d: ["setcover", PAPER_EXAMPLE, "--agents", lines_file(d, "a.jsonl", "[0, 0, 0, 0, 1]")]),
    # the paper's data set (74,581 agents): the family MDP's states, Storm's model and values, for many seconds
    "setcover-data": Case(
        slow=lambda d: ["setcover-data", str(d / "d.npz"), "-n", "20", "--draws", "100000"],
        single=lambda d: ["setcover-data", str(d / "d.npz"), "-n", "8", "-A", "12", "--draws", "500"],
        refusal=(lambda d: ["setcover-data", str(d / "d.npz"), "-n", "6", "--classifier", "first10"],
                 "the classifier 'first10' needs at least 10 features, got 6")),
    # a tiny network on 157 agents with no end but the user's: an answer once an epoch has a validation score
    "setcover-learn": Case(
        slow=lambda d: ["setcover-learn", data_set(d), "--out", str(d / "g.npz"), "--hidden", "16", "--epochs",
                        "100000", "--patience", "100000", "--batch-size", "64"],
        working="validation",
        env={"TORCHINDUCTOR_CACHE_DIR": TORCH_CACHE},
        single=lambda d: ["setcover-learn", data_set(d), "--generator", "knn", "--out", str(d / "k.npz")]),
    # the guarantees of 2,689 agents, each certified by its LP relaxation
    "setcover-evaluate": Case(
        slow=lambda d: evaluation(d, "--certify", "lp", n=14, draws=4000),
        single=lambda d: evaluation(d, "--top-k", "2")),
}
