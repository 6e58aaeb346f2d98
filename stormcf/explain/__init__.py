"""k-change counterfactual path explanations (seed 001: Tsirtsis, De, Gomez-Rodriguez, NeurIPS 2021).

Which at most k different actions would most likely have led to a better outcome of an observed path, and what would
the alternative paths look like? The pieces, in the order :func:`explain_path` uses them:

- :class:`ExplanationProblem`: the validated problem (path, reward model, budget, estimator, pins, forbidden actions);
- :func:`counterfactual_mdp`: the Gumbel-max counterfactual MDP M_τ over the reachable (t, s) pairs;
- :func:`k_change_dp`: Algorithm 2, all budgets k <= K in one pass, with the paper's tie rule;
- :func:`stormcf.counterfactual_mdp.sample_paths` / :func:`summarize`: Algorithm 1 and the explanation summary;
- :func:`baseline_policy`: the random / greedy / noisy-greedy baselines of App. D;
- :func:`unrolled_model`: the explicit (t, s, l) model that Storm checks (optimum and policy value).
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["BASELINES", "baseline_policy"], ".baselines"),
    **dict.fromkeys(["ExplanationError", "ExplanationProblem", "parse_pins"], ".problem"),
    **dict.fromkeys(["ExplanationResult"], ".result"),
    **dict.fromkeys(["counterfactual_mdp", "explain_path", "k_change_dp", "policy_entries", "unrolled_model"],
        ".solve"),
    **dict.fromkeys(["Explanation", "ExplanationSummary", "summarize"], ".summary"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["BASELINES", "Explanation", "ExplanationError", "ExplanationProblem", "ExplanationResult",
           "ExplanationSummary", "baseline_policy", "counterfactual_mdp", "explain_path", "k_change_dp", "parse_pins",
           "policy_entries", "summarize", "unrolled_model"]
