"""Seed 003 (Naggita, Walter, Blum) reproduction and speed: exact engines, labelling, top-k, Table 2 at n = 20.

    python scripts/setcover_experiments.py engines [--baseline main]    # exact engines side by side, n = 20/50/100
    python scripts/setcover_experiments.py bnb                          # branch and bound on many agents: mean / max
    python scripts/setcover_experiments.py labelling [--baseline main]  # the paper's n = 20 data set (goal < 60 s)
    python scripts/setcover_experiments.py topk                         # MC / kNN top-k: full sort vs argpartition
    python scripts/setcover_experiments.py table2 [--generators mc,na] [--variants all,>40] [--plot C.png]
    python scripts/setcover_experiments.py table3 [--targets 0,20,200]  # MC before and after augmentation
    python scripts/setcover_experiments.py table4 [--groupings probabilistic]  # exact match per group
    python scripts/setcover_experiments.py table5 [--costs real,int1]   # the data sets' sizes and CFE sizes
    python scripts/setcover_experiments.py fig6 [--sizes 1000,10000]    # exact match against training-set size

Every part has ``--quick`` (n = 10, A = 24, tiny networks, 3 epochs: seconds, for a smoke test). The learning
parts train with the generators' defaults (``--epochs``, ``--hidden``, ``--time-limit`` per training run change
them); they need the extra stormcf[learn] (PyTorch) for mc/na/fa/seq2seq.

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
from collections import Counter
from pathlib import Path

import numpy as np

from stormcf.setcover import METHODS, SetCoverProblem, run_engine
from stormcf.setcover.data import agent_pool, generate, paper_instance, split
from stormcf.setcover.family import label_agents
from stormcf.setcover.generators import (ENSEMBLE_KINDS, TrainingSettings, augment, best_epochs, evaluate, exact_match,
                                    train)

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
                       "tied": int(labels.tied.sum())}
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
    from stormcf.setcover.generators import top_classes          # not in the baselines before it
    data = generate(20, seed=seed)
    train_set, test_set = split(data, seed=seed)
    X = test_set.X
    print(f"top-k of the generators on the {len(X):,} test agents of n = 20 'all' (MC {'x'.join(map(str, hidden))}, "
          f"{epochs} epochs: the latency does not depend on the training); µs per agent, best of 5")
    print(f"{'generator':>9} {'k':>2} {'scores':>8} {'argsort':>8} {'argpartition':>13} {'ratio':>6} "
          f"{'predict':>8}")
    for kind in ("mc", "knn"):
        settings = TrainingSettings(hidden=hidden, epochs=epochs, seed=seed) if kind == "mc" else None
        gen = train(kind, train_set, settings)
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


# ==================================================================================================== learning
PAPER_VARIANTS = {"mc": {"all": 0.969, ">10": 0.984, ">40": 0.993}, "na": {"all": 0.854, ">10": 0.886, ">40": 0.940},
                  "fa": {"all": 0.839, ">10": 0.892, ">40": 0.937}, "seq2seq": {}, "knn": {}}
#: Table 4 (the generator is not named in the paper)
PAPER_TABLE4 = {"manual": (0.881, 0.871, 0.875, 0.847, 0.886), "probabilistic": (0.880, 0.771, 0.802, 0.873, 0.931)}
#: Table 3 (bottom, notes §3.4): MC on the n = 20 "all" data before augmentation, after AG1, after AG2
PAPER_AUGMENTATION = {"B4A": 0.969, "AG1": 0.965, "AG2": 0.982}
#: Table 5 (Appendix A): data set size, then the agents with a CFE of 1 / 2 / 3 actions (n = 20, A = 100)
PAPER_TABLE5 = {"20-dimensional": (71_125, 23_687, 44_858, 2_576), "manual groups": (73_484, 13_480, 56_653, 3_351),
                "probabilistic groups": (70_226, 44_661, 20_258, 5_307), "first10": (74_524, 61_794, 12_046, 39),
                "first5": (74_594, 60_656, 6_005, 0), "last10": (74_401, 53_822, 19_952, 1),
                "last5": (74_565, 66_068, 644, 0), "mid5": (74_594, 63_530, 3_010, 0)}
#: Fig. 6 (panel labels swapped in the paper, notes §3.7): exact match per CFE size on n = 20 ">40"
PAPER_FIG6 = {"mc": (0.994, 0.993, 0.997), "knn": (0.691, 0.529, 0.466)}
QUICK = {"n": 10, "actions": 24, "draws": 3000}


def paper_data(seed: int, quick: bool, grouping: str | None = None, costs: str = "real", thresholds: str = "ones"):
    """The n = 20 data set of the README (``setcover-data d20.npz -n 20``), or a tiny one with ``--quick``."""
    from stormcf.setcover.data import generate_grouped
    size = QUICK if quick else {"n": 20, "actions": 100, "draws": 100_000}
    options = {"draws": size["draws"], "costs": costs, "thresholds": thresholds, "seed": seed}
    if grouping:
        return generate_grouped(grouping, size["n"], size["actions"], **options)
    return generate(size["n"], size["actions"], **options)


def table5(args: argparse.Namespace) -> None:
    """Table 5: the n = 20 data sets (t = 1^n, the grouped ones, the sparse classifiers) for each reading of the
    coordinate costs: the size as the paper counts it (every distinct agent drawn but the tied and infeasible ones:
    its sparse rows include the agents the classifier already accepts, notes §3.2) and the CFE sizes."""
    rows = [("20-dimensional", None, "ones"), ("manual groups", "manual", "ones"),
            ("probabilistic groups", "probabilistic", "ones")]
    rows += [(kind, None, kind) for kind in ("first10", "first5", "last10", "last5", "mid5")]
    print(f"{'data set':>20} {'costs':>5} {'size':>7} {'1-action':>8} {'2-action':>8} {'3-action':>8} {'tied':>6} "
          f"{'accepted':>8} {'>3':>4} {'s':>5}   paper: size, 1 / 2 / 3-action")
    for costs in args.costs.split(","):
        for name, grouping, thresholds in rows:
            start = time.perf_counter()
            data = paper_data(args.seed, args.quick, grouping, costs, thresholds)
            info = data.info
            accepted = info["distinct"] - info["agents"]
            size = info["distinct"] - info["tied"] - info["infeasible"]
            counts = np.bincount([len(a) for a in data.actions], minlength=4)
            paper = PAPER_TABLE5[name]
            print(f"{name:>20} {costs:>5} {size:7,} {counts[1]:8,} {counts[2]:8,} {counts[3]:8,} {info['tied']:6,} "
                  f"{accepted:8,} {info['too_large']:4,} {time.perf_counter() - start:5.0f}   {paper[0]:,}, "
                  f"{paper[1]:,} / {paper[2]:,} / {paper[3]:,}", flush=True)
    print("size: distinct agents drawn minus the tied and the infeasible ones; accepted: agents the classifier "
          "already accepts (no CFE needed); >3: agents whose CFE needs more than 3 actions (dropped)")


def settings_for(kind: str, args: argparse.Namespace, stretch: float = 1.0):
    """The training settings of ``args`` for ``kind`` (None for knn). ``stretch`` multiplies the epochs and the
    patience (a smaller training set then gets as many gradient steps)."""
    from dataclasses import replace
    from stormcf.setcover.generators import DEFAULT_SETTINGS
    if kind == "knn":
        return None
    settings = DEFAULT_SETTINGS[kind]
    changes = {"seed": args.seed}
    if args.quick:
        changes.update(hidden=(64,), epochs=8, batch_size=128, patience=8, decoder=16, threads=1)
    if args.hidden:
        changes["hidden"] = tuple(int(h) for h in args.hidden.split(","))
    if args.epochs:
        changes["epochs"] = args.epochs
    changes.update({name: getattr(args, name) for name in ("dropout", "alpha") if getattr(args, name) is not None})
    if args.ensemble and kind in ENSEMBLE_KINDS:
        changes["ensemble"] = args.ensemble
    if stretch != 1.0:
        changes["epochs"] = math.ceil(changes.get("epochs", settings.epochs) * stretch)
        changes["patience"] = math.ceil(changes.get("patience", settings.patience) * stretch)
    return replace(settings, **changes)


def timed_training(kind: str, train_set, args: argparse.Namespace, watch=None, stretch: float = 1.0):
    """Train with ``settings_for(kind, args, stretch)``: the generator, wall and CPU minutes (CPU: all threads)."""
    from stormcf.console import NORMAL, VERBOSE, Reporter
    from stormcf.run import Run
    settings = settings_for(kind, args, stretch)
    run = Run(args.time_limit, reporter=Reporter(VERBOSE if args.verbose else NORMAL))
    with Clock() as clock, run.active():
        gen = train(kind, train_set, settings, run=run, watch=watch)
    return gen, clock.wall / 60, clock.cpu / 60


def table2(args: argparse.Namespace) -> None:
    """Table 2: exact match of every generator on the n = 20 data (``all``, ``>10``, ``>40``), the training time,
    epochs, the learning curve (test exact match per epoch, against epochs and minutes) in ``--curves``, and the
    mistakes of each generator (§5.6, Fig. 8: :func:`mistakes`)."""
    from stormcf.setcover.data import frequency_filter
    start = time.perf_counter()
    data = paper_data(args.seed, args.quick)
    print(f"n = {data.instance.n_features}: {len(data):,} agents labelled in {time.perf_counter() - start:.1f} s; "
          f"timings: wall and CPU minutes of this process (CPU counts both threads)", flush=True)
    print(f"{'generator':>9} {'data':>4} {'exact':>7} {'± 95%':>7} {'paper':>6} {'valid':>6} {'optimal*':>8} "
          f"{'train':>6} {'wall min':>8} {'CPU min':>8} {'epochs':>6} {'best':>5} {'stopped':>14}")
    curves, errors = {}, []
    for variant in args.variants.split(","):
        subset = data if variant == "all" else frequency_filter(data, int(variant.lstrip(">")))
        train_set, test_set = split(subset, seed=args.seed)
        for kind in (args.generators or "mc,na,fa,seq2seq,knn").split(","):
            gen, wall, cpu = timed_training(kind, train_set, args, watch=test_set)
            raw = evaluate(gen, test_set, top_k=1)
            top = evaluate(gen, test_set, top_k=5) if kind in ("mc", "knn") else raw
            paper = PAPER_VARIANTS[kind].get(variant)
            info = gen.info
            name = f"{kind} x{len(info['members'])}" if "members" in info else kind
            print(f"{name:>9} {variant:>4} {raw['exact_match']:7.4f} {raw['ci95']:7.4f} "
                  f"{paper if paper else '-':>6} {raw['valid_rate']:6.3f} {top['guaranteed_optimal_rate']:8.3f} "
                  f"{len(train_set):>6} {wall:8.1f} {cpu:8.1f} {info.get('epochs', '-'):>6} "
                  f"{best_epochs(info, '/') if 'best_epoch' in info else '-':>5} {info['stopped']:>14}", flush=True)
            errors.append(f"{name:>9} {variant:>4} {mistakes(gen, test_set)}")
            curves[f"{kind} {variant}"] = {"exact_match": raw["exact_match"], "wall_minutes": wall,
                                           "cpu_minutes": cpu, "by_size": raw["exact_match_by_size"],
                                           "settings": info.get("settings"), "history": info.get("history", [])}
    print("optimal*: after the guarantees (mc/knn: the cheapest valid of the top 5; na/fa/seq2seq: validated and "
          "repaired)")
    print("the mistakes (§5.6, Fig. 8; paper: MC on '>10' 1.58% of the agents, 100% of them feasible, FA on '>10' "
          "10.8%, 63.10% feasible; MC on 'all': infeasible mistakes cheaper than the true CFE, feasible ones dearer)")
    print(f"{'generator':>9} {'data':>4} {'mistakes':>8} {'feasible':>8} "
          f"{'infeasible (cheaper), cost ratio q25/50/75':>38} {'feasible (dearer), cost ratio q25/50/75':>35}")
    print("\n".join(errors))
    print("cost ratio: predicted / true CFE cost; cheaper / dearer: share of those mistakes whose predicted CFE costs "
          "less / more than the true one")
    _write_curves(curves, args)


def table3(args: argparse.Namespace) -> None:
    """Table 3 (bottom) at n = 20: MC on the "all" data before and after Algorithm 1 (``augment``: every CFE seen
    fewer than TARGET times in the training split gets worse-off agents; the test agents are never augmented)."""
    data = paper_data(args.seed, args.quick)
    train_set, test_set = split(data, seed=args.seed)
    print(f"MC on n = {data.instance.n_features} 'all', {len(test_set):,} test agents; paper (n = 20): before "
          f"{PAPER_AUGMENTATION['B4A']}, AG1 {PAPER_AUGMENTATION['AG1']}, AG2 (after AG1: CFEs seen < 20 times) "
          f"{PAPER_AUGMENTATION['AG2']}; CFEs seen < 20 times in the paper's training set: 813 before AG2, 638 after")
    print(f"{'target':>6} {'train':>7} {'added':>6} {'< 20':>5} {'exact':>7} {'± 95%':>7} {'1 / 2 / 3 actions':>21} "
          f"{'wall min':>8} {'CPU min':>8} {'best':>5}")
    for target in (int(t) for t in args.targets.split(",")):
        augmented = augment(train_set, target, seed=args.seed) if target else train_set
        rare = sum(count < 20 for count in Counter(augmented.actions).values())
        gen, wall, cpu = timed_training("mc", augmented, args)
        raw = evaluate(gen, test_set, top_k=1)
        by_size = " / ".join(f"{raw['exact_match_by_size'].get(k, float('nan')):.3f}" for k in (1, 2, 3))
        print(f"{target:>6} {len(augmented):>7,} {len(augmented) - len(train_set):>6,} {rare:>5,} "
              f"{raw['exact_match']:7.4f} {raw['ci95']:7.4f} {by_size:>21} {wall:8.1f} {cpu:8.1f} "
              f"{best_epochs(gen.info, '/'):>5}", flush=True)
    print("target: CFEs seen fewer times in the training split are augmented (0: none, the paper's B4A); train: "
          "training agents after it (10% of them hold out for early stopping); < 20: CFEs seen fewer than 20 times")


def _write_curves(curves: dict, args: argparse.Namespace) -> None:
    if args.curves:
        Path(args.curves).write_text(json.dumps(curves, indent=1))
        print(f"learning curves in {args.curves}")
    if args.plot:
        plot_curves(curves, args.plot)
        print(f"plot in {args.plot}")


def plot_curves(curves: dict, out: str) -> None:
    """Test exact match against epochs and against wall-clock minutes, one line per generator."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (by_epoch, by_time) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for name, curve in curves.items():
        points = [p for p in curve["history"] if "watch_exact_match" in p]
        if not points:
            continue
        y = [p["watch_exact_match"] for p in points]
        by_epoch.plot([p["epoch"] for p in points], y, label=name)
        by_time.plot([p["seconds"] / 60 for p in points], y, label=name)
    for axis, label in ((by_epoch, "epoch"), (by_time, "wall-clock minutes (shared 2-core machine)")):
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    by_epoch.set_ylabel("exact match (test)")
    by_epoch.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def table4(args: argparse.Namespace) -> None:
    """Table 4: the exact match per group of one generator (``--generators``, the first; the paper does not name it),
    in both readings of the paper (notes §4.1 item 7): one generator for all groups that is not told the group, and
    one generator per group trained on that group's agents."""
    kind = (args.generators or "mc").split(",")[0]
    for grouping in args.groupings.split(","):
        start = time.perf_counter()
        data = paper_data(args.seed, args.quick, grouping)
        train_set, test_set = split(data, seed=args.seed)
        joint, wall, cpu = timed_training(kind, train_set, args)
        facts = exact_match(joint, test_set)
        by_group = ", ".join(f"{name} {'-' if rate is None else f'{rate:.3f}'}"
                             for name, rate in facts["exact_match_by_group"].items())
        print(f"{grouping} groups: {len(data):,} agents ({time.perf_counter() - start:.0f} s with labelling); {kind} "
              f"for all groups, not told the group: exact match {facts['exact_match']:.3f}, per group {by_group} "
              f"({wall:.1f} min wall, {cpu:.1f} min CPU); one {kind} per group:", flush=True)
        for g, (name, rate) in enumerate(facts["exact_match_by_group"].items()):
            mine = train_set.subset(np.flatnonzero(train_set.groups == g))
            theirs = test_set.subset(np.flatnonzero(test_set.groups == g))
            own, wall, _ = timed_training(kind, mine, args) if len(mine) > 1 else (None, 0.0, 0.0)
            alone = exact_match(own, theirs)["exact_match"] if own is not None and len(theirs) else None
            shown = ["-" if r is None else f"{r:.3f}" for r in (rate, alone)]
            print(f"  {name}: all groups {shown[0]}, own generator {shown[1]} ({len(theirs)} test agents, "
                  f"{len(mine)} training; paper {PAPER_TABLE4[grouping][g]:.3f})", flush=True)


