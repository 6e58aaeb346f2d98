"""Export gymnasium's FrozenLake-v1 transition tables (slippery, maps 4x4 and 8x8) for the tests.

    pip install gymnasium && python scripts/export_frozenlake_gymnasium.py
    python scripts/export_frozenlake_gymnasium.py --quick     # compare with the committed file, write nothing

writes tests/icfmdp/data/frozenlake_gymnasium.npz with P4 (16, 4, 16) and P8 (64, 4, 64): P[s, a, s'] summed over
the entries of gymnasium's table env.unwrapped.P[s][a] = [(probability, next state, reward, terminated), ...]
(state s = row * ncol + col, actions LEFT=0, DOWN=1, RIGHT=2, UP=3), plus the gymnasium version. The tests compare
prism_models/frozenlake4.prism and frozenlake8.prism, built by Storm, against these tables. Without gymnasium (not
a dependency of stormcf), ``--quick`` says so and stops.
"""
import argparse
from pathlib import Path

import numpy as np

from stormcf.report import write_npz

TARGET = Path(__file__).resolve().parent.parent / "tests" / "icfmdp" / "data" / "frozenlake_gymnasium.npz"


def table(gymnasium, map_name: str) -> np.ndarray:
    env = gymnasium.make("FrozenLake-v1", map_name=map_name, is_slippery=True)
    P = env.unwrapped.P
    n = len(P)
    out = np.zeros((n, 4, n))
    for s in range(n):
        for a in range(4):
            for prob, nxt, _reward, _done in P[s][a]:
                out[s, a, nxt] += prob
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="compare the tables with the committed file, write nothing")
    args = ap.parse_args()
    try:
        import gymnasium
    except ImportError:
        if args.quick:
            print("gymnasium is not installed (pip install gymnasium): nothing to compare")
            return
        raise SystemExit("this script needs gymnasium: pip install gymnasium")
    tables = {"P4": table(gymnasium, "4x4"), "P8": table(gymnasium, "8x8")}
    if args.quick:
        committed = np.load(TARGET, allow_pickle=False)
        same = all(np.allclose(committed[k], v) for k, v in tables.items())
        print(f"gymnasium {gymnasium.__version__}: the tables {'equal' if same else 'DIFFER FROM'} {TARGET.name}")
        if not same:
            raise SystemExit(1)
        return
    write_npz(TARGET, **tables, version=gymnasium.__version__)
    print(f"wrote {TARGET} (gymnasium {gymnasium.__version__})")


if __name__ == "__main__":
    main()
