#!/usr/bin/env python3
"""Benchmark: how much of ``stormcf strategy`` on a learned process model is loading the model (issue 20).

The model is ``process_mdp(N, seed 1)`` (``scripts/process_mdp.py``: the sizes of seed 000's MSSD models) written as
``stormcf learn`` writes PRISM: one module, one command per state and action guarded by ``s=<state>``, the outcome
labels and a "steps" reward structure. The command is ``stormcf strategy`` with a seeded random strategy, the bound
``P<=γ [F "negative"]`` at 80% of the strategy's probability and d∞ weights (0,0,1: the exact bisection, so that the
solve is the analysis, not a MILP), in a fresh process profiled with a CPU clock: CPU seconds of Storm's parsing,
Storm's build, the rest of loading (stormcf's extraction), and everything after loading (the analysis and its Storm
checks). The imports are not counted (a run on a 50-state model before; ``bench_scale.py`` states the import time).

    python scripts/bench_loading.py                  # N = 10000
    python scripts/bench_loading.py --states 5700 15000
    python scripts/bench_loading.py --quick          # N = 300 (seconds; the CI smoke test)

Storm's explicit builder evaluates the guard of every command in every state (one command per state here), so its
build grows with states x commands; the table says what of the command is Storm's and what is stormcf's.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import cpu_timers, machine, timed
from process_mdp import process_mdp  # noqa: E402


def prism_text(model) -> str:
    """The model as ``stormcf learn`` writes PRISM: one command per state and action."""
    P = model.transitions
    lines = ["mdp", "", "module learned", f"  s : [0..{model.n_states - 1}] init {model.initial_state};"]
    for s in range(model.n_states):
        for r in model.choices(s):
            updates = " + ".join(f"{float(P.data[k])!r} : (s'={int(P.indices[k])})"
                                 for k in range(P.indptr[r], P.indptr[r + 1]))
            lines.append(f"  [{model.action(r)}] s={s} -> {updates};")
    lines += ["endmodule", ""]
    lines += [f'label "{name}" = s={int(mask.nonzero()[0][0])};' for name, mask in model.labels.items()]
    used = sorted({model.action(r) for r in range(model.n_choices)})
    lines += ["", 'rewards "steps"'] + [f"  [{a}] true : 1;" for a in used] + ["endrewards"]
    return "\n".join(lines) + "\n"


def prepare(folder: Path, states: int) -> str:
    """The PRISM file, a random strategy on it, and the bound it violates."""
    import stormcf
    (folder / "process.prism").write_text(prism_text(process_mdp(states, seed=1)))
    model = stormcf.load_model(folder / "process.prism")
    sigma = stormcf.Strategy.random(model, seed=0)
    sigma.save(folder / "sigma.json")
    value = stormcf.check_strategy(sigma, 'P=? [F "negative"]').value
    return f'P<={0.8 * value:.4g} [F "negative"]'


def argv(folder: Path, bound: str) -> list[str]:
    return ["strategy", str(folder / "process.prism"), "-s", str(folder / "sigma.json"), "-p", bound, "-w", "0,0,1",
            "--json", str(folder / "out.json")]


def command(folder: Path, bound: str) -> dict:
    """``stormcf strategy`` in this (fresh) process with CPU timers around Storm's parsing and building and the
    whole loading, after a run of the same command on a 50-state model (its imports are not counted:
    ``import stormcf.cli`` imports an analysis when it first runs)."""
    import stormpy
    from stormcf.batch import ModelFile
    from stormcf.cli import main
    warm = folder / "warm-up"
    warm.mkdir()
    with contextlib.redirect_stdout(io.StringIO()):
        main(argv(warm, prepare(warm, 50)))
    targets = {"Storm parse": (stormpy, "parse_prism_program"), "Storm build": (stormpy, "build_model"),
               "load": (ModelFile, "load")}
    with timed() as whole, contextlib.redirect_stdout(io.StringIO()), cpu_timers(targets) as phases:
        code = main(argv(folder, bound))
    document = json.loads((folder / "out.json").read_text())
    return {"code": code, "wall": whole.wall, "cpu": whole.cpu, "load": whole.loads, "phases": phases,
            "status": document["status"], "model": document["model"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, nargs="+", default=[10_000])
    ap.add_argument("--quick", action="store_true", help="N = 300: a smoke test in seconds")
    ap.add_argument("--command", nargs=2, metavar=("FOLDER", "BOUND"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.command:
        print(json.dumps(command(Path(args.command[0]), args.command[1])))
        return
    print("stormcf strategy (d∞) on process models written as stormcf learn writes PRISM; CPU seconds (with the child "
          f"processes waited for), fresh process; {machine()}\n")
    print("| states | commands | transitions | status | command CPU (wall) | load | Storm parse | Storm build | "
          "stormcf extraction | after loading (analysis, Storm checks) | loading share of the command (CPU) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for states in ([300] if args.quick else args.states):
        with tempfile.TemporaryDirectory(prefix="bench-loading-") as tmp:
            bound = prepare(Path(tmp), states)
            done = subprocess.run([sys.executable, __file__, "--command", tmp, bound], check=True,
                                  capture_output=True, text=True)
            r = json.loads(done.stdout.splitlines()[-1])
        if r["code"] != 0:
            raise SystemExit(f"stormcf strategy failed with exit code {r['code']}")
        p, m = r["phases"], r["model"]
        extraction = p["load"] - p["Storm parse"] - p["Storm build"]
        print(f"| {m['states']:,} | {m['choices']:,} | {m['transitions']:,} | {r['status']} | {r['cpu']:.2f} s "
              f"({r['wall']:.2f} s) | {r['load']} | {p['Storm parse']:.2f} s | {p['Storm build']:.2f} s | "
              f"{extraction:.2f} s | "
              f"{r['cpu'] - p['load']:.2f} s | {p['load'] / r['cpu']:.0%} |")


if __name__ == "__main__":
    main()
