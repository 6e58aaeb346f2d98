"""Interval counterfactual MDPs and robust counterfactual policies (Lally, Kazemi, Paoletti; seed 004), with the
Gumbel-max SCM counterfactual MDP (Oberst & Sontag) as the baseline.

- problem: :func:`interval_cfmdp` (closed-form or LP bounds) -> :class:`IntervalCFMDP`; :func:`gumbel_cfmdp` ->
  :class:`CounterfactualMDP`;
- solvers: :func:`robust_value_iteration` (pessimistic / optimistic), :func:`value_iteration` (point CFMDPs);
- results: :class:`CounterfactualPolicy`, :class:`CounterfactualAnalysis` (:func:`analyse_path` runs everything and
  re-checks every value with Storm on the time-unrolled interval MDP, :func:`storm_value`);
- evaluation: :func:`sample_cfmdp`, :func:`simulate_rewards`, :func:`evaluate_policies` (Monte Carlo, paper §6).
"""
from .analysis import CounterfactualAnalysis, analyse_path
from .arrays import mdp_from_arrays, path_from_arrays
from .bounds import ASSUMPTIONS, step_bounds
from .evaluation import Evaluation, evaluate_policies, sample_cfmdp, simulate_rewards
from .lp import lp_step_bounds, pair_bounds
from .problem import CounterfactualMDP, IntervalCFMDP, gumbel_cfmdp, interval_cfmdp
from .robust import CounterfactualPolicy, interval_expectation, policy_values, robust_value_iteration, value_iteration
from .unrolled import StormCheck, storm_value, unroll
