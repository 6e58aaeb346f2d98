"""Interval counterfactual MDPs and robust counterfactual policies (Lally, Kazemi, Paoletti; seed 004), with the
Gumbel-max SCM counterfactual MDP (Oberst & Sontag) as the baseline.

- problem: :class:`ICFMDPProblem` (the question), :class:`ICFMDPSettings` (how to answer it);
  :func:`interval_cfmdp` (closed-form or LP bounds) builds the ICFMDP, a
  :class:`~stormcf.counterfactual_mdp.CounterfactualMDP` with interval rows;
- solvers: :func:`robust_value_iteration` (pessimistic / optimistic nature, maximize / minimize),
  :func:`policy_value`, :func:`storm_value` (Storm on the time-unrolled model); :func:`solve_icfmdp` runs the whole
  analysis and re-checks every value with Storm -> :class:`ICFMDPResult`;
- evaluation: :func:`evaluate_policies` (Monte Carlo over sampled CFMDPs, paper §6).
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["mdp_from_arrays", "path_from_arrays"], ".arrays"),
    **dict.fromkeys(["ASSUMPTIONS", "SUMMATIONS", "step_bounds"], ".bounds"),
    **dict.fromkeys(["Evaluation", "evaluate_policies"], ".evaluation"),
    **dict.fromkeys(["lp_step_bounds", "pair_bounds"], ".lp"),
    **dict.fromkeys(["BOUNDS_METHODS", "ICFMDPProblem", "ICFMDPSettings", "interval_cfmdp"], ".problem"),
    **dict.fromkeys(["ICFMDPResult", "policy_changes", "values_on_path"], ".result"),
    **dict.fromkeys(["policy_value", "robust_value_iteration", "solve_icfmdp", "storm_value"], ".solve"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ASSUMPTIONS", "BOUNDS_METHODS", "SUMMATIONS", "Evaluation", "ICFMDPProblem", "ICFMDPResult",
           "ICFMDPSettings", "evaluate_policies", "interval_cfmdp", "lp_step_bounds", "mdp_from_arrays", "pair_bounds",
           "path_from_arrays", "policy_changes", "policy_value", "robust_value_iteration", "solve_icfmdp",
           "step_bounds", "storm_value", "values_on_path"]
