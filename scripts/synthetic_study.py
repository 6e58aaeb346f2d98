"""The synthetic study of Tsirtsis et al. (NeurIPS 2021, §5) with stormcf, next to the numbers of the seed-001 notes
§3.6.

n = 20 states, m = 10 actions, T = 20, R(s, a) = s, α in {0, .01, .05, .1, .4, .5, 1}; 10 MDPs (param seeds 1..10)
x 50 episodes (ids 0..49) per α, generated with the authors' random draws (stormcf.explain.synthetic) and written as
PRISM files that Storm builds. Per episode: the exact counterfactual MDP, Algorithm 2 for all k <= 20 in one run,
100 sampled explanations per k for the unique-explanation counts. A subset of episodes also runs the Monte Carlo
estimator (d = 1000, as the paper) and Storm's re-check of the policy for k in {2, 5, 10}.

    python scripts/synthetic_study.py            # everything (about 5-10 minutes on one core)
    python scripts/synthetic_study.py --quick    # α = 0.1, 0.4: 1 MDP x 2 episodes, 20 MC samples (CI smoke test)
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

import stormcf
from stormcf.counterfactual_mdp import sample_paths
from stormcf.errors import StateError
from stormcf.explain import ExplanationProblem, counterfactual_mdp, k_change_dp, summarize, unrolled_model
from stormcf.modes import Nature
from stormcf.report import write_text
from stormcf.explain.synthetic import bellman_policy, path_dict, synthetic_episode, synthetic_prism, \
    synthetic_transitions

N, M, T = 20, 10, 20
ALPHAS = (0.0, 0.01, 0.05, 0.1, 0.4, 0.5, 1.0)
KS = (1, 2, 3, 5, 10, 20)
UNIQUE_KS = (1, 2, 3, 4, 5, 6, 8, 10)

# the seed-001 notes §3.6 (the authors' procedure, Monte Carlo d = 1000), for comparison
NOTES_IMPROVEMENT = {  # mean relative improvement in %, k = 1, 2, 3, 5, 10, 20
    0.0: (0.87, 2.15, 2.75, 3.19, 3.37, 3.42), 0.01: (0.79, 2.32, 3.36, 4.66, 5.67, 5.82),
    0.05: (1.35, 2.98, 4.25, 6.19, 8.45, 8.83), 0.1: (1.79, 3.51, 4.84, 6.91, 9.46, 9.97),
    0.4: (2.75, 4.67, 6.11, 8.22, 10.77, 11.28), 0.5: (2.81, 4.80, 6.29, 8.44, 10.96, 11.42),
    1.0: (2.89, 4.97, 6.51, 8.65, 11.00, 11.43)}
NOTES_OUTCOME = {  # mean o(τ), then mean h for k = 1, 2, 3, 5, 10, 20
    0.0: (342.82, 345.70, 350.03, 352.01, 353.50, 354.09, 354.24),
    0.01: (326.11, 328.57, 333.41, 336.71, 340.79, 343.85, 344.31),
    0.05: (289.76, 293.45, 298.03, 301.58, 306.99, 313.18, 314.19),
    0.1: (267.58, 272.10, 276.55, 279.99, 285.32, 291.80, 293.04),
    0.4: (225.82, 231.75, 235.92, 239.05, 243.61, 249.05, 250.09),
    0.5: (221.72, 227.70, 231.96, 235.14, 239.71, 244.99, 245.91),
    1.0: (215.50, 221.48, 225.76, 228.94, 233.35, 238.11, 238.93)}
NOTES_UNIQUE = {  # mean number of unique explanations (100 samples), k = 1, 2, 3, 4, 5, 6, 8, 10
    0.0: (0.4, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7), 0.01: (0.6, 4.9, 8.6, 12.1, 15.2, 17.9, 21.2, 23.3),
    0.05: (0.9, 8.2, 18.4, 29.4, 40.1, 49.4, 62.6, 69.6), 0.1: (0.9, 9.0, 21.4, 36.7, 51.8, 64.1, 79.5, 85.5),
    0.4: (1.0, 7.5, 20.6, 42.6, 65.5, 81.9, 94.1, 96.1), 0.5: (1.0, 7.3, 19.7, 41.9, 65.2, 82.9, 95.0, 96.8),
    1.0: (1.0, 5.9, 17.5, 38.3, 62.8, 81.6, 95.1, 96.8)}
NOTES_DISTRIBUTION = {  # (α, k): median, p10, p90, max, fraction > 0 of the relative improvement in %
    (0.4, 2): (4.50, 1.72, 7.62, 12.65, 0.998), (0.4, 5): (8.02, 3.30, 12.84, 21.07, 1.000),
    (0.4, 10): (10.37, 4.07, 17.30, 28.37, 1.000), (0.1, 2): (3.27, 1.07, 6.39, 11.84, 0.976),
    (0.1, 5): (6.58, 2.49, 11.66, 22.48, 0.994), (0.1, 10): (9.12, 3.16, 15.90, 33.65, 0.994)}
AUTHORS_SPEED = ("authors' code: counterfactual MDP 62 s/episode (paper), 23-27 s on the anchor machine; maximize "
                 "k=0..20: 8-15 s")


class Models:
    """The PRISM files of one synthetic MDP, built by Storm once per initial state that is needed."""

    def __init__(self, folder: Path, P: np.ndarray, name: str) -> None:
        self.folder, self.P, self.name, self.built = folder, P, name, {}

    def model_for(self, states: np.ndarray) -> stormcf.ExplicitModel:
        model = self.get(0)                                   # α > 0: every state is reachable from s = 0
        try:
            for s in set(states.tolist()):
                model.state_index({"s": int(s)})
            return model
        except StateError:
            return self.get(int(states[0]))                   # α = 0: build from the episode's start

    def get(self, initial: int) -> stormcf.ExplicitModel:
        if initial not in self.built:
            file = self.folder / f"{self.name}_init{initial}.prism"
            file.write_text(synthetic_prism(self.P, initial))
            self.built[initial] = stormcf.load_model(file)
        return self.built[initial]


def run_episode(model, states, actions, estimator: str, unique: bool, storm: bool, seed: int,
                samples: int = 1000) -> dict:
    path = stormcf.ObservedPath.from_dict(model, path_dict(states, actions))
    problem = ExplanationProblem(path, "r", k=20, k_max=20, estimator=estimator, samples=samples, seed=seed)
    cf = counterfactual_mdp(problem)
    policy = k_change_dp(problem, cf)
    out = {"o": problem.observed_outcome, "h": [policy.value(k) for k in range(21)],
           "cf_seconds": cf.seconds, "dp_seconds": policy.seconds}
    if unique:
        out["unique"] = [len(summarize(sample_paths(cf, policy, 100, np.random.default_rng(seed), k)).explanations)
                         for k in UNIQUE_KS]
    if storm:
        tick = time.perf_counter()
        checks = {k: unrolled_model(problem, cf, k).policy_value(policy.weight_function(), problem.optimization,
                                                                 Nature.PESSIMISTIC, expected=policy.value(k))
                  for k in (2, 5, 10)}
        out["storm"] = {k: check.value for k, check in checks.items()}
        out["storm_agrees"] = all(check.agrees for check in checks.values())
        out["storm_seconds"] = time.perf_counter() - tick
    return out


def authors_mc_values(P: np.ndarray, states: np.ndarray, actions: np.ndarray, K: int = 20, d: int = 1000) -> np.ndarray:
    """h(s0, T, k), k <= K, with the authors' Monte Carlo estimator replayed (notes §2.1-2.2): at every step the
    same d posterior samples, sample i drawn by ``default_rng(i)`` for i = 1..d (top Gumbel, then one truncated draw
    per other successor), shared by all (s, a); then a dense Algorithm 2 (ties keep the observed action)."""
    m, n, _ = P.shape
    T = len(states)
    logP = np.log(P)
    rows = np.zeros((T - 1, m, n, n))
    for t in range(T - 1):
        p, k = P[actions[t], states[t]], int(states[t + 1])
        draws = np.array([np.random.default_rng(i).gumbel(size=n) for i in range(1, d + 1)])
        top = draws[:, :1] + np.log(p.sum())
        others = np.delete(np.arange(n), k)
        U = np.empty((d, n))
        U[:, k] = top[:, 0] - np.log(p[k])
        g = draws[:, 1:] + np.log(p[others])
        U[:, others] = -np.log(np.exp(-g) + np.exp(-top)) - np.log(p[others])
        winner = np.argmax(logP[None] + U[:, None, None, :], axis=3)          # (d, m, n)
        for a in range(m):
            for s in range(n):
                rows[t, a, s] = np.bincount(winner[:, a, s], minlength=n) / d
    R = np.arange(n, dtype=float)
    H = np.zeros((n, K + 1))
    for t in reversed(range(T)):
        q = R[None, :, None] + (np.einsum("asj,jc->asc", rows[t], H) if t < T - 1 else np.zeros((m, n, K + 1)))
        keep = q[actions[t]]
        alt = np.delete(q, actions[t], axis=0).max(axis=0)
        new = keep.copy()
        new[:, 1:] = np.where(alt[:, :-1] > keep[:, 1:] + 1e-12 * np.maximum(1, np.abs(keep[:, 1:])),
                              alt[:, :-1], keep[:, 1:])
        H = new
    return H[states[0]]


def study(args) -> dict:
    seeds = range(1, 2) if args.quick else range(1, 11)
    episodes = range(2) if args.quick else range(50)
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.prism_dir) if args.prism_dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for alpha in (0.1, 0.4) if args.quick else ALPHAS:
            tick = time.perf_counter()
            rows = []
            for ps in seeds:
                P = synthetic_transitions(N, M, alpha, ps)
                pi = bellman_policy(P, np.repeat(np.arange(N)[:, None], M, axis=1), T)
                models = Models(folder, P, f"synth_a{alpha}_ps{ps}")
                for ep in episodes:
                    states, actions = synthetic_episode(P, pi, T, ep)
                    model = models.model_for(states)
                    row = run_episode(model, states, actions, "exact", True, ep < args.storm_episodes, ep)
                    if ep < args.mc_episodes:
                        row["mc"] = run_episode(model, states, actions, "mc", False, False, ep,
                                                samples=20 if args.quick else 1000)
                    if ep < args.authors_mc_episodes and alpha in (0.1, 0.4):
                        row["authors_mc"] = authors_mc_values(P, states, actions).tolist()
                    rows.append(row)
            results[alpha] = rows
            print(f"  α = {alpha}: {len(rows)} episodes in {time.perf_counter() - tick:.1f} s", flush=True)
    return results


def report(results: dict) -> None:
    print("\nMean relative improvement 100·(h(s0,T,k) - o(τ))/o(τ) in %: stormcf exact | notes §3.6 (MC, d = 1000)")
    print("alpha  " + "".join(f"{'k=' + str(k):>16}" for k in KS))
    for alpha, rows in results.items():
        rel = _relative(rows)
        print(f"{alpha:<6} " + "".join(f"{rel[:, k].mean():>8.2f} |{n:>6.2f}"
                                       for k, n in zip(KS, NOTES_IMPROVEMENT[alpha])))
    print("\nMean o(τ) and mean h(s0,T,k): stormcf exact | notes")
    print("alpha  " + f"{'o(τ)':>17}" + "".join(f"{'k=' + str(k):>19}" for k in KS))
    for alpha, rows in results.items():
        o = np.mean([r["o"] for r in rows])
        h = np.array([r["h"] for r in rows]).mean(axis=0)
        cells = [(o, NOTES_OUTCOME[alpha][0])] + [(h[k], n) for k, n in zip(KS, NOTES_OUTCOME[alpha][1:])]
        print(f"{alpha:<6} " + "".join(f"{a:>9.2f} |{b:>7.2f}" for a, b in cells))
    print("\nRelative improvement distribution (median, p10, p90, max, fraction > 0): stormcf | notes")
    for (alpha, k), notes in NOTES_DISTRIBUTION.items():
        if alpha in results:
            r = _relative(results[alpha])[:, k]
            ours = (np.median(r), np.percentile(r, 10), np.percentile(r, 90), r.max(), np.mean(r > 1e-9))
            print(f"α={alpha} k={k:<3} " + "  ".join(f"{a:6.2f}|{b:6.2f}" if i < 4 else f"{a:5.3f}|{b:5.3f}"
                                                 for i, (a, b) in enumerate(zip(ours, notes))))
    print("\nMean number of unique explanations (100 sampled paths, observed sequence excluded): stormcf | notes")
    print("alpha  " + "".join(f"{'k=' + str(k):>14}" for k in UNIQUE_KS))
    for alpha, rows in results.items():
        u = np.array([r["unique"] for r in rows]).mean(axis=0)
        print(f"{alpha:<6} " + "".join(f"{a:>7.1f} |{b:>5.1f}" for a, b in zip(u, NOTES_UNIQUE[alpha])))
    _report_mc_and_storm(results)
    _report_speed(results)


def _relative(rows) -> np.ndarray:
    return np.array([100 * (np.array(r["h"]) - r["o"]) / abs(r["o"]) if r["o"] else np.zeros(21) for r in rows])


def _report_mc_and_storm(results: dict) -> None:
    print("\nMonte Carlo estimator (d = 1000) vs exact on the same episodes: mean of h_MC - h_exact, and max |.|")
    for alpha, rows in results.items():
        pairs = [(np.array(r["mc"]["h"]), np.array(r["h"])) for r in rows if "mc" in r]
        if pairs:
            d = np.array([a - b for a, b in pairs])
            print(f"  α = {alpha:<5} ({len(pairs)} episodes): k=2 {d[:, 2].mean():+.3f} "
                  f"(max {np.abs(d[:, 2]).max():.3f})"
                  f"   k=10 {d[:, 10].mean():+.3f} (max {np.abs(d[:, 10]).max():.3f})"
                  f"   k=20 {d[:, 20].mean():+.3f} (max {np.abs(d[:, 20]).max():.3f})")
    for alpha, rows in results.items():
        pairs = [(np.array(r["authors_mc"]), np.array(r["h"])) for r in rows if "authors_mc" in r]
        if pairs:
            d = np.array([a - b for a, b in pairs])
            print(f"  authors' estimator replayed (shared samples, seeds 1..1000 at every step), α = {alpha} "
                  f"({len(pairs)} episodes): h_authors - h_exact: k=2 {d[:, 2].mean():+.3f}  "
                  f"k=10 {d[:, 10].mean():+.3f}"
                  f"  k=20 {d[:, 20].mean():+.3f}")
    gaps = [abs(v - r["h"][int(k)]) / max(1.0, abs(r["h"][int(k)]))
            for rows in results.values() for r in rows for k, v in r.get("storm", {}).items()]
    if gaps:
        agree = all(r["storm_agrees"] for rows in results.values() for r in rows if "storm" in r)
        print(f"\nStorm re-check of the policy (DTMC induced on the time-unrolled (t, s, l) model), k in {{2, 5, 10}}: "
              f"{len(gaps)} values, largest relative difference to the DP {max(gaps):.2e}; all within stormcf's "
              f"tolerance (1e-8): {agree}")


def _report_speed(results: dict) -> None:
    rows = [r for rs in results.values() for r in rs]
    mc = [r["mc"]["cf_seconds"] for r in rows if "mc" in r]
    storm = [r["storm_seconds"] for r in rows if "storm_seconds" in r]
    print("\nSpeed per episode (n = 20, m = 10, T = 20; mean over episodes, one core):")
    print(f"  counterfactual MDP, exact estimator:        {np.mean([r['cf_seconds'] for r in rows]):.3f} s")
    if mc:
        print(f"  counterfactual MDP, Monte Carlo d = 1000:   {np.mean(mc):.3f} s")
    print(f"  Algorithm 2 for all k <= 20 (one run):      {np.mean([r['dp_seconds'] for r in rows]) * 1000:.2f} ms")
    if storm:
        print(f"  Storm re-check of 3 policies (k = 2, 5, 10): {np.mean(storm):.3f} s")
    print(f"  ({AUTHORS_SPEED})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="α = 0.1 and 0.4 only, 1 MDP x 2 episodes, 20 Monte "
                        "Carlo samples: a smoke test in seconds")
    parser.add_argument("--mc-episodes", type=int, default=1,
                        help="episodes per MDP that also run the Monte Carlo estimator (default 1)")
    parser.add_argument("--storm-episodes", type=int, default=1,
                        help="episodes per MDP whose policies Storm re-checks for k = 2, 5, 10 (default 1)")
    parser.add_argument("--authors-mc-episodes", type=int, default=0,
                        help="episodes per MDP (α = 0.1 and 0.4) that also replay the authors' Monte Carlo estimator")
    parser.add_argument("--prism-dir", default=None, help="keep the generated PRISM files here")
    parser.add_argument("--json", default=None, help="write all per-episode numbers to this file")
    args = parser.parse_args()
    print(f"synthetic study: n={N}, m={M}, T={T}, α in {ALPHAS}" + (" (quick)" if args.quick else ""))
    results = study(args)
    report(results)
    if args.json:
        write_text(json.dumps({str(a): rows for a, rows in results.items()}, default=float), args.json)


if __name__ == "__main__":
    main()
