"""Speed of the interval counterfactual MDP pipeline, with ratios side by side (a benchmark, not a test).

    python scripts/bench_icfmdp.py [--reference-instances DIR] [--reference-steps 10] [--mc-rows 500] [--grid 316]
    python scripts/bench_icfmdp.py --quick       # 1 reference step on 2% of the transitions, 5 Monte Carlo rows,
                                                 # grid N = 20, no repeats (the CI smoke test)

1. Bounds on Sepsis with the authors' 10-step path, for every transition at every step (``layers="all"``, what the
   authors compute): stormcf's vectorised closed forms in the default summation order of the sums in H (ascending
   successors) and in the authors' order (``summation="authors"``) side by side, with their speed ratio; the
   authors' order must reproduce a faithful per-transition reimplementation of the authors' algorithm bit for bit
   (loops over all transitions, supports recomputed per call, every lower bound recomputes the upper bounds of its
   row), the default order differs from it by rounding only (the largest difference is printed). The authors' own
   code took 29-47 s per path on the anchor machine. Also the default ICFMDP (only the (t, s) pairs the start
   reaches), which is what ``stormcf icfmdp`` builds.
2. A 100k-state model (prism_models/grid.prism, N=316: 99,856 states, 1.19M transitions) with a 20-step path:
   ICFMDP construction time and the memory of its bounds, for the default layers (the (t, s) pairs the start
   reaches) and for every state at every step (``layers="all"``: T x nnz x 2 floats), and robust value iteration.
3. Gumbel-max CFMDP: stormcf's exact probabilities vs 10,000-sample Monte Carlo (per (s, a) of one step), time and
   the Monte Carlo error against the exact values (the authors' MC: about 81,000 s per 10-step Sepsis path).
4. Robust value iteration vs Storm's robust model checking (R[C<=T], robust nature) on the same time-unrolled
   interval MDP (what ``storm_value`` checks; Storm's checking time alone, unrolling and building in Storm printed
   separately). Robust value iteration runs on the default ICFMDP (the (t, s) pairs the start reaches) and, for
   comparison, on every state at every step; the values at the start must agree.

Timings are wall-clock medians on whatever else the machine runs: compare the ratios printed side by side.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np

import stormcf
from stormcf.counterfactual_mdp import CounterfactualMDP, counterfactual_transitions, unroll
from stormcf.icfmdp import interval_cfmdp, mdp_from_arrays, path_from_arrays, robust_value_iteration
from stormcf.modes import Maximize, Pessimistic
from stormcf.paths import simulate

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference-instances"
SEPSIS_PATH = "lally_sepsis_repo_suboptimal.npz"
SEPSIS_SAMPLED = "lally_sepsis_sampled_seed0.npz"


#: runs per timing (median); 1 with --quick
REPEATS = 5


def median_time(run: Callable[[], object]) -> tuple[float, object]:
    """Median wall-clock seconds of :data:`REPEATS` runs, and the last run's result."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def bounds_megabytes(ic: CounterfactualMDP) -> tuple[float, float]:
    """(MB of the LB/UB arrays, MB of everything the steps store: bounds plus index arrays)."""
    bounds = sum(s.lower.nbytes + s.upper.nbytes for s in ic.steps)
    total = bounds + sum(a.nbytes for s in ic.steps for a in (s.states, s.groups, s.choices, s.change, s.indptr,
                                                               s.entries, s.successors, s.next_states))
    return bounds / 2**20, total / 2**20


def sepsis(folder: Path, file: str):
    d = np.load(folder / file, allow_pickle=False)
    model = mdp_from_arrays(d["P"], d["R"], initial_state=int(d["init_state"]))
    return d, model, path_from_arrays(model, d["obs_states"], d["obs_actions"], d["obs_next_states"])


