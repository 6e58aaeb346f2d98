"""Lally, Kazemi & Paoletti §6 with stormcf: Figures 3-5 (robust ICFMDP policy vs Gumbel-max policy), Table 3
(mean bound widths under CS+M, CS, none) and Table 4 (construction time ICFMDP vs Gumbel-max CFMDP).

    python scripts/icfmdp_experiments.py [--out results/icfmdp]
    python scripts/icfmdp_experiments.py --quick     # GridWorld p=0.9 only, 2 CFMDPs x 20 paths, 2 paths for Table 3,
                                                     # 1 path and 100 MC samples for Table 4 (seconds; CI smoke test)

Models: prism_models/gridworld.prism (p = 0.9 and 0.4), sepsis.prism (the authors' start patient), frozenlake4/8.
Horizon T = 10. Behaviour policy (as the authors): Storm's optimal strategy for reaching the goal ("goal" /
"discharged") mixed 50/50 with the uniform strategy. Observed paths of four kinds, picked from 400 seeded
simulations of the behaviour policy by a fixed rule:
  optimal             the path with the highest reward;
  slightly suboptimal never enters a bad state; reward at the 75th percentile of those paths;
  almost catastrophic never enters a bad state but visits a state from which some action reaches one; the lowest
                      reward of those paths;
  catastrophic        enters a bad state ("danger" / "dead"; for GridWorld the authors' hard-coded path).
Evaluation: CFMDPs sampled from the ICFMDP (Dirichlet with capped redistribution, see stormcf.icfmdp.evaluation) x
counterfactual paths simulated under both policies (the paper: 200 x 10,000); mean, min and max total reward.
All numbers here are Monte Carlo statistics except the policies' values, which Storm re-checks.

Which transitions each quantity covers. stormcf's ICFMDP holds by default only the (t, s) pairs the observed path's
start reaches (``layers="nominal"``); the policies, their values and the evaluation need no more. The paper's Table 3
averages the bound width over *every* transition of the model at every step, and its Table 4 times the construction
of the whole ICFMDP / CFMDP (the authors compute every transition at every step); for those two tables this script
builds every state at every step (``layers="all"``), which keeps the paper's definitions. Table 4 also shows the
default construction (reachable pairs only), which is what ``stormcf icfmdp`` does.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import stormcf
from stormcf.counterfactual_mdp import counterfactual_transitions, gumbel_cfmdp
from stormcf.icfmdp import evaluate_policies, interval_cfmdp, policy_value, robust_value_iteration, storm_value
from stormcf.paths import ObservedPath, simulate
from stormcf.plotting import save_figure
from stormcf.report import write_text

T = 10
MODELS = {"GridWorld p=0.9": ("gridworld.prism", "p=0.9", "goal", "danger"),
          "GridWorld p=0.4": ("gridworld.prism", "p=0.4", "goal", "danger"),
          "Sepsis": ("sepsis.prism", None, "discharged", "dead"),
          "FrozenLake 4x4": ("frozenlake4.prism", None, "goal", "hole"),
          "FrozenLake 8x8": ("frozenlake8.prism", None, "goal", "hole")}
KINDS = ("optimal", "slightly suboptimal", "almost catastrophic", "catastrophic")


def load(name: str):
    file, constants, goal, bad = MODELS[name]
    model = stormcf.load_model(stormcf.example_path(file), constants=constants)
    _, best = stormcf.optimal_strategy(model, f'Pmax=? [F "{goal}"]')
    uniform = stormcf.Strategy.uniform(model)
    behaviour = stormcf.Strategy(model, 0.5 * best.probabilities + 0.5 * uniform.probabilities)
    return model, behaviour, model.label(bad)


def near_bad(model, bad: np.ndarray) -> np.ndarray:
    """The states outside ``bad`` with an action that can reach a state of ``bad`` in one step."""
    P = model.transitions
    near = np.zeros(model.n_states, dtype=bool)
    near[model.state_of_choice[np.unique(P.nonzero()[0][bad[P.indices]])]] = True
    return near & ~bad


def four_paths(name: str, model, behaviour, bad) -> dict[str, ObservedPath]:
    r = model.step_rewards("r")
    near = near_bad(model, bad)
    sims = [simulate(model, behaviour, T, seed=seed) for seed in range(400)]
    visits = lambda p, mask: bool(mask[np.append(p.states, p.final_state)].any())  # noqa: E731
    reward = lambda p: p.outcome(r)                                                # noqa: E731
    safe = sorted((p for p in sims if not visits(p, bad)), key=reward)
    close = [p for p in safe if visits(p, near)]
    paths = {"optimal": max(sims, key=reward),
             "slightly suboptimal": safe[int(0.75 * (len(safe) - 1))] if safe else None,
             "almost catastrophic": close[0] if close else None,
             "catastrophic": next((p for p in sims if visits(p, bad)), None)}
    if name.startswith("GridWorld"):
        paths["catastrophic"] = ObservedPath.load(model, stormcf.example_path("gridworld.catastrophic.json"))
    return {k: v for k, v in paths.items() if v is not None}


def figures(out: Path, cfmdps: int, n_paths: int, models=("GridWorld p=0.9", "GridWorld p=0.4", "Sepsis")) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lines = ["# Figures 3-5: robust ICFMDP policy vs Gumbel-max policy (Monte Carlo over sampled CFMDPs)", "",
             f"{cfmdps} CFMDPs x {n_paths} paths per policy; reward = total reward over T = {T} steps.", "",
             "| model | path | observed | robust worst case (Storm) | robust mean [min, max] | "
             "Gumbel-max mean [min, max] | Gumbel-max worst case (Storm) |", "|---|---|---|---|---|---|---|"]
    for fig, name in zip((3, 4, 5), models):
        model, behaviour, bad = load(name)
        paths = four_paths(name, model, behaviour, bad)
        fig_, ax = plt.subplots(figsize=(8, 4))
        for i, (kind, path) in enumerate(paths.items()):
            ic = interval_cfmdp(path)
            robust = robust_value_iteration(ic)
            gp = robust_value_iteration(gumbel_cfmdp(path, layers=ic.layers))   # same layers: evaluable on ic
            ev = evaluate_policies(ic, {"robust": robust, "gumbel-max": gp}, cfmdps, n_paths, seed=fig)
            s = {x.name: x for x in ev.statistics}
            worst_r = storm_value(ic, policy=robust, expected=robust.value()).confirm().value
            worst_g = storm_value(ic, policy=gp, expected=policy_value(gp, ic)).confirm().value
            lines.append(f"| {name} | {kind} | {ev.observed_reward:g} | {worst_r:.4g} | "
                         f"{s['robust'].mean:.4g} [{s['robust'].minimum:g}, {s['robust'].maximum:g}] | "
                         f"{s['gumbel-max'].mean:.4g} [{s['gumbel-max'].minimum:g}, {s['gumbel-max'].maximum:g}] | "
                         f"{worst_g:.4g} |")
            for j, (policy, color) in enumerate((("robust", "tab:blue"), ("gumbel-max", "tab:orange"))):
                x = i + (j - 0.5) * 0.35
                st = s[policy]
                ax.bar(x, st.mean, 0.35, color=color, label=policy if i == 0 else None)
                ax.errorbar(x, st.mean, yerr=[[st.mean - st.minimum], [st.maximum - st.mean]], color="k", capsize=4)
            ax.plot([i - 0.4, i + 0.4], [ev.observed_reward] * 2, "k--", label="observed" if i == 0 else None)
        ax.set_xticks(range(len(paths)), list(paths), fontsize=8)
        ax.set(ylabel="counterfactual path reward", title=f"Figure {fig}: {name} (mean, min-max over paths)")
        ax.legend(fontsize=8)
        fig_.tight_layout()
        save_figure(fig_, out / f"figure{fig}_{name.split()[0].lower()}{name.split('=')[-1] if '=' in name else ''}"
                              f".png", dpi=120)
    write_text("\n".join(lines) + "\n", out / "figures_3_5.md")
    print("\n".join(lines))


def mean_bound_widths(name: str, n_paths: int) -> dict[str, float]:
    """Table 3's quantity for one model: the mean bound width of the ICFMDP over every transition at every step
    (layers="all"), averaged over ``n_paths`` random observed paths (seeds 1000, 1001, ...), per assumption."""
    model, behaviour, _ = load(name)
    widths: dict[str, list[float]] = {a: [] for a in ("cs+m", "cs", "none")}
    for seed in range(n_paths):
        path = simulate(model, behaviour, T, seed=1000 + seed)
        for a in widths:
            widths[a].append(interval_cfmdp(path, a, layers="all").mean_bound_width())
    return {a: float(np.mean(w)) for a, w in widths.items()}


def table3(out: Path, n_paths: int = 20, models=tuple(MODELS)) -> None:
    lines = [f"# Table 3: mean bound width (transitions with UB > 0), averaged over {n_paths} random paths "
             f"(T = 10)", "",
             "Over every transition of the model at every step, as the paper (ICFMDPs built with layers=\"all\"; "
             "the default ICFMDP holds only the pairs the start reaches).", "",
             "| model | CS + M | CS | none |", "|---|---|---|---|"]
    for name in models:
        lines.append(f"| {name} | " + " | ".join(f"{w:.4f}" for w in mean_bound_widths(name, n_paths).values()) + " |")
    write_text("\n".join(lines) + "\n", out / "table3.md")
    print("\n".join(lines))


def table4(out: Path, mc_paths: int, samples: int = 10_000,
           models=("GridWorld p=0.9", "GridWorld p=0.4", "Sepsis", "FrozenLake 4x4", "FrozenLake 8x8")) -> None:
    lines = ["# Table 4: construction time for one observed path of 20 steps (seconds; median over paths)", "",
             "Every state at every step (layers=\"all\"), as the authors build them; the last two columns are "
             "stormcf's default, only the (t, s) pairs the start reaches.", "",
             f"| model | ICFMDP (closed forms) | Gumbel-max CFMDP, exact | Gumbel-max CFMDP, MC {samples:,} samples "
             "| MC / ICFMDP | ICFMDP, reachable pairs | Gumbel-max exact, reachable pairs |",
             "|---|---|---|---|---|---|---|"]
    for name in models:
        model, behaviour, _ = load(name)
        times: dict[str, list[float]] = {key: [] for key in ("ic", "exact", "mc", "ic_reachable", "exact_reachable")}
        for seed in range(mc_paths):
            path = simulate(model, behaviour, 20, seed=2000 + seed)
            times["ic"].append(interval_cfmdp(path, layers="all").seconds)
            times["exact"].append(gumbel_cfmdp(path, layers="all").seconds)
            times["ic_reachable"].append(interval_cfmdp(path).seconds)
            times["exact_reachable"].append(gumbel_cfmdp(path, layers="nominal").seconds)
            if name == "Sepsis":       # 10,000 draws for every (t, s, a): timed on 1,000 pairs of one step
                pairs = np.random.default_rng(seed).choice(model.n_choices, 1000, replace=False)
                start = time.perf_counter()
                counterfactual_transitions(model, int(path.choices[0]), int(path.next_states[0]), pairs, "mc",
                                           samples, seed)
                times["mc"].append(20 * model.n_choices / 1000 * (time.perf_counter() - start))
            else:
                times["mc"].append(gumbel_cfmdp(path, "mc", samples, seed, layers="all").seconds)
        note = " (extrapolated from 1,000 pairs of one step)" if name == "Sepsis" else ""
        t = {key: float(np.median(v)) for key, v in times.items()}
        lines.append(f"| {name} | {t['ic']:.4f} | {t['exact']:.4f} | {t['mc']:.2f}{note} | {t['mc'] / t['ic']:.0f}x "
                     f"| {t['ic_reachable']:.4f} | {t['exact_reachable']:.4f} |")
    write_text("\n".join(lines) + "\n", out / "table4.md")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/icfmdp"))
    parser.add_argument("--quick", action="store_true", help="GridWorld p=0.9 only, 2 CFMDPs x 20 paths, 2 paths for "
                        "Table 3, 1 path and 100 Monte Carlo samples for Table 4: a smoke test in seconds")
    parser.add_argument("--only", choices=("figures", "table3", "table4"), default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.quick:
        models = ("GridWorld p=0.9",)
        figure_args, table3_args, table4_args = (2, 20, models), (2, models), (1, 100, models)
    else:
        figure_args, table3_args, table4_args = (200, 10_000), (), (5,)
    if args.only in (None, "figures"):
        figures(args.out, *figure_args)
    if args.only in (None, "table3"):
        table3(args.out, *table3_args)
    if args.only in (None, "table4"):
        table4(args.out, *table4_args)


if __name__ == "__main__":
    main()
