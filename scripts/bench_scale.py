#!/usr/bin/env python3
"""Benchmark: time and peak memory of ``info``, ``check``, ``icfmdp`` and ``explain-path`` at 10^4, 10^5 and 10^6
states, side by side with Storm alone (a benchmark, not a test).

The model is ``prism_models/grid.prism`` (N x N slippery grid, 4 actions, about 12 transitions per state) with N =
100, 316, 1000, plus a "progress" reward (x + y per step) for the path analyses. Every command runs in a fresh
process (``stormcf.cli.main`` in-process there), so its peak resident memory and CPU time are its own:

- ``info``; ``check`` of the uniform strategy with ``R{"steps"}=? [F "trap"]`` (expected steps to the first trap
  cell); ``icfmdp`` and ``explain-path --k 2`` of a 20-step path sampled under the uniform strategy (seed 1).
- **Storm alone** for ``info``, ``icfmdp`` and ``explain-path`` is what the command cannot avoid in Storm: parsing
  and building the PRISM model (Storm's own times in that very run, :func:`stormcf.storm.load_timings`).
- **Storm alone for ``check``** is the peer of issue 20: Storm (through stormpy, in its own fresh process) parsing,
  building and checking the same induced DTMC written as a PRISM file (``grid.prism`` with ``dtmc`` instead of
  ``mdp``: Storm resolves the four commands of a state uniformly, which is the uniform strategy). Its value must
  equal stormcf's. The table shows CPU seconds and wall time of both, their ratios, and the phases of stormcf's
  command (Storm's parsing and building of the MDP, the extraction, the strategy's DTMC, Storm's check) beside
  Storm's (parsing and building the DTMC, the check). CPU seconds are the process's own after its imports, with
  the child processes it waited for (stormcf checks in a forked child: ``stormcf.storm.isolate``; stormcf's
  command runs once on the 3 x 3 grid first: ``import stormcf.cli`` imports an analysis when it first runs); the
  imports (``import stormcf.cli`` and ``import stormpy``, CPU) are listed separately.
- **Start-up** (issue 34): ``info`` and ``check`` on ``loan.prism`` (9 states) as whole fresh processes beside
  stormpy's own parse and build of it (``import stormpy`` included), CPU seconds, best of 5, with the ratio (the
  goal: within 2x).

    python scripts/bench_scale.py                   # N = 100, 316, 1000
    python scripts/bench_scale.py --N 100 316       # smaller sizes only
    python scripts/bench_scale.py --N 1000 --commands check
    python scripts/bench_scale.py --N 3163 --commands icfmdp --steps 1      # 10^7 states (about 10 GB)
    python scripts/bench_scale.py --N 1000 --commands check icfmdp --baseline ../main   # before / after
    python scripts/bench_scale.py --quick           # N = 20, check and info only (seconds; the CI smoke test)
    python scripts/bench_scale.py --startup --baseline ../main      # only the start-up lines, before / after

A baseline checkout needs its bytecode caches (``python -m compileall stormcf`` there, as after an install): without
them every start compiles stormcf's modules (about 0.05 s CPU), which the start-up lines would count.

``--baseline TREE`` runs every command a second time with the stormcf of another checkout (``PYTHONPATH=TREE``, e.g.
main before a change) and prints both side by side. Timings are taken on whatever else the machine runs: every row
has the load average (1 minute) when it started and ended; compare CPU seconds and the ratios, measured side by
side. Phases are CPU seconds only (Storm's parsing and building: the CPU time of the thread that loads the model,
:func:`stormcf.storm.load_timings`); no wall time is ever subtracted from CPU time.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import children_cpu_seconds, cpu_seconds, load_average, process_cpu_seconds

import stormcf

GRID = stormcf.example_path("grid.prism").read_text()
GRID_WITH_PROGRESS = GRID + """
rewards "progress"
  true : x + y;
