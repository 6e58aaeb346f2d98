"""The answer of ``stormcf explain-path``: values h(s_0, T, k), the policy, sampled explanations, baselines, every
value re-checked by Storm; text for people, JSON for scripts (one :class:`~stormcf.report.Report`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..counterfactual_mdp import CounterfactualMDP, Policy
from ..model import ExplicitModel
from ..report import Report
from ..verify import Check, format_value
from .problem import ExplanationProblem
from .summary import ExplanationSummary


@dataclass(frozen=True, eq=False)
class ExplanationResult(Report):
    """What :func:`~stormcf.explain.explain_path` found for budget k (and the values for every k' <= k_max).

    ``value`` is Storm's value of the returned policy on the DTMC it induces on the unrolled (t, s, l) model (the
    DP's own value is ``value_dp``). ``checks`` (by name): ``policy`` (that value), ``optimum_k<j>`` (Storm's optimum
    of the unrolled model for budget j, with ``--verify``), ``baseline_<name>``; each carries the DP's value in
    ``expected``.

    ``samples_requested``: the Monte Carlo samples per (t, s, a) asked for, when the answer has fewer
    (``problem.samples``) because the run's time limit (or the user, ``stopped`` says which) ended the larger one.
    """

    command = "explain-path"
    problem: ExplanationProblem
    cfmdp: CounterfactualMDP
    policy: Policy
    checks: Sequence[Check]
    policy_entries: list[dict[str, Any]]
    summary: ExplanationSummary | None
    baselines: dict[str, float | None]
    timings: dict[str, float] = field(default_factory=dict)
    samples_requested: int | None = None
    stopped: str | None = None

    status = "ok"

    @property
    def model(self) -> ExplicitModel:
        return self.problem.model

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def value_dp(self) -> float:
        return self.policy.value(self.problem.k)

    @property
    def value(self) -> float:
        """Storm's value of the policy (the DP's when Storm was not asked)."""
        check = self.check("policy")
        return self.value_dp if check is None else check.value

    @property
    def k(self) -> int:
        return self.problem.k

    @property
    def observed_outcome(self) -> float:
        return self.problem.observed_outcome

    @property
    def improvement(self) -> float:
        """h - o(τ) (o(τ) - h when minimizing): how much better the counterfactual policy is on average."""
        return self.problem.optimization.sign * (self.value - self.observed_outcome)

    @property
    def relative_improvement(self) -> float | None:
        """improvement / |o(τ)| (None if o(τ) = 0)."""
        o = self.observed_outcome
        return None if o == 0 else self.improvement / abs(o)

    def values_by_k(self) -> dict[int, float | None]:
        """h(s_0, T, k') for k' = 0..k_max (None where no policy meets the budget)."""
        return {k: (v if np.isfinite(v) else None) for k, v in self.policy.values_by_k().items()}

    @property
    def approximate(self) -> bool:
        return self.cfmdp.approximate or self.summary is not None

    @property
    def notes(self) -> list[str]:
        out = []
        if self.samples_requested is not None:
            out.append(f"{self.stopped}: the Monte Carlo estimate has d = {self.problem.samples} of the requested "
                       f"{self.samples_requested} samples per (t, s, a) (the same answer as a run with "
                       f"{self.problem.samples} samples)")
        if self.cfmdp.approximate:
            out.append("h is exact for the Monte Carlo estimate of the counterfactual MDP, which has sampling error "
                       "(and maximizing over noisy estimates is biased optimistically)")
        if self.summary is not None:
            out.append("the explanations are counterfactual paths sampled from the policy: their frequencies and "
                       "means are Monte Carlo estimates")
        return out

    # ------------------------------------------------------------------------------------------ output
    def payload(self) -> dict[str, Any]:
        p = self.problem
        cross = {c.name[len("optimum_k"):]: c.value for c in self.checks if c.name.startswith("optimum_k")}
        return {
            "reward_model": p.reward_name,
            "optimization": p.optimization.word,
            "path": {"horizon": p.T, "actions": p.path.actions, "outcome": self.observed_outcome},
            "k": p.k,
            "k_max": p.k_max,
            "estimator": {"name": p.estimator, **({"samples": p.samples, "seed": p.seed} if p.estimator == "mc"
                                                   else {}),
                          **({"samples_requested": self.samples_requested} if self.samples_requested else {})},
            "pins": {str(t): a for t, a in sorted(p.pins.items())},
            "forbidden": sorted(p.forbidden),
            "value": self.value,
            "value_dp": self.value_dp,
            "values_by_k": {str(k): v for k, v in self.values_by_k().items()},
            "improvement": self.improvement,
            "relative_improvement": self.relative_improvement,
            "counterfactual_mdp": self.cfmdp.to_dict(),
            "policy": self.policy_entries,
            "explanations": self.summary.to_dict() if self.summary else None,
            "baselines": self.baselines,
            "optimum_by_k": cross or None,
        }

    def text(self) -> str:
        return "\n".join(self.lines())

    def lines(self, max_explanations: int = 10) -> list[str]:
        p = self.problem
        goal = f"{p.optimization.word}d"
        out = [f"observed path: {p.T} steps, outcome (total reward) {format_value(self.observed_outcome)} "
               f"(reward model \"{p.reward_name}\", {goal})"]
        estimator = ("exact Gumbel-max probabilities (closed form)" if p.estimator == "exact" else
                     f"Gumbel-max probabilities estimated by Monte Carlo (d = {p.samples}"
                     f"{'' if self.samples_requested is None else f' of the requested {self.samples_requested}'}"
                     f" per step, seed {p.seed})")
        out.append(f"counterfactual MDP: {estimator}; {self.cfmdp.n_pairs} reachable (t, s) pairs, "
                   f"{self.cfmdp.n_rows} rows")
        values = ", ".join("infeasible" if v is None else format_value(v) for v in self.values_by_k().values())
        out.append(f"best expected outcome with at most k changed actions, k = 0..{p.k_max}: {values}")
        checked = (f" (Storm on the DTMC the policy induces: {format_value(self.value)})"
                   if self.check("policy") else " (not re-checked by Storm)")
        out.append(f"best policy with at most k = {p.k} changes: expected outcome {format_value(self.value)}{checked}")
        relative = ("" if self.relative_improvement is None
                    else f" ({100 * self.relative_improvement:+.4g}%)")
        out.append(f"improvement over the observed outcome: {format_value(self.improvement)}{relative}")
        if self.samples_requested is not None:
            out.append(f"note: {self.notes[0]}")
        if p.estimator == "mc":
            out.append("note: h is exact for the Monte Carlo estimate of the counterfactual MDP, which has sampling "
                       "error (and maximizing over noisy estimates is biased optimistically)")
        out += self._decision_lines()
        if self.summary:
            out += _summary_lines(self.summary, p, max_explanations)
        for name, value in self.baselines.items():
            text = "infeasible" if value is None else f"{format_value(value)} (Storm)"
            out.append(f"baseline {name}: expected outcome {text}")
        optima = [c for c in self.checks if c.name.startswith("optimum_k")]
        if optima:
            out.append(f"Storm cross-check (unrolled (t, s, l) MDP, {optima[0].property}, k = 0..{p.k_max}): "
                       f"agrees with the DP for every budget")
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
            out.append(f"  ... {len(changes) - limit} more (see the JSON output)")
        return out


def _summary_lines(s: ExplanationSummary, p: ExplanationProblem, limit: int) -> list[str]:
    out = [f"explanations: {s.n} counterfactual paths sampled from the policy (seed {s.seed}; frequencies and means "
           f"are Monte Carlo estimates), {len(s.explanations)} distinct action sequence(s) besides the observed one"]
    if s.explanations:
        out.append("  freq      mean outcome changes (t: from -> to)")
    for e in s.explanations[:limit]:
        out.append(f"  {100 * e.frequency:6.2f}%   {format_value(e.mean_outcome):<11}  {e.changes_text()}")
    if len(s.explanations) > limit:
        out.append(f"  ... {len(s.explanations) - limit} more (see the JSON output)")
    out.append(f"  observed sequence: {100 * s.observed_frequency:.2f}%;  sample mean outcome "
               f"{format_value(s.mean_outcome)} ± {format_value(s.standard_error)} (standard error)")
    out.append("per-step change frequency: " + "  ".join(f"{t}: {100 * f:.3g}%" for t, f in
                                                         enumerate(s.change_frequency)))
    return out
