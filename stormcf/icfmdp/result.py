"""The answer of ``stormcf icfmdp``: the ICFMDP, the robust policy (and the optimistic and Gumbel-max ones), every
value re-checked by Storm; text for people, JSON for scripts (one :class:`~stormcf.report.Report`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..counterfactual_mdp import CounterfactualMDP, Policy, reachable
from ..model import ExplicitModel
from ..report import Report
from ..solvers import chosen
from ..verify import Check, format_value


def policy_changes(policy: Policy) -> list[int]:
    """The steps at which the policy, in the observed state, chooses another action than the observation."""
    path, cf = policy.cfmdp.path, policy.cfmdp
    return [t for t in range(cf.T) if observed_state_choice(policy, t) != int(path.choices[t])]


def observed_state_choice(policy: Policy, t: int) -> int:
    """The model row the policy plays at step t in the observed state s_t."""
    step = policy.cfmdp.steps[t]
    i = int(step.local(np.array([policy.cfmdp.path.states[t]]))[0])
    return int(step.choices[policy.actions[t][i, 0]])


def values_on_path(policy: Policy) -> np.ndarray:
    """V_t(s_t) of the policy in the observed states, t = 0..T-1."""
    cf = policy.cfmdp
    return np.array([policy.values[t][cf.steps[t].local(np.array([s]))[0], 0]
                     for t, s in enumerate(cf.path.states.tolist())])


def policy_to_dict(policy: Policy) -> dict[str, Any]:
    """The policy per step for the states it can reach (through transitions with UB > 0), with V_t."""
    cf = policy.cfmdp
    m = cf.model
    steps = []
    for t, mask in enumerate(reachable(cf, policy.weight_function())):
        step = cf.steps[t]
        shown = np.flatnonzero(mask[:, 0])
        names = m.choice_names_of(step.choices[policy.actions[t][shown, 0]])
        steps.append([{"state": m.valuation(s) if m.variables else s, "action": name,
                       "value": float(policy.values[t][i, 0])}
                      for i, s, name in zip(shown.tolist(), step.states[shown].tolist(), names)])
    return {"value": policy.value(), "changes_from_observation": policy_changes(policy), "steps": steps,
            "seconds": policy.seconds}


def policy_text(policy: Policy) -> str:
    m, path = policy.cfmdp.model, policy.cfmdp.path
    lines = []
    for t, observed in enumerate(path.actions):
        chosen = m.choice_name(observed_state_choice(policy, t))
        mark = "" if chosen == observed else f"   (observed: {observed})"
        lines.append(f"  t={t:<3d} in observed state {m.state_name(int(path.states[t]))}: {chosen}{mark}")
    return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class ICFMDPResult(Report):
    """ICFMDP + robust policy (+ optimistic policy, + Gumbel-max baseline), with Storm's checks.

    ``checks`` (by name): ``robust_policy`` (worst case of the robust policy over the ICFMDP: the reported
    worst-case value), ``robust_optimum`` (Storm's own robust optimum, no policy given), ``optimistic_policy``,
    ``gumbel_policy_on_gumbel`` (expected value of the Gumbel-max policy in its CFMDP) and
    ``gumbel_policy_worst_case`` (the Gumbel-max policy's worst case over the ICFMDP). Each carries stormcf's own
    value in ``expected``.
    """

    command = "icfmdp"
    problem: Any
    settings: Any
    icfmdp: CounterfactualMDP
    robust: Policy
    checks: Sequence[Check]
    optimistic: Policy | None = None
    gumbel: CounterfactualMDP | None = None
    gumbel_policy: Policy | None = None
    timings: dict[str, float] = field(default_factory=dict)

    status = "ok"

    @property
    def model(self) -> ExplicitModel:
        return self.icfmdp.model

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    @property
    def worst_case_value(self) -> float:
        """Storm's worst-case value of the robust policy at (0, s_0)."""
        return self.check("robust_policy").value

    @property
    def observed_reward(self) -> float:
        return self.problem.path.outcome(self.problem.rewards)

    @property
    def approximate(self) -> bool:
        return self.gumbel is not None and self.gumbel.approximate

    @property
    def notes(self) -> list[str]:
        out = [f"the bounds cover the {self.icfmdp.n_pairs} (t, s) pairs the start can reach in the model"]
        if self.approximate and self.gumbel is not None:
            out.append(f"the Gumbel-max baseline uses {self.gumbel.method}: its values are estimates")
        return out

    def payload(self) -> dict[str, Any]:
        p, s, ic = self.problem, self.settings, self.icfmdp
        out: dict[str, Any] = {
            "reward_model": p.reward_name, "optimization": p.optimization.word,
            "path": {"horizon": ic.T, "actions": p.path.actions, "outcome": self.observed_reward},
            "icfmdp": {"assumptions": p.assumptions, "bounds": s.bounds, **ic.to_dict(),
                       "mean_bound_width": ic.mean_bound_width()},
            "worst_case_value": self.worst_case_value, "policy": policy_to_dict(self.robust),
            "optimistic": None, "baseline": None}
        if self.optimistic is not None:
            out["optimistic"] = {"best_case_value": self.check("optimistic_policy").value,
                                 "policy": policy_to_dict(self.optimistic)}
        if self.gumbel_policy is not None:
            assert self.gumbel is not None              # the baseline's policy comes with its CFMDP
            out["baseline"] = {"name": "gumbel-max", "estimator": s.estimator,
                               "samples_per_pair": s.samples if s.estimator == "mc" else None,
                               "approximate": self.gumbel.method if self.gumbel.approximate else None,
                               "value": self.check("gumbel_policy_on_gumbel").value,
                               "worst_case_value": self.check("gumbel_policy_worst_case").value,
                               "policy": policy_to_dict(self.gumbel_policy)}
        return out

    def text(self) -> str:
        p, s, ic = self.problem, self.settings, self.icfmdp
        m = self.model
        worst = "worst-case" if p.optimization.sign > 0 else "worst-case (largest)"
        lines = [f"observed path: {ic.T} steps from {m.state_name(int(p.path.states[0]))}, reward "
                 f"{format_value(self.observed_reward)} (reward model \"{p.reward_name}\", {p.optimization.word}d)",
                 f"ICFMDP: assumptions {p.assumptions}, {_bounds_text(s)} on "
                 f"{ic.n_pairs} reachable (t, s) pairs, mean bound width {ic.mean_bound_width():.4g} "
                 f"(transitions with UB > 0), built in {ic.seconds:.3g} s",
                 f"robust policy: {worst} value {format_value(self.worst_case_value)} "
                 f"(Storm: {self.check('robust_policy').property}, robust interval MDP)",
                 policy_text(self.robust)]
        if self.optimistic is not None:
            lines.append(f"optimistic policy: best-case value "
                         f"{format_value(self.check('optimistic_policy').value)} (Storm, cooperative)")
        if self.gumbel_policy is not None:
            assert self.gumbel is not None              # the baseline's policy comes with its CFMDP
            approx = (f", {self.gumbel.method}: approximate" if self.gumbel.approximate else ", exact probabilities")
            lines.append(f"Gumbel-max policy{approx}: expected value "
                         f"{format_value(self.check('gumbel_policy_on_gumbel').value)} in its CFMDP, worst case over "
                         f"the ICFMDP {format_value(self.check('gumbel_policy_worst_case').value)} (Storm)")
            lines.append(policy_text(self.gumbel_policy))
        lines.append(f"checked by {self.checks[0].method}; every value agrees with stormcf's own to "
                     f"{self.checks[0].tolerance:g}")
        return "\n".join(lines)


def _bounds_text(settings: Any) -> str:
    if settings.bounds == "closed":
        return "closed-form bounds"
    return f"LP bounds ({chosen(settings.solver, linear=True)})"