def mistakes(gen, test_set) -> str:
    """§5.6 and Fig. 8: of the agents whose prediction is not their CFE, how many got a feasible one (valid, so
    dearer than the unique optimum), and the cost of the predicted CFE against the true one (quartiles of the
    ratio) for the infeasible and the feasible mistakes."""
    inst = test_set.instance
    wrong = np.flatnonzero(~gen.exact_matches(test_set.X, test_set.actions, inst))
    predicted = [c[0] for c in gen.predict(test_set.X[wrong], inst)] if len(wrong) else []
    valid = np.array([inst.is_valid(test_set.X[i], p) for i, p in zip(wrong, predicted)], dtype=bool)
    ratio = np.array([inst.cost(p) for p in predicted]) / np.maximum(test_set.cost[wrong], 1e-300)
    return (f"{len(wrong):>8,} {_share(valid):>8} {_cost_summary(ratio[~valid], below=True):>38} "
            f"{_cost_summary(ratio[valid], below=False):>35}")


def _share(mask: np.ndarray) -> str:
    return f"{mask.mean():.1%}" if mask.size else "-"


def _cost_summary(ratio: np.ndarray, below: bool) -> str:
    if not ratio.size:
        return "-"
    side = ratio < 1 if below else ratio > 1
    q = np.percentile(ratio, [25, 50, 75])
    return f"{ratio.size} ({_share(side)}), " + " / ".join(f"{v:.2f}" for v in q)


