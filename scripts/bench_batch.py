#!/usr/bin/env python3
"""Benchmark: 1,000 observed Sepsis paths through ``icfmdp`` and ``explain-path`` as batches, serially, with joblib's
loky workers and on a Dask cluster, items per second side by side (a benchmark, not a test).

The paths are sampled from ``prism_models/sepsis.prism`` (636 states, 30,328 transitions) under the uniform
strategy, 10 steps each (the authors' horizon), seeds 0..n-1. Each batch runs through :func:`stormcf.batch.run_batch`
(what ``--paths`` does): once serially in this process, once with ``--workers W`` (loky processes), once on a
``distributed.LocalCluster`` of W single-threaded worker processes started here (``--backend dask``). The documents
of the parallel runs must equal the serial ones item by item (wall-clock times aside); the script says so.

    python scripts/bench_batch.py                        # 1000 paths, W = 2
    python scripts/bench_batch.py --paths 200 --workers 2

Timings are wall clock on whatever else the machine runs: compare the rates, measured side by side in one run.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from joblib import parallel_config

import stormcf
from stormcf.batch import ModelFile, explain_task, icfmdp_task, read_jsonl, run_batch
from stormcf.errors import PathError
from stormcf.paths import simulate

SEPSIS = str(stormcf.example_path("sepsis.prism"))
TIMES = {"seconds", "timings", "time_s", "check_seconds"}


def without_times(data):
    if isinstance(data, dict):
        return {k: without_times(v) for k, v in data.items() if k not in TIMES}
    if isinstance(data, list):
        return [without_times(v) for v in data]
    return data


def write_paths(file: Path, n: int, steps: int) -> None:
    model = stormcf.load_model(SEPSIS)
    uniform = stormcf.Strategy.uniform(model)
    with file.open("w") as f:
        for seed in range(n):
            f.write(json.dumps({**simulate(model, uniform, steps, seed=seed).to_dict(), "id": f"patient-{seed}"}) + "\n")


def timed(run) -> tuple[float, list]:
    tick = time.perf_counter()
    documents = [without_times(o.document) for o in run()]
    return time.perf_counter() - tick, documents


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", type=int, default=1000, help="number of paths (default 1000)")
    ap.add_argument("--steps", type=int, default=10, help="steps per path (default 10)")
    ap.add_argument("--workers", type=int, default=2, help="loky workers and Dask worker processes (default 2)")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    tasks = {"icfmdp": icfmdp_task(reward="r"),
             "explain-path": explain_task(reward_model="r", k=2, explanations=1000)}
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        file = Path(tmp) / "paths.jsonl"
        write_paths(file, args.paths, args.steps)
        items = read_jsonl(str(file), PathError)
        source = ModelFile(SEPSIS)
        rows = []
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=40) as cluster, Client(cluster):
            for name, task in tasks.items():
                serial, reference = timed(lambda: run_batch(source, task, items, workers=1))
                loky, by_loky = timed(lambda: run_batch(source, task, items, workers=args.workers))
                with parallel_config(backend="dask"):
                    dask, by_dask = timed(lambda: run_batch(source, task, items))
                failed = sum(d["status"] == "error" for d in reference)
                rows.append((name, serial, loky, dask, by_loky == reference, by_dask == reference, failed))
                print(f"  {name}: serial {serial:.1f} s, loky {loky:.1f} s, dask {dask:.1f} s", flush=True)
    n = args.paths
    print(f"\n{n} Sepsis paths of {args.steps} steps; {args.workers} loky workers / {args.workers} Dask worker "
          f"processes (1 thread each); {stormcf.storm.storm_version()}\n")
    print("| command | serial | loky, --workers {0} | Dask LocalCluster, {0} workers | loky / serial | "
          "identical to serial (loky, Dask) | failed items |".format(args.workers))
    print("|---|---|---|---|---|---|---|")
    for name, serial, loky, dask, same_loky, same_dask, failed in rows:
        print(f"| {name} | {n / serial:.2f} items/s ({serial:.0f} s) | {n / loky:.2f} items/s ({loky:.0f} s) | "
              f"{n / dask:.2f} items/s ({dask:.0f} s) | {serial / loky:.2f}x | {same_loky}, {same_dask} | {failed} |")


if __name__ == "__main__":
    main()
