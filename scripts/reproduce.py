"""Every seed paper's headline numbers beside stormcf's on this machine, with the difference explained (issue 18).

    python scripts/reproduce.py                  # every seed, full settings (see docs/reproduction.md for times)
    python scripts/reproduce.py 002 004          # some seeds
    python scripts/reproduce.py --quick          # every seed in its smoke setting (about 25-30 CPU s; the CI test runs it)
    python scripts/reproduce.py 000 --out results/reproduction

One script for all five seeds, so that every comparison has the same shape (a row per quantity: the paper's number,
stormcf's, and what explains the difference), one command line and one output format (markdown on stdout and per
seed in ``--out``, plus ``reproduction.json``). The experiments themselves stay in the per-seed scripts, whose parts it
calls: ``process_mdp.py`` and ``bench_counterfactual.py`` (seed 000), ``synthetic_study.py`` (001),
``recourse_experiments.py`` (002), ``setcover_experiments.py`` (003, run as a child process: its parts and options are
that script's), ``icfmdp_experiments.py`` (004). Every number printed as stormcf's is computed in this run; the papers'
numbers are quoted from the seed texts (``shared/seeds``) and, where the paper has only plots, from the notes'
re-analyses of the authors' released code and results (``shared/docs/notes-seed00*.md``), as each row says.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from argparse import Namespace
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

import stormcf
from stormcf.report import write_text

SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
REFERENCE = ROOT / "tests" / "data" / "reference-instances"


@dataclass
class Row:
    """One compared quantity: the paper's value, stormcf's, and what explains the difference."""

    quantity: str
    paper: str
    stormcf: str
    note: str = ""


@dataclass
class Section:
    title: str
    rows: list[Row] = field(default_factory=list)
    text: str = ""          # extra markdown (a table the rows summarise, a child script's output)

    def add(self, quantity: str, paper: str, ours: str, note: str = "") -> None:
        self.rows.append(Row(quantity, paper, ours, note))

    def markdown(self) -> str:
        out = [f"### {self.title}", ""]
        if self.rows:
            out += ["| quantity | paper | stormcf | difference explained |", "|---|---|---|---|"]
            out += [f"| {r.quantity} | {r.paper} | {r.stormcf} | {r.note} |" for r in self.rows]
            out.append("")
        if self.text:
            out += [self.text.rstrip(), ""]
        return "\n".join(out)


def fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:.{digits}g}"


# =============================================================================================== seed 000
#: the paper's Table 4 (mean states, transitions, max degree) and Table 2/3 rows of the MSSD models we mirror:
#: (Opt, Inf, T.O., Sub) over all γ, mean and max time, and sextile S2's (Opt, Inf, T.O., Sub) and mean time
MSSD = {"MSSD10": ((5702.8, 11341.5, 1952.6), (710, 388, 2, 0), 56.08, (10, 188, 2, 0), 266),
        "MSSD30": ((9378.6, 19718.0, 3397.3), (703, 320, 60, 17), 276.62, (3, 120, 60, 17), 1352),
        "MSSD50": ((11581.2, 25016.5, 4249.0), (700, 149, 251, 0), 464.38, (0, 0, 200, 0), "T.O."),
        "MSSD70": ((13213.2, 28984.2, 4918.7), (700, 131, 269, 0), 485.84, (0, 0, 200, 0), "T.O."),
        "MSSD100": ((14860.0, 33266.0, 5622.0), (700, 100, 300, 0), 494.39, (0, 0, 200, 0), "T.O.")}
GAMMAS = [0.0001] + [k / 10 for k in range(1, 11)]


def sextile(gamma: float) -> int:
    """The paper's sextile of γ: S1 (0, 0.17], S2 (0.17, 0.33], S3 (0.33, 0.5], ..., S6 (0.83, 1]."""
    return min(6, int(np.ceil(gamma * 6 - 1e-9))) if gamma > 0 else 1


def seed000(quick: bool) -> list[Section]:
    sections = [loan_example(), *event_log_experiments(quick)]
    if not OPTIONS.event_log:                  # given logs: Table 1 and Exp2 on them, not the MSSD-sized models
        sections.append(mssd_timing(quick))
    if OPTIONS.jalergia_jar is not None:
        sections.append(learners(OPTIONS.jalergia_jar, quick))
    return sections


def learners(jar: Path, quick: bool) -> Section:
    """The paper learned its MDPs with jAlergia through AALpy 1.4.1; stormcf's IOAlergia is AALpy 2.0's (identical
    automata, tests/learn). jAlergia (the jar given, run by AALpy's run_JAlergia) on the same logs: process models
    (scripts/process_mdp.py) whose non-outcome states are observed through K event names, as in bench_learn.py."""
    from aalpy.learning_algs import run_JAlergia
    from process_mdp import process_mdp
    from stormcf.learn import LearnProblem, sample_log
    from stormcf.learn.alergia import ioalergia
    sec = Section(f"Seed 000: the learner, stormcf's IOAlergia (= AALpy 2.0) vs jAlergia ({jar.name}), α = 0.05")
    settings = ((300, 20, 5000),) if quick else ((300, None, 5000), (300, 10, 2000), (300, 20, 5000),
                                                  (1000, 50, 10000), (3000, 100, 20000))
    for n, K, cases in settings:
        m = process_mdp(n, seed=1)
        outcome = m.label("positive") | m.label("negative")
        observe = None if K is None else (lambda s: m.state_name(s) if outcome[s] else f"e{s % K}")
        log = sample_log(m, stormcf.Strategy.random(m, 0), cases, 0, observe=observe)
        t = LearnProblem(log, alpha=0.05).traces()
        ours = ioalergia(t, 0.05)
        o, a, off = t.outputs.tolist(), t.inputs.tolist(), t.offsets.tolist()
        data = [[f"o{t.initial}"] + [x for i, e in zip(a[off[c]:off[c + 1]], o[off[c]:off[c + 1]])
                                     for x in (f"i{i}", f"o{e}")] for c in range(len(off) - 1)]
        theirs = run_JAlergia(data, "mdp", str(jar), eps=0.05)
        edges = sum(len(v) for q in theirs.states for v in q.transitions.values())
        seen = "every state by its name" if K is None else f"{K} event names"
        sec.add(f"process_mdp({n}), {seen}, {cases:,} cases ({t.n_steps:,} steps): states / edges",
                "jAlergia via AALpy 1.4.1 (paper)", f"{ours.n_states} / {ours.source.size}; jAlergia "
                f"{len(theirs.states)} / {edges}", "equal" if (ours.n_states, ours.source.size) ==
                (len(theirs.states), edges) else "different automata from the same log")
    return sec


def loan_example() -> Section:
    from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
    sec = Section("Seed 000: the loan example (Fig. 1, Examples 1-3)")
    loan = stormcf.load_model(stormcf.example_path("loan.prism"))
    sigma = stormcf.Strategy.load(loan, stormcf.example_path("loan.impatient.json"))
    bad = 'P<=0.2 [F "rejected"]'
    sec.add("Pr^σ(s0, ◇Rejected) of the impatient σ (Ex. 1)", "0.411",
            fmt(stormcf.check_strategy(sigma, bad).value, 6) + " (Storm)", "equal (exactly 411/1000)")
    rework = loan.state_index({"s": 5})
    quit_, submit = loan.choice_of(rework, "Quit"), loan.choice_of(rework, "Submit")
    p = np.array(sigma.probabilities)
    p[quit_], p[submit] = 0.14, 0.86
    fig1c = stormcf.Strategy(loan, p)
    d = stormcf.strategy_distance(sigma, fig1c)
    sec.add("Fig. 1c's σ* (Rework: Quit 0.14 / Submit 0.86): probability, d = d0 + d1 + d∞",
            "valid for γ = 0.2; Δ = (0, 0, 0, 0.56): d0 = 1, d1 = 0.14, d∞ = 0.56 (Ex. 3)",
            f"Storm: {stormcf.check_strategy(fig1c, bad).value:.4f}; d0 = {d.d0}, d1 = {d.d1:.2f}, "
            f"d∞ = {d.dinf:.2f}, d = {d.d0 + d.d1 + d.dinf:.2f}", "equal")
    best = solve_counterfactual(CounterfactualProblem(sigma, bad))
    q = best.strategy.probabilities
    sec.add("the closest σ* under d0 + d1 + d∞, γ = 0.2", "Fig. 1c (d = 1.70)",
            f"Rework: Quit {q[quit_]:.4f} / Submit {q[submit]:.4f}; Storm {best.probability:.4g}; "
            f"d = {best.weighted_distance:.4f} ({best.status})",
            "Fig. 1c is this optimum rounded to two decimals (a valid, slightly farther σ*); both change Rework only")
    dinf = solve_counterfactual(CounterfactualProblem(sigma, bad, weights="0,0,1"))
    sec.add("least d∞ of a valid σ' (Ex. 3: 'none for ε < 0.51')", "0.51 (rounded)",
            f"{dinf.distance.dinf:.4f} ({dinf.status}, bisection with a proven lower bound)", "equal to 2 decimals")
    return sec


#: the paper's Table 1 (mean, std, min, max s; Opt (trivial included), Inf, T.O.; 10 σ x 11 γ) and Table 4 (states,
#: transitions, max out-degree of the learned models)
TABLE1 = {"GrepS": ((0.01, 0.01, 0.01, 0.05), (90, 20, 0), (64, 76, 6)),
          "BPIC12": ((0.79, 0.94, 0.04, 4.24), (110, 0, 0), (129, 288, 28)),
          "BPIC17": ((1.00, 1.06, 0.01, 5.01), (100, 10, 0), (158, 292, 19))}


#: Exp2 (diverse counterfactuals) runs on the instances of the first this many initial strategies
DIVERSE_STRATEGIES = 3


def generated_log(states: int, cases: int):
    """A log in the paper's shape: cases of a seeded process model (scripts/process_mdp.py) under a random strategy,
    every step observed by its state's name, each case ending in the observation "positive" or "negative"."""
    from process_mdp import process_mdp
    from stormcf.learn import sample_log
    m = process_mdp(states, seed=1)
    outcome = {int(s): o for o in ("positive", "negative") for s in np.flatnonzero(m.label(o))}
    return sample_log(m, stormcf.Strategy.random(m, 0), cases, 0, observe=lambda s: outcome.get(s, m.state_name(s)))


