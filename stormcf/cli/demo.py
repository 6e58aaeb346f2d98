"""``stormcf demo``: the loan example of Kobialka et al., "Counterfactual Strategies for Markov Decision Processes",
end to end on the shipped model (with its counterfactuals)."""
from __future__ import annotations

import argparse

from ..examples import example_path
from .common import add_json_argument, emit, model_line

#: the counterfactual questions of the demo: title -> (bound, weights r0,r1,r∞)
QUESTIONS = {
    'The counterfactual strategy for P<=0.2 [F "rejected"], d = d0 + d1 + d∞ (their Fig. 1c, Example 2)':
        ('P<=0.2 [F "rejected"]', "1,1,1"),
    "Under d∞ alone (their Example 3: no valid counterfactual for ε < 0.51)": ('P<=0.2 [F "rejected"]', "0,0,1"),
    'P<=0.01 [F "rejected"]': ('P<=0.01 [F "rejected"]', "1,1,1"),
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the loan application example of Kobialka et al. end to end (counterfactual "
                                    "strategies)")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..counterfactual import CounterfactualProblem, solve_counterfactual
    from ..reachability import optimal_strategy
    from ..report import Summary, write_json
    from ..storm import load_model, storm_version
    from ..strategy import Strategy
    from ..verify import check_model, check_strategy, format_value
    say = (lambda *_: None) if args.json == "-" else print
    model = load_model(example_path("loan.prism")).with_naming("labels")
    say(f"== stormcf demo: the loan application of Kobialka et al., \"Counterfactual Strategies for Markov Decision "
        f"Processes\" (their Fig. 1), checked by {storm_version()}")
    say(model_line(model))
    sigma = Strategy.load(model, example_path("loan.impatient.json"))
    say("\nThe impatient client's strategy σ (their Fig. 1b):")
    for s in model.decision_states.nonzero()[0]:
        dist = ", ".join(f"{a} {p:g}" for a, p in sigma.distribution(int(s)).items())
        say(f"  {model.state_name(int(s)):14s} {dist}")
    floating = check_strategy(sigma, 'P=? [F "rejected"]')
    exact = check_strategy(sigma, 'P=? [F "rejected"]', exact=True)
    say(f"\nStorm on the DTMC induced by σ: {floating.property} = {format_value(floating.value)}"
        f" (exactly {exact.exact})")
    least = check_model(model, 'Pmin=? [F "rejected"]')
    _, best = optimal_strategy(model, 'Pmin=? [F "rejected"]')
    say(f"The least probability any strategy achieves (Storm, Pmin): {format_value(least.value)}, by")
    for s in model.decision_states.nonzero()[0]:
        chosen = [a for a, p in best.distribution(int(s)).items() if p == 1]
        say(f"  {model.state_name(int(s)):14s} {chosen[0]}")
    answers = {}
    for title, (bound, weights) in QUESTIONS.items():
        answers[title] = solve_counterfactual(CounterfactualProblem(sigma, bound, weights=weights))
        say(f"\n== {title}:")
        say(answers[title])
    facts = {"strategy": "loan.impatient.json", "rejected_probability": floating.value,
             "rejected_probability_exact": exact.exact, "least_rejected_probability": least.value,
             "counterfactuals": [{"question": title, "bound": QUESTIONS[title][0], "weights": QUESTIONS[title][1],
                                  "result": result.to_dict()} for title, result in answers.items()]}
    summary = Summary("demo", facts, model=model, checks=(floating, exact, least))
    if args.json == "-":
        emit(summary, args)
    elif args.json:
        write_json(summary.to_dict(), args.json)
        print(f"\nJSON written to {args.json}")
    return 0
