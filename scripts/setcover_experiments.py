"""Seed 003 (Naggita, Walter, Blum) reproduction and speed: labelling, exact engines, Table 2 at n = 20.

    python scripts/setcover_experiments.py labelling        # the paper's n = 20 data set, one Storm call (goal < 60 s)
    python scripts/setcover_experiments.py engines          # exact engines side by side at n = 20 / 50 / 100
    python scripts/setcover_experiments.py table2 [--epochs 200]   # MC / NA / FA / Hamming on n = 20 "all"

Timings are wall-clock on a shared 2-core machine: compare the ratios printed side by side in one run.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from stormcf.setcover import SetCoverProblem, run_engine
from stormcf.setcover.data import agent_pool, generate, paper_instance, split
from stormcf.setcover.family import label_agents
from stormcf.setcover.learn import evaluate, train

PAPER_SIZES = {20: (33.3, 63.1, 3.6), 50: (1.3, 97.8, 0.9), 100: (0.0, 45.6, 54.4)}
PAPER_TABLE2 = {"mc": 0.969, "na": 0.854, "fa": 0.839, "knn": None}


def shares(actions) -> str:
    sizes = np.array([len(a) for a in actions])
    return " / ".join(f"{100 * np.mean(sizes == k):.1f}" for k in (1, 2, 3))


def labelling(seed: int) -> None:
    inst = paper_instance(20, seed=seed)
    X = agent_pool(inst, 100_000, 0.68, seed + 1)
    print(f"n = 20, A = 100, real costs: {len(X):,} negative agents (paper: 74,594 de-duplicated)")
    for method in ("storm", "dp"):
        start = time.perf_counter()
        labels = label_agents(inst, X, method)
        seconds = time.perf_counter() - start
        print(f"  {method:5s}: {seconds:6.1f} s for all agents ({1e3 * seconds / len(X):.3f} ms/agent); family MDP "
              f"{labels.states:,} states; phases {', '.join(f'{k} {v:.1f} s' for k, v in labels.timings.items())}")
    print(f"  CFE sizes 1/2/3 (%): {shares(labels.actions)} (paper {' / '.join(map(str, PAPER_SIZES[20]))}); "
          f"tied: {sum(u is False for u in labels.unique)}")


def engines(seed: int, agents: dict[int, int]) -> None:
    print("per-agent time (ms) of the exact engines, same agents side by side (A = 100, real costs)")
    print(f"{'n':>4} {'agents':>6} " + " ".join(f"{m:>10}" for m in ("dp", "storm", "milp", "greedy")) +
          "   greedy/OPT   CFE sizes 1/2/3 % (paper)")
    for n, count in agents.items():
        inst = paper_instance(n, seed=seed)
        X = agent_pool(inst, count, 0.68, seed + 1)[:count]
        times, values = {}, {}
        for method in ("dp", "storm", "milp", "greedy"):
            start, out = time.perf_counter(), []
            try:
                for x in X:
                    out.append(run_engine(SetCoverProblem(inst, x), method))
            except Exception as err:          # the MDP engines refuse when the projected MDP is too large
                times[method], values[method] = math.nan, None
                print(f"     {method} at n = {n}: {err}")
                continue
            times[method] = 1e3 * (time.perf_counter() - start) / len(X)
            values[method] = out
        exact = values["milp"]
        for method in ("dp", "storm"):
            if values[method] is not None:
                assert all(abs(a.value - b.value) <= 1e-8 * max(1, b.value) and a.actions == b.actions
                           for a, b in zip(values[method], exact)), method
        ratio = np.mean([g.value / e.value for g, e in zip(values["greedy"], exact)])
        print(f"{n:>4} {len(X):>6} " + " ".join(f"{times[m]:>10.1f}" for m in ("dp", "storm", "milp", "greedy")) +
              f"   {ratio:10.3f}   {shares([e.actions for e in exact])} ({' / '.join(map(str, PAPER_SIZES[n]))})")


def table2(seed: int, epochs: int, hidden: tuple[int, ...]) -> None:
    start = time.perf_counter()
    data = generate(20, seed=seed)
    train_set, test_set = split(data, seed=seed)
    print(f"n = 20 'all': {len(data):,} agents ({len(train_set):,} train / {len(test_set):,} test), labelled in "
          f"{time.perf_counter() - start:.1f} s; {len(set(train_set.actions))} training CFEs; "
          f"{len(set(test_set.actions) - set(train_set.actions))} unseen test CFEs (paper 52)")
    print(f"{'generator':>10} {'exact':>7} {'paper':>7} {'valid':>7} {'top-5 valid+cheapest: optimal':>30} "
          f"{'ratio mean/max':>16} {'train s':>8} {'µs/agent':>9}")
    for kind in ("mc", "knn", "na", "fa"):
        gen = train(kind, train_set, hidden, seed, max_iter=epochs)
        raw = evaluate(gen, test_set, top_k=1)
        top = evaluate(gen, test_set, top_k=5) if kind in ("mc", "knn") else raw
        paper = PAPER_TABLE2[kind]
        print(f"{kind:>10} {raw['exact_match']:7.3f} {paper if paper else '-':>7} {raw['valid_rate']:7.3f} "
              f"{top['guaranteed_optimal_rate']:30.3f} "
              f"{top['guaranteed_cost_ratio_mean']:8.4f}/{top['guaranteed_cost_ratio_max']:<7.3f} "
              f"{gen.info['seconds']:8.0f} {raw['latency_us']:9.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=("labelling", "engines", "table2", "all"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=200, help="table2: epochs at most (early stopping)")
    parser.add_argument("--hidden", default="256,256", help="table2: hidden widths")
    parser.add_argument("--agents", default="20:200,50:10,100:3", help="engines: n:agents,...")
    args = parser.parse_args()
    if args.part in ("labelling", "all"):
        labelling(args.seed)
    if args.part in ("engines", "all"):
        engines(args.seed, {int(a): int(b) for a, b in (p.split(":") for p in args.agents.split(","))})
    if args.part in ("table2", "all"):
        table2(args.seed, args.epochs, tuple(int(h) for h in args.hidden.split(",")))


if __name__ == "__main__":
    main()