def event_logs(quick: bool) -> dict[str, tuple[object, str]]:
    """Table 1's logs: the ones given (--event-log NAME=FILE, --log-actions for activity logs), else generated logs
    of Table 4's sizes; with where each comes from."""
    from stormcf.learn import read_log
    if OPTIONS.event_log:
        actions = OPTIONS.log_actions.split(",") if OPTIONS.log_actions else None
        return {name: (read_log(file, actions), f"{file}") for name, file in OPTIONS.event_log}
    sizes = {"GrepS": 30} if quick else {name: row[2][0] for name, row in TABLE1.items()}
    cases = 300 if quick else 5000
    return {name: (generated_log(n, cases), f"generated: process_mdp({n}, seed=1), {cases:,} cases")
            for name, n in sizes.items()}


def event_log_experiments(quick: bool) -> list[Section]:
    """Table 1 (Exp1 on GrepS/BPIC12/BPIC17) and Exp2 (Figs. 3-4, diverse counterfactuals) from event logs: IOAlergia
    (α = 0.05) learns the MDP, random initial strategies, every γ of the paper, weights 1,1,1; Table 1 with one
    counterfactual per instance, Exp2 with three diverse ones (λ = 2) on the non-trivial feasible instances of the
    first DIVERSE_STRATEGIES σ."""
    from stormcf.counterfactual import CounterfactualProblem, diverse_counterfactuals, solve_counterfactual
    from stormcf.learn import LearnProblem, learn_mdp
    strategies, limit, diverse_limit = (1, 2.0, 3.0) if quick else (10, 20.0, 60.0)
    negative = OPTIONS.log_negative.split(",")
    table1 = Section(f"Seed 000: Table 1 from event logs ({strategies} random σ x {1 if quick else len(GAMMAS)} γ per "
                     f"model, weights 1,1,1, SCIP, {limit:g} s per instance; paper: 10 σ x 11 γ, Gurobi, 1,800 s)")
    exp2 = Section(f"Seed 000: Exp2, three diverse counterfactual strategies (λ = 2; Figs. 3-4) on the non-trivial "
                   f"feasible instances of the first {min(strategies, DIVERSE_STRATEGIES)} σ, {diverse_limit:g} s "
                   f"per instance")
    lines = ["| log | learned states / transitions / max out-degree (paper Table 4) | instances | mean / std / min / "
             "max s | opt+triv / inf / sub / t.o. | paper: mean / std / min / max s; opt / inf / t.o. |",
             "|---" * 6 + "|"]
    fig4 = ["| log | σ | γ | d(σ, σ*_k), k = 1 / 2 / 3 | novel state-action pairs of σ*_2 / σ*_3 |",
            "|---" * 5 + "|"]
    for name, (log, origin) in event_logs(quick).items():
        learned = learn_mdp(LearnProblem(log, alpha=0.05, labels={"target": negative}))
        model = learned.model
        degree = np.bincount(model.state_of_choice, weights=np.diff(model.transitions.indptr),
                             minlength=model.n_states)
        runs, diverse = [], []
        for seed in range(strategies):
            sigma = stormcf.Strategy.random(model, seed)
            for gamma in GAMMAS if not quick else [_between(sigma, '"target"')]:
                problem = CounterfactualProblem(sigma, f'P<={gamma} [F "target"]')
                wall = time.perf_counter()
                result = solve_counterfactual(problem, time_limit=limit)
                runs.append((result.status, time.perf_counter() - wall))
                if seed < DIVERSE_STRATEGIES and result.status in ("optimal", "suboptimal"):
                    diverse.append((seed, gamma, diverse_counterfactuals(problem, 3, time_limit=diverse_limit)))
                print(f"seed 000, {name}, σ {seed}, γ {gamma}: {result.status} in {runs[-1][1]:.1f} s",
                      file=sys.stderr, flush=True)
        status = Counter(s for s, _ in runs)
        times = np.array([t for _, t in runs])
        paper = TABLE1.get(name)
        paper_text = "-" if paper is None else (" / ".join(f"{x:.2f}" for x in paper[0]) + "; "
                                                + " / ".join(map(str, paper[1])))
        table_4 = "" if paper is None else f" ({' / '.join(map(str, paper[2]))})"
        lines.append(f"| {name} ({origin}) | {model.n_states} / {model.n_transitions} / {int(degree.max())}"
                     f"{table_4} | {len(runs)} | {times.mean():.2f} / {times.std():.2f} / {times.min():.2f} / "
                     f"{times.max():.2f} | {status['optimal'] + status['trivial']} / {status['infeasible']} / "
                     f"{status['suboptimal']} / {status['timeout']} | {paper_text} |")
        if paper:
            table1.add(f"{name}: mean / max s; optimal or trivial / infeasible / timeout",
                       f"{paper[0][0]:.2f} / {paper[0][3]:.2f}; {paper[1][0]} / {paper[1][1]} / {paper[1][2]} of 110",
                       f"{times.mean():.2f} / {times.max():.2f}; {status['optimal'] + status['trivial']} / "
                       f"{status['infeasible']} / {status['timeout']} of {len(runs)} ({status['suboptimal']} "
                       f"suboptimal)", "a generated log of the model's size, not the preprocessed GrepS/BPIC log "
                       "(docs/reproduction.md)" if not OPTIONS.event_log else "")
        exp2_rows(exp2, fig4, name, diverse)
    table1.text = "\n".join(lines)
    exp2.text = "\n".join(fig4)
    return [table1, exp2]


def exp2_rows(sec: Section, fig4: list[str], name: str, diverse: list) -> None:
    """Fig. 3 (distance of each of the three diverse counterfactuals to σ; novel state-action pairs) and Fig. 4's
    lines per γ, for one log."""
    found = [[r, *r.diverse] for *_, r in diverse]
    by_k = [[rs[k] for rs in found if len(rs) > k] for k in range(3)]
    distance = [" / ".join(f"{np.median([x.weighted_distance for x in rs]):.3f}" if rs else "-" for rs in by_k)]
    novel = " / ".join(f"{np.mean([x.novelty for x in rs]):.2f}" if rs else "-" for rs in by_k[1:])
    sec.add(f"{name}: d(σ, σ*_k) median, k = 1 / 2 / 3 (Fig. 3a)", "boxplots; 'varies only slightly between "
            "consecutive counterfactual strategies'", f"{distance[0]} ({len(found)} instances; "
            f"{sum(len(rs) for rs in found)} counterfactuals found)", "")
    sec.add(f"{name}: fraction of novel state-action pairs of σ*_2 / σ*_3, mean (Fig. 3b)",
            "boxplots; 'each provides novel recourse strategies'", novel, "")
    for seed, gamma, r in diverse:
        rs = [r, *r.diverse]
        fig4.append(f"| {name} | {seed} | {gamma:g} | " + " / ".join(f"{x.weighted_distance:.3f}" for x in rs) + " | "
                    + (" / ".join(f"{x.novelty:.2f}" for x in rs[1:]) or "-") + " |")


def _between(sigma: stormcf.Strategy, target: str) -> float:
    """A bound halfway between Storm's Pmin and σ's probability (a non-trivial, feasible instance; --quick)."""
    low = stormcf.check_model(sigma.model, f"Pmin=? [F {target}]").value
    return round((low + stormcf.check_strategy(sigma, f"P=? [F {target}]").value) / 2, 4)


def mssd_timing(quick: bool) -> Section:
    """Seed 000's Tables 2-4 on seeded process models of MSSD's sizes (scripts/process_mdp.py): every γ of the paper
    for random initial strategies, the mixed objective d0 + d1 + d∞ (the paper's), one time limit per instance."""
    from bench_counterfactual import models, ours
    from stormcf.counterfactual import CounterfactualProblem
    sizes = {"1,000 states": 1000} if quick else {name: round(v[0][0]) for name, v in MSSD.items()}
    strategies, limit = (1, 5.0) if quick else (2, 300.0)
    sec = Section(f"Seed 000: counterfactual strategies on generated models of MSSD's sizes, not automata learned "
                  f"from MSSD (Tables 2-4; {strategies} random σ x "
                  f"{1 if quick else len(GAMMAS)} γ per model, weights 1,1,1, {limit:g} s per instance; paper: 10 "
                  f"models x 10 σ x 11 γ, Gurobi, 1,800 s)")
    lines = ["| model | states / transitions / max out-degree (paper Table 4) | instances | trivial | infeasible | "
             "optimal | suboptimal | timeout | S2 (0.17, 0.33]: opt / inf / sub / t.o. | mean / max s (all) | "
             "mean / max s (S2) | paper: opt+triv / inf / t.o. / sub; mean s; S2 mean s |", "|---" * 12 + "|"]
    for label, n in sizes.items():
        (name, model, target), = models([f"process{n}"])
        degree = np.bincount(model.state_of_choice, weights=np.diff(model.transitions.indptr), minlength=model.n_states)
        runs = []
        for seed in range(strategies):
            sigma = stormcf.Strategy.random(model, seed)
            for gamma in GAMMAS if not quick else [_between(sigma, target)]:
                run = ours(CounterfactualProblem(sigma, f"P<={gamma} [F {target}]"), limit)
                runs.append((gamma, run["status"], run["time"]))
                print(f"seed 000, {label}, σ {seed}, γ {gamma}: {run['status']} in {run['time']:.1f} s",
                      file=sys.stderr, flush=True)
        status = Counter(s for _, s, _ in runs)
        s2 = [(s, t) for g, s, t in runs if sextile(g) == 2]
        s2c = Counter(s for s, _ in s2)
        times = [t for *_, t in runs]
        paper = MSSD.get(label)
        paper_text = "-"
        if paper:
            (ps, pt, pd), (o, i, to, sub), mean, s2p, s2t = paper
            paper_text = (f"{ps:,.0f} / {pt:,.0f} / {pd:,.0f}; {o} / {i} / {to} / {sub}; {mean} s; S2 "
                          f"{s2p[0]} / {s2p[1]} / {s2p[3]} / {s2p[2]}, {s2t}")
        lines.append(f"| {label} | {model.n_states:,} / {model.n_transitions:,} / {int(degree.max()):,} | "
                     f"{len(runs)} | "
                     f"{status['trivial']} | {status['infeasible']} | {status['optimal']} | {status['suboptimal']} | "
                     f"{status['timeout']} | {s2c['optimal'] + s2c['trivial']} / {s2c['infeasible']} / "
                     f"{s2c['suboptimal']} / {s2c['timeout']} | {np.mean(times):.2f} / {max(times):.2f} | "
                     f"{np.mean([t for _, t in s2]) if s2 else float('nan'):.2f} / "
                     f"{max((t for _, t in s2), default=float('nan')):.2f} | {paper_text} |")
        if paper:
            sec.add(f"{label}: instances of S2 not solved within the limit", f"{s2p[2]} of 200 time out (1,800 s)",
                    f"{s2c['timeout'] + s2c['suboptimal']} of {len(s2)} (limit {limit:g} s); mean "
                    f"{np.mean(times):.1f} s over all γ", "see below")
    sec.text = "\n".join(lines) + ("\n\nStatuses are stormcf's: *trivial* (σ already meets γ) and *infeasible* "
                                   "(Storm's Pmin > γ) are decided by Storm before any solver; the paper counts "
                                   "trivial instances as optimal. *suboptimal*: a Storm-checked σ* with a gap above "
                                   "1e-4 at the limit.")
    return sec


