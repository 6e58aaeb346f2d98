"""What the path-based analyses share: the time-indexed counterfactual MDP of an observed path (point or interval
rows), the Gumbel-max SCM estimators, ONE finite-horizon backward induction (maximize/minimize, pessimistic/
optimistic nature, with or without a budget of changes), the time-unrolled model Storm checks, and ONE path sampler.

Used by :mod:`stormcf.icfmdp` (interval counterfactual MDPs, seed 004) and :mod:`stormcf.explain` (k-change path
explanations, seed 001).
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["TIE_TOLERANCE", "Policy", "PolicyWeights", "evaluate", "group_argmax", "group_sum",
        "interval_expectation", "occupancy", "optimal_policy", "reachable"], ".backward"),
    **dict.fromkeys(["ESTIMATORS", "counterfactual_transitions", "exact_rows", "gumbel_cfmdp", "mc_rows",
        "posterior_noise"], ".gumbel"),
    **dict.fromkeys(["LAYERS", "ChoiceRule", "CounterfactualMDP", "Step", "all_choices", "build_cfmdp",
        "nominal_transitions", "observed_entry", "observed_steps"], ".model"),
    **dict.fromkeys(["SampledPaths", "sample_cfmdp", "sample_paths"], ".sampling"),
    **dict.fromkeys(["UnrolledModel", "unroll"], ".unrolled"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ESTIMATORS", "LAYERS", "TIE_TOLERANCE", "ChoiceRule", "CounterfactualMDP", "Policy", "PolicyWeights",
           "SampledPaths", "Step", "UnrolledModel", "all_choices", "build_cfmdp", "counterfactual_transitions",
           "evaluate", "exact_rows", "group_argmax", "group_sum", "gumbel_cfmdp", "interval_expectation", "mc_rows",
           "nominal_transitions", "observed_entry", "observed_steps", "occupancy", "optimal_policy", "posterior_noise", "reachable",
           "sample_cfmdp", "sample_paths", "unroll"]
