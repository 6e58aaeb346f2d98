"""Instances of the set-cover tests: the paper's worked example (notes §1.6) and random instances."""
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from stormcf.setcover import SetCoverInstance

DATA = Path(__file__).resolve().parents[1] / "data" / "setcover"
PAPER = DATA / "paper_example.json"




def example(changes: dict) -> SetCoverInstance:
    """The paper's example catalogue E with some actions changed: ``changes = {index: (effect, cost)}``."""
    data = SetCoverInstance.load(PAPER).to_dict()
    for i, (effect, cost) in changes.items():
        data["actions"][i].update(effect=effect, cost=cost)
    return SetCoverInstance.from_dict(data, "E'")


@st.composite
def instances(draw, max_features=6, max_actions=8, integer=False, zero_costs=True, success=False,
              requires=False):
    """A random instance with one agent: (instance, agent)."""
    n = draw(st.integers(2, max_features))
    A = draw(st.integers(1, max_actions))
    top = 3 if integer else 1
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    t = rng.integers(0 if not integer else 1, top + 1, n)
    effects = rng.integers(0, top + 1, (A, n)) * (rng.random((A, n)) < 0.5)
    costs = np.round(rng.uniform(0, 10, A), draw(st.sampled_from([0, 1, 6])))
    if zero_costs:
        costs[rng.random(A) < 0.1] = 0.0
    kwargs = {}
    if success:
        kwargs["success"] = np.round(rng.uniform(0.2, 1.0, A), 2)
    if requires:
        kwargs["requires"] = rng.integers(0, top + 1, (A, n)) * (rng.random((A, n)) < 0.2)
    inst = SetCoverInstance.from_arrays(t, effects, costs, **kwargs)
    x = rng.integers(0, top + 1, n) * (rng.random(n) < 0.4)
    return inst, x