# =============================================================================================== seed 001
def seed001(quick: bool) -> list[Section]:
    sections = [tsirtsis_reference()]
    if not quick:
        sections.append(synthetic_figures())
    sections.append(sepsis_patients(quick))
    sections += [therapy_figures(), sepsis_single_patients(quick)]
    return sections


def tsirtsis_reference() -> Section:
    """The authors' own h(s0, T, k) on their reference episode (α = 0.4, param seed 1, episode 0) against stormcf's
    exact estimator and against the authors' Monte Carlo estimator replayed (synthetic_study.authors_mc_values)."""
    import tempfile
    from stormcf.explain import ExplanationProblem, k_change_dp
    from stormcf.explain.synthetic import path_dict, synthetic_prism
    from synthetic_study import authors_mc_values
    d = np.load(REFERENCE / "tsirtsis_synth_alpha0.4_ps1_id0.npz", allow_pickle=False)
    P = np.transpose(d["P"], (1, 0, 2))                       # the file's P[s, a, s'] -> the generator's P[a, s, s']
    states, actions = d["states"], d["actions"]
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "synth.prism"
        file.write_text(synthetic_prism(P, int(states[0])))
        model = stormcf.load_model(file)
    path = stormcf.ObservedPath.from_dict(model, path_dict(states, actions))
    problem = ExplanationProblem(path, "r", k=20, k_max=20)
    exact = k_change_dp(problem)
    replay = authors_mc_values(P, states, actions)
    ref = d["ref_h"]
    sec = Section("Seed 001: the authors' reference episode (synthetic, α = 0.4, param seed 1, episode 0; "
                  "h(s0, T, k), the best expected outcome with at most k changes)")
    sec.add("o(τ)", f"{float(d['observed_outcome']):g}", f"{problem.observed_outcome:g}", "equal")
    for k in (1, 2, 5, 10, 20):
        sec.add(f"h(s0, T, {k})", f"{ref[k]:.3f} (their Monte Carlo, d = 1000)",
                f"exact {exact.value(k):.3f}; their estimator replayed {replay[k]:.3f}",
                f"replay - theirs {replay[k] - ref[k]:+.1e}; exact - theirs {exact.value(k) - ref[k]:+.3f} "
                f"(Monte Carlo error and the max over noisy estimates)")
    return sec


def synthetic_figures() -> Section:
    """Figs. 2-3 (synthetic study, 7 α x 10 MDPs x 50 episodes) by synthetic_study.study, beside the notes §3.6
    numbers (the authors' procedure replayed; the paper has plots only)."""
    import synthetic_study as ss
    args = Namespace(quick=False, mc_episodes=0, storm_episodes=1, authors_mc_episodes=0, prism_dir=None)
    results = ss.study(args)
    sec = Section("Seed 001: the synthetic study (Figs. 2-3): mean relative improvement 100·(h - o)/o in %; paper: "
                  "plots only, the numbers are the notes' §3.6 run of the authors' procedure (Monte Carlo, d = 1000)")
    for alpha, rows in results.items():
        rel = ss._relative(rows)
        cells = [f"k={k}: {rel[:, k].mean():.2f} / {ss.NOTES_IMPROVEMENT[alpha][ss.KS.index(k)]:.2f}"
                 for k in (2, 5, 10, 20)]
        sec.add(f"α = {alpha}: stormcf exact / notes", "see notes", "; ".join(cells),
                "equal at α = 0; for α >= 0.4 the authors' Monte Carlo maximum is biased upwards (README)")
    u = np.array([r["unique"] for r in results[0.4]]).mean(axis=0)
    sec.add("unique explanations at α = 0.4, k = 2 / 4 / 6 / 10 (Fig. 3c)", "7.5 / 42.6 / 81.9 / 96.1 (notes)",
            " / ".join(f"{u[ss.UNIQUE_KS.index(k)]:.1f}" for k in (2, 4, 6, 10)), "sampling noise (100 samples)")
    pos = ss._relative(results[0.4])[:, [2, 5, 10]]
    sec.add("Fig. 2 (α = 0.4): share of episodes improved, k = 2 / 5 / 10", "0.998 / 1.000 / 1.000 (notes)",
            " / ".join(f"{np.mean(pos[:, i] > 1e-9):.3f}" for i in range(3)), "")
    return sec


def sepsis_patients(quick: bool) -> Section:
    """Figs. 4 and 6 (therapy, 73 patients) have no public data; the same statistics on the Sepsis simulator
    (sepsis.prism), observed paths of 10 steps sampled from the behaviour policy of seed 004's experiments."""
    from icfmdp_experiments import load
    from stormcf.counterfactual_mdp import sample_paths
    from stormcf.explain import ExplanationProblem, counterfactual_mdp, k_change_dp, summarize
    from stormcf.explain.baselines import BASELINES, baseline_policy
    from stormcf.counterfactual_mdp import evaluate
    from stormcf.paths import simulate
    model, behaviour, _ = load("Sepsis")
    patients, T, K = (3, 10, 5) if quick else (73, 10, 10)
    o, h, unique, base = [], [], [], {b: [] for b in BASELINES}
    for seed in range(patients):
        path = simulate(model, behaviour, T, seed=seed)
        problem = ExplanationProblem(path, "r", k=3, k_max=K)
        cf = counterfactual_mdp(problem)
        policy = k_change_dp(problem, cf)
        o.append(problem.observed_outcome)
        h.append([policy.value(k) for k in range(K + 1)])
        unique.append([len(summarize(sample_paths(cf, policy, 1000, np.random.default_rng(seed), k)).explanations)
                       for k in (1, 2, 3, 4)])
        for name in BASELINES:
            base[name].append(evaluate(cf, problem.step_rewards, baseline_policy(problem, cf, name), 3,
                                       problem.optimization))
    o, h, unique = np.array(o), np.array(h), np.array(unique)
    rel = 100 * (h - o[:, None]) / np.abs(o)[:, None]
    sec = Section(f"Seed 001: the therapy figures' statistics on Sepsis ({patients} observed paths of {T} steps; "
                  f"the therapy data of the paper are not public, so this is the same analysis on another setting, "
                  f"not a reproduction)")
    sec.add("mean h(s0, T, k) for k = 0 / 1 / 3 / 5 (Fig. 4b)", "plot; 'does not grow significantly with k'",
            " / ".join(f"{h[:, k].mean():.1f}" for k in (0, 1, 3, min(5, K))),
            "rewards -1000 (death) .. +1000 (discharge) instead of 5 - severity")
    positive = o > 0
    sec.add("patients with relative improvement >= 3 % at k = 3 (Fig. 4a)", "20 % (73 patients)",
            f"{100 * np.mean(rel[positive, 3] >= 3):.0f} % of the {int(positive.sum())} paths with a positive "
            f"outcome; improved at all: {100 * np.mean(h[:, 3] - o > 1e-9):.0f} % of all {patients}",
            "another process and reward: a Sepsis path that ends in death keeps -1000 per remaining step, so "
            "relative improvements are defined only for positive outcomes")
    sec.add("mean unique explanations, k = 1 / 2 / 3 / 4 (1000 samples; Fig. 4c)", "< 10 for k <= 4",
            " / ".join(f"{unique[:, i].mean():.1f}" for i in range(4)), "")
    sec.add("Algorithm 2 vs baselines at k = 3, mean value (Fig. 6)", "Algorithm 2 beats every baseline",
            f"Algorithm 2 {h[:, 3].mean():.1f}; " + "; ".join(f"{b} {np.mean(v):.1f}" for b, v in base.items()),
            "baselines' values exact on the same counterfactual MDPs")
    return sec


def therapy_figures() -> Section:
    """Which of the therapy figures (Figs. 4-8) can be reproduced: none, as the paper's data are not public."""
    sec = Section("Seed 001: the therapy figures (Figs. 4-8) and why none of them can be reproduced here")
    reason = ("the 73 patients' session data (severity per session, therapy themes) are not public, and the "
              "transition matrix P is estimated from those same sessions (Dirichlet posterior over all patients)")
    for fig, what, here in (
            ("Fig. 4", "73 patients: (a) relative improvement at k = 3, (b) mean h vs k, (c) unique explanations vs k",
             "the same statistics on 73 Sepsis paths (section above)"),
            ("Fig. 5", ("one patient (notebook id 456, T = 18, k = 3): outcome distribution, change frequency per "
                        "step with severities, the 5 unique explanations (notes §3.2)"),
             "the same analysis of one Sepsis path, in the paper's format (next section)"),
            ("Fig. 6", "Algorithm 2 vs random / greedy / noisy greedy on the 73 patients",
             "the same comparison on 73 Sepsis paths (section above)"),
            ("Fig. 7", "relative-improvement histograms for k = 1, 2, 5 on the 73 patients",
             "not drawn: the section above gives k = 3"),
            ("Fig. 8", ("five more patients (notebook ids 306, 142, 373, 15, 318), k = 3: outcome distribution and "
                        "change frequency per step"),
             "the same analysis of five Sepsis paths, in the paper's format (next section)")):
        sec.add(f"{fig}: {what}", "plot only", f"not reproducible: {reason}; {here}", "data not public")
    return sec


