#!/usr/bin/env python3
"""Benchmark: k-change path explanations on a large PRISM model (the slippery grid with a progress reward).

Builds an N x N grid (N = 316: about 10^5 states) with Storm, samples a path of T steps under the uniform strategy,
and times each stage of ``explain_path`` for budget k: the counterfactual MDP (exact and Monte Carlo, only over the
(t, s) pairs reachable from the start through the counterfactual supports, every step of the path including the
last), Algorithm 2 for every k' <= k_max, sampling explanations, and Storm's re-check of the policy on the
time-unrolled (t, s, l) model (unrolling, building and checking). Every stage shows its CPU seconds (this process
and the child processes it waited for) and, beside, its wall seconds (``ExplanationResult.timings``); the load
average at the start and the end of the run is printed: the machine is shared, compare CPU seconds.

    python scripts/bench_explain.py                    # N = 316, T = 50, k = 5, k_max = 10
    python scripts/bench_explain.py --T 200 --k 10
    python scripts/bench_explain.py --quick            # N = 20, T = 5, k = 1 (seconds; the CI smoke test)
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import call, cpu_timers, load_average, machine

import stormcf
from stormcf.counterfactual_mdp import UnrolledModel
from stormcf.explain import ExplanationProblem, explain_path
from stormcf.explain import solve as stages
from stormcf.paths import simulate

GRID_WITH_PROGRESS = stormcf.example_path("grid.prism").read_text() + """
rewards "progress"
  true : x + y;
endrewards
"""
#: the stages of ``explain_path`` timed in CPU seconds: stage -> (owner, function)
STAGES = {"counterfactual MDP": (stages, "counterfactual_mdp"), "DP": (stages, "k_change_dp"),
          "explanations": (stages, "sample_paths"), "unroll": (stages, "unrolled_model"),
          "Storm check": (UnrolledModel, "policy_value")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=316)
    ap.add_argument("--T", type=int, default=50)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--k-max", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="N = 20, T = 5, k = 1, k_max = 2: a smoke test in seconds")
    args = ap.parse_args()
    if args.quick:
        args.N, args.T, args.k, args.k_max = 20, 5, 1, 2
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "grid_progress.prism"
        file.write_text(GRID_WITH_PROGRESS)
        model, loading = call(stormcf.load_model, file, constants=f"N={args.N}")
        print(f"grid N={args.N}: {model.n_states} states, {model.n_choices} choices, {model.n_transitions} "
              f"transitions; Storm build + extraction {loading}")
    path = simulate(model, stormcf.Strategy.uniform(model), args.T, seed=args.seed)
    for estimator in ("exact", "mc"):
        problem = ExplanationProblem(path, "progress", k=args.k, k_max=args.k_max, estimator=estimator)
        with cpu_timers(STAGES) as cpu:
            result, whole = call(explain_path, problem, explanations=1000)
        t = result.timings
        print(f"\nestimator {estimator}: o(τ) = {result.observed_outcome:g}, h(k={args.k}) = {result.value:.6g} "
              f"(Storm; agrees with the DP: {result.check('policy').agrees}), {result.cfmdp.n_pairs} reachable (t, s) "
              f"pairs, {result.cfmdp.n_rows} counterfactual rows; load {whole.loads}")
        print(f"  CPU s (wall s): counterfactual MDP {cpu['counterfactual MDP']:.3f} ({t['counterfactual_mdp']:.3f}) | "
              f"DP for k <= {args.k_max} {cpu['DP']:.3f} ({t['dp']:.3f}) | 1000 explanations "
              f"{cpu['explanations']:.3f} ({t['explanations']:.3f}) | Storm policy check (unroll, build, check) "
              f"{cpu['unroll'] + cpu['Storm check']:.3f} ({t['storm_policy_check']:.3f}) | total {whole.cpu:.3f} "
              f"({t['total']:.3f})")
    print(f"\nload average at the end {load_average():.2f}")


if __name__ == "__main__":
    main()
