#!/usr/bin/env python3
"""Benchmark: 1,000 observed Sepsis paths through ``icfmdp`` and ``explain-path`` as batches, serially, with joblib's
loky workers and on a Dask cluster, items per second side by side (a benchmark, not a test).

The paths are sampled from ``prism_models/sepsis.prism`` (636 states, 30,328 transitions) under the uniform
strategy, 10 steps each (the authors' horizon), seeds 0..n-1. Each batch runs through :func:`stormcf.batch.run_batch`
(what ``--paths`` does): serially in this process, with ``--workers W`` (loky processes), and on a
``distributed.LocalCluster`` of W single-threaded worker processes started here (``--backend dask``). The paths are
split into rounds; every round runs the three modes in rotating order, so that the load of other jobs on the machine
hits them alike (the workers' start-up, paid in the first round, is counted). As a control, each round also runs the
items split over W independent serial Python processes started at once: what this machine gives W processes at all
(on a machine shared with other jobs, often much less than W times one). The documents of the parallel runs must
equal the serial ones item by item (wall-clock times aside); the script says so.

Besides wall-clock rates, the script counts the CPU seconds of every mode's whole process tree (this process, the
loky workers, the Dask scheduler, nannies and workers, the control's processes): on a machine shared with other
jobs, CPU seconds per item say how much work a mode adds, where wall-clock rates mostly say how busy the machine
was. The efficiency of a parallel mode is the control's CPU seconds over its own (1.0: as lean as independent
processes). The Dask cluster (``stormcf.batch.local_cluster``: one thread per worker, no dashboard, Dask's settings
``LEAN_DASK``; ``--dask-defaults``: Dask's own settings) starts in its first round, like loky's workers; all its CPU
while the Dask batches run is Dask's (the scheduler, the nannies and the client's communication run in this
process's event-loop thread), what it burns while the other modes run is nobody's and is shown as the idle
cluster's CPU seconds per minute, and the script breaks Dask's CPU down by process.

    python scripts/bench_batch.py                        # 1000 paths, W = 2
    python scripts/bench_batch.py --paths 200 --workers 2
    python scripts/bench_batch.py --paths 400 --rounds 1 --tasks icfmdp
    python scripts/bench_batch.py --paths 240 --rounds 1 --tasks icfmdp --dask-defaults   # Dask's own settings
    python scripts/bench_batch.py --quick                # icfmdp, 6 paths, no Dask (seconds; the CI smoke test)

Timings are taken on whatever else the machine runs: compare the rates and CPU seconds of one run (the load average
at its start and end is printed).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from _measure import load_average, machine
from joblib import parallel_config

import stormcf
from stormcf.batch import ModelFile, local_cluster, read_jsonl, run_batch
from stormcf.explain.task import PathExplanation
from stormcf.icfmdp.task import IntervalCounterfactualMDP
from stormcf.errors import PathError
from stormcf.paths import simulate
from stormcf.report import without_times

SEPSIS = str(stormcf.example_path("sepsis.prism"))


def write_paths(file: Path, n: int, steps: int) -> None:
    model = stormcf.load_model(SEPSIS)
    uniform = stormcf.Strategy.uniform(model)
    with file.open("w") as f:
        for seed in range(n):
            path = simulate(model, uniform, steps, seed=seed).to_dict()
            f.write(json.dumps({**path, "id": f"patient-{seed}"}) + "\n")


def tree_cpu() -> float:
    """CPU seconds of this process and all its descendants, living or reaped."""
    import psutil
    total = 0.0
    for process in [psutil.Process()] + psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            t = process.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


class Cluster:
    """The Dask cluster of the benchmark, started on first use: its client, and the CPU seconds of its parts so far
    (its worker processes with their children, and this process's event-loop thread that runs the scheduler, the
    nannies and the client's communication)."""

    def __init__(self, stack: contextlib.ExitStack, workers: int, defaults: bool) -> None:
        self.stack, self.workers, self.defaults = stack, workers, defaults
        self.pids: list[int] = []

    def start(self) -> None:
        if self.pids:
            return
        from distributed import Client, LocalCluster
        cluster = self.stack.enter_context(
            LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                         silence_logs=40) if self.defaults else local_cluster(self.workers))
        client = self.stack.enter_context(Client(cluster))
        self.pids = sorted(client.run(os.getpid).values())

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each part (nothing before the cluster starts)."""
        import psutil
        if not self.pids:
            return {}
        loops = {thread.native_id for thread in threading.enumerate() if thread.name == "IO loop"}
        parts = {"event loop here (scheduler, nannies, client)":
                 sum(t.user_time + t.system_time for t in psutil.Process().threads() if t.id in loops)}
        for k, pid in enumerate(self.pids, start=1):
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(pid).cpu_times()     # with its forked Storm calls (stormcf.storm.isolate)
                parts[f"worker {k}"] = times.user + times.system + times.children_user + times.children_system
        return parts


def since(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {part: seconds - before.get(part, 0.0) for part, seconds in after.items()}


def digests(outcomes) -> list[str]:
    """One digest per item of its document without wall-clock times (to compare runs item by item)."""
    return [hashlib.sha256(json.dumps(without_times(o.document), sort_keys=True).encode()).hexdigest()
            for o in outcomes]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", type=int, default=1000, help="number of paths (default 1000)")
    ap.add_argument("--steps", type=int, default=10, help="steps per path (default 10)")
    ap.add_argument("--workers", type=int, default=2, help="loky workers and Dask worker processes (default 2)")
    ap.add_argument("--rounds", type=int, default=5, help="the paths are split into this many rounds; each round runs "
                    "every mode, in rotating order, so that the load of other jobs hits every mode alike (default 5)")
    ap.add_argument("--tasks", nargs="+", choices=("icfmdp", "explain-path"), default=["icfmdp", "explain-path"])
    ap.add_argument("--dask-defaults", action="store_true", help="the Dask cluster with Dask's default settings "
                    "instead of stormcf.batch.local_cluster's (LEAN_DASK): the cluster before issue 34")
    ap.add_argument("--quick", action="store_true", help="icfmdp on 6 paths of 5 steps, 1 round, no Dask: a smoke test")
    ap.add_argument("--part", nargs=4, metavar=("FILE", "TASK", "K", "W"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.paths, args.steps, args.rounds = 6, 5, 1
    if args.part:
        file, name, k, w = args.part
        part = read_jsonl(file)[int(k)::int(w)]
        print(json.dumps(digests(run_batch(ModelFile(SEPSIS), tasks(args.quick)[name], part, 1))))
        return
    modes = ("serial", "loky", "processes") if args.quick else ("serial", "loky", "dask", "processes")
    start = machine()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        file = Path(tmp) / "paths.jsonl"
        write_paths(file, args.paths, args.steps)
        items = read_jsonl(str(file), PathError)
        source = ModelFile(SEPSIS)
        rows = []
        with contextlib.ExitStack() as stack:
            cluster = Cluster(stack, args.workers, args.dask_defaults)
            idle = [0.0, 0.0]                       # the cluster's CPU and wall seconds while other modes ran
            loads: list[float] = []                 # the 1-minute load average as each mode starts and ends
            for name, task in tasks(args.quick).items():
                if name not in (["icfmdp"] if args.quick else args.tasks):
                    continue
                seconds = dict.fromkeys(modes, 0.0)
                cpu = dict.fromkeys(modes, 0.0)
                parts: defaultdict[str, float] = defaultdict(float)    # Dask's CPU seconds by part
                results: dict[str, list[str]] = {mode: [] for mode in modes}
                for r in range(args.rounds):
                    part = items[r::args.rounds]
                    for mode in modes[r % len(modes):] + modes[:r % len(modes)]:
                        loads.append(os.getloadavg()[0])
                        tick, used, own = time.perf_counter(), tree_cpu(), cluster.cpu()
                        if mode == "processes":
                            results[mode] += independent_processes(Path(tmp), part, name, args.workers, args.quick)
                        elif mode == "dask":
                            cluster.start()
                            results[mode] += digests(dask_run(source, task, part))
                        else:
                            results[mode] += digests(RUNS[mode](source, task, part, args.workers))
                        wall, total, spent = time.perf_counter() - tick, tree_cpu() - used, since(cluster.cpu(), own)
                        seconds[mode] += wall
                        loads.append(os.getloadavg()[0])
                        if mode == "dask":
                            cpu[mode] += total
                            for key, value in spent.items():
                                parts[key] += value
                            parts["this process, other threads (the batch, joblib)"] += total - sum(spent.values())
                        else:                       # the idle cluster's CPU is nobody's
                            cpu[mode] += total - sum(spent.values())
                            idle[0] += sum(spent.values())
                            idle[1] += wall if spent else 0.0
                same = {mode: results[mode] == results["serial"] for mode in modes if mode in ("loky", "dask")}
                rows.append((name, seconds, cpu, same))
                print(f"  {name}: " + ", ".join(f"{m} {seconds[m]:.1f} s ({cpu[m]:.1f} s CPU)" for m in modes),
                      flush=True)
                if parts:
                    print(f"  {name}, Dask's CPU seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()),
                          flush=True)
            if idle[1]:
                print(f"  the idle Dask cluster while the other modes ran: {60 * idle[0] / idle[1]:.2f} CPU s per "
                      f"minute", flush=True)
    n = args.paths
    parallel = [mode for mode in modes if mode in ("loky", "dask")]
    print(f"\n{n} Sepsis paths of {args.steps} steps, in {args.rounds} interleaved rounds; {args.workers} loky "
          f"workers / {args.workers} Dask worker processes (1 thread each); {stormcf.storm.storm_version()}; at the "
          f"start {start}, at the end load average {load_average():.2f} (load {min(loads):.1f}-{max(loads):.1f} "
          f"during the run)\n")
    names = {"serial": "serial", "loky": f"loky, --workers {args.workers}",
             "dask": f"Dask LocalCluster, {args.workers} workers",
             "processes": f"control: {args.workers} independent serial processes"}
    print("| command | " + " | ".join(f"{names[m]}: items/s (CPU s)" for m in modes) + " | "
          + " | ".join(f"{m} / control: rate, CPU efficiency" for m in parallel) + " | identical to serial |")
    print("|---|" + "---|" * (len(modes) + len(parallel) + 1))
    for name, t, cpu, same in rows:
        cells = [f"{n / t[mode]:.2f} ({cpu[mode]:.1f})" for mode in modes]
        ratios = [f"{t['processes'] / t[mode]:.0%}, {cpu['processes'] / cpu[mode]:.0%}" for mode in parallel]
        print(f"| {name} | " + " | ".join(cells + ratios) + " | " + ", ".join(str(same[m]) for m in parallel) + " |")


def tasks(quick: bool = False) -> dict:
    return {"icfmdp": IntervalCounterfactualMDP(reward="r"),
            "explain-path": PathExplanation(reward_model="r", k=2, explanations=20 if quick else 1000)}


def dask_run(source, task, items):
    with parallel_config(backend="dask"):
        yield from run_batch(source, task, items)


RUNS = {"serial": lambda source, task, items, workers: run_batch(source, task, items, workers=1),
        "loky": lambda source, task, items, workers: run_batch(source, task, items, workers=workers)}


def independent_processes(folder: Path, items, name: str, workers: int, quick: bool) -> list[str]:
    """The control: the items split over ``workers`` separate serial Python processes started at once (each imports
    stormcf and builds the model), i.e. what the machine gives to that many processes without any batch machinery."""
    file = folder / "part.jsonl"
    file.write_text("".join(json.dumps(item.data) + "\n" for item in items))
    argv = [sys.executable, __file__] + (["--quick"] if quick else [])
    children = [subprocess.Popen(argv + ["--part", str(file), name, str(k), str(workers)], stdout=subprocess.PIPE,
                                 text=True) for k in range(workers)]
    parts = [json.loads(child.communicate()[0]) for child in children]
    return [parts[i % workers][i // workers] for i in range(len(items))]


if __name__ == "__main__":
    main()
