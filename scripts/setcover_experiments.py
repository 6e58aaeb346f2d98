"""Seed 003 (Naggita, Walter, Blum) reproduction and speed: exact engines, labelling, top-k, Table 2 at n = 20.

    python scripts/setcover_experiments.py engines [--baseline main]    # exact engines side by side, n = 20/50/100
    python scripts/setcover_experiments.py bnb                          # branch and bound on many agents: mean / max
    python scripts/setcover_experiments.py labelling [--baseline main]  # the paper's n = 20 data set (goal < 60 s)
    python scripts/setcover_experiments.py topk                         # MC / kNN top-k: full sort vs argpartition
    python scripts/setcover_experiments.py table2 [--epochs 200]        # MC / NA / FA / Hamming on n = 20 "all"
    python scripts/setcover_experiments.py --quick                      # engines and bnb, n = 12 (CI smoke test)

``--baseline REV`` measures the same agents with the stormcf package of git revision REV as well (``git archive``
into a temporary directory, run in a child process right before this checkout's run) and prints both side by side
with their ratio. Times are wall-clock and CPU (this process) on a shared machine: compare the ratios of one run;
CPU time is less disturbed by the other processes than wall-clock time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from stormcf.setcover import METHODS, SetCoverProblem, run_engine
from stormcf.setcover.data import agent_pool, generate, paper_instance, split
from stormcf.setcover.family import label_agents
from stormcf.setcover.learn import evaluate, train

ROOT = Path(__file__).resolve().parents[1]
PAPER_SIZES = {20: (33.3, 63.1, 3.6), 50: (1.3, 97.8, 0.9), 100: (0.0, 45.6, 54.4)}
PAPER_TABLE2 = {"mc": 0.969, "na": 0.854, "fa": 0.839, "knn": None}
ENGINES = ("bnb", "dp", "storm", "milp", "greedy")
EXACT = ("bnb", "dp", "storm", "milp")


class Clock:
    """Wall-clock and CPU seconds of a block."""

    def __enter__(self) -> "Clock":
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def shares(actions) -> str:
    sizes = np.array([len(a) for a in actions])
    return " / ".join(f"{100 * np.mean(sizes == k):.1f}" for k in (1, 2, 3))


def ratio(before: float | None, after: float | None) -> str:
    if before is None or after is None or not after > 0:
        return "-"
    return f"{before / after:.1f}x"


# ==================================================================================================== measurements
def measure_engines(n: int, count: int, seed: int) -> dict:
    """Per-agent wall/CPU ms of every engine this package has, on the same agents, and their answers."""
    inst = paper_instance(n, seed=seed)
    X = agent_pool(inst, count, 0.68, seed + 1)[:count]
    out = {"agents": len(X)}
    for method in (m for m in ENGINES if m in METHODS):
        solutions = []
        try:
            with Clock() as clock:
                for x in X:
                    solutions.append(run_engine(SetCoverProblem(inst, x), method))
        except Exception as err:            # the MDP engines refuse when the projected MDP is too large
            out[method] = {"error": str(err)}
            continue
        out[method] = {"wall_ms": 1e3 * clock.wall / len(X), "cpu_ms": 1e3 * clock.cpu / len(X),
                       "values": [s.value for s in solutions], "actions": [list(s.actions) for s in solutions],
                       "unique": [s.unique for s in solutions]}
    return out


def measure_labelling(seed: int) -> dict:
    """The paper's n = 20 data set labelled with one family MDP (Storm, then the DP over the same arrays)."""
    inst = paper_instance(20, seed=seed)
    X = agent_pool(inst, 100_000, 0.68, seed + 1)
    out = {"agents": len(X)}
    for method in ("storm", "dp"):
        with Clock() as clock:
            labels = label_agents(inst, X, method)
        digest = hashlib.sha256(json.dumps([np.round(labels.values, 6).tolist(),
                                            [list(a) for a in labels.actions], labels.unique]).encode())
        out[method] = {"wall": clock.wall, "cpu": clock.cpu, "phases": labels.timings, "states": labels.states,
                       "choices": labels.choices, "digest": digest.hexdigest()[:16], "sizes": shares(labels.actions),
                       "tied": sum(u is False for u in labels.unique)}
    return out


