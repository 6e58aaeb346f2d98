"""Evaluation as in Lally et al. §6: sample CFMDPs from an ICFMDP (:func:`stormcf.counterfactual_mdp.sample_cfmdp`:
Dirichlet with capped redistribution), simulate counterfactual paths under policies
(:func:`stormcf.counterfactual_mdp.sample_paths`), and report the mean, minimum and maximum total reward.

Results of the evaluation are Monte Carlo statistics: they are labelled as such and are not model-checking results.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..counterfactual_mdp import CounterfactualMDP, Policy, sample_cfmdp, sample_paths
from .solve import policy_value


@dataclass(frozen=True)
class PolicyStatistics:
    """Monte Carlo statistics of one policy over sampled CFMDPs."""

    name: str
    mean: float
    minimum: float
    maximum: float
    std: float
    expected_min: float       # the smallest exact expected value over the sampled CFMDPs
    expected_max: float
    paths: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Evaluation:
    """The outcome of :func:`evaluate_policies` (Monte Carlo: approximate by nature)."""

    observed_reward: float
    cfmdps: int
    paths_per_cfmdp: int
    seed: int
    statistics: tuple[PolicyStatistics, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"observed_reward": self.observed_reward, "sampled_cfmdps": self.cfmdps,
                "paths_per_cfmdp": self.paths_per_cfmdp, "seed": self.seed,
                "sampler": "Dirichlet with capped redistribution within [LB, UB]",
                "approximate": "Monte Carlo over sampled CFMDPs and simulated paths",
                "policies": {s.name: s.to_dict() for s in self.statistics}}

    def __str__(self) -> str:
        lines = [f"Monte Carlo evaluation: {self.cfmdps} CFMDPs sampled from the ICFMDP x {self.paths_per_cfmdp} "
                 f"paths (seed {self.seed}); observed path reward {self.observed_reward:g}",
                 f"  {'policy':<12s} {'mean':>10s} {'min':>10s} {'max':>10s}"]
        for s in self.statistics:
            lines.append(f"  {s.name:<12s} {s.mean:>10.4g} {s.minimum:>10.4g} {s.maximum:>10.4g}")
        return "\n".join(lines)


def evaluate_policies(icfmdp: CounterfactualMDP, policies: Mapping[str, Policy], cfmdps: int = 200,
                      paths: int = 10_000, seed: int = 0) -> Evaluation:
    """Sample ``cfmdps`` CFMDPs from the ICFMDP and simulate ``paths`` counterfactual paths of every policy on each
    (the paper: 200 x 10,000); also the exact expected value of every policy on every sampled CFMDP."""
    rng = np.random.default_rng(seed)
    rewards: dict[str, list[np.ndarray]] = {name: [] for name in policies}
    expected: dict[str, list[float]] = {name: [] for name in policies}
    for _ in range(cfmdps):
        cf = sample_cfmdp(icfmdp, rng)
        for name, policy in policies.items():
            rewards[name].append(sample_paths(cf, policy, paths, rng).outcomes)
            expected[name].append(policy_value(policy, cf))
    stats = []
    for name, policy in policies.items():
        r = np.concatenate(rewards[name])
        stats.append(PolicyStatistics(name, float(r.mean()), float(r.min()), float(r.max()), float(r.std()),
                                      float(min(expected[name])), float(max(expected[name])), int(r.size)))
    observed = icfmdp.path.outcome(icfmdp.model.step_rewards(next(iter(policies.values())).reward))
    return Evaluation(observed, cfmdps, paths, seed, tuple(stats))
