"""The baselines of the paper's Appendix D, as (randomized) policies over (s, l, t) with budget k.

All three play the observed action a_t once the budget is spent (l = k). While l < k:

- ``random``: a uniformly random allowed action (which may be a_t, as in the authors' code);
- ``greedy``: the action maximizing the one-step lookahead R(s, a) + Σ_s' P_τ,t(s'|s, a) max_a' R(s', a')
  (Eq. 12, whose a' the paper leaves undefined: here the best immediate action at s' among those allowed at t+1;
  at the last step just R(s, a)); ties keep a_t;
- ``noisy_greedy``: the greedy action with probability 1/2, else a_t (the greedy action where a_t is not allowed).

Their values are computed exactly by :func:`stormcf.counterfactual_mdp.evaluate` (the paper estimates them from
1000 sampled paths) and re-checked by Storm on the unrolled model.
"""
from __future__ import annotations

import numpy as np

from ..counterfactual_mdp import TIE_TOLERANCE, CounterfactualMDP, PolicyWeights, group_argmax
from ..errors import OptionError
from .problem import ExplanationProblem

BASELINES = ("random", "greedy", "noisy_greedy")


def baseline_policy(problem: ExplanationProblem, cfmdp: CounterfactualMDP, name: str) -> PolicyWeights:
    """The weights function (t, k) -> (|choices of step t|, k+1) of a baseline."""
    if name == "random":
        return lambda t, k: _random(cfmdp, t, k)
    if name == "greedy":
        return lambda t, k: _mixed(problem, cfmdp, t, k, 1.0)
    if name == "noisy_greedy":
        return lambda t, k: _mixed(problem, cfmdp, t, k, 0.5)
    raise OptionError(f"unknown baseline {name!r}: use one of {', '.join(BASELINES)}")


def _random(cfmdp: CounterfactualMDP, t: int, k: int) -> np.ndarray:
    step = cfmdp.steps[t]
    W = np.repeat((1.0 / np.diff(step.groups)[step.owner])[:, None], k + 1, axis=1)
    W[:, k] = ~step.change
    return W


def _mixed(problem: ExplanationProblem, cfmdp: CounterfactualMDP, t: int, k: int, greedy_weight: float) -> np.ndarray:
    """Greedy with probability ``greedy_weight``, else a_t, while l < k; a_t at l = k."""
    step = cfmdp.steps[t]
    keep = ~step.change
    greedy = np.zeros(step.n_choices)
    chosen = greedy_choices(problem, cfmdp, t)
    greedy[chosen[chosen >= 0]] = 1.0
    has_keep = np.bincount(step.owner[keep], minlength=step.states.size)[step.owner] > 0
    mix = np.where(has_keep, greedy_weight * greedy + (1.0 - greedy_weight) * keep, greedy)
    W = np.repeat(mix[:, None], k + 1, axis=1)
    W[:, k] = keep
    return W


def greedy_choices(problem: ExplanationProblem, cfmdp: CounterfactualMDP, t: int) -> np.ndarray:
    """Per state of step t, the position of the greedy action (-1 if the state has no allowed action)."""
    sign = problem.optimization.sign
    rewards = problem.step_rewards
    step = cfmdp.steps[t]
    score = sign * rewards[step.choices]
    if t < cfmdp.T - 1:
        following = cfmdp.steps[t + 1]
        best_next, _ = group_argmax(sign * rewards[following.choices][:, None], following.groups)
        score = score + step.rows @ best_next[:, 0]
    best, arg = group_argmax(score[:, None], step.groups)
    best, arg = best[:, 0], arg[:, 0]
    keep = step.keep
    kept = np.where(keep >= 0, score[np.maximum(keep, 0)], -np.inf)
    with np.errstate(invalid="ignore"):
        tie = (keep >= 0) & np.isfinite(kept) & (kept >= best - TIE_TOLERANCE * np.maximum(1.0, np.abs(best)))
    return np.where(tie, keep, arg)
