#!/usr/bin/env python3
"""Benchmark of counterfactual strategies in the setup of seed 000 (Section 5, Tables 1-2 and 6).

For every model: random initial strategies (Dirichlet(1) per state, seeded), γ in {0.0001, 0.1, 0.2, ..., 1}, and
for every instance the Storm pre-analysis (trivial / infeasible) and, for the non-trivial ones, the exact d∞
bisection (weights 0,0,1), the d0 MILP (1,0,0) and the mixed objective (1,1,1, ``--solver auto``) side by side.
Prints per model and method: mean/std/min/max time and the counts of optimal, suboptimal, infeasible, trivial,
timeout, and the encoded sizes before (the paper's encoding of the whole model) and after pruning. The row "pre"
is the Storm pre-analysis of every instance; its "opt" column counts the instances passed on to the solvers.

    python scripts/bench_counterfactual.py                              # all models, 10 strategies, 600 s limit
    python scripts/bench_counterfactual.py --models loan,process5700 --strategies 3 --time-limit 60

Models: loan (seed 000 Fig. 1), coin (stormpy's coin2-2.nm consensus, bad: finished and not agreed), slipgrid
(stormpy's slipgrid.nm, bad: "goal"), firewire (stormpy's firewire.nm delay=3, bad: "elected"), and the seeded
process-mining-like MDPs of scripts/process_mdp.py with 5.7k, 10k and 15k states (bad: "negative").
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import stormcf
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.counterfactual.analysis import preanalyse

sys.path.insert(0, str(Path(__file__).parent))
from process_mdp import process_mdp  # noqa: E402

GAMMAS = [0.0001] + [k / 10 for k in range(1, 11)]
METHODS = {"dinf": "0,0,1", "d0": "1,0,0", "mixed": "1,1,1"}


def stormpy_example(name: str) -> Path:
    from stormpy.examples.files import _path
    return Path(_path("mdp", name))


def models(names: list[str]):
    """(name, model, bad-outcome formula) for the requested models."""
    for name in names:
        if name == "loan":
            yield name, stormcf.load_model(stormcf.example_path("loan.prism")), '"rejected"'
        elif name == "coin":
            target = '"finished" & !"agree"'
            yield name, stormcf.load_model(stormpy_example("coin2-2.nm")), target
        elif name == "slipgrid":
            yield name, stormcf.load_model(stormpy_example("slipgrid.nm")), '"goal"'
        elif name == "firewire":
            yield name, stormcf.load_model(stormpy_example("firewire.nm"), constants="delay=3,fast=0.5"), '"elected"'
        elif name.startswith("process"):
            yield name, process_mdp(int(name[len("process"):]), seed=1), '"negative"'
        else:
            raise SystemExit(f"unknown model {name}")


def summary(times: list[float]) -> str:
    if not times:
        return "      -"
    std = statistics.pstdev(times) if len(times) > 1 else 0.0
    return f"{statistics.mean(times):7.2f} {std:7.2f} {min(times):7.2f} {max(times):7.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="loan,coin,slipgrid,firewire,process5700,process10000,process15000")
    ap.add_argument("--strategies", type=int, default=10)
    ap.add_argument("--time-limit", type=float, default=600.0, help="per solve (the mixed objective)")
    ap.add_argument("--methods", default="dinf,d0,mixed")
    args = ap.parse_args()
    methods = args.methods.split(",")
    print(f"{'model':14s} {'states':>7s} {'trans':>7s} {'method':8s} {'n':>4s} {'mean':>7s} {'std':>7s} {'min':>7s} "
          f"{'max':>7s}  opt sub inf triv t.o.  gap(max)")
    for name, model, target in models(args.models.split(",")):
        rows: dict[str, list] = defaultdict(list)
        sizes = None
        for seed in range(args.strategies):
            sigma = stormcf.Strategy.random(model, seed)
            for gamma in GAMMAS:
                prop = f"P<={gamma} [F {target}]"
                t0 = time.perf_counter()
                pre = preanalyse(CounterfactualProblem(sigma, prop))
                rows["storm"].append((time.perf_counter() - t0, pre.status or "solve", None))
                if pre.status is not None:
                    continue
                for method in methods:
                    t0 = time.perf_counter()
                    r = solve_counterfactual(CounterfactualProblem(sigma, prop, weights=METHODS[method]),
                                             time_limit=args.time_limit)
                    rows[method].append((time.perf_counter() - t0, r.status, r.gap))
                    if method == "mixed" and sizes is None and r.sizes.get("encoded"):
                        sizes = r.sizes
        degree = int(max(model.transitions[list(model.choices(s))].nnz for s in range(model.n_states)))
        for method in ["storm"] + methods:
            data = rows[method]
            times = [t for t, _, _ in data]
            count = lambda s: sum(1 for _, st, _ in data if st == s)   # noqa: E731
            gaps = [g for _, st, g in data if st == "suboptimal" and g is not None]
            label = "pre" if method == "storm" else method
            opt = count("optimal") if method != "storm" else count("solve")
            print(f"{name:14s} {model.n_states:7d} {model.n_transitions:7d} {label:8s} {len(data):4d} {summary(times)}"
                  f"  {opt:3d} {count('suboptimal'):3d} {count('infeasible'):3d} {count('trivial'):4d} "
                  f"{count('timeout'):4d}  {max(gaps) if gaps else 0:.3g}")
        if sizes:
            p, e, pr = sizes["paper"], sizes["encoded"], sizes["pruning"]
            print(f"{'':14s} max out-degree {degree}; encoded: {pr['maybe']} of {pr['states']} states, "
                  f"{e['variables']} variables / {e['constraints']} constraints / {e['bilinear_terms']} bilinear "
                  f"terms (paper's encoding of the whole model: {p['variables']} / {p['constraints']})")


if __name__ == "__main__":
    main()
