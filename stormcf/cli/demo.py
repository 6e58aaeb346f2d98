"""``stormcf demo``: the loan example of Kobialka et al., "Counterfactual Strategies for Markov Decision Processes",
end to end on the shipped model (with its counterfactuals)."""
from __future__ import annotations

import argparse

from ..counterfactual import CounterfactualProblem, solve_counterfactual
from ..examples import example_path
from ..reachability import optimal_strategy
from ..storm import load_model, storm_version
from ..strategy import Strategy
from ..verify import check_strategy, format_value
from .common import model_line


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the loan application example of Kobialka et al. end to end (counterfactual "
                                    "strategies)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(example_path("loan.prism")).with_naming("labels")
    print(f"== stormcf demo: the loan application of Kobialka et al., \"Counterfactual Strategies for Markov Decision "
          f"Processes\" (their Fig. 1), checked by {storm_version()}")
    print(model_line(model))
    sigma = Strategy.load(model, example_path("loan.impatient.json"))
    print("\nThe impatient client's strategy σ (Fig. 1b):")
    for s in model.decision_states.nonzero()[0]:
        dist = ", ".join(f"{a} {p:g}" for a, p in sigma.distribution(int(s)).items())
        print(f"  {model.state_name(int(s)):14s} {dist}")
    floating = check_strategy(sigma, 'P=? [F "rejected"]')
    exact = check_strategy(sigma, 'P=? [F "rejected"]', exact=True)
    print(f"\nStorm on the DTMC induced by σ: {floating.property} = {format_value(floating.value)}"
          f" (exactly {exact.exact})")
    values, best = optimal_strategy(model, 'Pmin=? [F "rejected"]')
    print(f"The least probability any strategy achieves (Storm, Pmin): {format_value(values[model.initial_state])}, by")
    for s in model.decision_states.nonzero()[0]:
        chosen = [a for a, p in best.distribution(int(s)).items() if p == 1]
        print(f"  {model.state_name(int(s)):14s} {chosen[0]}")
    print('\n== The counterfactual strategy for P<=0.2 [F "rejected"], d = d0 + d1 + d∞ (Fig. 1c, Example 2):')
    print(solve_counterfactual(CounterfactualProblem(sigma, 'P<=0.2 [F "rejected"]', weights="1,1,1")))
    print("\n== Under d∞ alone (Example 3: no valid counterfactual for ε < 0.51):")
    print(solve_counterfactual(CounterfactualProblem(sigma, 'P<=0.2 [F "rejected"]', weights="0,0,1")))
    print('\n== P<=0.01 [F "rejected"]:')
    print(solve_counterfactual(CounterfactualProblem(sigma, 'P<=0.01 [F "rejected"]')))
    return 0