endrewards
"""
PROPERTY = 'R{"steps"}=? [F "trap"]'
COMMANDS = ("info", "check", "icfmdp", "explain-path")
#: steps of the sampled path (``--steps``)
STEPS = 20


def argv(command: str, folder: Path, N: int) -> list[str]:
    model = [str(folder / "grid.prism"), "--constants", f"N={N}"]
    path = ["--path", str(folder / f"path{N}.json"), "--reward", "progress"]
    return {"info": ["info", *model],
            "check": ["check", *model, "--strategy", str(folder / "uniform.json"), "--prop", PROPERTY],
            "icfmdp": ["icfmdp", *model, *path],
            "explain-path": ["explain-path", *model, *path, "--k", "2"]}[command]


def prepare(folder: Path, N: int, steps: int) -> None:
    """A sampled path of the N x N grid under the uniform strategy."""
    from stormcf.paths import simulate
    model = stormcf.load_model(folder / "grid.prism", constants=f"N={N}")
    simulate(model, stormcf.Strategy.uniform(model), steps, seed=1).save(folder / f"path{N}.json")


#: the CPU phases of ``check`` in the command's own process: phase -> the functions whose cumulative CPU time it is
#: (cProfile with the process's CPU clock); the DTMC's transfer to Storm and Storm's check run in a forked child
#: (Storm parses and builds in a thread of its own, while the main thread waits: those phases are that thread's CPU
#: seconds, :func:`stormcf.storm.load_timings`)
CHECK_PHASES = {"load": ("load_model",), "strategy file": ("from_dict",), "strategy check": ("check_strategy",)}


def cpu_phases(stats: pstats.Stats, phases: dict[str, tuple[str, ...]]) -> dict[str, float]:
    """CPU seconds per phase: the cumulative time of the named functions (all calls, wherever they are)."""
    out = {}
    for phase, names in phases.items():
        out[phase] = sum(row[3] for (_, _, function), row in stats.stats.items() if function in names)
    return out


#: the grid of the warm-up run before each measured command (its imports are not measured: see the import time)
WARM_UP = 3


def one(command: str, folder: Path, N: int) -> dict:
    """Run one command in this (fresh) process after a warm-up run of it on the 3 x 3 grid: wall and CPU time, peak
    memory, and Storm's own loading times of the very model the command loads (recorded by a wrapper around
    :meth:`ModelFile.load`)."""
    from stormcf import storm
    from stormcf.batch import ModelFile
    from stormcf.cli import main as cli
    with contextlib.redirect_stdout(io.StringIO()):
        cli(argv(command, folder, WARM_UP) + ["--json", str(folder / f"warm-up-{command}.json")])
    loaded = []
    load = ModelFile.load
    ModelFile.load = lambda self: loaded.append(load(self)) or loaded[-1]
    facts = getattr(storm, "model_facts", None)         # ``info`` reads its facts from Storm's model (issue 34)
    if facts is not None:
        storm.model_facts = lambda *args, **kwargs: loaded.append(facts(*args, **kwargs)) or loaded[-1]
    out = folder / f"{command}{N}.json"
    profile = cProfile.Profile(process_cpu_seconds)   # for check's phases (few calls: the profiler costs nothing)
    run = profile.runcall if command == "check" else (lambda f, *args: f(*args))
    load_before = load_average()
    tick, own, children = time.perf_counter(), process_cpu_seconds(), children_cpu_seconds()
    with contextlib.redirect_stdout(io.StringIO()):
        code = run(cli, argv(command, folder, N) + ["--json", str(out)])
    wall = time.perf_counter() - tick
    machine_load = (load_before, load_average())
    children = children_cpu_seconds() - children    # stormcf's forked Storm checks, waited for
    cpu = process_cpu_seconds() - own + children
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024          # kB -> MB (Linux)
    ModelFile.load = load
    if facts is not None:
        storm.model_facts = facts
    if code != 0:                                # e.g. a baseline that refuses (exit 2): a row that says so
        return {"command": command, "N": N, "wall": wall, "cpu": cpu, "peak_mb": peak, "load": machine_load,
                "exit": code, "states": loaded[0].n_states if loaded else 0,
                "transitions": loaded[0].n_transitions if loaded else 0}
    model, = loaded
    document = json.loads(out.read_text())
    loading, loading_cpu = load_timings(model)
    storm_cpu = {phase: loading_cpu.get(phase) for phase in ("parse", "build")}
    if None in storm_cpu.values():                   # a baseline without the loading thread's CPU times
        storm_cpu = {phase: float("nan") for phase in storm_cpu}
    row = {"command": command, "N": N, "states": model.n_states, "transitions": model.n_transitions, "wall": wall,
           "cpu": cpu, "peak_mb": peak, "storm_build": loading["parse"] + loading["build"],
           "storm_build_cpu": storm_cpu["parse"] + storm_cpu["build"], "load": machine_load,
           "status": document["status"]}
    if command == "check":
        phases = cpu_phases(pstats.Stats(profile), CHECK_PHASES)
        row.update(value=document["results"][0]["value"], raw_phases={**phases, "child": children,
                                                                      **{f"Storm {k}": v for k, v in storm_cpu.items()}})
    return row


def load_timings(model) -> tuple[dict[str, float], dict[str, float]]:
    """Wall and CPU seconds of loading a model file by phase: of an explicit model, or of the facts ``info`` read
    (no CPU times in a baseline from before the loading thread's CPU times)."""
    from stormcf import storm
    if not isinstance(model, stormcf.ExplicitModel):
        timings = dict(model.timings)
        return ({k: t for k, t in timings.items() if not k.endswith("_cpu")},
                {k[:-len("_cpu")]: t for k, t in timings.items() if k.endswith("_cpu")})
    try:
        return storm.load_timings(model), storm.load_timings(model, cpu=True)
    except TypeError:
        return storm.load_timings(model), {}


def storm_alone(folder: Path, N: int) -> dict:
    """Storm through stormpy in this (fresh) process on the induced DTMC as a PRISM file: parse, build, check."""
    import stormpy
    from stormcf.storm.check import PRECISION
    stormpy.developer.set_log_level(stormpy.developer.LogLevel.OFF)
    phases, load = {}, load_average()
    tick, cpu, start = time.perf_counter(), cpu_seconds(), cpu_seconds()
    program = stormpy.parse_prism_program(str(folder / "grid_dtmc.prism"))
    program, _ = stormpy.instantiate_constants(program, {"N": N})
    prop = stormpy.parse_property(PROPERTY, program)
    phases["parse"], cpu = cpu_seconds() - cpu, cpu_seconds()
    options = stormpy.BuilderOptions()
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    dtmc = stormpy.build_model(program, options=options)
    phases["build"], cpu = cpu_seconds() - cpu, cpu_seconds()
    env = stormpy.environments.sound()
    env.solver().native().precision = stormpy.Rational(f"{PRECISION.numerator}/{PRECISION.denominator}")
    value = stormpy.model_checking(dtmc, prop, environment=env).get_value(dtmc.initial_states[0])
    phases["check"] = cpu_seconds() - cpu
    return {"wall": time.perf_counter() - tick, "cpu": cpu_seconds() - start, "phases": phases, "value": value,
            "transitions": dtmc.nr_transitions, "load": (load, load_average())}


#: start-up costs: what -> the code a fresh interpreter runs (stdout discarded)
STARTUP = {"import stormcf.cli": "import stormcf.cli", "import stormpy": "import stormpy",
           "stormcf --help": "from stormcf.cli import main\nmain(['--help'])",
           "stormcf check on loan.prism (9 states)": "from stormcf.cli import main\nimport stormcf\n"
           "main(['check', str(stormcf.example_path('loan.prism')), '-p', 'Pmin=? [F \"rejected\"]'])"}


#: issue 34: a command on a small model within 2x stormpy's own parse and build, each a whole fresh process (CPU)
LOAN = repr(str(stormcf.example_path("loan.prism")))
SMALL = {"stormpy parse, build": "import stormpy\noptions = stormpy.BuilderOptions()\n"    # stormcf's builder options
         "options.set_build_all_labels()\noptions.set_build_all_reward_models()\n"
         "options.set_build_state_valuations()\noptions.set_build_choice_labels()\n"
         f"stormpy.build_model(stormpy.parse_prism_program({LOAN}), options=options)",
         "stormcf info": f"import sys\nfrom stormcf.__main__ import main\nsys.argv[1:] = ['info', {LOAN}]\nmain()",
         "stormcf check": f"import sys\nfrom stormcf.__main__ import main\nsys.argv[1:] = ['check', {LOAN}, '-p', "
         "'Pmin=? [F \"rejected\"]']\nmain()"}


def small_model_cpu(repeats: int = 5, tree: str | None = None) -> dict[str, float]:
    """CPU seconds of the whole fresh process of each of :data:`SMALL` (best of ``repeats``, interleaved, so that
    the machine's load hits them alike)."""
    best = dict.fromkeys(SMALL, float("inf"))
    for _ in range(repeats):
        for name, code in SMALL.items():
            best[name] = min(best[name], process_cpu(code, tree))
    return best


def process_cpu(code: str, tree: str | None = None) -> float:
    """CPU seconds of a fresh interpreter that runs ``code`` (stdout discarded) with the children it waited for (the
    forked Storm checks of ``check``), with the stormcf of checkout ``tree`` if given."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    wrapped = ("import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n    "
               + code.replace("\n", "\n    ") + "\nimport resource as r\n"
               "u, c = r.getrusage(r.RUSAGE_SELF), r.getrusage(r.RUSAGE_CHILDREN)\n"
               "print(u.ru_utime + u.ru_stime + c.ru_utime + c.ru_stime)")
    done = subprocess.run([sys.executable, "-c", wrapped], check=True, capture_output=True, text=True, env=env,
                          cwd=tree)
    return float(done.stdout.split()[-1])


def small_model_line(version: str, cpu: dict[str, float]) -> str:
    alone = cpu["stormpy parse, build"]
    return (f"small model ({version}, loan.prism: 9 states), CPU seconds of the whole fresh process (best of 5; "
            f"issue 34's goal: 2x stormpy's own parse and build): stormpy parse, build {alone:.3f} s; " +
            "; ".join(f"`{k}` {t:.3f} s ({t / alone:.2f}x)" for k, t in cpu.items() if k != "stormpy parse, build"))


def import_cpu(statement: str, repeats: int = 3, tree: str | None = None) -> float:
    """CPU seconds of a fresh interpreter that runs ``statement`` (best of ``repeats``), minus an empty one's (with
    the stormcf of checkout ``tree`` if given)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)

    def run(code: str) -> float:
        done = subprocess.run([sys.executable, "-c", f"{code}\nimport resource as r\nu = r.getrusage(r.RUSAGE_SELF)\n"
                               "print(u.ru_utime + u.ru_stime)"], check=True, capture_output=True, text=True,
                              env=env, cwd=tree)
        return float(done.stdout.split()[-1])
    return min(run(statement) for _ in range(repeats)) - min(run("pass") for _ in range(repeats))


