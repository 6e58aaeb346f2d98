#!/usr/bin/env python3
"""Benchmark of ``stormcf learn``: time and memory of the pipeline on logs of 10^4, 10^5 and 10^6 events, side by
side with AALpy's own ``run_Alergia`` on the same traces.

The logs are sampled (``stormcf.learn.sample_log``) from a process-mining-like MDP of MSSD's size
(``scripts/process_mdp.py``: 15,000 states by default) under a seeded random strategy; an event is one row of the
paired-form CSV. Every size runs in a fresh subprocess, so the peak resident memory is that size's own. AALpy runs
in its own subprocess with a limit on its CPU time (its red-blue loop recomputes the blue set from every red state
at every step, quadratic in the states, so it does not finish the larger logs).

    python scripts/bench_learn.py                         # 10^4, 10^5, 10^6 events; AALpy limit 300 s
    python scripts/bench_learn.py --events 10000 --aalpy-limit 600
    python scripts/bench_learn.py --quick                 # 300 events of a 60-state MDP (the CI smoke test)

Timings on a shared machine are noisy: every phase of ``learn_mdp`` shows its CPU seconds with its wall-clock seconds
(``LearnResult.timings``) beside; the two learners are compared by CPU seconds, which other processes on the machine
do not inflate; the load average at the start and the end of every size is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import cpu_seconds, cpu_timers, load_average, machine, timed

HERE = Path(__file__).resolve().parent
#: the phases of ``learn_mdp`` (keys of its wall-clock ``timings``) -> the functions whose CPU seconds they are
PHASES = {"learn": ("traces", "ioalergia", "coverage"), "write": ("_naming", "prism_text", "drn_text"),
          "storm_build": ("_built_by_storm", "_same_model"), "strategy": ("learned_strategy",)}


def make_log(states: int, events: int, seed: int, folder: Path, observations: int | None = None) -> Path:
    """A paired-form CSV with about ``events`` rows sampled from process_mdp(states, seed). Every state is observed
    by its name (``positive``, ``negative``, ``s=17``), or, with ``observations`` = K, the non-outcome states by one
    of K event names ``e<s mod K>`` (a process whose events do not identify its states)."""
    sys.path.insert(0, str(HERE))
    from process_mdp import process_mdp

    import stormcf
    from stormcf.learn import sample_log

    model = process_mdp(states, seed).with_naming("labels")
    sigma = stormcf.Strategy.random(model, seed=seed + 1)
    outcomes = model.labels["positive"] | model.labels["negative"]

    def observe(s: int) -> str:
        return model.state_name(s) if observations is None or outcomes[s] else f"e{s % observations}"

    probe = sample_log(model, sigma, 2000, seed=seed, observe=observe)
    cases = max(1, round(events * 2000 / probe.events))
    log = sample_log(model, sigma, cases, seed=seed, observe=observe)
    path = folder / f"log_{events}.csv"
    log.to_csv(path)
    return path


def run_stormcf(log: Path, alpha: float, folder: Path) -> dict:
    from stormcf.learn import LearnProblem, ioalergia, learn_mdp, read_log, solve

    targets = {name: (LearnProblem if name == "traces" else solve, name) for names in PHASES.values() for name in names}
    with timed() as total:
        with timed() as read:
            events = read_log(log)
        problem = LearnProblem(events, alpha=alpha, model_path=folder / "learned.prism",
                               strategy_path=folder / "sigma.json")
        with cpu_timers(targets) as spent:
            result = learn_mdp(problem)
    cpu = cpu_seconds()                                  # the learning alone, again, in CPU seconds
    ioalergia(problem.traces(), problem.alpha_value)
    cpu = cpu_seconds() - cpu
    learned = result.payload()["learned"]
    phases = {phase: (sum(spent[name] for name in names), result.timings[phase]) for phase, names in PHASES.items()}
    return {"events": events.events, "cases": events.n_cases, "read": (read.cpu, read.wall), **phases,
            "total": (total.cpu, total.wall), "learn_cpu": cpu, "load": total.loads,
            "states": learned["states"], "transitions": learned["transitions"],
            "max_out_degree": learned["max_out_degree"], "peak_mb": _peak_mb()}


def run_aalpy(log: Path, alpha: float) -> dict:
    from aalpy.learning_algs import run_Alergia

    from stormcf.learn import LearnProblem, read_log

    traces = LearnProblem(read_log(log)).traces()
    o, a, off = traces.outputs.tolist(), traces.inputs.tolist(), traces.offsets.tolist()
    data = [[traces.initial] + list(zip(a[off[c]:off[c + 1]], o[off[c]:off[c + 1]])) for c in range(len(off) - 1)]
    cpu = cpu_seconds()
    mdp = run_Alergia(data, automaton_type="mdp", eps=alpha)
    return {"learn_cpu": cpu_seconds() - cpu, "states": len(mdp.states), "peak_mb": _peak_mb()}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(args: list[str], cpu_limit: float | None) -> dict | None:
    """Run this script as a child; ``None`` when it exceeds ``cpu_limit`` CPU seconds (RLIMIT_CPU ends it)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")

    def limit() -> None:
        if cpu_limit is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit), int(cpu_limit) + 5))

    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env,
                         preexec_fn=limit)
    if out.returncode != 0:
        if cpu_limit is not None and out.returncode < 0:
            return None
        raise SystemExit(f"bench_learn: {' '.join(args)} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--states", type=int, default=15_000, help="states of the generating process MDP")
    ap.add_argument("--observations", type=int, default=None, metavar="K",
                    help="observe K event names instead of the states (default: every state by its name)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--aalpy-limit", type=float, default=300.0, metavar="CPU_SECONDS")
    ap.add_argument("--quick", action="store_true", help="300 events of a 60-state MDP: a smoke test in seconds")
    ap.add_argument("--child", nargs=2, metavar=("WHICH", "LOG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.events, args.states = [300], 60
    if args.child:
        which, log = args.child
        with tempfile.TemporaryDirectory() as folder:
            out = (run_stormcf(Path(log), args.alpha, Path(folder)) if which == "stormcf"
                   else run_aalpy(Path(log), args.alpha))
        print(json.dumps(out))
        return
    seen = "every state by its name" if args.observations is None else f"{args.observations} event names"
    print(f"stormcf learn on logs sampled from process_mdp({args.states}, seed {args.seed}), observing {seen}, "
          f"alpha {args.alpha}; "
          f"AALpy {_aalpy_version()} run_Alergia limited to {args.aalpy_limit:g} CPU s; {machine()}")
    head = (f"{'events':>9} {'cases':>7} {'states':>7} {'transitions':>11} {'max deg':>7} | {'read':>11} "
            f"{'learn':>11} {'write':>11} {'storm':>11} {'strat':>11} {'total':>13} {'MB':>5} {'load':>9} | "
            f"{'learn CPU':>9} {'AALpy CPU':>10} {'MB':>5} {'ratio':>7}")
    print(head)
    print("-" * len(head))
    with tempfile.TemporaryDirectory() as folder:
        gave_up = False                                   # AALpy did not finish a smaller log
        for events in sorted(args.events):
            log = make_log(args.states, events, args.seed, Path(folder), args.observations)
            ours = _child(["--alpha", str(args.alpha), "--child", "stormcf", str(log)], None)
            aalpy = _aalpy_column(None if gave_up else log, args, max(ours["learn_cpu"], 1e-3), ours["states"])
            gave_up = gave_up or aalpy.lstrip().startswith(("> ", "not run"))
            phases = " ".join(f"{ours[phase][0]:>5.2f}/{ours[phase][1]:<5.2f}"
                              for phase in ("read", "learn", "write", "storm_build", "strategy"))
            print(f"{ours['events']:>9} {ours['cases']:>7} {ours['states']:>7} {ours['transitions']:>11} "
                  f"{ours['max_out_degree']:>7} | {phases} {ours['total'][0]:>6.2f}/{ours['total'][1]:<6.2f} "
                  f"{ours['peak_mb']:>5.0f} {ours['load']:>9} | {ours['learn_cpu']:>9.2f} {aalpy}", flush=True)
    print("columns: CPU / wall-clock seconds per phase of learn_mdp (read = CSV reading; learn = IOAlergia and the "
          "log's coverage; storm = Storm builds the written PRISM file and stormcf compares it with the learned "
          "frequencies; strat = the users' strategy and its file) and of the whole; MB = peak resident memory of the "
          "process; load = the load average at the start and the end; learn CPU / AALpy CPU = CPU seconds of the "
          "learning alone (stormcf's IOAlergia / AALpy's run_Alergia on the same traces); ratio = AALpy's / "
          f"stormcf's. Load average at the end {load_average():.2f}")


def _aalpy_column(log: Path | None, args: argparse.Namespace, mine: float, states: int) -> str:
    """AALpy's CPU seconds, peak memory and the ratio, or why there are none (``log`` None: not run)."""
    if log is None:
        return f"{'not run':>10} (it did not finish a smaller log)"
    theirs = _child(["--alpha", str(args.alpha), "--child", "aalpy", str(log)], args.aalpy_limit)
    if theirs is None:
        return f"{'> ' + format(args.aalpy_limit, 'g'):>10} {'':>5} {'> ' + format(args.aalpy_limit / mine, '.0f'):>7}"
    same = "" if theirs["states"] == states else f" (AALpy: {theirs['states']} states!)"
    return f"{theirs['learn_cpu']:>10.2f} {theirs['peak_mb']:>5.0f} {theirs['learn_cpu'] / mine:>7.0f}{same}"


def _aalpy_version() -> str:
    from importlib.metadata import version
    return version("aalpy")


if __name__ == "__main__":
    main()