def _severity(model, states: np.ndarray) -> np.ndarray:
    """Sepsis's severity: the number of abnormal vitals (heart rate, blood pressure, oxygen, glucose) of each state."""
    v = model.valuations
    return ((v["hr"][states] != 1).astype(int) + (v["bp"][states] != 1) + (v["o2"][states] != 1)
            + (v["glu"][states] != 2))


def sepsis_single_patients(quick: bool) -> Section:
    """Figs. 5 and 8 (single patients) in the paper's format on Sepsis paths: the distribution of the counterfactual
    outcomes o(τ') of 1,000 realizations under π*_τ (k = 3), the change frequency per step beside the observed
    severity and the severity of the best realization, and (Fig. 5c) the unique explanations with their mean outcome
    and frequency. The paths are the Sepsis paths of the section above (seeds 0, 1, ...) with a positive outcome:
    the first for Fig. 5, the next five for Fig. 8."""
    from icfmdp_experiments import load
    from stormcf.counterfactual_mdp import sample_paths
    from stormcf.explain import ExplanationProblem, counterfactual_mdp, k_change_dp, summarize
    from stormcf.paths import simulate
    model, behaviour, _ = load("Sepsis")
    wanted, T, k, n = (2 if quick else 6), 10, 3, 1000
    patients = []
    for seed in range(200):
        path = simulate(model, behaviour, T, seed=seed)
        problem = ExplanationProblem(path, "r", k=k, k_max=k)
        if problem.observed_outcome <= 0:
            continue
        cf = counterfactual_mdp(problem)
        policy = k_change_dp(problem, cf)
        sampled = sample_paths(cf, policy, n, np.random.default_rng(seed), k)
        patients.append((seed, problem, policy, sampled, summarize(sampled, seed)))
        if len(patients) == wanted:
            break
    sec = Section(f"Seed 001: Figs. 5 and 8 in the paper's format on Sepsis (k = {k}, {n:,} counterfactual "
                  f"realizations per path, exact counterfactual MDP; paths of {T} steps with a positive outcome)")
    for i, (seed, problem, policy, sampled, summary) in enumerate(patients):
        o = problem.observed_outcome
        fig = "Fig. 5" if i == 0 else "Fig. 8"
        frequent = np.array(summary.change_frequency) > 0.05
        sec.add(f"{fig}, path seed {seed} (o(τ) = {o:g})",
                "9.5 % average improvement (Fig. 5)" if i == 0 else "counterfactual outcomes mostly >= observed",
                f"h = {policy.value(k):.1f}, improvement {100 * (policy.value(k) - o) / abs(o):.1f} %; sampled mean "
                f"{summary.mean_outcome:.1f}; {100 * np.mean(sampled.outcomes >= o):.0f} % of realizations >= o(τ); "
                f"changes at t = {', '.join(map(str, np.flatnonzero(frequent))) or 'none'} (> 5 % of realizations); "
                f"{len(summary.explanations)} unique explanations",
                "another process (Sepsis, not therapy)")
    first = patients[0][4]
    table = ["Fig. 5c on the first path: the unique explanations (changes t: from -> to), their mean counterfactual "
             "outcome r and frequency f over the realizations (the paper's patient: 5 explanations, notes §3.2):", "",
             "| changes | r | f |", "|---|---|---|"]
    table += [f"| {e.changes_text()} | {e.mean_outcome:.1f} | {100 * e.frequency:.1f} % |" for e in first.explanations]
    if not quick:
        table += ["", "![Fig. 5 on Sepsis](figures/seed001_fig5_sepsis.png)",
                  "![Fig. 8 on Sepsis](figures/seed001_fig8_sepsis.png)"]
        _single_patient_figures(model, patients)
    sec.text = "\n".join(table)
    return sec


def _patient_panels(model, axes, problem, sampled, summary) -> None:
    """One patient's panels in the paper's format: (a) histogram of o(τ') with o(τ) dashed; (b) per step the change
    frequency, the observed severity and the severity of the best counterfactual realization (darker = higher)."""
    o = problem.observed_outcome
    axes[0].hist(sampled.outcomes, bins=30, color="tab:green")
    axes[0].axvline(o, color="k", ls="--", label="o(τ)")
    axes[0].set(xlabel="counterfactual outcome o(τ')", ylabel="realizations")
    axes[0].legend(fontsize=7)
    best = int(np.argmax(sampled.outcomes))
    rows = np.vstack([np.array(summary.change_frequency), _severity(model, problem.path.states) / 4,
                      _severity(model, sampled.states[best]) / 4])
    axes[1].imshow(rows, cmap="Greens", vmin=0, vmax=1, aspect="auto")
    axes[1].set_yticks(range(3), ["change freq.", "severity (obs.)", "severity (best cf.)"], fontsize=7)
    axes[1].set_xticks(range(rows.shape[1]))
    axes[1].set_xlabel("t")


def _single_patient_figures(model, patients) -> None:
    from stormcf.plotting import pyplot, save_figure
    plt = pyplot()
    (ROOT / "docs" / "figures").mkdir(exist_ok=True)
    seed, problem, _, sampled, summary = patients[0]
    fig, axes = plt.subplots(1, 2, figsize=(9, 2.6))
    _patient_panels(model, axes, problem, sampled, summary)
    fig.suptitle(f"Fig. 5 on Sepsis: path seed {seed}, k = 3", fontsize=9)
    fig.tight_layout()
    save_figure(fig, ROOT / "docs" / "figures" / "seed001_fig5_sepsis.png", dpi=90)
    rest = patients[1:]
    fig, axes = plt.subplots(len(rest), 2, figsize=(9, 2.1 * len(rest)), squeeze=False)
    for row, (seed, problem, _, sampled, summary) in zip(axes, rest):
        _patient_panels(model, row, problem, sampled, summary)
        row[0].set_title(f"path seed {seed}", fontsize=8)
    fig.suptitle("Fig. 8 on Sepsis: five more paths, k = 3", fontsize=9)
    fig.tight_layout()
    save_figure(fig, ROOT / "docs" / "figures" / "seed001_fig8_sepsis.png", dpi=90)


# =============================================================================================== seed 002
#: the authors' released runs (notes §3.8), the paper's text: median front size 7 (Adult), 4 (German)
def seed002(quick: bool) -> list[Section]:
    sections = [person_fig2(), adult_labels()]
    if not quick:
        sections += recourse_runs(OPTIONS.cscf_repo)
    return sections


def person_fig2() -> Section:
    from stormcf.recourse import Plans, PrismRecourse, solve_recourse
    from stormcf.recourse.exact import optimum
    file = stormcf.example_path("person.prism")
    problem = PrismRecourse(stormcf.load_model(str(file), constants="p=1"), "accept", "cost", "effort", threshold=1.0)
    index = {name: i for i, name in enumerate(problem.action_names)}
    six = [("getDegree", "moveUS", "changeJob"), ("getDegree", "changeJob", "moveUS"),
           ("moveUS", "getDegree", "changeJob"), ("changeJob", "getDegree", "moveUS"),
           ("moveUS", "changeJob", "getDegree"), ("changeJob", "moveUS", "getDegree")]
    evaluation = problem.evaluate(Plans.from_steps([[(index[a], 0.0) for a in s] for s in six], len(index)))
    answer = optimum(problem.recourse_mdp())
    from stormcf.recourse import BRKGASettings
    result = solve_recourse(problem, BRKGASettings(n_offspring=100, n_mutants=50, generations=30, seed=1))
    sec = Section("Seed 002: the paper's Fig. 2 person (prism_models/person.prism)")
    sec.add("discounted costs of the six orders of getBSc, moveUS, chJob", "22.5, 25, 25, 27.5, 27.5, 30",
            ", ".join(f"{c:g}" for c in evaluation.cost), "equal")
    sec.add("least cost and its order", "22.5: getBSc, moveUS, chJob",
            f"{answer.value:g} (Storm, R{{\"cost\"}}min): "
            + ", ".join(problem.action_names[i] for i, _ in answer.plan),
            "equal")
    sec.add("Gower distance of that plan", "1.0 (notes O1: every feature changes fully)",
            f"{result.front[0].gower:.3f}",
            "person.prism's education has the values 0..2 (a degree is 0 -> 1 of range 2, so 1/2): (1 + 1/2 + 1)/3")
    return sec


def adult_labels() -> Section:
    from stormcf.recourse.datasets import load_dataset
    ours, authors = load_dataset("adult"), load_dataset("adult", authors_labels=True)
    sec = Section("Seed 002: Adult's labels")
    sec.add("share of '>50K' rows (45,222 rows without '?')", "16.6 % (the authors' preprocessing)",
            f"{100 * ours.y.mean():.1f} % ({int(ours.y.sum()):,}); with authors_labels=True "
            f"{100 * authors.y.mean():.1f} % ({int(authors.y.sum()):,})",
            "adult.test writes '>50K.', the authors' code compares with '>50K': all 3,700 high incomes of the test "
            "file become low income; stormcf strips the '.' (authors_labels=True replays their reading)")
    return sec


#: the authors' trained networks (CSCF @ ea8af1f, competitor/synth-action-seq/models/NAME/): the logit of accept
#: (their TRUE_LABEL: Adult [0, 1], high income; German [1, 0], good credit)
ACCEPT_LOGIT = {"adult": 1, "german": 0}


def authors_folder(repo: Path, name: str) -> Path:
    return repo / "competitor" / "synth-action-seq" / "models" / name


