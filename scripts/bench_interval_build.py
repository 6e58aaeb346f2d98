#!/usr/bin/env python3
"""Benchmark: building an interval MDP in Storm from arrays, in bulk through a UMB archive vs one
``stormpy.Interval`` per transition through stormpy's matrix builder.

Random interval MDPs with 2 actions per state and 5 successors per action (intervals p ± 0.05), built both ways
side by side in one run (best of ``--repeat``); both models are checked with ``R{"r"}max=? [C<=10]`` (robust) and
must give bit-identical values. CPU seconds of this process (wall seconds beside), the ratio in CPU (wall beside), and
the load average at the start and the end of every row. Usage:

    python scripts/bench_interval_build.py                      # 10^4, 10^5 and 10^6 transitions
    python scripts/bench_interval_build.py --transitions 100000
    python scripts/bench_interval_build.py --quick            # 1,000 transitions once (the CI smoke test)
"""
from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp
from _measure import machine, ratio, repeated

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transitions", type=int, nargs="*", default=[10**4, 10**5, 10**6])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10^3 transitions, once: a smoke test in seconds")
    args = ap.parse_args()
    if args.quick:
        args.transitions, args.repeat = [10**3], 1
    print(machine())
    print(f"{'transitions':>12s} {'builder: CPU s (wall s)':>24s} {'UMB: CPU s (wall s)':>21s} "
          f"{'ratio builder / UMB':>22s}  same values  load")
    for n in args.transitions:
        lower, upper, row_groups, reward = random_interval_mdp(n)
        built = {}
        times = {}
        for construction in ("builder", "umb"):
            built[construction], times[construction] = repeated(
                args.repeat, storm.interval_mdp, lower, upper, row_groups, {"r": reward}, {}, 0,
                construction=construction, statistic=min)
        values = [storm.check_interval_mdp(m, 'R{"r"}max=? [C<=10]') for m in built.values()]
        same = bool(np.array_equal(values[0], values[1]))
        builder, umb = times["builder"], times["umb"]
        print(f"{lower.nnz:12d} {builder.cpu:14.3f} ({builder.wall:6.3f}) {umb.cpu:11.3f} ({umb.wall:6.3f}) "
              f"{ratio(builder, umb):>22s}  {'yes' if same else 'NO':11s}  {builder.load[0]:.1f}-{umb.load[1]:.1f}")


if __name__ == "__main__":
    main()
