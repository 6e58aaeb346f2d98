#!/usr/bin/env python3
"""Benchmark of counterfactual strategies at the paper's largest sizes (seed 000, Section 5; issue 10, section 2).

For every instance (a model, a seeded random initial strategy σ, a bound γ that σ violates and some strategy meets)
it runs side by side, each with its own time limit for the whole solve:

- ``d∞``: weights 0,0,1 (the exact bisection),
- ``d0``: weights 1,0,0 (heuristics and the d0 MILP on HiGHS),
- ``mixed``: weights 1,1,1 (special cases, polish, MIQCQP),
- ``direct``: the paper's MIQCQP (1)-(13) encoded directly on the whole model (no pruning, no warm start, Bellman
  equalities), on SCIP (the Gurobi pip licence is far too small), as the paper did with Gurobi; its strategy is
  checked by Storm like every other,

and prints one row per run with the status, time, distance, proven lower bound and gap, plus a cross-check of every
``optimal`` claim against the strategies of the other runs of the same instance (a valid strategy closer than a
claimed optimum, or a claimed lower bound above a valid strategy, is reported as a failure):

    python scripts/bench_counterfactual.py                               # process models 5.7k-30k states
    python scripts/bench_counterfactual.py --models process5700 --strategies 2 --direct-limit 60
    python scripts/bench_counterfactual.py --models zeroconf,consensus4,resource-gathering
    python scripts/bench_counterfactual.py --quick          # the loan model, γ = 0.2, 10 s limits (the CI smoke test)

Models: ``process<N>`` (scripts/process_mdp.py, seed 1, bad outcome "negative"), ``loan``, and stormpy's ``coin``
(coin2-2.nm, bad: finished and not agreed), ``slipgrid`` (bad: "goal"), ``firewire`` (delay=3, bad: "elected"),
and the QVBS models of tests/data/qvbs: ``zeroconf`` (N=20, K=2, reset), ``consensus4`` (K=2), ``resource-gathering``
(B=200, 15 gold, 15 gems). Every solver runs on one thread. Each run shows its CPU seconds (this process and the
solver's child processes, e.g. SCIP's) with its wall seconds beside, and the load average at its start and end: the
time limits are wall-clock limits, so on a loaded machine a run gets less CPU within its limit (compare CPU seconds).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import stormcf
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.counterfactual.preanalysis import preanalyse
from stormcf.solvers import backend
from stormcf.counterfactual.programs import paper_program
from stormcf.distance import strategy_distance
from stormcf.storm import stormpy_example

sys.path.insert(0, str(Path(__file__).parent))
from _measure import load_average, machine, timed
from process_mdp import process_mdp  # noqa: E402

GAMMAS = [0.0001] + [k / 10 for k in range(1, 10)]
METHODS = {"d∞": "0,0,1", "d0": "1,0,0", "mixed": "1,1,1"}
QVBS = Path(__file__).parent.parent / "tests" / "data" / "qvbs"


def models(names: list[str]):
    """(name, model, bad-outcome formula) for the requested models."""
    for name in names:
        if name.startswith("process"):
            yield name, process_mdp(int(name[len("process"):]), seed=1), '"negative"'
        elif name == "loan":
            yield name, stormcf.load_model(stormcf.example_path("loan.prism")), '"rejected"'
        elif name == "coin":
            yield name, stormcf.load_model(stormpy_example("mdp", "coin2-2.nm")), '"finished" & !"agree"'
        elif name == "slipgrid":
            yield name, stormcf.load_model(stormpy_example("mdp", "slipgrid.nm")), '"goal"'
        elif name == "firewire":
            yield name, stormcf.load_model(stormpy_example("mdp", "firewire.nm"), constants="delay=3,fast=0.5"), \
                '"elected"'
        elif name == "zeroconf":
            yield name, stormcf.load_model(QVBS / "zeroconf.prism", constants="N=20,K=2,reset=true"), "(l=4 & ip=1)"
        elif name == "consensus4":
            yield name, stormcf.load_model(QVBS / "consensus.4.prism", constants="K=2"), '"finished" & !"agree"'
        elif name == "resource-gathering":
            yield name, stormcf.load_model(QVBS / "resource-gathering.pm",
                                           constants="B=200,GOLD_TO_COLLECT=15,GEM_TO_COLLECT=15"), "attacked"
        else:
            raise SystemExit(f"unknown model {name}")


def instances(model, target: str, strategies: int, gammas: list[float]):
    """(σ seed, σ, γ) for every γ of ``gammas`` that σ violates and some actionable strategy meets."""
    for seed in range(strategies):
        sigma = stormcf.Strategy.random(model, seed) if model.n_states > 100 else stormcf.Strategy.uniform(model)
        for gamma in gammas:
            pre = preanalyse(CounterfactualProblem(sigma, f"P<={gamma} [F {target}]"))
            if pre.status is None:
                yield seed, sigma, gamma


def direct(problem: CounterfactualProblem, limit: float) -> dict:
    """The paper's direct encoding on SCIP; the strategy (if any) checked by Storm."""
    with timed() as timing:
        program = paper_program(problem, float(problem.bound))
        out = backend("scip").solve(program.formulation, limit)
    row = {"status": out.status, "time": timing.wall, "cpu": timing.cpu, "load": timing.loads, "d": None,
           "lower": out.bound, "gap": out.gap, "strategy": None, "note": out.note, "sizes": program.formulation.sizes()}
    if out.x is not None:
        m = problem.model
        p = np.clip(out.x[program.x_rows], 0.0, 1.0)
        p /= np.bincount(m.state_of_choice, weights=p, minlength=m.n_states)[m.state_of_choice]
        strategy = stormcf.Strategy(m, p)
        check = stormcf.check_strategy(strategy, problem.property)
        row["d"] = strategy_distance(problem.strategy, strategy).weighted(problem.weights)
        row["valid"] = bool(check.holds)
        row["strategy"] = strategy if check.holds else None
        if not check.holds:
            row["status"] += " (Storm rejects its strategy)"
    return row