def their_categories(repo: Path, name: str) -> dict[str, list[str]]:
    """Per categorical feature, stormcf's category names in the order of the feature's one-hot block in the authors'
    network input: Adult's in the order of their mapping.json, German's in the order of german.features.json's
    ``values`` (the codebook's A-codes without the A: checking_account 14, 11, 12, 13)."""
    folder = authors_folder(repo, name)
    if name == "adult":
        mapping = json.loads((folder / "mapping.json").read_text())
        return {feature: [c.strip() for c in codes] for feature, codes in mapping.items()}
    spec = json.loads((folder / "german.features.json").read_text())
    return {f["name"]: [f"A{v}" for v in f["values"]] for f in spec if f["type"] in ("nominal", "ordinal")}


def authors_network(repo: Path, name: str):
    """The authors' trained network of data set ``name`` (models/NAME/model.h5: Adult 87 -> 50 -> 50 -> 2 logits,
    German 63 -> 40 -> 40 -> 2, ReLU; dropout is inactive at prediction) with their standardisation
    (NAME.features.json) as a stormcf NetworkClassifier (:func:`network_from_layers`). Reads arrays only (h5py,
    json)."""
    import h5py
    from stormcf.recourse.datasets import load_dataset
    folder = authors_folder(repo, name)
    spec = {f["name"]: f for f in json.loads((folder / f"{name}.features.json").read_text())}
    with h5py.File(folder / "model.h5", "r") as f:
        group = f["model_weights"]
        layers = [next(iter(group[n].values())) for n in
                  sorted((n for n in group if n.startswith("dense")), key=lambda n: int(n.split("_")[-1]))]
        W = [np.asarray(layer["kernel:0"], dtype=float) for layer in layers]
        b = [np.asarray(layer["bias:0"], dtype=float) for layer in layers]
    return network_from_layers(W, b, spec, their_categories(repo, name), load_dataset(name), ACCEPT_LOGIT[name])


def network_from_layers(W: list[np.ndarray], b: list[np.ndarray], spec: dict[str, dict],
                        categories: dict[str, list[str]], dataset, accept: int):
    """A network in the authors' layout as a stormcf NetworkClassifier: their input row (every feature at
    ``spec[name]["idx"]``, numeric ones standardised with ``spec``'s mean and std, categorical ones one-hot in the
    order ``categories``) permuted to stormcf's (numeric columns, then one-hot in stormcf's category order), and
    argmax of the two logits as one logistic unit, logit ``accept`` minus the other (its sigmoid is their softmax
    probability of accept)."""
    from stormcf.recourse.datasets import NetworkClassifier, _columns
    order = [spec[f.name]["idx"] for f in dataset.features if not f.is_categorical]
    for feature in dataset.features:
        if feature.is_categorical:
            order += [spec[feature.name]["idx"] + categories[feature.name].index(c) for c in feature.categories]
    columns = _columns(dataset)
    numeric = [dataset.features[j].name for j in columns["numeric"]]
    W, b = list(W), list(b)
    W[0] = W[0][order]
    W[-1] = (W[-1][:, accept] - W[-1][:, 1 - accept])[:, None]
    b[-1] = np.array([b[-1][accept] - b[-1][1 - accept]])
    return NetworkClassifier(columns["numeric"], np.array([spec[n]["mean"] for n in numeric]),
                             np.array([spec[n]["std"] for n in numeric]), columns["categorical"], columns["sizes"],
                             tuple(W), tuple(b), np.array([0, 1]))


def authors_instances(repo: Path, name: str) -> list[dict]:
    """The authors' 100 instances of data set ``name`` (experiment_data/test_instances/original_NAME_n=100.csv,
    categories as their codes: Adult's those of mapping.json, German's the codebook's without the A) by feature name,
    categories by name."""
    from stormcf.recourse.datasets import load_dataset
    if name == "adult":
        mapping = json.loads((authors_folder(repo, name) / "mapping.json").read_text())
        names = {col: {code: c.strip() for c, code in codes.items()} for col, codes in mapping.items()}
    rows = np.loadtxt(repo / "experiment_data" / "test_instances" / f"original_{name}_n=100.csv", delimiter=",")
    features = load_dataset(name).features

    def category(feature, v: float) -> str:
        return names[feature.name][int(v)] if name == "adult" else f"A{int(v)}"
    return [{f.name: category(f, v) if f.is_categorical else float(v) for f, v in zip(features, row)}
            for row in rows]


def authors_problem(x0: dict, classifier, discounted: bool, name: str):
    """The recourse problem of one of the authors' instances with their network (dataset_problem's parts)."""
    from stormcf.recourse import AUTHORS_ROUNDING, RecourseProblem
    from stormcf.recourse.datasets import adult_actions, adult_graph, german_actions, load_dataset
    dataset = load_dataset(name)
    ranges = {f.name: f.upper - f.lower for f in dataset.features if not f.is_categorical}
    actions = adult_actions(dataset) if name == "adult" else german_actions(dataset)
    return RecourseProblem(dataset.features, x0, classifier, 1, actions, adult_graph() if name == "adult" else None,
                           discounted=discounted, gower_ranges=ranges, rounding=AUTHORS_ROUNDING)


#: the runs with the authors' networks on their instances: (run, data set, discounted); cscf only on Adult, as in the
#: paper ("We only use cscf for Adult Census": German has no relation graph, so its cscf would be its scf)
AUTHORS_NETWORK_RUNS = (("scf", "adult", False), ("cscf", "adult", True), ("scf", "german", False))


def network_agreement(repo: Path, name: str, network) -> str:
    """The authors' network against the data: accuracy, share of accept, how many of their instances it rejects."""
    from stormcf.recourse.datasets import load_dataset, train_classifier
    ours = load_dataset(name)
    predicted = network.predict(ours.X)
    X0 = np.array([[f.categories.index(x[f.name]) if f.is_categorical else x[f.name] for f in ours.features]
                   for x in authors_instances(repo, name)])
    labels = f"{np.mean(predicted == ours.y):.3f} on its labels"
    if name == "adult":
        authors = load_dataset("adult", authors_labels=True)
        labels = f"{np.mean(predicted == authors.y):.3f} on their labels, {np.mean(predicted == ours.y):.3f} on the " \
                 "corrected ones"
    return (f"the authors' {name} network: accuracy {labels}; predicts 'accept' for {100 * predicted.mean():.1f} % of "
            f"the rows (stormcf's network: {100 * train_classifier(ours).predict(ours.X).mean():.1f} %); rejects "
            f"{int((network.predict(X0) == 0).sum())} of their {len(X0)} instances ({len(ours.features)} features)")


def authors_runs(repo: Path, name: str, discounted: bool, settings, network) -> list[dict]:
    """(c)scf on the authors' 100 instances of data set ``name`` with their network (:func:`authors_network`): the
    records recourse_experiments' statistics read."""
    import recourse_experiments as rx
    from stormcf.recourse import solve_recourse
    records = []
    for x0 in authors_instances(repo, name):
        cpu = time.process_time()
        problem = authors_problem(x0, network, discounted, name)
        result = solve_recourse(problem, settings)
        records.append({"front": [{"actions": p.actions, "cost": p.cost, "effort": p.effort,
                                   "accept_probability": rx.accept_probabilities(problem, p)}
                                  for p in result.front], "cpu_seconds": time.process_time() - cpu})
    return records


def authors_network_runs(repo: Path, settings) -> tuple[dict[str, list[dict]], str]:
    """AUTHORS_NETWORK_RUNS: the records by run, and each network's agreement with the data."""
    networks = {name: authors_network(repo, name) for name in ("adult", "german")}
    records = {f"{run} {name} (authors' network and instances)": authors_runs(repo, name, discounted, settings,
                                                                                networks[name])
               for run, name, discounted in AUTHORS_NETWORK_RUNS}
    return records, "; ".join(network_agreement(repo, name, network) for name, network in networks.items())


def recourse_runs(cscf_repo: Path | None) -> list[Section]:
    """The paper's GA on 100 rejected instances per run (recourse_experiments.run_instance), with stormcf's labels
    and with the authors' Adult labels; with ``cscf_repo`` (a checkout of the authors' repository) also on their
    100 instances of each data set with their trained networks (AUTHORS_NETWORK_RUNS)."""
    import recourse_experiments as rx
    from stormcf.recourse import AUTHORS_ROUNDING, BRKGASettings
    settings = BRKGASettings()
    runs = [("scf", "adult", False, False), ("cscf", "adult", True, False), ("scf", "german", False, False),
            ("cscf", "adult", True, True)]
    records: dict[str, list[dict]] = {}
    for run, dataset, discounted, authors in runs:
        key = f"{run} {dataset}" + (" (authors' labels)" if authors else "")
        records[key] = [rx.run_instance(run, dataset, discounted, i, settings, AUTHORS_ROUNDING, 9, authors)
                        for i in range(100)]
    note = "not run: give --cscf-repo (a checkout of the authors' repository; needs h5py)"
    if cscf_repo is not None:
        network, note = authors_network_runs(cscf_repo, settings)
        records.update(network)
    return [experiment_section(records, note), action_effect_section(records), synth_competitor(records, cscf_repo)]


#: the paper's only statistic of the fronts (§5.1): "our method finds multiple optimal sequences (on median 4 for
#: German Credit and 7 for Adult Census)"; it ran cscf on Adult only
PAPER_FRONT_MEDIAN = {"adult": "7 for Adult Census", "german": "4 for German Credit"}


#: the released runs' median least Σb of a plan with T <= 2: over the instances of Fig. 4 (notes §3.8) and, for German
#: (85 of them), over all 96 instances with such a plan (released_least_t2 on results/my_method/german_scf)
RELEASED_EFFORT = {"scf adult": "5.408 (released runs, the 97 instances of Fig. 4)",
                   "cscf adult": "5.453 (released runs, the 97 instances of Fig. 4)",
                   "scf german": "0.387 (released runs, the 96 instances with such a plan; 0.351 on the 85 of Fig. 4)"}


