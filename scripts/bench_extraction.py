#!/usr/bin/env python3
"""Benchmark: Storm's build vs stormcf's extraction of the explicit model (UMB bulk export vs per-entry loop).

Prints, side by side in one run, the build time, the UMB extraction time and the Python-loop extraction time (CPU
seconds of this process, wall seconds beside), the ratio loop/UMB in CPU (wall beside), and the load average at the
start and the end. Usage:

    python scripts/bench_extraction.py                 # grid.prism with N=316 (99,856 states, 1.19M transitions)
    python scripts/bench_extraction.py --firewire 36   # Storm's firewire.nm with delay=36 (212,268 states)
    python scripts/bench_extraction.py --quick         # N=20 (seconds; the CI smoke test)
"""
from __future__ import annotations

import argparse

import numpy as np
from _measure import call, load_average, machine, ratio

from stormcf import example_path
from stormcf.storm import extract, load, stormpy_example


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=316, help="N of grid.prism")
    ap.add_argument("--firewire", type=int, default=None, metavar="DELAY", help="use firewire.nm with this delay")
    ap.add_argument("--quick", action="store_true", help="grid N=20: a smoke test in seconds")
    args = ap.parse_args()
    if args.quick:
        args.grid, args.firewire = 20, None
    if args.firewire is not None:
        path, constants = stormpy_example("mdp", "firewire.nm"), f"delay={args.firewire},fast=0.5"
    else:
        path, constants = example_path("grid.prism"), f"N={args.grid}"
    print(machine())
    description = load._instantiate(load.parse_description(path, ".prism", str(path)), constants, str(path))
    build, t_build = call(load._build, description, str(path))
    handle = build.handle
    umb, t_umb = call(extract.arrays_by_umb, handle.model)
    loop, t_loop = call(extract.arrays_by_iteration, handle.model)
    _, t_model = call(extract.explicit_model, build, umb, path.name, "valuation")
    assert (umb["transitions"] != loop["transitions"]).nnz == 0
    assert np.array_equal(umb["row_groups"], loop["row_groups"])
    m = handle.model
    print(f"{path.name} ({constants}): {m.nr_states} states, {m.nr_choices} choices, {m.nr_transitions} transitions")
    print(f"{'Storm build':32s} {t_build}")
    print(f"{'stormcf extraction (UMB)':32s} {t_umb}   + valuations/model {t_model}")
    print(f"{'per-entry loop extraction':32s} {t_loop}")
    print(f"{'ratio loop / UMB':32s} {ratio(t_loop, t_umb)}   (identical arrays: yes)")
    print(f"load average at the end {load_average():.2f}")


if __name__ == "__main__":
    main()
