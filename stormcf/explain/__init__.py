"""k-change counterfactual path explanations (seed 001: Tsirtsis, De, Gomez-Rodriguez, NeurIPS 2021).

Which at most k different actions would most likely have led to a better outcome of an observed path, and what would
the alternative paths look like? The pieces, in the order :func:`explain_path` uses them:

- :class:`ExplanationProblem`: the validated problem (path, reward model, budget, estimator, pins, forbidden actions);
- :func:`counterfactual_mdp`: the Gumbel-max counterfactual MDP M_τ over the reachable (t, s) pairs;
- :func:`k_change_dp`: Algorithm 2, all budgets k <= K in one pass, with the paper's tie rule;
- :func:`sample_paths` / :func:`summarize`: Algorithm 1 and the explanation summary;
- :func:`baseline_policy` and :func:`evaluate_policy`: the random / greedy / noisy-greedy baselines of App. D;
- :func:`enhanced_mdp`: the explicit (t, s, l) MDP that Storm checks (optimum and policy value).
"""
from .baselines import BASELINES, baseline_policy
from .cfmdp import CounterfactualMDP, Step, counterfactual_mdp
from .dp import TIE_TOLERANCE, KChangePolicy, evaluate_policy, k_change_dp, occupancy
from .enhanced import EnhancedMDP, enhanced_mdp
from .problem import ExplanationError, ExplanationProblem, parse_pins
from .result import ExplanationResult, explain_path, policy_entries
from .sampling import Explanation, ExplanationSummary, SampledPaths, sample_paths, summarize

__all__ = ["BASELINES", "CounterfactualMDP", "EnhancedMDP", "Explanation", "ExplanationError", "ExplanationProblem",
           "ExplanationResult", "ExplanationSummary", "KChangePolicy", "SampledPaths", "Step", "TIE_TOLERANCE",
           "baseline_policy", "counterfactual_mdp", "enhanced_mdp", "evaluate_policy", "explain_path",
           "k_change_dp", "occupancy", "parse_pins", "policy_entries", "sample_paths", "summarize"]
