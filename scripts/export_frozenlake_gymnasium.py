"""Export gymnasium's FrozenLake-v1 transition tables (slippery, maps 4x4 and 8x8) for the tests.

    pip install gymnasium && python scripts/export_frozenlake_gymnasium.py

writes tests/icfmdp/data/frozenlake_gymnasium.npz with P4 (16, 4, 16) and P8 (64, 4, 64): P[s, a, s'] summed over
the entries of gymnasium's table env.unwrapped.P[s][a] = [(probability, next state, reward, terminated), ...]
(state s = row * ncol + col, actions LEFT=0, DOWN=1, RIGHT=2, UP=3), plus the gymnasium version. The tests compare
prism_models/frozenlake4.prism and frozenlake8.prism, built by Storm, against these tables.
"""
from pathlib import Path

import gymnasium
import numpy as np

from stormcf.report import write_npz


def table(map_name: str) -> np.ndarray:
    env = gymnasium.make("FrozenLake-v1", map_name=map_name, is_slippery=True)
    P = env.unwrapped.P
    n = len(P)
    out = np.zeros((n, 4, n))
    for s in range(n):
        for a in range(4):
            for prob, nxt, _reward, _done in P[s][a]:
                out[s, a, nxt] += prob
    return out


if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "tests" / "icfmdp" / "data" / "frozenlake_gymnasium.npz"
    write_npz(target, P4=table("4x4"), P8=table("8x8"), version=gymnasium.__version__)
    print(f"wrote {target} (gymnasium {gymnasium.__version__})")
