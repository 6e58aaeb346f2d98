"""The whole analysis of one observed path, as the CLI runs it: ICFMDP, robust policy, optional optimistic policy and
Gumbel-max baseline, every reported value re-checked by Storm on the time-unrolled model."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..paths import ObservedPath
from ..verify import format_value
from .problem import CounterfactualMDP, IntervalCFMDP, gumbel_cfmdp, interval_cfmdp
from .robust import CounterfactualPolicy, robust_value_iteration, value_iteration
from .unrolled import StormCheck, storm_value


@dataclass(frozen=True, eq=False)
class CounterfactualAnalysis:
    """ICFMDP + robust policy (+ optimistic policy, + Gumbel-max baseline), with Storm's checks.

    ``checks`` maps a name to Storm's value on the unrolled model:
    ``robust_policy`` (worst case of the robust policy over the ICFMDP: the reported worst-case value),
    ``robust_optimum`` (Storm's own robust value iteration, no policy given), ``optimistic_policy``,
    ``gumbel_policy_on_gumbel`` (expected value of the Gumbel-max policy in its CFMDP) and
    ``gumbel_policy_worst_case`` (the Gumbel-max policy's worst case over the ICFMDP).
    """

    icfmdp: IntervalCFMDP
    robust: CounterfactualPolicy
    checks: dict[str, StormCheck]
    optimistic: CounterfactualPolicy | None = None
    gumbel: CounterfactualMDP | None = None
    gumbel_policy: CounterfactualPolicy | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def path(self) -> ObservedPath:
        return self.icfmdp.path

    @property
    def worst_case_value(self) -> float:
        """Storm's worst-case value of the robust policy at (0, s_0)."""
        return self.checks["robust_policy"].value

    def observed_reward(self) -> float:
        return self.path.outcome(self.path.model.step_rewards(self.robust.reward))

    def to_dict(self) -> dict[str, Any]:
        out = {"model": self.path.model.source, "horizon": self.icfmdp.horizon, "reward": self.robust.reward,
               "assumptions": self.icfmdp.assumptions, "bounds": self.icfmdp.method,
               "observed_reward": self.observed_reward(), "worst_case_value": self.worst_case_value,
               "mean_bound_width": self.icfmdp.mean_bound_width(), "robust": self.robust.to_dict(),
               "policy": self.robust.to_dict()["policy"],
               "storm_checks": {k: v.to_dict() for k, v in self.checks.items()}, "seconds": dict(self.seconds)}
        if self.optimistic is not None:
            out["optimistic"] = self.optimistic.to_dict()
        if self.gumbel_policy is not None:
            out["baseline"] = {"name": "gumbel-max", **self.gumbel.to_dict(),
                               "value": self.checks["gumbel_policy_on_gumbel"].value,
                               "worst_case_value": self.checks["gumbel_policy_worst_case"].value,
                               "policy": self.gumbel_policy.to_dict()["policy"],
                               "changes_from_observation": self.gumbel_policy.changes()}
            if self.gumbel.samples is not None:
                out["baseline"]["approximate"] = f"Monte Carlo, {self.gumbel.samples} samples per (t, s, a)"
        return out

    def __str__(self) -> str:
        ic, c = self.icfmdp, self.checks
        lines = [f"observed path: {ic.horizon} steps from {self.path.model.state_name(int(self.path.states[0]))}, "
                 f"reward {format_value(self.observed_reward())} (reward model \"{self.robust.reward}\")",
                 f"ICFMDP: assumptions {ic.assumptions}, {'closed-form' if ic.method == 'closed' else 'LP'} bounds, "
                 f"mean bound width {ic.mean_bound_width():.4g} (transitions with UB > 0), built in {ic.seconds:.3g} s",
                 f"robust policy: worst-case value {format_value(self.worst_case_value)} "
                 f"(Storm: {c['robust_policy'].formula}, robust interval MDP)",
                 str(self.robust)]
        if self.optimistic is not None:
            lines.append(f"optimistic policy: best-case value {format_value(c['optimistic_policy'].value)} "
                         f"(Storm, cooperative)")
        if self.gumbel_policy is not None:
            approx = (f", Monte Carlo with {self.gumbel.samples} samples per (t, s, a): approximate"
                      if self.gumbel.samples is not None else ", exact probabilities")
            lines.append(f"Gumbel-max policy{approx}: expected value {format_value(c['gumbel_policy_on_gumbel'].value)} "
                         f"in its CFMDP, worst case over the ICFMDP "
                         f"{format_value(c['gumbel_policy_worst_case'].value)} (Storm)")
            lines.append(str(self.gumbel_policy))
        lines.append("checked by " + next(iter(c.values())).to_dict()["checked_by"])
        return "\n".join(lines)


def analyse_path(path: ObservedPath, reward: str | None = None, assumptions: str = "cs+m", bounds: str = "closed",
                 optimistic: bool = False, baseline: str | None = None, estimator: str = "exact",
                 samples: int = 10_000, seed: int = 0) -> CounterfactualAnalysis:
    """Build the ICFMDP of ``path``, solve it robustly (and optimistically), optionally compute the Gumbel-max
    baseline (``baseline="gumbel"``), and re-check every value with Storm."""
    path.model.step_rewards(reward)                           # reject unknown reward models / transition rewards early
    seconds: dict[str, float] = {}
    ic = interval_cfmdp(path, assumptions, bounds)
    seconds["icfmdp"] = ic.seconds
    robust = robust_value_iteration(ic, reward)
    seconds["robust_value_iteration"] = robust.seconds
    checks = {"robust_policy": storm_value(ic, reward, robust), "robust_optimum": storm_value(ic, reward)}
    opt = None
    if optimistic:
        opt = robust_value_iteration(ic, reward, optimistic=True)
        checks["optimistic_policy"] = storm_value(ic, reward, opt, optimistic=True)
    g = gp = None
    if baseline == "gumbel":
        g = gumbel_cfmdp(path, estimator, samples, seed)
        seconds["gumbel_cfmdp"] = g.seconds
        gp = value_iteration(g, reward)
        seconds["gumbel_value_iteration"] = gp.seconds
        checks["gumbel_policy_on_gumbel"] = storm_value(g, reward, gp)
        checks["gumbel_policy_worst_case"] = storm_value(ic, reward, gp)
    elif baseline is not None:
        raise ValueError(f"unknown baseline {baseline!r}: use 'gumbel'")
    seconds["storm_checks"] = sum(c.seconds for c in checks.values())
    return CounterfactualAnalysis(ic, robust, checks, opt, g, gp, seconds)