def ours(problem: CounterfactualProblem, limit: float) -> dict:
    """stormcf's solve: its status, wall seconds (``time``), CPU seconds, load, distance, lower bound and gap."""
    with timed() as timing:
        r = solve_counterfactual(problem, time_limit=limit)
    return {"status": r.status, "time": timing.wall, "cpu": timing.cpu, "load": timing.loads, "d": r.weighted_distance,
            "lower": r.distance_lower_bound, "gap": r.gap, "strategy": r.strategy, "result": r,
            "note": "; ".join(r.notes)}


def cross_check(runs: dict, sigma: stormcf.Strategy, n_decision: int) -> dict[str, str]:
    """Every optimal claim and every lower bound against every valid strategy of the instance."""
    valid = {k: strategy_distance(sigma, r["strategy"]) for k, r in runs.items() if r.get("strategy") is not None}
    verdicts = {}
    for k, r in runs.items():
        problems = []
        weights = tuple(float(w) for w in METHODS.get(k, "1,1,1").split(","))
        for other, d in valid.items():
            value = d.weighted(*weights)
            if r["lower"] is not None and r["lower"] > value * (1 + 1e-6) + 1e-9:
                problems.append(f"lower bound {r['lower']:.6g} > {other}'s {value:.6g}")
            if r["status"] == "optimal" and r["d"] is not None and value < r["d"] * (1 - 1e-4) - 1e-9:
                problems.append(f"{other} is closer ({value:.6g} < {r['d']:.6g})")
        if k == "mixed" and r["status"] == "optimal":
            if runs["d0"]["status"] == "optimal" and runs["d∞"]["status"] == "optimal":
                floor = runs["d0"]["d"] + runs["d∞"]["d"] * (1 + 1 / n_decision)
                if r["d"] < floor - 1e-6:
                    problems.append(f"below d0* + d∞*(1 + 1/|S|) = {floor:.6g}")
        verdicts[k] = "ok" if not problems else "FAILED: " + "; ".join(problems)
    return verdicts


def fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="process5700,process10000,process15000,process30000")
    ap.add_argument("--strategies", type=int, default=1, help="random initial strategies per model (seeds 0..)")
    ap.add_argument("--gammas", default=",".join(map(str, GAMMAS)), help="bounds γ to try (the non-trivial ones run)")
    ap.add_argument("--dinf-limit", type=float, default=60.0)
    ap.add_argument("--d0-limit", type=float, default=300.0)
    ap.add_argument("--mixed-limit", type=float, default=120.0)
    ap.add_argument("--direct-limit", type=float, default=120.0, help="the paper's direct encoding (0: skip)")
    ap.add_argument("--quick", action="store_true", help="the loan model, γ = 0.2, 10 s limits: a smoke test")
    args = ap.parse_args()
    if args.quick:
        args.models, args.gammas = "loan", "0.2"
        args.dinf_limit = args.d0_limit = args.mixed_limit = args.direct_limit = 10.0
    limits = {"d∞": args.dinf_limit, "d0": args.d0_limit, "mixed": args.mixed_limit}
    print(f"machine: {machine()}; one solver thread")
    print(f"{'model':18s} {'states':>7s} {'trans':>7s} {'σ':>2s} {'γ':>6s} {'method':7s} {'status':24s} {'CPU s':>7s} "
          f"{'wall s':>7s} {'load':>9s} {'d':>10s} {'lower':>10s} {'gap':>8s}  cross-check")
    for name, model, target in models(args.models.split(",")):
        n_decision = int(model.decision_states.sum())
        for seed, sigma, gamma in instances(model, target, args.strategies, [float(g) for g in args.gammas.split(",")]):
            prop = f"P<={gamma} [F {target}]"
            runs = {k: ours(CounterfactualProblem(sigma, prop, weights=w), limits[k]) for k, w in METHODS.items()}
            if args.direct_limit > 0:
                runs["direct"] = direct(CounterfactualProblem(sigma, prop), args.direct_limit)
            verdicts = cross_check(runs, sigma, n_decision)
            for k, r in runs.items():
                print(f"{name:18s} {model.n_states:7d} {model.n_transitions:7d} {seed:2d} {gamma:6.4g} {k:7s} "
                      f"{r['status']:24s} {r['cpu']:7.1f} {r['time']:7.1f} {r['load']:>9s} {fmt(r['d'], '10.6g')} "
                      f"{fmt(r['lower'], '10.6g')} "
                      f"{fmt(r['gap'], '8.2g')}  {verdicts[k]}", flush=True)
        print(f"{'':18s} load average now {load_average():.2f}", flush=True)


if __name__ == "__main__":
    main()
