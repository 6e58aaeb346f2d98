#!/usr/bin/env python3
"""Benchmark: time and peak memory of ``info``, ``check``, ``icfmdp`` and ``explain-path`` at 10^4, 10^5 and 10^6
states, side by side with Storm alone (a benchmark, not a test).

The model is ``prism_models/grid.prism`` (N x N slippery grid, 4 actions, about 12 transitions per state) with N =
100, 316, 1000, plus a "progress" reward (x + y per step) for the path analyses. Every command runs in a fresh
process (``stormcf.cli.main`` in-process there), so its peak resident memory is its own:

- ``info``; ``check`` of the uniform strategy with ``R{"steps"}=? [F "trap"]`` (expected steps to the first trap
  cell); ``icfmdp`` and ``explain-path --k 2`` of a 20-step path sampled under the uniform strategy (seed 1).
- **Storm alone** is what the same command cannot avoid in Storm: parsing and building the PRISM model (Storm's own
  times in that very run, :func:`stormcf.storm.load_timings`), plus for ``check`` Storm's model checking of the
  induced DTMC. The ratio is the command's wall time over Storm alone.
- For ``check`` also the issue's narrower ratio: stormcf's whole check of a strategy (the product S·P, the DTMC
  written to Storm in bulk, the check) over Storm's check of the same induced DTMC already built in Storm (median of
  3 runs each; the two values must agree).

    python scripts/bench_scale.py                   # N = 100, 316, 1000
    python scripts/bench_scale.py --N 100 316       # smaller sizes only

Timings are wall clock on whatever else the machine runs: compare the ratios, measured side by side.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import stormcf
from stormcf import storm
from stormcf.batch import ModelFile
from stormcf.cli import main as cli
from stormcf.model import ExplicitModel, RewardModel
from stormcf.paths import simulate
from stormcf.verify import check_strategy, induced_dtmc, strategy_matrix

GRID_WITH_PROGRESS = stormcf.example_path("grid.prism").read_text() + """
rewards "progress"
  true : x + y;
endrewards
"""
PROPERTY = 'R{"steps"}=? [F "trap"]'
COMMANDS = ("info", "check", "icfmdp", "explain-path")
STEPS = 20


def argv(command: str, folder: Path, N: int) -> list[str]:
    model = [str(folder / "grid.prism"), "--constants", f"N={N}"]
    path = ["--path", str(folder / f"path{N}.json"), "--reward", "progress"]
    return {"info": ["info", *model],
            "check": ["check", *model, "--strategy", str(folder / "uniform.json"), "--prop", PROPERTY],
            "icfmdp": ["icfmdp", *model, *path],
            "explain-path": ["explain-path", *model, *path, "--k", "2"]}[command]


def prepare(folder: Path, N: int) -> None:
    """The model file, the uniform strategy file and a sampled path of the N x N grid."""
    model = stormcf.load_model(folder / "grid.prism", constants=f"N={N}")
    simulate(model, stormcf.Strategy.uniform(model), STEPS, seed=1).save(folder / f"path{N}.json")


def median_seconds(run, repeats: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        tick = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - tick)
    return statistics.median(times), out


def storm_alone_check(model: ExplicitModel) -> dict:
    """stormcf's check of the uniform strategy vs Storm's check of the same induced DTMC, built in Storm once."""
    sigma = stormcf.Strategy.uniform(model)
    ours, check = median_seconds(lambda: check_strategy(sigma, PROPERTY))
    rewards = {"steps": RewardModel("steps", choice=strategy_matrix(sigma) @ model.expected_choice_rewards("steps"))}
    dtmc = ExplicitModel(induced_dtmc(sigma), np.arange(model.n_states + 1), np.zeros(model.n_states, np.int64),
                         ("",), model.labels, {}, rewards, model.initial_state, model_type="dtmc")
    prop = stormcf.parse_property(dtmc, PROPERTY)
    storm.check(dtmc, prop)                                               # builds the DTMC in Storm once
    alone, result = median_seconds(lambda: storm.check(dtmc, prop))
    value = float(result.values[model.initial_state])
    assert abs(value - check.value) <= 1e-9 * max(1.0, abs(value)), (value, check.value)
    return {"check_strategy": ours, "storm_check": alone, "value": value}


def one(command: str, folder: Path, N: int) -> dict:
    """Run one command in this (fresh) process: wall time, peak memory, and Storm alone, from the Storm times of the
    very model the command loads (recorded by a wrapper around :meth:`ModelFile.load`)."""
    loaded: list[ExplicitModel] = []
    load = ModelFile.load
    ModelFile.load = lambda self: loaded.append(load(self)) or loaded[-1]
    out = folder / f"{command}{N}.json"
    tick = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli(argv(command, folder, N) + ["--json", str(out)])
    wall = time.perf_counter() - tick
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024          # kB -> MB (Linux)
    ModelFile.load = load
    if code != 0:
        raise SystemExit(f"{command} N={N} failed with exit code {code}")
    model, = loaded
    loading = storm.load_timings(model)
    row = {"command": command, "N": N, "states": model.n_states, "transitions": model.n_transitions, "wall": wall,
           "peak_mb": peak, "storm_build": loading["parse"] + loading["build"], "extract": loading["extract"],
           "status": json.loads(out.read_text())["status"]}
    if command == "check":
        row.update(storm_alone_check(model))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, nargs="+", default=[100, 316, 1000])
    ap.add_argument("--one", nargs=3, metavar=("COMMAND", "FOLDER", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--prepare", nargs=2, metavar=("FOLDER", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], Path(args.one[1]), int(args.one[2]))))
        return
    if args.prepare:
        prepare(Path(args.prepare[0]), int(args.prepare[1]))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = Path(tmp)
        (folder / "grid.prism").write_text(GRID_WITH_PROGRESS)
        (folder / "uniform.json").write_text('{"states": [], "default": "uniform"}\n')
        for N in args.N:
            subprocess.run([sys.executable, __file__, "--prepare", tmp, str(N)], check=True)
            for command in COMMANDS:
                done = subprocess.run([sys.executable, __file__, "--one", command, tmp, str(N)], check=True,
                                      capture_output=True, text=True)
                rows.append(json.loads(done.stdout.splitlines()[-1]))
                print(f"  {command} N={N}: {rows[-1]['wall']:.2f} s", file=sys.stderr, flush=True)
    print_tables(rows)


def print_tables(rows: list[dict]) -> None:
    print(f"grid.prism with a progress reward; {STEPS}-step path; {stormcf.storm.storm_version()}\n")
    print("| states | transitions | command | stormcf wall | peak memory | Storm alone | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        alone = r["storm_build"] + r.get("storm_check", 0.0)
        what = "build" + (" + check" if r["command"] == "check" else "")
        print(f"| {r['states']:,} | {r['transitions']:,} | {r['command']} | {r['wall']:.2f} s | {r['peak_mb']:,.0f} MB "
              f"| {alone:.2f} s ({what}) | {r['wall'] / alone:.2f}x |")
    print(f"\ncheck of the uniform strategy, {PROPERTY}: stormcf's check_strategy vs Storm's check of the same induced "
          f"DTMC (median of 3)\n")
    print("| states | value | stormcf check | Storm check alone | ratio |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["command"] == "check":
            print(f"| {r['states']:,} | {r['value']:.6g} | {r['check_strategy']:.3f} s | {r['storm_check']:.3f} s "
                  f"| {r['check_strategy'] / r['storm_check']:.2f}x |")


if __name__ == "__main__":
    main()