def child(*args: str, tree: str | None = None) -> dict:
    """Run this script with ``args`` in a fresh process (with the stormcf of checkout ``tree`` if given)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True, env=env,
                          cwd=tree)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, nargs="+", default=[100, 316, 1000])
    ap.add_argument("--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS))
    ap.add_argument("--steps", type=int, default=STEPS, help="steps of the sampled path (default 20)")
    ap.add_argument("--baseline", metavar="TREE", help="also run every command with the stormcf of this checkout "
                    "(before / after side by side)")
    ap.add_argument("--quick", action="store_true", help="N = 20, info and check only: a smoke test in seconds")
    ap.add_argument("--startup", action="store_true", help="only the start-up lines: the imports, and info and check "
                    "on loan.prism beside stormpy's own parse and build (issue 34)")
    ap.add_argument("--one", nargs=3, metavar=("COMMAND", "FOLDER", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--storm", nargs=2, metavar=("FOLDER", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--prepare", nargs=3, metavar=("FOLDER", "N", "STEPS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], Path(args.one[1]), int(args.one[2]))))
        return
    if args.storm:
        print(json.dumps(storm_alone(Path(args.storm[0]), int(args.storm[1]))))
        return
    if args.prepare:
        prepare(Path(args.prepare[0]), int(args.prepare[1]), int(args.prepare[2]))
        return
    sizes, commands = ([20], ("info", "check")) if args.quick else (args.N, args.commands)
    trees = {"after": None} if args.baseline is None else {"before": str(Path(args.baseline).resolve()),
                                                               "after": None}
    if args.startup:
        print_startup(trees, 3)
        return
    rows, peers = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = Path(tmp)
        (folder / "grid.prism").write_text(GRID_WITH_PROGRESS)
        (folder / "grid_dtmc.prism").write_text(GRID.replace("\nmdp\n", "\ndtmc\n", 1))
        (folder / "uniform.json").write_text('{"states": [], "default": "uniform"}\n')
        for N in sizes:
            if {"icfmdp", "explain-path"} & set(commands):
                for grid in {N, WARM_UP}:
                    subprocess.run([sys.executable, __file__, "--prepare", tmp, str(grid), str(args.steps)],
                                   check=True)
            for command in commands:
                for version, tree in trees.items():
                    rows.append({**child("--one", command, tmp, str(N), tree=tree), "version": version})
                    print(f"  {command} N={N} ({version}): {rows[-1]['cpu']:.2f} s CPU", file=sys.stderr,
                          flush=True)
                if command == "check":
                    peers[N] = child("--storm", tmp, str(N))
                    print(f"  Storm alone N={N}: {peers[N]['wall']:.2f} s", file=sys.stderr, flush=True)
    print_tables(rows, peers, args.steps)
    print_startup(trees, 1 if args.quick else 3)


def print_startup(trees: dict[str, str | None], repeats: int) -> None:
    """The start-up lines: the imports (beyond an empty interpreter) and, per version, ``info`` and ``check`` on
    ``loan.prism`` beside stormpy's own parse and build (whole processes)."""
    for version, tree in trees.items():
        times = {name: import_cpu(code, repeats, tree) for name, code in STARTUP.items()}
        print(f"\nstart-up ({version}), CPU seconds of a fresh interpreter beyond an empty one (best of {repeats}), "
              f"load {os.getloadavg()[0]:.1f}: " + ", ".join(f"`{k}` {v:.3f} s" for k, v in times.items()))
    for version, tree in trees.items():
        print(small_model_line(version, small_model_cpu(tree=tree)) + f", load {os.getloadavg()[0]:.1f}")


