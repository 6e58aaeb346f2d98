#!/usr/bin/env python3
"""Benchmark: building an interval MDP in Storm from arrays, in bulk through a UMB archive vs one
``stormpy.Interval`` per transition through stormpy's matrix builder.

Random interval MDPs with 2 actions per state and 5 successors per action (intervals p ± 0.05), built both ways
side by side in one run (best of ``--repeat``); both models are checked with ``R{"r"}max=? [C<=10]`` (robust) and
must give bit-identical values. Usage:

    python scripts/bench_interval_build.py                      # 10^4, 10^5 and 10^6 transitions
    python scripts/bench_interval_build.py --transitions 100000
    python scripts/bench_interval_build.py --quick            # 1,000 transitions once (the CI smoke test)
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from stormcf import storm


def random_interval_mdp(transitions: int, seed: int = 0, actions: int = 2, successors: int = 5):
    rng = np.random.default_rng(seed)
    states = transitions // (actions * successors)
    rows = states * actions
    cols = np.sort(rng.integers(0, states, size=(rows, successors * 2)), axis=1)
    cols = np.array([np.unique(c)[:successors] for c in cols])        # distinct successors per row
    cols = np.array([c if len(c) == successors else np.arange(successors) for c in cols]).ravel()
    w = rng.random((rows, successors))
    w /= w.sum(axis=1, keepdims=True)
    indptr = np.arange(0, rows * successors + 1, successors)
    lower = sp.csr_matrix((np.maximum(w - 0.05, 0).ravel(), cols, indptr), shape=(rows, states))
    upper = sp.csr_matrix((np.minimum(w + 0.05, 1).ravel(), cols, indptr), shape=(rows, states))
    return lower, upper, np.arange(0, rows + 1, actions), rng.random(rows)


def best_of(repeat: int, f, *args, **kwargs):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = f(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return out, min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transitions", type=int, nargs="*", default=[10**4, 10**5, 10**6])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10^3 transitions, once: a smoke test in seconds")
    args = ap.parse_args()
    if args.quick:
        args.transitions, args.repeat = [10**3], 1
    print(f"{'transitions':>12s} {'builder (s)':>12s} {'UMB (s)':>10s} {'ratio':>7s}  same values")
    for n in args.transitions:
        lower, upper, row_groups, reward = random_interval_mdp(n)
        built = {}
        times = {}
        for construction in ("builder", "umb"):
            built[construction], times[construction] = best_of(
                args.repeat, storm.interval_mdp, lower, upper, row_groups, {"r": reward}, {}, 0,
                construction=construction)
        values = [storm.check_interval_mdp(m, 'R{"r"}max=? [C<=10]') for m in built.values()]
        same = bool(np.array_equal(values[0], values[1]))
        print(f"{lower.nnz:12d} {times['builder']:12.3f} {times['umb']:10.3f} "
              f"{times['builder'] / times['umb']:6.1f}x  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
