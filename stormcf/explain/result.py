"""The solver :func:`explain_path` and its result: values h(s_0, T, k), the policy, sampled explanations, baselines,
all re-checked by Storm."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..verify import Check, format_value
from .baselines import BASELINES, baseline_policy
from .cfmdp import CounterfactualMDP, counterfactual_mdp
from .dp import KChangePolicy, evaluate_policy, k_change_dp, occupancy
from .enhanced import enhanced_mdp
from .problem import ExplanationError, ExplanationProblem
from .sampling import ExplanationSummary, sample_paths, summarize

#: agreement required between the DP and Storm (relative to max(1, |value|)); Storm's precision is 1e-10
AGREEMENT = 1e-8


@dataclass(frozen=True, eq=False)
class ExplanationResult:
    """What :func:`explain_path` found for budget k (and the values for every k' <= k_max).

    ``value`` is Storm's value of the returned policy on the DTMC it induces on the enhanced MDP (the DP's own value
    is ``value_dp``); ``cross_check`` holds Storm's optimum of the enhanced MDP per budget (``--verify``).
    """

    problem: ExplanationProblem
    cfmdp: CounterfactualMDP
    policy: KChangePolicy
    value: float
    value_dp: float
    verification: Check | None
    policy_entries: list[dict[str, Any]]
    summary: ExplanationSummary | None
    baselines: dict[str, dict[str, Any]]
    cross_check: dict[int, dict[str, Any]] | None
    timings: dict[str, float]
    failures: list[str] = field(default_factory=list)

    @property
    def k(self) -> int:
        return self.problem.k

    @property
    def observed_outcome(self) -> float:
        return self.problem.observed_outcome

    @property
    def improvement(self) -> float:
        """h - o(τ) (o(τ) - h when minimizing): how much better the counterfactual policy is on average."""
        gain = self.value - self.observed_outcome
        return -gain if self.problem.minimize else gain

    @property
    def relative_improvement(self) -> float | None:
        """improvement / |o(τ)| (None if o(τ) = 0)."""
        o = self.observed_outcome
        return None if o == 0 else self.improvement / abs(o)

    def values_by_k(self) -> dict[int, float | None]:
        """h(s_0, T, k') for k' = 0..k_max (None where no policy meets the budget)."""
        return {k: (v if np.isfinite(v) else None) for k, v in self.policy.values_by_k().items()}

    # ------------------------------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        p = self.problem
        return {
            "model": p.model.source,
            "reward_model": p.reward_name,
            "direction": "minimize" if p.minimize else "maximize",
            "horizon": p.T,
            "k": p.k,
            "k_max": p.k_max,
            "estimator": {"name": p.estimator, **({"samples": p.samples, "seed": p.seed} if p.estimator == "mc"
                                                   else {})},
            "pins": {str(t): a for t, a in sorted(p.pins.items())},
            "forbidden": sorted(p.forbidden),
            "observed_actions": p.path.actions,
            "observed_outcome": self.observed_outcome,
            "value": self.value,
            "value_dp": self.value_dp,
            "verification": self.verification.to_dict() if self.verification else None,
            "values_by_k": {str(k): v for k, v in self.values_by_k().items()},
            "improvement": self.improvement,
            "relative_improvement": self.relative_improvement,
            "counterfactual_mdp": {"pairs": self.cfmdp.n_pairs, "rows": self.cfmdp.n_rows},
            "policy": self.policy_entries,
            "explanations": self.summary.to_dict() if self.summary else None,
            "baselines": self.baselines,
            "cross_check": None if self.cross_check is None else {str(k): v for k, v in self.cross_check.items()},
            "failures": self.failures,
            "timings": self.timings,
        }

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def lines(self, max_explanations: int = 10) -> list[str]:
        p = self.problem
        goal = "minimized" if p.minimize else "maximized"
        out = [f"observed path: {p.T} steps, outcome o(τ) = {format_value(self.observed_outcome)} "
               f"(reward \"{p.reward_name}\", {goal})"]
        estimator = ("exact Gumbel-max probabilities (closed form)" if p.estimator == "exact" else
                     f"Gumbel-max probabilities estimated by Monte Carlo (d = {p.samples} per step, seed {p.seed})")
        out.append(f"counterfactual MDP: {estimator}; {self.cfmdp.n_pairs} reachable (t, s) pairs, "
                   f"{self.cfmdp.n_rows} rows")
        values = ", ".join("infeasible" if v is None else format_value(v) for v in self.values_by_k().values())
        out.append(f"h(s0, T, k) for k = 0..{p.k_max}: {values}")
        checked = (f" (Storm on the DTMC the policy induces: {format_value(self.verification.value)})"
                   if self.verification else " (not re-checked by Storm)")
        out.append(f"best policy with at most k = {p.k} changes: expected outcome {format_value(self.value)}{checked}")
        relative = ("" if self.relative_improvement is None
                    else f" ({100 * self.relative_improvement:+.4g}%)")
        out.append(f"improvement over the observed outcome: {format_value(self.improvement)}{relative}")
        if p.estimator == "mc":
            out.append("note: h is exact for the Monte Carlo estimate of the counterfactual MDP, which has sampling "
                       "error (and maximizing over noisy estimates is biased optimistically)")
        out += self._decision_lines()
        if self.summary:
            out += _summary_lines(self.summary, p, max_explanations)
        for name, b in self.baselines.items():
            value = "infeasible" if b["value"] is None else format_value(b["value"])
            storm = f" (Storm: {format_value(b['storm'])})" if b.get("storm") is not None else ""
            out.append(f"baseline {name}: expected outcome {value}{storm}")
        if self.cross_check is not None:
            agree = all(c["agrees"] for c in self.cross_check.values() if c["storm"] is not None)
            out.append(f"Storm cross-check (enhanced MDP, R{'min' if p.minimize else 'max'}=? [F \"done\"], "
                       f"k = 0..{p.k_max}): {'agrees with the DP' if agree else 'DISAGREES with the DP'}")
        out += [f"CHECK FAILED: {f}" for f in self.failures]
        return out

    def _decision_lines(self, limit: int = 20) -> list[str]:
        changes = [e for e in self.policy_entries if e["change"]]
        if not changes:
            return ["the policy keeps every observed action (no change improves the expected outcome)"]
        out = ["where the policy changes the observed action (t, state, changes used l, probability of (t, s, l)):"]
        for e in changes[:limit]:
            out.append(f"  t={e['t']}  {e['state_name']}  l={e['l']}  p={format_value(e['probability'])}: "
                       f"{e['observed_action']} -> {e['action']}")
        if len(changes) > limit:
            out.append(f"  ... {len(changes) - limit} more (see --json)")
        return out


def _summary_lines(s: ExplanationSummary, p: ExplanationProblem, limit: int) -> list[str]:
    out = [f"explanations: {s.n} counterfactual paths sampled from the policy (seed {s.seed}; frequencies and means "
           f"are Monte Carlo estimates), {len(s.explanations)} distinct action sequence(s) besides the observed one"]
    if s.explanations:
        out.append("  freq      mean o(τ')   changes (t: from -> to)")
    for e in s.explanations[:limit]:
        out.append(f"  {100 * e.frequency:6.2f}%   {format_value(e.mean_outcome):<11}  {e.changes_text()}")
    if len(s.explanations) > limit:
        out.append(f"  ... {len(s.explanations) - limit} more (see --json)")
    out.append(f"  observed sequence: {100 * s.observed_frequency:.2f}%;  sample mean outcome "
               f"{format_value(s.mean_outcome)} ± {format_value(s.standard_error)} (standard error)")
    out.append("per-step change frequency: " + "  ".join(f"{t}: {100 * f:.3g}%" for t, f in
                                                         enumerate(s.change_frequency)))
    return out


def explain_path(problem: ExplanationProblem, explanations: int = 1000, explanation_seed: int | None = None,
                 verify: bool = True, cross_check: bool = False, baselines: bool = False) -> ExplanationResult:
    """Solve a k-change explanation problem.

    Args:
        problem: the validated problem.
        explanations: number of counterfactual paths sampled from π* (Algorithm 1); 0 for none.
        explanation_seed: their seed (default: the problem's seed).
        verify: re-check the policy's value for budget k with Storm (the reported ``value`` is then Storm's).
        cross_check: also compare Storm's optimum of the enhanced MDP with the DP for every k' <= k_max (O8).
        baselines: evaluate the random, greedy and noisy-greedy baselines (App. D) for budget k.
    """
    start = time.perf_counter()
    if explanations < 0:
        raise ExplanationError(f"the number of sampled explanations must be >= 0, got {explanations}")
    k = problem.k
    cfmdp = counterfactual_mdp(problem)
    policy = k_change_dp(cfmdp)
    if not policy.feasible(k):
        raise ExplanationError(_infeasible_message(policy, k))
    timings = {"counterfactual_mdp": cfmdp.seconds, "dp": policy.seconds}
    value_dp = policy.value(k)
    failures: list[str] = []
    verification, enhanced = None, None
    if verify or baselines:
        tick = time.perf_counter()
        enhanced = enhanced_mdp(cfmdp, k)
        if verify:
            verification = enhanced.policy_value(policy.weights)
            _compare(failures, f"policy value for k = {k}", verification.value, value_dp)
        timings["storm_policy_check"] = time.perf_counter() - tick
    summary = None
    if explanations:
        seed = problem.seed if explanation_seed is None else explanation_seed
        paths = sample_paths(policy, k, explanations, seed)
        summary = summarize(paths, seed)
        timings["explanations"] = paths.seconds
    base = _baselines(cfmdp, k, enhanced, failures, timings) if baselines else {}
    checks = _cross_check(cfmdp, policy, failures, timings) if cross_check else None
    tick = time.perf_counter()
    entries = policy_entries(policy, k)
    timings["policy_entries"] = time.perf_counter() - tick
    timings["total"] = time.perf_counter() - start
    return ExplanationResult(problem, cfmdp, policy, verification.value if verification else value_dp, value_dp,
                             verification, entries, summary, base, checks, timings, failures)


def policy_entries(policy: KChangePolicy, k: int) -> list[dict[str, Any]]:
    """The policy for budget k at every (t, s, l) reachable from (0, s_0, 0), with its probability and value."""
    cfmdp = policy.cfmdp
    m = cfmdp.problem.model
    observed = cfmdp.problem.path.actions
    entries = []
    for t, mass in enumerate(occupancy(cfmdp, k, policy.weights)):
        step = cfmdp.steps[t]
        chosen = policy.choice_positions(t, k)
        for i, l in zip(*np.nonzero(mass > 0)):
            pos = int(chosen[i, l])
            s = int(step.states[i])
            entries.append({"t": t, "state": m.valuation(s), "state_name": m.state_name(s), "l": int(l),
                            "probability": float(mass[i, l]), "observed_action": observed[t],
                            "action": m.choice_name(int(step.choices[pos])), "change": bool(step.change[pos]),
                            "value": float(policy.values[t][i, k - l])})
    return entries


def _compare(failures: list[str], what: str, storm: float, dp: float) -> bool:
    agrees = abs(storm - dp) <= AGREEMENT * max(1.0, abs(dp))
    if not agrees:
        failures.append(f"{what}: Storm {storm!r} vs DP {dp!r}")
    return agrees


def _baselines(cfmdp, k, enhanced, failures, timings) -> dict[str, dict[str, Any]]:
    tick = time.perf_counter()
    out = {}
    for name in BASELINES:
        weights = baseline_policy(cfmdp, name)
        value = float(evaluate_policy(cfmdp, k, weights)[0, 0])
        entry: dict[str, Any] = {"value": value if np.isfinite(value) else None}
        if np.isfinite(value):
            entry["storm"] = enhanced.policy_value(weights).value
            _compare(failures, f"baseline {name}", entry["storm"], value)
        out[name] = entry
    timings["baselines"] = time.perf_counter() - tick
    return out


def _cross_check(cfmdp, policy, failures, timings) -> dict[int, dict[str, Any]]:
    tick = time.perf_counter()
    out = {}
    for k in range(policy.K + 1):
        dp = policy.value(k)
        if not np.isfinite(dp):
            out[k] = {"dp": None, "storm": None, "agrees": True}
            continue
        storm = enhanced_mdp(cfmdp, k).optimum().value
        out[k] = {"dp": dp, "storm": storm, "agrees": _compare(failures, f"optimum for k = {k}", storm, dp)}
    timings["storm_cross_check"] = time.perf_counter() - tick
    return out


def _infeasible_message(policy: KChangePolicy, k: int) -> str:
    feasible = [j for j in range(k + 1, policy.K + 1) if policy.feasible(j)]
    hint = ""
    if feasible:
        hint = f"; the smallest feasible budget is k = {feasible[0]}"
    elif policy.K > k:
        hint = f"; nor does one for any budget up to k_max = {policy.K}"
    return (f"no counterfactual policy with at most k = {k} changes exists (pins, forbidden actions or actions not "
            f"enabled in counterfactual states force more changes){hint}")
