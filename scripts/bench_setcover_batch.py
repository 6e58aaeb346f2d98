#!/usr/bin/env python3
"""Benchmark: ``stormcf setcover INSTANCE --agents AGENTS.jsonl`` against the engine alone and one family check
(issue 20: the whole command should cost about the engine's time per agent plus one Storm call on the family).

The instance is the paper's distribution (``setcover.data.paper_instance``: n features, 100 actions, seed 0), the
agents ``agent_pool(instance, draws, 0.68, seed 1)`` (negatives, de-duplicated). Side by side, CPU seconds in fresh
processes (with the child processes they waited for: Storm's isolated checks), wall seconds beside, and the load
average at the start and the end of the run:

- the command (``stormcf.cli.main`` in a child process, after a warm-up run of it on two agents, so that its imports
  are not counted): engines, Storm's certificates, JSON lines;
- the engine alone (``run_engine`` on every agent in another process): the per-agent cost nobody can avoid;
- the certified solves in that process (``solve_setcovers``: the engines, then Storm's Rmin on the agents' projected
  MDPs side by side and the plans' DTMCs side by side; before issue 20, ``solve_setcover`` per agent): their CPU
  seconds beyond the engine are the certificates', and the number of Storm calls is counted;
- for reference, the whole-family labelling of ``setcover-data`` (``label_agents(..., "storm")``: one MDP over the
  union of the agents' state spaces, one Storm call; "refused" beyond its state limit).

The command's peak RSS (the child's ``ru_maxrss``) and the load average before and after are printed too, and the
ratio of the command's CPU per agent to the engine's (issue 34: at most 3x). Each document's certificate is shown
for the first agent.

    python scripts/bench_setcover_batch.py                     # n = 50, 50 agents
    python scripts/bench_setcover_batch.py --n 20 --agents 200
    python scripts/bench_setcover_batch.py --quick             # n = 12, 5 agents (seconds; the CI smoke test)
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import cpu_seconds, load_average, machine, timed


def write_inputs(folder: Path, n: int, agents: int) -> tuple[Path, Path]:
    from stormcf.setcover.data import agent_pool, paper_instance
    instance = paper_instance(n, seed=0)
    X = agent_pool(instance, agents, 0.68, 1)
    (folder / "instance.json").write_text(json.dumps(instance.to_dict()))
    (folder / "agents.jsonl").write_text("".join(json.dumps(x) + "\n" for x in X.tolist()))
    return folder / "instance.json", folder / "agents.jsonl"


def command(instance: str, agents: str, out: str) -> dict:
    """The whole command in this (fresh) process, after a run on the first two agents."""
    import contextlib
    import io
    from stormcf.cli import main
    warm = Path(out).with_name("warm-up.jsonl")
    warm.write_text("".join(Path(agents).read_text().splitlines(keepends=True)[:2]))
    with contextlib.redirect_stdout(io.StringIO()):
        main(["setcover", instance, "--agents", str(warm)])
    with timed() as timing, contextlib.redirect_stdout(io.StringIO()):
        code = main(["setcover", instance, "--agents", agents, "--json", out])
    return {"code": code, "wall": timing.wall, "cpu": timing.cpu,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20}


def engine_and_family(instance: str, agents: str) -> dict:
    """In this (fresh) process: the engine on every agent; the certified solves (engine and Storm's certificates,
    counting Storm's calls); the whole-family labelling."""
    import numpy as np
    from stormcf import storm
    from stormcf.setcover import SetCoverInstance, SetCoverProblem, run_engine, solve_setcover
    from stormcf.errors import SolverError
    from stormcf.setcover import solve as solve_module
    from stormcf.setcover.family import label_agents
    inst = SetCoverInstance.load(instance)
    X = np.array([json.loads(line) for line in Path(agents).read_text().splitlines()])
    problems = [SetCoverProblem(inst, x) for x in X]
    per_agent = []
    with timed() as engine:
        for problem in problems:
            cpu = cpu_seconds()
            run_engine(problem, "bnb")
            per_agent.append(cpu_seconds() - cpu)
    calls, check = [], storm.check
    storm.check = lambda *args, **kwargs: calls.append(1) or check(*args, **kwargs)
    with timed() as certified:
        if hasattr(solve_module, "solve_setcovers"):          # one certificate for the batch (issue 20)
            solve_module.solve_setcovers(problems)
        else:                                                   # one certificate per agent (before)
            for problem in problems:
                solve_setcover(problem)
    storm.check = check
    facts = {"engine": per_agent, "engine_wall": engine.wall, "certified": certified.cpu,
             "certified_wall": certified.wall, "storm_calls": len(calls), "family": None}
    try:
        with timed() as family:
            labels = label_agents(inst, X, "storm")
    except SolverError:                                     # beyond the family's state limit
        return facts
    return {**facts, "family": family.cpu, "family_wall": family.wall, "family_states": labels.states,
            "family_choices": labels.choices}


def child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50, help="features (default 50)")
    ap.add_argument("--agents", type=int, default=50, help="agents drawn (default 50; negatives kept)")
    ap.add_argument("--quick", action="store_true", help="n = 12, 5 agents: a smoke test in seconds")
    ap.add_argument("--command", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--engine", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.command:
        print(json.dumps(command(*args.command)))
        return
    if args.engine:
        print(json.dumps(engine_and_family(*args.engine)))
        return
    n, count = (12, 5) if args.quick else (args.n, args.agents)
    start = machine()
    with tempfile.TemporaryDirectory(prefix="bench-setcover-") as tmp:
        instance, agents = write_inputs(Path(tmp), n, count)
        out = Path(tmp) / "out.jsonl"
        run = child("--command", str(instance), str(agents), str(out))
        documents = [json.loads(line) for line in out.read_text().splitlines()]
        alone = child("--engine", str(instance), str(agents))
    k = len(documents)
    engine = sum(alone["engine"])
    checks = [d["timings"].get("check", 0.0) for d in documents]
    print(f"setcover, paper instance n = {n} (100 actions), {k} agents, engine bnb; CPU seconds (wall), fresh "
          f"processes; at the start {start}, at the end load average {load_average():.2f}\n")
    certificate = alone["certified"] - engine
    print("| agents | engine alone: all agents (per agent median / max) | certified solves: engine and Storm's "
          "certificates | of which certificates | Storm calls | the command: CPU (wall), peak RSS | per agent | "
          "command / engine | whole-family labelling for reference (states, choices) |")
    print("|---|---|---|---|---|---|---|---|---|")
    family = ("refused (state limit)" if alone["family"] is None else
              f"{alone['family']:.2f} s ({alone['family_wall']:.2f} s; {alone['family_states']:,}, "
              f"{alone['family_choices']:,})")
    print(f"| {k} | {engine:.2f} s ({alone['engine_wall']:.2f} s; CPU per agent "
          f"{1e3 * statistics.median(alone['engine']):.1f} / {1e3 * max(alone['engine']):.1f} ms) | "
          f"{alone['certified']:.2f} s ({alone['certified_wall']:.2f} s) | {certificate:.2f} s | "
          f"{alone['storm_calls']} | {run['cpu']:.2f} s ({run['wall']:.2f} s), {run['peak_gb']:.2f} GB | "
          f"{1e3 * run['cpu'] / k:.1f} ms | {run['cpu'] / engine:.1f}x | {family} |")
    print(f"\nthe certificate's share in each document (wall): median {1e3 * statistics.median(checks):.1f} ms, "
          f"max {1e3 * max(checks):.1f} ms")
    first = next((d for d in documents if d["checks"]), None)
    if first is not None:
        print("\ncertificate of the first agent: " + "; ".join(
            f"{c['property']} = {c['value']:.6g} on the {c['subject']}" for c in first["checks"]))
    if run["code"] != 0 or any(d["status"] not in ("optimal", "trivial", "infeasible") for d in documents):
        raise SystemExit(f"the command failed (exit code {run['code']}) or an agent has no certified optimum")


if __name__ == "__main__":
    main()