# ---------------------------------------------------------------------------------------- per-transition reference
class PerTransitionBounds:
    """The authors' algorithm, transition by transition on a dense P[s, a, s'] (written from the paper's formulas
    and the structure of their implementation: supports as Python sets, upper bounds recomputed inside every lower
    bound). Only for the benchmark."""

    def __init__(self, P: np.ndarray, s_t: int, a_t: int, k: int) -> None:
        self.P, self.s_t, self.a_t, self.k = P, s_t, a_t, k
        self.q = P[s_t, a_t, k]

    def support(self, s, a):
        return set(np.nonzero(self.P[s, a, :])[0])

    def forbidden(self, s, a, x):
        o = self.P[self.s_t, self.a_t, x]
        return x != self.k and o > 0 and self.P[s, a, self.k] / self.q >= self.P[s, a, x] / o

    def overlap(self, s, a):
        return bool(self.support(self.s_t, self.a_t) & self.support(s, a))

    def upper(self, s, a, x):
        P, q, k = self.P, self.q, self.k
        if (s, a) == (self.s_t, self.a_t):
            return float(x == k)
        if not self.overlap(s, a):
            return min(P[s, a, x], q) / q
        if x == k:
            return 1.0 if q <= P[s, a, x] else P[s, a, x] / q
        if self.forbidden(s, a, x):
            return 0.0
        if x in self.support(self.s_t, self.a_t):
            return min(1 - P[s, a, k], P[s, a, x])
        return min(1 - P[s, a, k], P[s, a, x] / q)

    def lower(self, s, a, x):
        P, q, k = self.P, self.q, self.k
        if (s, a) == (self.s_t, self.a_t):
            return float(x == k)
        if not self.overlap(s, a):
            return (P[s, a, x] - (1 - q)) / q if P[s, a, x] > 1 - q else 0.0
        if x != k and self.forbidden(s, a, x):
            return 0.0
        others = self.support(s, a)
        others.discard(x)
        used = sum([P[s, a, y] - self.upper(s, a, y) * q for y in others])
        h = (P[s, a, x] - (1 - q - used)) / q
        return max(P[s, a, x], h) if x == k else max(0.0, h)

    def all(self, transitions):
        lb, ub = np.zeros(len(transitions)), np.zeros(len(transitions))
        for j, (s, a, x) in enumerate(transitions):
            u = min(1.0, max(0.0, self.upper(s, a, x)))
            l_ = min(1.0, max(0.0, self.lower(s, a, x)))
            lb[j], ub[j] = min(l_, u), u
        return lb, ub


def bench_bounds(folder: Path, steps: int, share: float = 1.0) -> None:
    """Section 1; the per-transition reference runs on the first ``share`` of the transitions (time extrapolated)."""
    d, model, path = sepsis(folder, SEPSIS_PATH)
    ascending, ic = median_time(lambda: interval_cfmdp(path, layers="all"))
    authors, ic_authors = median_time(lambda: interval_cfmdp(path, layers="all", summation="authors"))
    reachable, ic_default = median_time(lambda: interval_cfmdp(path))
    lower, upper = ic.aligned()
    lower_a, upper_a = ic_authors.aligned()
    transitions = [tuple(x) for x in d["trans_idx"]]
    m = max(1, int(share * len(transitions)))
    start = time.perf_counter()
    identical, deviation = True, 0.0
    for t in range(steps):
        s_t, k, a_t = (int(x) for x in d["path"][t][:3])
        lb, ub = PerTransitionBounds(d["P"], s_t, a_t, k).all(transitions[:m])
        identical &= np.array_equal(lb, lower_a[t][:m]) and np.array_equal(ub, upper_a[t][:m])
        deviation = max(deviation, np.abs(lb - lower[t][:m]).max(), np.abs(ub - upper[t][:m]).max())
    ref = (time.perf_counter() - start) * path.T / steps * len(transitions) / m
    extrapolated = f" (extrapolated from {steps} steps, {m} transitions)" if steps < path.T or m < len(transitions) \
        else ""
    print(f"1. Sepsis bounds, 10-step path, all {len(transitions)} transitions at every step "
          f"(layers='all'): stormcf ascending order {ascending:.3f} s | authors' order {authors:.3f} s | "
          f"ratio authors/ascending {authors / ascending:.2f}x")
    print(f"   per-transition reimplementation {ref:.1f} s{extrapolated} | ratio {ref / ascending:.0f}x (ascending), "
          f"{ref / authors:.0f}x (authors' order) | authors' order bit-identical to it: {identical} | ascending "
          f"order: max |difference| {deviation:.1e} | authors' code on the anchor: 29-47 s")
    print(f"   default ICFMDP (the (t, s) pairs the start reaches): {ic_default.n_pairs} pairs, "
          f"{ic_default.n_transitions} transitions (of {path.T * model.n_transitions}) in {reachable:.3f} s")


def bench_large(n: int) -> None:
    start = time.perf_counter()
    model = stormcf.load_model(stormcf.example_path("grid.prism"), constants=f"N={n}")
    build = time.perf_counter() - start
    path = simulate(model, stormcf.Strategy.uniform(model), 20, seed=1)
    print(f"2. grid N={n}: {model.n_states} states, {model.n_transitions} transitions (Storm build + extraction "
          f"{build:.1f} s), 20-step path")
    for layers in ("nominal", "all"):
        ic = interval_cfmdp(path, layers=layers)
        bounds, total = bounds_megabytes(ic)
        robust = robust_value_iteration(ic, "steps")
        what = "the (t, s) pairs the start reaches" if layers == "nominal" else "every state at every step"
        print(f"   layers={layers!r} ({what}): {ic.n_pairs} pairs, {ic.n_transitions} transitions; ICFMDP in "
              f"{ic.seconds:.2f} s (goal < 30 s); bounds {bounds:.1f} MB = transitions x 2 x 8 bytes "
              f"({total:.1f} MB with index arrays); robust VI {robust.seconds:.2f} s, value {robust.value():.6g}; "
              f"valid: {not ic.validity_violations()}")
        del ic, robust


