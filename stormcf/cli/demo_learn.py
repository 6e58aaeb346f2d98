"""``stormcf demo-learn``: seed 000's pipeline end to end on a log with a known truth.

A log is sampled from ``prism_models/loan.prism`` under the impatient client's strategy, written as a paired-form
CSV, read back and learned (IOAlergia); the counterfactual strategy for ``P<=0.2 [F "rejected"]`` is computed on the
learned model and on the true one, side by side.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..examples import example_path
from ..interrupt import temporary_directory
from .common import add_json_argument, add_output_argument, non_negative_int, positive_int

BOUND = 'P<=0.2 [F "rejected"]'


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo-learn", help="learn the loan MDP back from a sampled log; counterfactuals side by side")
    p.add_argument("--cases", type=positive_int, default=5000, metavar="N",
                   help="cases in the sampled log (default 5000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the sampled log (default 0)")
    add_output_argument(p, "--dir", kind="directory", metavar="DIR",
                        help="keep the log, the learned model and strategy in DIR")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..report import Summary, write_json
    from ..storm import load_model
    quiet = args.json == "-"
    with temporary_directory() as scratch:
        document = _demo(args, Path(args.dir or scratch), quiet)
    if args.json:
        write_json(Summary("demo-learn", document, model=load_model(example_path("loan.prism"))).to_dict(), args.json,
                   stream=args.result_stream)
    return 0


def _demo(args: argparse.Namespace, folder: Path, quiet: bool) -> dict:
    from ..counterfactual import CounterfactualProblem, solve_counterfactual
    from ..learn import LearnProblem, learn_mdp, read_log, sample_log
    from ..storm import load_model, storm_version
    from ..strategy import Strategy
    from ..verify import check_strategy, format_value
    say = (lambda *_: None) if quiet else print
    truth = load_model(example_path("loan.prism")).with_naming("labels")
    sigma = Strategy.load(truth, example_path("loan.impatient.json"))
    say(f"== stormcf demo-learn: the loan application of Kobialka et al., learned back from a log ({storm_version()})")
    log = sample_log(truth, sigma, args.cases, seed=args.seed)
    csv = folder / "loan_log.csv"
    log.to_csv(csv)
    say(f"\n{args.cases} cases sampled from loan.prism under the impatient strategy (seed {args.seed}), "
        f"written to {csv.name} (paired form):")
    for line in csv.read_text().splitlines()[:6]:
        say(f"  {line}")
    learned = learn_mdp(LearnProblem(read_log(csv), model_path=folder / "learned.prism",
                                     strategy_path=folder / "sigma.json"))
    say("\n== stormcf learn loan_log.csv --out learned.prism --strategy-out sigma.json"
        + ("" if args.dir else "  (in a temporary folder, removed at the end; --dir DIR keeps the files)"))
    say(str(learned) if args.dir else str(learned).replace(f"{folder}{os.sep}", ""))
    true_value = check_strategy(sigma, 'P=? [F "rejected"]')
    learned_value = check_strategy(learned.strategy, 'P=? [F "rejected"]')
    say(f"\n{'':34s}{'true model':>14s}{'learned model':>16s}")
    say(f"{'states / transitions':34s}{f'{truth.n_states} / {truth.n_transitions}':>14s}"
        f"{f'{learned.model.n_states} / {learned.model.n_transitions}':>16s}")
    say(f"{'P(F rejected) under the strategy':34s}{format_value(true_value.value):>14s}"
        f"{format_value(learned_value.value):>16s}")
    named = Strategy(learned.model.with_naming("labels"), learned.strategy.probabilities)
    results = {}
    for name, strategy in (("true model", sigma), ("learned model", named)):
        result = solve_counterfactual(CounterfactualProblem(strategy, BOUND))
        results[name] = result
        say(f"\n== The counterfactual strategy for {BOUND} on the {name}:")
        say(result)
    return {"learn": learned.to_dict(), "true_probability": true_value.to_dict(),
            "learned_probability": learned_value.to_dict(),
            "counterfactual": {k: v.to_dict() for k, v in results.items()}}