def check_phases(r: dict) -> dict[str, float]:
    """The CPU phases of a ``check`` row: Storm's parsing and building (the loading thread's CPU), stormcf's
    extraction (the rest of loading), the strategy, S·P, the forked child (the DTMC to Storm and Storm's check)."""
    raw = r["raw_phases"]
    phases = {"Storm parse": raw["Storm parse"], "Storm build": raw["Storm build"],
              "strategy file": raw["strategy file"],
              "extraction": raw["load"] - raw["Storm parse"] - raw["Storm build"],
              "DTMC to Storm and Storm's check (child)": raw["child"],
              "induced DTMC (S·P)": raw["strategy check"]}
    phases["rest (arguments, output)"] = r["cpu"] - sum(phases.values())
    return phases


def _load(r: dict) -> str:
    return f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"


def print_tables(rows: list[dict], peers: dict[int, dict], steps: int) -> None:
    print(f"grid.prism with a progress reward; {steps}-step path; {stormcf.storm.storm_version()}; "
          f"{os.cpu_count()} CPUs\n")
    print("| states | transitions | command | version | stormcf CPU (wall) | load | peak memory | Storm alone, CPU "
          "| ratio (CPU) | stormcf's own share of its CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    after = {(r["command"], r["N"]): r for r in rows if r["version"] == "after"}
    for r in rows:                  # a baseline without the loading thread's CPU: the same Storm work, measured after
        if "exit" not in r and r["storm_build_cpu"] != r["storm_build_cpu"]:
            r["storm_build_cpu"] = after[r["command"], r["N"]]["storm_build_cpu"]
            if r["command"] == "check":
                for phase in ("Storm parse", "Storm build"):
                    r["raw_phases"][phase] = after["check", r["N"]]["raw_phases"][phase]
    for r in rows:
        if "exit" in r:
            print(f"| {r['states']:,} | {r['transitions']:,} | {r['command']} | {r['version']} | refused or failed: "
                  f"exit code {r['exit']} after {r['cpu']:.2f} s CPU ({r['wall']:.2f} s) | {_load(r)} | "
                  f"{r['peak_mb']:,.0f} MB | | | |")
            continue
        if r["command"] == "check":
            alone, what = peers[r["N"]]["cpu"], "DTMC file: parse, build, check"
        else:
            alone, what = r["storm_build_cpu"], "parse, build"
        own = 1 - r["storm_build_cpu"] / r["cpu"]
        print(f"| {r['states']:,} | {r['transitions']:,} | {r['command']} | {r['version']} | {r['cpu']:.2f} s "
              f"({r['wall']:.2f} s) | {_load(r)} | {r['peak_mb']:,.0f} MB | {alone:.2f} s ({what}) "
              f"| {r['cpu'] / alone:.2f}x | {own:.0%} (all but Storm's parsing and building) |")
    print(f"\ncheck of the uniform strategy, {PROPERTY}: the whole `stormcf check` command vs Storm alone on the "
          f"induced DTMC as a PRISM file (each in a fresh process, after its imports)\n")
    print("| states | version | value (stormcf / Storm) | stormcf CPU / wall (load) | Storm CPU / wall (load) "
          "| ratio CPU / wall | stormcf's own part / Storm's check (CPU) | stormcf phases, CPU (s) "
          "| Storm phases, CPU (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["command"] != "check" or "exit" in r:
            continue
        peer = peers[r["N"]]
        phases = check_phases(r)
        own = phases["extraction"] + phases["strategy file"] + phases["induced DTMC (S·P)"]
        print(f"| {r['states']:,} | {r['version']} | {r['value']:.9g} / {peer['value']:.9g} | {r['cpu']:.2f} / "
              f"{r['wall']:.2f} s ({_load(r)}) | {peer['cpu']:.2f} / {peer['wall']:.2f} s ({_load(peer)}) | "
              f"{r['cpu'] / peer['cpu']:.2f}x / {r['wall'] / peer['wall']:.2f}x | "
              f"{own / peer['phases']['check']:.2f}x | {_phases(phases)} | {_phases(peer['phases'])} |")
        if abs(r["value"] - peer["value"]) > 1e-6 * max(1.0, abs(peer["value"])):
            raise SystemExit(f"N={r['N']}: stormcf's value {r['value']!r} differs from Storm's {peer['value']!r}")


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in phases.items())


if __name__ == "__main__":
    main()