def experiment_section(records: dict[str, list[dict]], note: str) -> Section:
    """The statistics of every run's records (recourse_runs) beside the paper's and the released runs'."""
    import recourse_experiments as rx
    sec = Section("Seed 002: the paper's experiments (100 rejected instances per run, GA 400 + 100 + elites, "
                  "150 generations, bias 0.7, the authors' roundings; every plan re-checked by Storm)")
    for key, recs in records.items():
        base = key.split(" (")[0]
        sizes = [len(r["front"]) for r in recs]
        efforts = [v for v in (rx.least_effort_t2(r) for r in recs) if v is not None]
        cpu = np.median([r["cpu_seconds"] for r in recs])
        a = rx.AUTHORS_RUNS[base]
        mine = "authors' network" in key
        sec.add(f"{key}: front size median (mean, min-max)", f"paper (§5.1): 'on median "
                f"{PAPER_FRONT_MEDIAN[base.split()[1]]}' (no run named, no mean or range); released runs {a[0]} "
                f"({a[1]}, {a[2]}-{a[3]})", f"{np.median(sizes):g} ({np.mean(sizes):.2f}, {min(sizes)}-{max(sizes)})",
                "the authors' network and instances" if mine else "stormcf's classifier and instances")
        sec.add(f"{key}: median least Σb of a plan with T <= 2 (Fig. 4's quantity)", RELEASED_EFFORT[base],
                f"{np.median(efforts):.3f} ({len(efforts)} of {len(recs)} instances)", "")
        sec.add(f"{key}: CPU seconds per instance, median", f"{a[5]} s wall (Colab)", f"{cpu:.2f}", "")
    for key in (k for k in records if "adult" in k):
        after_before, hours, _ = rx.order_counts(records[key])
        paper = rx.AUTHORS_ORDER["addEdu after / before chCapGain"][0 if key.startswith("cscf") else 1]
        sec.add(f"{key}: addEdu after / before chCapGain over all front plans", f"{paper} (released runs)",
                after_before, "")
        paper = rx.AUTHORS_ORDER["chWorkHrs before / after chCapGain"][0 if key.startswith("cscf") else 1]
        sec.add(f"{key}: chWorkHrs before / after chCapGain", f"{paper} (released runs)", hours, "")
    for key in (k for k in records if k.startswith("cscf")):
        ratios = [p["cost"] / p["effort"] for r in records[key] for p in r["front"] if p["effort"] > 0]
        sec.add(f"{key}: discounted / undiscounted cost, median (mean)", "0.927 (0.881) (released runs)",
                f"{np.median(ratios):.3f} ({np.mean(ratios):.3f})", "")
    lengths = {key: Counter(len(p["actions"]) for r in recs for p in r["front"]) for key, recs in records.items()}
    sec.text = (f"The authors' networks and instances: {note}.\n\nPlan lengths T = 1/2/3/4/5 over all front "
                "plans (released runs: scf Adult 167/279/258/51/1, cscf Adult 168/284/251/50/0, scf German "
                "228/138/63/6/0):\n\n" + "\n".join(f"- {key}: " + " / ".join(str(c.get(t, 0)) for t in range(1, 6))
                                                   for key, c in lengths.items()))
    return sec


#: the paper's reading of Fig. 6 (§5.3; a plot without numbers): per action, where its median f(x_t) passes 0.5
FIG6_TEXT = {"chCapGain": "'almost able to switch the class on its own' (t = 1); in cscf often at t = 1, in scf "
                          "'usually not quite possible'",
             "addEdu": "'almost able to switch the class on its own' (t = 1); slightly lower in cscf, gone after t = 3",
             "waitYears": "switches 'later at position two'", "enlist": "switches at position two; 'more able to "
                                                                        "change the class in cscf'",
             "chWorkHrs": "switches at position three", "chCapLoss": "switches at position three"}


def action_effect_section(records: dict[str, list[dict]]) -> Section:
    """Fig. 6 (Adult): per action and position t, the median f(x_t) (the network's probability of accept after the
    action) over all front plans, with its bootstrapped 95 % interval; scf and cscf side by side."""
    import recourse_experiments as rx
    runs = {key: rx.action_effect(recs) for key, recs in records.items() if "adult" in key and "labels" not in key}
    sec = Section("Seed 002: Fig. 6, the action effect by position (Adult; median f(x_t) after the action over all "
                  "front plans [bootstrapped 95 % interval] (plans); > 0.5: the label has switched)")
    for action, paper in FIG6_TEXT.items():
        cells = []
        for key, effect in runs.items():
            at = [(t, v) for (a, t), v in effect.items() if a == action]
            first = next((t for t, v in at if v[0] > 0.5), None)
            cells.append(f"{key}: " + "; ".join(f"t={t} {m:.3f} [{lo:.3f}, {hi:.3f}] ({n})"
                                                for t, (m, lo, hi, n) in at)
                         + f" -> first t with median > 0.5: {first if first else 'none'}")
        sec.add(action, paper, "<br>".join(cells), "")
    figure = OPTIONS.out / "seed002-fig6.png"
    action_effect_figure(runs, figure)
    sec.text = f"The figure: `{figure}`."
    return sec


def action_effect_figure(runs: dict[str, dict[tuple[str, int], tuple]], out: Path) -> None:
    """Fig. 6 as the paper draws it: per action, the median f(x_t) against t with its 95 % interval, one line per
    run; the dashed line is the decision threshold 0.5."""
    from stormcf.plotting import pyplot, save_figure
    plt = pyplot()
    actions = list(FIG6_TEXT)
    fig, axes = plt.subplots(1, len(actions), figsize=(2.2 * len(actions), 2.6), sharey=True)
    for ax, action in zip(axes, actions):
        for key, effect in runs.items():
            at = sorted((t, v) for (a, t), v in effect.items() if a == action)
            if at:
                t = [x for x, _ in at]
                m, lo, hi = (np.array([v[i] for _, v in at]) for i in range(3))
                label = key.replace(" (authors' network and instances)", ", authors' network")
                ax.errorbar(t, m, yerr=[m - lo, hi - m], marker="o", ms=3, capsize=2, label=label)
        ax.axhline(0.5, ls="--", lw=0.8, color="grey")
        ax.set_xticks(range(1, 6))
        ax.set_title(action, fontsize=9)
        ax.set_xlabel("t", fontsize=8)
    axes[0].set_ylabel("median f(x_t)", fontsize=8)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out, dpi=80)


#: the bounds the authors' analysis checks on synth's final state (src/analysis/analysis.py, violates_constraints:
#: the state rounded to integers, "x0" the instance's own value): synth results outside them are dropped from Fig. 4
#: ("the number of experiments for German Credit was post-hoc decreased to 85")
SYNTH_BOUNDS = {"adult": {"Age": ("x0", 120), "Hours/Week": (0, 90), "Capital Gain": (0, 100000),
                          "Capital Loss": (0, 5000), "Education num": ("x0", 16.5)},
                "german": {"age_in_years": ("x0", 120), "credit_amount": (0, 100000), "loan_duration": (0, 120)}}

#: the paper's reading of Fig. 4 (§5.1), per data set
PAPER_FIG4 = {"adult": "'(c)scf usually performed better in Adult Census'",
              "german": "'In German Credit it seems to be fairly even, but with a slight tendency towards scf'"}


def synth_kept(name: str, x0: dict, final: dict) -> bool:
    """Whether synth's final state ``final`` (by feature name) keeps SYNTH_BOUNDS of instance ``x0``."""
    for feature, (low, high) in SYNTH_BOUNDS[name].items():
        x = np.around(float(final[feature]))
        if x < (x0[feature] if low == "x0" else low) or x > high:
            return False
    return True


def synth_released(repo: Path, name: str) -> dict[int, float]:
    """The synth competitor's released results (results/competitor/NAME/run_*.json of the authors' repository, run
    with the Vanilla heuristic and T <= 2): the cost Σb of its one sequence per instance, where it succeeded and its
    final state keeps the authors' bounds (:func:`synth_kept`)."""
    import ast
    instances = authors_instances(repo, name)
    out = {}
    for file in sorted((repo / "results" / "competitor" / name).glob("run_*.json")):
        run = json.loads(file.read_text())
        output = run.get("output")                  # the text 'Not Found' where synth found nothing
        best = output.get("best_result") if isinstance(output, dict) else None
        if not (run.get("success") and best):
            continue
        final = best["final_instance_info"]        # a dict, or its repr in some files
        if synth_kept(name, instances[int(run["idx"])], final if isinstance(final, dict) else ast.literal_eval(final)):
            out[int(run["idx"])] = float(best["cost"])
    return out