def bench_gumbel(folder: Path, rows: int) -> None:
    d, model, _ = sepsis(folder, SEPSIS_PATH)
    s_t, k, a_t = (int(x) for x in d["path"][0][:3])
    observed = int(model.row_groups[s_t]) + a_t
    choices = np.random.default_rng(0).choice(model.n_choices, size=min(rows, model.n_choices), replace=False)
    start = time.perf_counter()
    exact = counterfactual_transitions(model, observed, k, choices=choices)
    t_exact = time.perf_counter() - start
    start = time.perf_counter()
    mc = counterfactual_transitions(model, observed, k, choices=choices, estimator="mc", samples=10_000)
    t_mc = time.perf_counter() - start
    err = np.abs((mc - exact).toarray()).max()
    exact_all = time.perf_counter()
    counterfactual_transitions(model, observed, k)
    exact_all = time.perf_counter() - exact_all
    print(f"3. Gumbel-max, Sepsis step 0, {choices.size} pairs: exact {t_exact:.3f} s | 10,000-sample MC {t_mc:.2f} s"
          f" | ratio {t_mc / t_exact:.0f}x | max |MC - exact| = {err:.4f} (4 standard errors of 10,000 samples: 0.02)"
          f" | exact for all {model.n_choices} pairs: {exact_all:.2f} s per step (authors' MC: ~8,100 s per step)")


def bench_vi(folder: Path) -> None:
    _, model, path = sepsis(folder, SEPSIS_SAMPLED)
    ic, ic_all = interval_cfmdp(path), interval_cfmdp(path, layers="all")
    ours, robust = median_time(lambda: robust_value_iteration(ic))
    ours_all, robust_all = median_time(lambda: robust_value_iteration(ic_all))
    unrolled = unroll(ic, model.step_rewards())             # what storm_value(ic) checks, timed by phase
    check = unrolled.optimum(Maximize, Pessimistic, expected=robust.value())
    checking = check.details["check_seconds"]
    print(f"4. robust VI on the Sepsis ICFMDP (T={path.T}): stormcf {ours:.4f} s on the {ic.n_pairs} (t, s) pairs "
          f"the start reaches | {ours_all:.3f} s on all {model.n_states} states x {path.T} steps | Storm robust "
          f"R[C<={path.T}] on the unrolled reachable part ({check.details['states']} states, "
          f"{check.details['transitions']} transitions): check {checking:.3f} s (+ unroll {unrolled.seconds:.2f} s, "
          f"Storm build {check.seconds - checking:.2f} s) | ratio Storm check / stormcf VI {checking / ours:.1f}x "
          f"(all states: {checking / ours_all:.1f}x) | values agree: {bool(check.agrees)} (Storm "
          f"{check.value:.10g}, stormcf {robust.value():.10g}, all states {robust_all.value():.10g})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-instances", type=Path, default=REFERENCE,
                        help="the seed authors' reference instances (default: tests/data/reference-instances)")
    parser.add_argument("--reference-steps", type=int, default=10,
                        help="steps the slow per-transition reference runs (its time is extrapolated to 10)")
    parser.add_argument("--mc-rows", type=int, default=500, help="pairs (s, a) for the Monte Carlo comparison")
    parser.add_argument("--grid", type=int, default=316, help="N of the large grid model (N x N states)")
    parser.add_argument("--quick", action="store_true", help="1 reference step, 5 Monte Carlo rows, grid N = 20: a "
                        "smoke test in seconds")
    args = parser.parse_args()
    global REPEATS
    if args.quick:
        args.reference_steps, args.mc_rows, args.grid, REPEATS = 1, 5, 20, 1
    print(f"stormcf icfmdp benchmark ({stormcf.storm.storm_version()}, {os.cpu_count()} CPUs)")
    bench_bounds(args.reference_instances, args.reference_steps, 0.02 if args.quick else 1.0)
    bench_large(args.grid)
    bench_gumbel(args.reference_instances, args.mc_rows)
    bench_vi(args.reference_instances)


if __name__ == "__main__":
    main()