def baseline(revision: str | None, part: str, **kwargs) -> dict | None:
    """The measurement ``part`` run with the stormcf package of git revision ``revision`` (child process)."""
    if revision is None:
        return None
    with tempfile.TemporaryDirectory(prefix="stormcf-baseline-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "stormcf"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        argv = [sys.executable, __file__, "measure", "--what", part] + \
            [f"--{k}={v}" for k, v in kwargs.items()]
        env = dict(os.environ, PYTHONPATH=tmp)
        done = subprocess.run(argv, check=True, capture_output=True, text=True, env=env, cwd=tmp)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ==================================================================================================== parts
def engines(seed: int, agents: dict[int, int], revision: str | None) -> None:
    print("per-agent time of the exact engines, same agents side by side (A = 100, real costs); ms wall / CPU")
    head = f"{'n':>4} {'agents':>6} {'engine':>7} {'this checkout':>17}"
    print(head + (f" {'baseline ' + revision:>17} {'ratio (wall/CPU)':>17}" if revision else ""))
    for n, count in agents.items():
        before = baseline(revision, "engines", n=n, count=count, seed=seed)
        now = measure_engines(n, count, seed)
        for method in ENGINES:
            line = f"{n:>4} {now['agents']:>6} {method:>7} {_ms(now.get(method)):>17}"
            if revision:
                old = before.get(method)
                line += f" {_ms(old):>17} {_speedup(old, now.get(method)):>17}"
            print(line)
        _agree(n, now, before)
        exact = now["milp"]
        greedy = np.mean([g / e for g, e in zip(now["greedy"]["values"], exact["values"])])
        fastest_other = min((now[m]["wall_ms"] for m in ("dp", "storm", "milp") if "wall_ms" in now[m]),
                            default=None)
        print(f"     bnb vs the fastest other exact engine: {ratio(fastest_other, now['bnb']['wall_ms'])} (wall); "
              f"greedy/OPT {greedy:.3f}; CFE sizes 1/2/3 % {shares(exact['actions'])} "
              f"(paper {' / '.join(map(str, PAPER_SIZES.get(n, ())))})", flush=True)


def _ms(entry: dict | None) -> str:
    if entry is None:
        return "-"
    if "error" in entry:
        return "refused"
    return f"{entry['wall_ms']:,.1f} / {entry['cpu_ms']:,.1f}"


def _speedup(before: dict | None, after: dict | None) -> str:
    if not before or not after or "wall_ms" not in before or "wall_ms" not in after:
        return "-"
    return f"{ratio(before['wall_ms'], after['wall_ms'])} / {ratio(before['cpu_ms'], after['cpu_ms'])}"


def _agree(n: int, now: dict, before: dict | None) -> None:
    """Every exact engine of both checkouts: the same optimum, canonical set and uniqueness on every agent."""
    truth = now["milp"]
    runs = [(m, now[m]) for m in EXACT] + [(f"baseline {m}", before[m]) for m in EXACT if before and m in before]
    for name, run in runs:
        if "values" not in run:
            continue
        for k, (value, actions, unique) in enumerate(zip(run["values"], run["actions"], run["unique"])):
            assert abs(value - truth["values"][k]) <= 1e-8 * max(1.0, truth["values"][k]), (n, name, k)
            assert actions == truth["actions"][k] and unique == truth["unique"][k], (n, name, k)


def bnb(seed: int, agents: dict[int, int]) -> None:
    print("branch and bound alone on many agents (A = 100, real costs): ms per agent, wall (CPU)")
    print(f"{'n':>4} {'agents':>6} {'mean':>14} {'median':>14} {'99%':>14} {'max':>14}   goal")
    for n, count in agents.items():
        inst = paper_instance(n, seed=seed)
        walls, cpus = [], []
        for x in agent_pool(inst, count, 0.68, seed + 1)[:count]:
            with Clock() as clock:
                run_engine(SetCoverProblem(inst, x), "bnb")
            walls.append(1e3 * clock.wall)
            cpus.append(1e3 * clock.cpu)
        stats = [(np.mean(walls), np.mean(cpus)), (np.median(walls), np.median(cpus)),
                 (np.percentile(walls, 99), np.percentile(cpus, 99)), (np.max(walls), np.max(cpus))]
        goal = f"   every agent < 100 ms: {'met' if max(walls) < 100 else 'missed'}" if n == 50 else ""
        print(f"{n:>4} {len(walls):>6} " + " ".join(f"{w:>7.1f} ({c:>4.1f})" for w, c in stats) + goal, flush=True)


def labelling(seed: int, revision: str | None) -> None:
    before = baseline(revision, "labelling", seed=seed)
    now = measure_labelling(seed)
    print(f"n = 20, A = 100, real costs: {now['agents']:,} negative agents (paper: 74,594 de-duplicated), one "
          f"family MDP; seconds wall / CPU")
    for method in ("storm", "dp"):
        for name, run in (("this checkout", now), (f"baseline {revision}", before)):
            if run is None:
                continue
            r = run[method]
            phases = ", ".join(f"{k} {v:.1f}" for k, v in r["phases"].items())
            print(f"  {method:5s} {name:>14}: {r['wall']:6.1f} / {r['cpu']:5.1f} s "
                  f"({1e3 * r['wall'] / run['agents']:.3f} ms/agent); {r['states']:,} states, {r['choices']:,} "
                  f"choices; phases (wall) {phases}")
        if before:
            old, new = before[method], now[method]
            same = "identical labels" if old["digest"] == new["digest"] else "LABELS DIFFER"
            print(f"  {method:5s} speed-up {ratio(old['wall'], new['wall'])} wall, {ratio(old['cpu'], new['cpu'])} "
                  f"CPU; {same}")
    assert before is None or all(before[m]["digest"] == now[m]["digest"] for m in ("storm", "dp"))
    print(f"  CFE sizes 1/2/3 (%): {now['storm']['sizes']} (paper {' / '.join(map(str, PAPER_SIZES[20]))}); "
          f"tied: {now['storm']['tied']}; goal < 60 s")


def topk(seed: int, epochs: int, hidden: tuple[int, ...]) -> None:
    from stormcf.setcover.learn import top_classes          # not in the baselines before it
    data = generate(20, seed=seed)
    train_set, test_set = split(data, seed=seed)
    X = test_set.X
    print(f"top-k of the generators on the {len(X):,} test agents of n = 20 'all' (MC {'x'.join(map(str, hidden))}, "
          f"{epochs} epochs: the latency does not depend on the training); µs per agent, best of 5")
    print(f"{'generator':>9} {'k':>2} {'scores':>8} {'argsort':>8} {'argpartition':>13} {'ratio':>6} "
          f"{'predict':>8}")
    for kind in ("mc", "knn"):
        gen = train(kind, train_set, hidden, seed, max_iter=epochs)
        scores, t_scores = _best(lambda: gen.class_scores(X), len(X))
        for k in (1, 5):
            full, t_full = _best(lambda: np.argsort(-scores, axis=1, kind="stable")[:, :k], len(X))
            part, t_part = _best(lambda: top_classes(scores, k), len(X))
            _, t_predict = _best(lambda: gen.predict(X, top_k=k), len(X))
            assert np.array_equal(full, part)
            print(f"{kind:>9} {k:>2} {t_scores:8.1f} {t_full:8.1f} {t_part:13.1f} {ratio(t_full, t_part):>6} "
                  f"{t_predict:8.1f}", flush=True)


def _best(run, agents: int, repeats: int = 5):
    """The result of ``run`` and its best wall time per agent (µs) over ``repeats`` runs."""
    best = math.inf
    for _ in range(repeats):
        with Clock() as clock:
            out = run()
        best = min(best, clock.wall)
    return out, 1e6 * best / agents


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


def measure(args: argparse.Namespace) -> None:
    """(child of --baseline) one measurement as one JSON line on stdout."""
    if args.what == "engines":
        result = measure_engines(args.n, args.count, args.seed)
    else:
        result = measure_labelling(args.seed)
    print(json.dumps(result))


def pairs(text: str) -> dict[int, int]:
    return {int(a): int(b) for a, b in (p.split(":") for p in text.split(","))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", nargs="?", choices=("engines", "bnb", "labelling", "topk", "table2", "all", "measure"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="engines, labelling: also measure the stormcf of this git revision (e.g. main)")
    parser.add_argument("--epochs", type=int, default=None, help="table2: epochs at most, 200 (early stopping); "
                                                                 "topk: 2")
    parser.add_argument("--hidden", default="256,256", help="table2, topk: hidden widths")
    parser.add_argument("--agents", default="20:200,50:10,100:3", help="engines: n:agents,...")
    parser.add_argument("--bnb-agents", default="20:2000,50:500,100:100", help="bnb: n:agents,...")
    parser.add_argument("--what", choices=("engines", "labelling"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="engines and bnb on 5 agents of n = 12: a smoke test")
    args = parser.parse_args()
    if args.quick:
        engines(args.seed, {12: 5}, None)
        bnb(args.seed, {12: 5})
        return
    if args.part is None:
        parser.error("name a part (engines, bnb, labelling, topk, table2, all) or give --quick")
    hidden = tuple(int(h) for h in args.hidden.split(","))
    if args.part == "measure":
        measure(args)
        return
    if args.part in ("engines", "all"):
        engines(args.seed, pairs(args.agents), args.baseline)
    if args.part in ("bnb", "all"):
        bnb(args.seed, pairs(args.bnb_agents))
    if args.part in ("labelling", "all"):
        labelling(args.seed, args.baseline)
    if args.part in ("topk", "all"):
        topk(args.seed, args.epochs or 2, hidden)
    if args.part in ("table2", "all"):
        table2(args.seed, args.epochs or 200, hidden)


if __name__ == "__main__":
    main()