def released_least_t2(repo: Path, name: str, run: str) -> dict[int, float]:
    """The least Σb of a front plan with T <= 2 per instance in the authors' released (c)scf runs
    (results/my_method/NAME_RUN/*.json: summed_costs per front plan; pheno's first half is the action order, -1 for
    no action), where the run succeeded and has such a plan."""
    out = {}
    for file in (repo / "results" / "my_method" / f"{name}_{run}").glob("*.json"):
        record = json.loads(file.read_text())
        if not record.get("success"):
            continue
        costs = [float(np.ravel(c)[0]) for c, pheno in zip(record["summed_costs"], record["pheno"])
                 if sum(a != -1 for a in pheno[:len(pheno) // 2]) <= 2]
        if costs:
            out[int(record["x0_id"])] = min(costs)
    return out


def synth_competitor(records: dict[str, list[dict]], repo: Path | None) -> Section:
    """Fig. 4: stormcf's (c)scf on the authors' networks and instances against synth's released costs (synth itself
    is not run here: the row says why), beside the released (c)scf runs where the repository has them."""
    import recourse_experiments as rx
    sec = Section("Seed 002: the synth competitor (Fig. 4: least Σb of a plan with T <= 2 per instance, A vs synth; "
                  "A better / synth better / tie, median (B-A)/max{A,B}, median Σb A / synth)")
    sec.add("synth run here", "the authors ran synth (goutham7r/synth-action-seq, Vanilla heuristic, T <= 2) on "
            "Colab: 100-150 s per instance (released runs)", "not run",
            "synth is TensorFlow code pinned to tensorflow==2.3.0 and numpy<1.19 (its requirements.txt); pip finds "
            "no tensorflow 2.3.0 for this Python 3.11 (the oldest it offers is 2.12), and stormcf has no port of "
            "synth's adversarial search; its released per-instance costs are compared instead (below, with "
            "--cscf-repo)")
    if repo is None:
        return sec
    for key in (k for k in records if "authors' network" in k):
        run, name = key.split()[:2]
        synth = synth_released(repo, name)
        theirs = [synth.get(i) for i in range(len(records[key]))]
        stats = rx.compare([rx.least_effort_t2(r) for r in records[key]], theirs)
        p = rx.AUTHORS_PAIRS[f"{run} vs synth, {name.capitalize()}"]
        paper = (f"{p[1]} / {p[2]} / {p[3]} of {p[0]}, {p[4]:.3f}, {p[8]:.3f} / {p[9]:.3f} (the released runs of both, "
                 f"notes §3.8; the paper: {PAPER_FIG4[name]})")
        released = released_least_t2(repo, name, run)
        if released:
            again = rx.compare([released.get(i) for i in range(len(theirs))], theirs)
            paper += (f"; recomputed here from the released files with the authors' filter: {again[1]} / {again[2]} "
                      f"/ {again[3]} of {again[0]}, {again[4]:.3f}, {again[8]:.3f} / {again[9]:.3f}")
        sec.add(f"{run} vs synth, {name.capitalize()}", paper,
                f"{stats[1]} / {stats[2]} / {stats[3]} of {stats[0]}, {stats[4]:.3f}, {stats[8]:.3f} / {stats[9]:.3f}",
                f"stormcf's {run} with the authors' network on their instances against synth's released costs "
                f"({len(synth)} of 100 kept)")
    return sec


# =============================================================================================== seed 003
def seed003(quick: bool) -> list[Section]:
    from stormcf.setcover import SetCoverInstance, SetCoverProblem, solve_setcover
    sec = Section("Seed 003: the worked example (§3, notes §1.6)")
    inst = SetCoverInstance.load(ROOT / "tests" / "data" / "setcover" / "paper_example.json")
    result = solve_setcover(SetCoverProblem(inst, np.array([0, 0, 0, 0, 1])))
    sec.add("optimal CFE of x = (0,0,0,0,1)", "{a2, a4, a7}, cost 13",
            f"{{{', '.join(inst.names(result.actions))}}}, cost {result.cost:g} (Storm-checked; unique: "
            f"{result.unique})",
            "equal; the paper's ILP as printed (without x) gives 15, and the optimum is tied with the zero-cost a6")
    learned = Section("Seed 003: learned generators (Tables 2, 3 bottom, 4, 5; Figs. 6, 8) through "
                      "scripts/setcover_experiments.py")
    learned.text = setcover_parts(quick)
    return [sec, learned]


def setcover_parts(quick: bool) -> str:
    """The learning parts of setcover_experiments.py, each in a child process (its options are its own)."""
    script = SCRIPTS / "setcover_experiments.py"
    out = []
    parts = ["table5", "table2", "table3"] if quick else ["labelling", "table5", "table2", "table3", "table4", "fig6"]
    for part in parts:
        argv = [sys.executable, str(script), part] + (["--quick"] if quick else [])
        done = subprocess.run(argv, capture_output=True, text=True, cwd=os.getcwd())
        status = "" if done.returncode == 0 else f" (exit {done.returncode}: {done.stderr.strip()[-500:]})"
        out.append(f"`{' '.join(['setcover_experiments.py'] + argv[2:])}`{status}:\n\n```text\n"
                   f"{done.stdout.strip()}\n```")
    return "\n\n".join(out)


# =============================================================================================== seed 004
def seed004(quick: bool) -> list[Section]:
    sections = [bound_widths(quick), policy_comparison(quick), construction_times(quick)]
    if not quick:
        sections.append(deviation_cause())
    return sections


def bound_widths(quick: bool) -> Section:
    """Table 3: mean bound width over every transition at every step (layers="all"), CS+M / CS / none, averaged over
    random observed paths; and the authors' own bounds on their reference paths."""
    from icfmdp_experiments import MODELS, T, mean_bound_widths
    from stormcf.icfmdp import interval_cfmdp, mdp_from_arrays, path_from_arrays
    n_paths = 2 if quick else 20
    names = ("GridWorld p=0.9",) if quick else tuple(MODELS)
    sec = Section(f"Seed 004: Table 3, mean bound width (transitions with UB > 0, every transition at every step), "
                  f"{n_paths} random paths of T = {T}")
    for name in names:
        sec.add(f"{name}: CS+M / CS / none", "table not in the seed text; 'the assumptions marginally reduce the "
                "bound widths'", " / ".join(f"{w:.4f}" for w in mean_bound_widths(name, n_paths).values()),
                "consistent: CS+M <= CS <= none, moderately")
    envs = ("gridworld_0.9",) if quick else ("gridworld_0.9", "gridworld_0.4", "frozen_lake", "aircraft", "sepsis")
    files = [f"lally_{e}_sampled_seed0.npz" for e in envs]
    for file in files:
        d = np.load(REFERENCE / file, allow_pickle=False)
        model = mdp_from_arrays(d["P"], d["R"], initial_state=int(d["init_state"]), source=file)
        path = path_from_arrays(model, d["obs_states"], d["obs_actions"], d["obs_next_states"])
        ic = interval_cfmdp(path, layers="all", summation="authors")
        live = d["ref_ub"] > 0
        theirs = float((d["ref_ub"] - d["ref_lb"])[live].mean())
        lower, upper = ic.aligned()
        same = np.array_equal(lower, d["ref_lb"]) and np.array_equal(upper, d["ref_ub"])
        sec.add(f"{file[6:-4]}: mean width, CS+M, the authors' own sampled path", f"{theirs:.6f} (their code's bounds)",
                f"{ic.mean_bound_width():.6f}", "bounds bit-identical" if same else "bounds differ")
    return sec


def policy_comparison(quick: bool) -> Section:
    """Figs. 3-5: the robust ICFMDP policy against the Gumbel-max policy on the four observed paths
    (icfmdp_experiments.four_paths), CFMDPs sampled from the ICFMDP, counterfactual paths under both."""
    from icfmdp_experiments import four_paths, load
    from stormcf.counterfactual_mdp import gumbel_cfmdp
    from stormcf.icfmdp import evaluate_policies, interval_cfmdp, policy_value, robust_value_iteration, storm_value
    from stormcf.icfmdp.result import policy_changes
    cfmdps, n_paths = (2, 20) if quick else (200, 10_000)
    names = ("GridWorld p=0.9",) if quick else ("GridWorld p=0.9", "GridWorld p=0.4", "Sepsis")
    sec = Section(f"Seed 004: Figs. 3-5, robust ICFMDP policy vs Gumbel-max policy ({cfmdps} CFMDPs x {n_paths:,} "
                  f"counterfactual paths; worst cases are Storm's robust values)")
    follows = "both policies follow the observation ('to guarantee rewards are no worse than the observation')"
    avoids = "robust avoids deviating from the observed policy; Gumbel-max wide range"
    claims = {("GridWorld p=0.9", "almost catastrophic"): "robust more conservative, follows the observed path more "
                                                          "closely (typically one more step to the goal)",
              ("GridWorld p=0.4", "slightly suboptimal"): avoids, ("GridWorld p=0.4", "almost catastrophic"): avoids,
              ("Sepsis", "optimal"): follows, ("Sepsis", "almost catastrophic"): follows,
              ("Sepsis", "slightly suboptimal"): "robust significantly better, higher lower bound",
              ("Sepsis", "catastrophic"): "Gumbel-max better on average; both reach -1000; robust worst case better"}
    for fig, name in zip((3, 4, 5), names):
        model, behaviour, bad = load(name)
        for kind, path in four_paths(name, model, behaviour, bad).items():
            ic = interval_cfmdp(path)
            robust = robust_value_iteration(ic)
            gumbel = robust_value_iteration(gumbel_cfmdp(path, layers=ic.layers))
            ev = evaluate_policies(ic, {"robust": robust, "gumbel-max": gumbel}, cfmdps, n_paths, seed=fig)
            s = {x.name: x for x in ev.statistics}
            worst_r = storm_value(ic, policy=robust, expected=robust.value()).confirm().value
            worst_g = storm_value(ic, policy=gumbel, expected=policy_value(gumbel, ic)).confirm().value
            changes = policy_changes(robust)
            claim = claims.get((name, kind), "policies similar")
            deviates = bool(changes) and claim in (follows, avoids)
            sec.add(f"Fig. {fig} {name}, {kind} (observed {ev.observed_reward:g})", claim,
                    f"robust {s['robust'].mean:.4g} [{s['robust'].minimum:g}, {s['robust'].maximum:g}], worst "
                    f"{worst_r:.4g}; Gumbel-max {s['gumbel-max'].mean:.4g} [{s['gumbel-max'].minimum:g}, "
                    f"{s['gumbel-max'].maximum:g}], worst {worst_g:.4g}; robust "
                    + (f"changes the observed action at t = {', '.join(map(str, changes))}" if changes
                       else "follows the observation"),
                    "differs: the robust policy deviates (see 'why the robust policy deviates')" if deviates else "")
    return sec


def _clocks(build) -> tuple[float, float]:
    """CPU and wall seconds of ``build()`` (this process only: every construction here is single-threaded)."""
    cpu, wall = time.process_time(), time.perf_counter()
    build()
    return time.process_time() - cpu, time.perf_counter() - wall


def construction_times(quick: bool) -> Section:
    """Table 4: time to build the ICFMDP (closed forms) and the Gumbel-max CFMDP (exact, and Monte Carlo with 10,000
    samples as the authors) for every state at every step (layers="all", as the authors build them), median over
    20 observed paths of T = 10 (Table 3's paths). Sepsis's Monte Carlo CFMDP is timed on 100 pairs of step 0 and
    extrapolated to every pair of every step (the whole would take about 25 CPU minutes per path)."""
    from icfmdp_experiments import T, load
    from stormcf.counterfactual_mdp import counterfactual_transitions, gumbel_cfmdp
    from stormcf.icfmdp import interval_cfmdp
    from stormcf.paths import simulate
    n_paths, samples = (2, 0) if quick else (20, 10_000)
    names = ("GridWorld p=0.9",) if quick else ("GridWorld p=0.9", "GridWorld p=0.4", "Sepsis")
    sec = Section(f"Seed 004: Table 4, construction time per observed path (median over {n_paths} paths of T = {T}; "
                  f"CPU / wall seconds, one process on the 2 shared vCPUs)")
    for name in names:
        model, behaviour, _ = load(name)
        times: dict[str, list[tuple[float, float]]] = {"ic": [], "exact": [], "mc": []}
        for seed in range(n_paths):
            path = simulate(model, behaviour, T, seed=1000 + seed)
            times["ic"].append(_clocks(partial(interval_cfmdp, path, layers="all")))
            times["exact"].append(_clocks(partial(gumbel_cfmdp, path, layers="all")))
            if samples and name == "Sepsis":
                pairs = np.random.default_rng(seed).choice(model.n_choices, 100, replace=False)
                cpu, wall = _clocks(partial(counterfactual_transitions, model, int(path.choices[0]),
                                            int(path.next_states[0]), pairs, "mc", samples, seed))
                scale = T * model.n_choices / 100
                times["mc"].append((scale * cpu, scale * wall))
            elif samples:
                times["mc"].append(_clocks(partial(gumbel_cfmdp, path, "mc", samples, seed, layers="all")))
        med = {key: np.median(np.array(v), axis=0) if v else None for key, v in times.items()}
        labels = {"ic": "ICFMDP", "exact": "Gumbel-max exact",
                  "mc": f"Gumbel-max Monte Carlo {samples:,}" + (" (extrapolated)" if name == "Sepsis" else "")}
        ratio = "" if med["mc"] is None else f"; Monte Carlo / ICFMDP {med['mc'][0] / med['ic'][0]:,.0f}x (CPU)"
        sec.add(f"{name}: CPU s / wall s per path",
                "numbers not in the seed text (it breaks off: 'Generating the interval CFMDP is significantly "
                "faster as it uses exact analytical bounds, whereas the Gumbel-max')",
                "; ".join(f"{labels[key]} {med[key][0]:.3g} / {med[key][1]:.3g}" for key in labels
                          if med[key] is not None) + ratio,
                "the paper: 128-core Xeon, GridWorld single-threaded, Sepsis ICFMDP on 10 threads and Gumbel-max on 32")
    return sec


def _follow_rate(model, behaviour, bad: np.ndarray, kind: str, T: int) -> tuple[np.ndarray, np.ndarray]:
    """For the candidate paths of ``kind`` among 400 paths of T steps simulated under ``behaviour`` (never in a bad
    state; "almost catastrophic": also visit a state with an action that can reach a bad one): whether the robust
    ICFMDP policy follows each observation, and each observed reward."""
    from icfmdp_experiments import near_bad
    from stormcf.icfmdp import interval_cfmdp, robust_value_iteration
    from stormcf.icfmdp.result import policy_changes
    from stormcf.paths import simulate
    near = near_bad(model, bad)
    visits = lambda p, mask: bool(mask[np.append(p.states, p.final_state)].any())
    safe = [p for p in (simulate(model, behaviour, T, seed=seed) for seed in range(400)) if not visits(p, bad)]
    candidates = safe if kind == "slightly suboptimal" else [p for p in safe if visits(p, near)]
    follow = np.array([not policy_changes(robust_value_iteration(interval_cfmdp(p))) for p in candidates])
    return follow, np.array([p.outcome(model.step_rewards("r")) for p in candidates])


def _authors_mdp(env: str, reward: str):
    """The authors' MDP of a reference instance (their P, their behaviour policy; rewards ``"authors"``: their
    R[s, a], or ``"state"``: the state reward of s) and its catastrophic states (absorbing, lowest reward)."""
    from stormcf.icfmdp import mdp_from_arrays
    d = np.load(REFERENCE / f"lally_{env}_sampled_seed0.npz", allow_pickle=False)
    sr = d["state_rewards"]
    R = d["R"] if reward == "authors" else np.repeat(sr[:, None], d["R"].shape[1], axis=1)
    model = mdp_from_arrays(d["P"], R, initial_state=int(d["init_state"]), source=env)
    return model, stormcf.Strategy(model, d["behaviour_policy"].reshape(-1)), d["sink_state"] & (sr == sr.min())


def deviation_cause() -> Section:
    """Why the robust policy deviates where the paper says it follows the observation. Following the observation
    earns exactly o(τ) in every CFMDP of the ICFMDP (the observed pair's row is the point mass, Theorem 4.1), so the
    robust policy deviates iff some deviation has a worst-case value above o(τ): the observed path decides. Tested
    on every candidate path of a kind, on stormcf's models and on the authors' own MDPs (reference instances: their
    P, behaviour policy and rewards), whose bounds are bit-identical to their code's (Table 3)."""
    from icfmdp_experiments import T, load
    d = np.load(REFERENCE / "lally_sepsis_sampled_seed0.npz", allow_pickle=False)
    most_likely = d["state_rewards"][d["P"].argmax(axis=2)]
    sec = Section("Seed 004: why the robust policy deviates on two of the paper's 'follows the observation' rows "
                  f"(the robust ICFMDP policy on every candidate path among 400 simulated ones, T = {T} unless "
                  f"said)")
    sec.add("Sepsis rewards: the authors' R[s, a] against sepsis.prism's", "-1000 (death) .. 1000 (discharge), "
            "by out-of-range vitals", f"the authors' R[s, a] is the state reward of the most likely successor in "
            f"{100 * np.mean(d['R'] == most_likely):.0f} % of pairs, the state reward of s in "
            f"{100 * np.mean(d['R'] == d['state_rewards'][:, None]):.0f} %; sepsis.prism: the state reward of s",
            "a second convention, tested below on the authors' MDP")
    runs = [(f"stormcf's {name}", lambda name=name: load(name), kind, T)
            for name, kind in (("GridWorld p=0.4", "slightly suboptimal"), ("GridWorld p=0.4", "almost catastrophic"),
                               ("Sepsis", "almost catastrophic"))]
    runs += [(f"the authors' {env} MDP, {reward} rewards", lambda env=env, reward=reward: _authors_mdp(env, reward),
              kind, horizon) for env, reward, kind, horizon in (
                 ("gridworld_0.4", "authors", "slightly suboptimal", T),
                 ("sepsis", "authors", "almost catastrophic", T),
                 ("sepsis", "state", "almost catastrophic", T), ("sepsis", "authors", "almost catastrophic", 5),
                 ("sepsis", "authors", "almost catastrophic", 20))]
    for label, build, kind, horizon in runs:
        follow, rewards = _follow_rate(*build(), kind, horizon)
        label += "" if horizon == T else f", T = {horizon}"
        low = rewards <= np.quantile(rewards, 0.25)
        sec.add(f"{label}, {kind} candidates", "the robust policy follows the observation",
                f"follows on {follow.sum()} of {follow.size} ({100 * follow.mean():.0f} %); lowest-reward quarter "
                f"(o(τ) <= {np.quantile(rewards, 0.25):g}) {100 * follow[low].mean():.0f} %, the rest "
                f"{100 * follow[~low].mean():.0f} %", "the observed path decides")
    return sec


# =============================================================================================== main
SEEDS = {"000": seed000, "001": seed001, "002": seed002, "003": seed003, "004": seed004}
OPTIONS = Namespace(cscf_repo=None, jalergia_jar=None, event_log=[], log_actions=None, log_negative="negative",
                    out=Path("results/reproduction"))


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (solvers, setcover_experiments.py)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _named_file(text: str) -> tuple[str, Path]:
    name, sep, file = text.partition("=")
    if not sep or not name or not file:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name, Path(file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="*", metavar="SEED", help=f"seeds to run ({', '.join(SEEDS)}; default: all)")
    parser.add_argument("--quick", action="store_true", help="every seed in its smoke setting: seconds")
    parser.add_argument("--out", type=Path, default=Path("results/reproduction"),
                        help="folder for seedNNN.md and reproduction.json (default: results/reproduction)")
    parser.add_argument("--cscf-repo", type=Path, default=None,
                        help="seed 002: a checkout of the authors' repository (ppnaumann/CSCF): also run their trained "
                             "Adult and German networks on their 100 instances of each (reads model.h5 with h5py) "
                             "and compare with synth's released results")
    parser.add_argument("--jalergia-jar", type=Path, default=None,
                        help="seed 000: also learn the same logs with jAlergia (alergia.jar of emuskardin/jAlergia; "
                             "needs java)")
    parser.add_argument("--event-log", type=_named_file, action="append", default=[], metavar="NAME=FILE",
                        help="seed 000: Table 1 and Exp2 on this event log (CSV or XES, as `stormcf learn` reads "
                             "it; repeat for several, e.g. BPIC12=bpic12.xes) instead of generated logs (the "
                             "MSSD-sized models are then not run)")
    parser.add_argument("--log-actions", default=None, metavar="A,B,...",
                        help="seed 000: the activities that are actions, for activity-form logs")
    parser.add_argument("--log-negative", default="negative", metavar="OBS,...",
                        help="seed 000: the observations of the undesired outcome (default: negative)")
    args = parser.parse_args()
    OPTIONS.cscf_repo, OPTIONS.jalergia_jar = args.cscf_repo, args.jalergia_jar
    OPTIONS.event_log, OPTIONS.log_actions, OPTIONS.log_negative = args.event_log, args.log_actions, args.log_negative
    OPTIONS.out = args.out
    unknown = [s for s in args.seeds if s not in SEEDS]
    if unknown:
        parser.error(f"unknown seed {unknown[0]!r}: use {', '.join(SEEDS)}")
    seeds = args.seeds or list(SEEDS)
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for seed in seeds:
        wall, cpu = time.perf_counter(), _cpu()
        sections = SEEDS[seed](args.quick)
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        head = (f"## Seed {seed}{' (--quick)' if args.quick else ''}: {cpu:.1f} CPU s (this process and its solver "
                f"children), {wall:.1f} s wall, {time.strftime('%Y-%m-%d')}\n")
        text = head + "\n" + "\n".join(s.markdown() for s in sections)
        print(text, flush=True)
        write_text(text, args.out / f"seed{seed}.md")
        summary[seed] = {"quick": args.quick, "cpu_seconds": cpu, "wall_seconds": wall,
                         "sections": [{"title": s.title, "rows": [asdict(r) for r in s.rows]} for s in sections]}
    write_text(json.dumps(summary, indent=1), args.out / "reproduction.json")


if __name__ == "__main__":
    main()
