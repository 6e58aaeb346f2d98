"""Evaluation as in Lally et al. §6: sample CFMDPs from an ICFMDP, simulate counterfactual paths under policies, and
report the mean, minimum and maximum total reward.

**Sampler** (``sample_cfmdp``): for every step t and choice (s, a) independently, P = LB + (1 - Σ LB)·w with w drawn
from the flat Dirichlet distribution on the choice's successors (uniform on the simplex); mass above an upper bound
is cut off and handed to the successors still below their upper bounds in proportion to w, until none is above
("Dirichlet with capped redistribution"). Every sample is a CFMDP entailed by the ICFMDP (LB <= P <= UB, Σ P = 1);
it is not exactly uniform on the polytope of entailed distributions (it is when no upper bound binds).

Results of the evaluation are Monte Carlo statistics: they are labelled as such and are not model-checking results.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .problem import CounterfactualMDP, IntervalCFMDP, sparse_rows
from .robust import CounterfactualPolicy, policy_values


def _capped_fill(L: np.ndarray, U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rows of L + extra with Σ = 1 and L <= result <= U, extra proportional to w with overflow redistributed."""
    x = L + np.maximum(1.0 - L.sum(axis=1), 0.0)[:, None] * w
    for _ in range(L.shape[1]):
        over = x > U
        if not over.any():
            break
        excess = np.where(over, x - U, 0.0).sum(axis=1)
        x = np.minimum(x, U)
        room = np.where(x < U, w, 0.0)
        total = room.sum(axis=1)
        share = np.divide(room, total[:, None], out=np.zeros_like(room), where=total[:, None] > 0)
        x = x + excess[:, None] * share
    return x


def sample_cfmdp(icfmdp: IntervalCFMDP, rng: np.random.Generator) -> CounterfactualMDP:
    """One CFMDP drawn from the ICFMDP (module docs: Dirichlet with capped redistribution)."""
    rows = sparse_rows(icfmdp.model)
    probs = np.empty_like(icfmdp.lower)
    for t in range(icfmdp.horizon):
        lo, hi = icfmdp.lower[t], icfmdp.upper[t]
        for m, _, E in rows.groups:
            L, U = lo[E], hi[E]
            free = U > L
            g = np.where(free, rng.exponential(size=E.shape), 0.0)
            total = g.sum(axis=1, keepdims=True)
            w = np.divide(g, total, out=np.zeros_like(g), where=total > 0)
            probs[t, E] = _capped_fill(L, U, w)
    return CounterfactualMDP(icfmdp.path, probs, "sampled")


def simulate_rewards(policy: CounterfactualPolicy, cfmdp: CounterfactualMDP, n_paths: int,
                     rng: np.random.Generator, reward: str | None = None) -> np.ndarray:
    """Total rewards Σ_t R(s_t, π_t(s_t)) of ``n_paths`` counterfactual paths of the policy in a point CFMDP,
    all starting at the observed s_0 (vectorised over paths)."""
    model = cfmdp.model
    r = model.step_rewards(reward if reward is not None else policy.reward)
    P = model.transitions
    states = np.full(n_paths, policy.start, dtype=np.int64)
    total = np.zeros(n_paths)
    for t in range(policy.horizon):
        chosen = policy.rows[t, states]
        total += r[chosen]
        cdf = np.cumsum(cfmdp.probabilities[t])
        before = np.where(P.indptr[chosen] > 0, cdf[np.maximum(P.indptr[chosen] - 1, 0)], 0.0)
        last = P.indptr[chosen + 1] - 1
        target = before + rng.random(n_paths) * (cdf[last] - before)
        entry = np.minimum(np.searchsorted(cdf, target, side="right"), last)
        states = P.indices[entry]
    return total


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


def evaluate_policies(icfmdp: IntervalCFMDP, policies: Mapping[str, CounterfactualPolicy], cfmdps: int = 200,
                      paths: int = 10_000, seed: int = 0) -> Evaluation:
    """Sample ``cfmdps`` CFMDPs from the ICFMDP and simulate ``paths`` counterfactual paths of every policy on each
    (the paper: 200 x 10,000); also the exact expected value of every policy on every sampled CFMDP."""
    rng = np.random.default_rng(seed)
    rewards = {name: [] for name in policies}
    expected = {name: [] for name in policies}
    for _ in range(cfmdps):
        cf = sample_cfmdp(icfmdp, rng)
        for name, policy in policies.items():
            rewards[name].append(simulate_rewards(policy, cf, paths, rng))
            expected[name].append(policy_values(policy, cf)[0, policy.start])
    stats = []
    for name, policy in policies.items():
        r = np.concatenate(rewards[name])
        stats.append(PolicyStatistics(name, float(r.mean()), float(r.min()), float(r.max()), float(r.std()),
                                      float(min(expected[name])), float(max(expected[name])), int(r.size)))
    observed = icfmdp.path.outcome(icfmdp.model.step_rewards(next(iter(policies.values())).reward))
    return Evaluation(observed, cfmdps, paths, seed, tuple(stats))
