"""Shared pieces of the icfmdp tests: the authors' reference instances as stormcf models, random small MDPs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from stormcf.icfmdp import mdp_from_arrays, path_from_arrays

REFERENCE_FILES = [f"lally_{env}_{kind}.npz" for env in ("gridworld_0.9", "gridworld_0.4", "frozen_lake", "aircraft",
                                                          "sepsis") for kind in ("sampled_seed0", "repo_suboptimal")]


def reference_model(folder: Path, name: str):
    """(data, model, path) of one reference file: the authors' P and R as an explicit model, their path."""
    d = np.load(folder / name)
    model = mdp_from_arrays(d["P"], d["R"], initial_state=int(d["init_state"]), source=name)
    return d, model, path_from_arrays(model, d["obs_states"], d["obs_actions"], d["obs_next_states"])


@st.composite
def random_mdps(draw, max_states: int = 4, max_actions: int = 3, max_steps: int = 3):
    """A random MDP as arrays (supports of random size, probabilities w/W of small integers, rewards in -5..5) with
    a random observed path that has positive probability."""
    n = draw(st.integers(2, max_states))
    A = draw(st.integers(1, max_actions))
    P = np.zeros((n, A, n))
    for s in range(n):
        for a in range(A):
            support = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
            w = np.array(draw(st.lists(st.integers(1, 6), min_size=len(support), max_size=len(support))), float)
            P[s, a, support] = w / w.sum()
    R = np.array(draw(st.lists(st.integers(-5, 5), min_size=n * A, max_size=n * A)), float).reshape(n, A)
    T = draw(st.integers(1, max_steps))
    s = draw(st.integers(0, n - 1))
    states, actions, nxt = [], [], []
    for _ in range(T):
        a = draw(st.integers(0, A - 1))
        k = draw(st.sampled_from(np.flatnonzero(P[s, a] > 0).tolist()))
        states.append(s)
        actions.append(a)
        nxt.append(k)
        s = k
    model = mdp_from_arrays(P, R, initial_state=states[0])
    return model, path_from_arrays(model, states, actions, nxt)