def fig6(args: argparse.Namespace) -> None:
    """Fig. 6 as the issue asks: exact match against the training-set size (the same test agents for every size;
    the networks get as many gradient steps at every size: epochs and patience times full size / size), and the
    paper's panels: exact match per CFE size of MC and the Hamming baseline on ">40"."""
    from stormcf.setcover.data import frequency_filter
    data = paper_data(args.seed, args.quick)
    train_all, test_set = split(data, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(train_all))
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [len(train_all) // 2 ** k for k in (5, 3, 1, 0)]
    sizes = sorted({min(s, len(train_all)) for s in sizes})
    kinds = (args.generators or "mc,knn").split(",")
    print(f"exact match against training-set size, n = {data.instance.n_features} 'all', {len(test_set):,} test "
          f"agents (the same for every size); epochs times {len(train_all):,} / size")
    print(f"{'train agents':>12} " + " ".join(f"{k:>9}" for k in kinds) + "   minutes (wall)")
    rows = []
    for size in sizes:
        subset = train_all.subset(np.sort(order[:size]))
        rates, minutes = [], []
        for kind in kinds:
            gen, wall, _ = timed_training(kind, subset, args, stretch=len(train_all) / size)
            rates.append(exact_match(gen, test_set)["exact_match"])
            minutes.append(wall)
        rows.append((size, rates))
        print(f"{size:>12,} " + " ".join(f"{r:9.4f}" for r in rates) + "   " +
              " ".join(f"{m:.1f}" for m in minutes), flush=True)
    more_than = 5 if args.quick else 40
    train_head, test_head = split(frequency_filter(data, more_than), seed=args.seed)
    print(f"per CFE size on '>{more_than}' (paper's Fig. 6 panels on '>40', labels swapped there; notes §3.7): exact "
          f"match of 1/2/3-action CFEs")
    for kind in kinds:
        gen, _, _ = timed_training(kind, train_head, args)
        by_size = exact_match(gen, test_head)["exact_match_by_size"]
        shown = " / ".join("-" if by_size.get(s) is None else f"{by_size[s]:.3f}" for s in (1, 2, 3))
        paper = " / ".join(f"{v:.3f}" for v in PAPER_FIG6[kind]) if kind in PAPER_FIG6 else "-"
        print(f"  {kind:>7}: {shown}   (paper {paper})", flush=True)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axis = plt.subplots(figsize=(6, 4))
        for k, kind in enumerate(kinds):
            axis.plot([r[0] for r in rows], [r[1][k] for r in rows], marker="o", label=kind)
        axis.set_xscale("log")
        axis.set_xlabel("training agents")
        axis.set_ylabel("exact match (test)")
        axis.grid(alpha=0.3)
        axis.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"plot in {args.plot}")


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
    parser.add_argument("part", nargs="?", choices=("engines", "bnb", "labelling", "topk", "table2", "table3", "table4",
                                                    "table5", "fig6", "all", "measure"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="engines, labelling: also measure the stormcf of this git revision (e.g. main)")
    parser.add_argument("--epochs", type=int, default=None, help="table2/table4/fig6: epochs at most (default: the "
                                                                 "generator's); topk: 2")
    parser.add_argument("--hidden", default=None, help="hidden widths (topk: 256,256; learning: the generator's)")
    parser.add_argument("--dropout", type=float, default=None, help="learning: dropout rate (default: the generator's)")
    parser.add_argument("--ensemble", type=int, default=None,
                        help="learning: networks averaged per generator (mc, na, fa; default 1, the paper's)")
    parser.add_argument("--alpha", type=float, default=None,
                        help="learning: na/fa/seq2seq loss, weight of the L1 term (default: the generator's)")
    parser.add_argument("--quick", action="store_true", help="a part on a tiny data set and network (seconds); "
                                                             "without a part: engines and bnb on 5 agents of n = 12")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per training epoch on stderr")
    parser.add_argument("--generators", default=None,
                        help="which generators (table2: mc,na,fa,seq2seq,knn; table4: mc; fig6: mc,knn)")
    parser.add_argument("--variants", default="all", help="table2: data variants all,>10,>40")
    parser.add_argument("--targets", default="0,20,200", help="table3: augmentation targets (0: none)")
    parser.add_argument("--groupings", default="manual,probabilistic", help="table4: grouped data sets")
    parser.add_argument("--costs", default="real,int1", help="table5: readings of the coordinate costs (real, int0, "
                        "int1)")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per training run (best epoch kept)")
    parser.add_argument("--sizes", default=None, help="fig6: training-set sizes (default: 1/32, 1/8, 1/2, all)")
    parser.add_argument("--curves", default=None, help="table2: write the learning curves as JSON")
    parser.add_argument("--plot", default=None, help="table2: learning curves; fig6: exact match against size (PNG)")
    parser.add_argument("--agents", default="20:200,50:10,100:3", help="engines: n:agents,...")
    parser.add_argument("--bnb-agents", default="20:2000,50:500,100:100", help="bnb: n:agents,...")
    parser.add_argument("--what", choices=("engines", "labelling"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick and args.part is None:
        engines(args.seed, {12: 5}, None)
        bnb(args.seed, {12: 5})
        return
    if args.part is None:
        parser.error("name a part (engines, bnb, labelling, topk, table2, table3, table4, table5, fig6, all) "
                     "or give --quick")
    hidden = tuple(int(h) for h in (args.hidden or "256,256").split(","))
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
        table2(args)
    if args.part in ("table3", "all"):
        table3(args)
    if args.part in ("table4", "all"):
        table4(args)
    if args.part in ("table5", "all"):
        table5(args)
    if args.part in ("fig6", "all"):
        fig6(args)


if __name__ == "__main__":
    main()
