"""Solving a k-change explanation problem (seed 001): the Gumbel-max counterfactual MDP M_τ, Algorithm 2 (the
shared budgeted backward induction), Algorithm 1 (sampled explanations), the baselines of App. D, and Storm's
re-check of every reported value on the time-unrolled (t, s, l) model.

M_τ (paper §4, notes §1.3): for every step t the Gumbel-max counterfactual transition probabilities

    P_τ,t(s' | s, a) = E_{U_t ~ posterior(U_t | s_t, a_t -> s_{t+1})} [ 1[s' = argmax_x log P(x | s, a) + U_t,x] ]

(exact closed form or Monte Carlo), only for the (t, s) pairs reachable from (0, s_0) through their supports and
only for the choices the problem allows at step t (pins, forbidden actions).
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from .. import interrupt
from ..counterfactual_mdp import (CounterfactualMDP, Policy, UnrolledModel, evaluate, gumbel_cfmdp, occupancy,
                                  optimal_policy, sample_paths, unroll)
from ..errors import TimeLimitReached
from ..limits import require_memory
from ..modes import Nature
from ..run import Run
from .baselines import BASELINES, baseline_policy
from .problem import ExplanationError, ExplanationProblem
from .result import ExplanationResult
from .summary import summarize


def counterfactual_mdp(problem: ExplanationProblem, run: Run | None = None) -> CounterfactualMDP:
    """M_τ over the reachable (t, s) pairs and the allowed choices (module docs), within ``run`` (default:
    unlimited)."""
    return gumbel_cfmdp(problem.path, problem.estimator, problem.samples, problem.seed, layers="support",
                        choice_rule=problem.allowed_and_changes, run=run)


def k_change_dp(problem: ExplanationProblem, cfmdp: CounterfactualMDP | None = None,
                K: int | None = None) -> Policy:
    """Algorithm 2 for all budgets 0..K (default: the problem's k_max) in one backward pass."""
    cfmdp = counterfactual_mdp(problem) if cfmdp is None else cfmdp
    K = problem.k_max if K is None else K
    assert K is not None                                # k_max is set by ExplanationProblem.__post_init__
    if K < 0:
        raise ExplanationError(f"the change budget must be >= 0, got {K}")
    return optimal_policy(cfmdp, problem.step_rewards, problem.reward_name, problem.optimization,
                          Nature.PESSIMISTIC, budget=K)


def unrolled_model(problem: ExplanationProblem, cfmdp: CounterfactualMDP, k: int) -> UnrolledModel:
    """The unrolled (t, s, l) model of budget k that Storm checks (oracle O8)."""
    return unroll(cfmdp, problem.step_rewards, k)


def explain_path(problem: ExplanationProblem, explanations: int = 1000, explanation_seed: int | None = None,
                 verify: bool = True, cross_check: bool = False, baselines: bool = False,
                 run: Run | None = None, time_limit: float | None = None) -> ExplanationResult:
    """Solve a k-change explanation problem.

    Args:
        problem: the validated problem.
        explanations: number of counterfactual paths sampled from π* (Algorithm 1); 0 for none.
        explanation_seed: their seed (default: the problem's seed).
        verify: re-check the policy's value for budget k with Storm (the reported ``value`` is then Storm's).
        cross_check: also compare Storm's optimum of the unrolled model with the DP for every k' <= k_max (O8).
        baselines: evaluate the random, greedy and noisy-greedy baselines (App. D) for budget k.
        run, time_limit: the run that bounds it all, or a new one of ``time_limit`` seconds
            (:meth:`~stormcf.run.Run.of`); :class:`~stormcf.errors.TimeLimitReached` names the phase it ran out in.
            With the Monte Carlo estimator, a limited run answers with fewer samples when the requested ones do
            not fit (:func:`anytime_monte_carlo`).
    """
    run = Run.of(run, time_limit)

    def once(problem: ExplanationProblem, deadline: Run) -> ExplanationResult:
        return _explain(problem, explanations, explanation_seed, verify, cross_check, baselines, deadline)
    with run.active():
        if problem.estimator == "mc" and run.limited and problem.samples > PILOT_SAMPLES:
            return anytime_monte_carlo(problem, once, run)
        return once(problem, run)


#: posterior samples per (t, s, a) of the first answer of :func:`anytime_monte_carlo`
PILOT_SAMPLES = 8
#: the share of the time left that the next, larger sample is predicted to need at most
_PREDICTION_SHARE = 0.7


def anytime_monte_carlo(problem: ExplanationProblem, once: Callable[[ExplanationProblem, Run], ExplanationResult],
                        run: Run) -> ExplanationResult:
    """The Monte Carlo explanation within a limited ``run``, anytime: first with :data:`PILOT_SAMPLES` samples
    per (t, s, a), then with the requested number d, or with as many as the time left is predicted to fit (the
    sampling's time grows linearly in d; the DP, Storm's check and the sampled explanations are timed on the answer
    before). Each answer is a complete one, checked by Storm, and equals a run with that many samples (the same
    seeds); the last one that ended in time is returned, with the requested d beside it when it is smaller. If not
    even the first answer fits, :class:`~stormcf.errors.TimeLimitReached` says so."""
    best = once(replace(problem, samples=PILOT_SAMPLES), run)
    timed = [(best.problem.samples, best.timings["counterfactual_mdp"])]
    while best.problem.samples < problem.samples and not run.expired:
        rest = best.timings["total"] - timed[-1][1]
        samples = min(problem.samples, _samples_that_fit(timed, _PREDICTION_SHARE * run.remaining() - rest))
        if samples < 2 * best.problem.samples:
            break
        try:
            best = once(replace(problem, samples=samples), run)
        except (TimeLimitReached, interrupt.Interrupted):
            break
        timed.append((samples, best.timings["counterfactual_mdp"]))
    if best.problem.samples == problem.samples:
        return best
    stopped = ("stopped by the user" if run.interrupted else f"{run.limit} was reached" if run.out_of_time else
               f"more samples were not predicted to fit in {run.limit}")
    return replace(best, samples_requested=problem.samples, stopped=stopped)


def _samples_that_fit(timed: list[tuple[int, float]], seconds: float) -> int:
    """The most samples whose sampling is predicted to take at most ``seconds``, from the (samples, seconds) of the
    runs so far: a line through the last two (its intercept is the per-row work that does not grow with the
    samples), through the origin from one."""
    (n1, t1), (n2, t2) = timed[-2] if len(timed) > 1 else (0, 0.0), timed[-1]
    slope = (t2 - t1) / (n2 - n1)
    if slope <= 0:                                   # timing noise: the proportional prediction
        slope = t2 / n2
    return int(n2 + (seconds - t2) / max(slope, 1e-12)) if seconds > t2 else int(n2 * seconds / max(t2, 1e-12))


def _explain(problem: ExplanationProblem, explanations: int, explanation_seed: int | None, verify: bool,
             cross_check: bool, baselines: bool, deadline: Run) -> ExplanationResult:
    start = time.perf_counter()
    if explanations < 0:
        raise ExplanationError(f"the number of sampled explanations must be >= 0, got {explanations}")
    if explanations:
        # the sampled paths: states, choices, changes used and flags per step, and their sorting in the summary
        require_memory(explanations * problem.T * 64, f"{explanations} sampled counterfactual paths of "
                                                      f"{problem.T} steps")
    k, opt = problem.k, problem.optimization
    cfmdp = counterfactual_mdp(problem, deadline)
    deadline.check("the counterfactual MDP")
    policy = k_change_dp(problem, cfmdp)
    deadline.check("the k-change dynamic programme")
    if not policy.feasible(k):
        raise ExplanationError(_infeasible_message(policy, k))
    timings = {"counterfactual_mdp": cfmdp.seconds, "dp": policy.seconds}
    checks = []
    unrolled = None
    if verify or baselines:
        tick = time.perf_counter()
        unrolled = unrolled_model(problem, cfmdp, k)
        if verify:
            checks.append(unrolled.policy_value(policy.weight_function(), opt, Nature.PESSIMISTIC,
                                                expected=policy.value(k)).named("policy").confirm())
        timings["storm_policy_check"] = time.perf_counter() - tick
    summary = None
    deadline.check("Storm's check of the policy")
    if explanations:
        seed = problem.seed if explanation_seed is None else explanation_seed
        paths = sample_paths(cfmdp, policy, explanations, np.random.default_rng(seed), k, problem.step_rewards)
        summary = summarize(paths, seed)
        timings["explanations"] = paths.seconds
    deadline.check("the sampled explanations")
    base = _baselines(problem, cfmdp, unrolled, checks, timings) if baselines else {}
    if cross_check:
        _cross_check(problem, cfmdp, policy, checks, timings)
    tick = time.perf_counter()
    entries = policy_entries(policy, k)
    timings["policy_entries"] = time.perf_counter() - tick
    timings["total"] = time.perf_counter() - start
    return ExplanationResult(problem, cfmdp, policy, tuple(checks), entries, summary, base, timings)


def policy_entries(policy: Policy, k: int) -> list[dict[str, Any]]:
    """The policy for budget k at every (t, s, l) reachable from (0, s_0, 0), with its probability and value."""
    cfmdp = policy.cfmdp
    m = cfmdp.model
    observed = cfmdp.path.actions
    entries = []
    for t, mass in enumerate(occupancy(cfmdp, policy.weight_function(), k)):
        step = cfmdp.steps[t]
        where = np.nonzero(mass > 0)
        positions = policy.choice_positions(t, k)[where]
        names = m.choice_names_of(step.choices[positions])
        for i, l, pos, name in zip(*where, positions.tolist(), names):
            s = int(step.states[i])
            entries.append({"t": t, "state": m.valuation(s), "state_name": m.state_name(s), "l": int(l),
                            "probability": float(mass[i, l]), "observed_action": observed[t],
                            "action": name, "change": bool(step.change[pos]),
                            "value": float(policy.values[t][i, k - l])})
    return entries


def _baselines(problem, cfmdp, unrolled, checks, timings) -> dict[str, float | None]:
    """The baselines' values for budget k: computed exactly, re-checked by Storm (the reported number)."""
    tick = time.perf_counter()
    out: dict[str, float | None] = {}
    for name in BASELINES:
        weights = baseline_policy(problem, cfmdp, name)
        value = evaluate(cfmdp, problem.step_rewards, weights, problem.k, problem.optimization)
        out[name] = None
        if np.isfinite(value):
            check = unrolled.policy_value(weights, problem.optimization, Nature.PESSIMISTIC, expected=value)
            checks.append(check.named(f"baseline_{name}").confirm())
            out[name] = check.value
    timings["baselines"] = time.perf_counter() - tick
    return out


def _cross_check(problem, cfmdp, policy, checks, timings) -> None:
    """Storm's optimum of the unrolled model for every budget the DP reports (oracle O8)."""
    tick = time.perf_counter()
    for k in range(policy.K + 1):
        if policy.feasible(k):
            check = unrolled_model(problem, cfmdp, k).optimum(problem.optimization, Nature.PESSIMISTIC,
                                                               expected=policy.value(k))
            checks.append(check.named(f"optimum_k{k}").confirm())
    timings["storm_cross_check"] = time.perf_counter() - tick


def _infeasible_message(policy: Policy, k: int) -> str:
    feasible = [j for j in range(k + 1, policy.K + 1) if policy.feasible(j)]
    hint = ""
    if feasible:
        hint = f"; the smallest feasible budget is k = {feasible[0]}"
    elif policy.K > k:
        hint = f"; nor does one for any budget up to k_max = {policy.K}"
    return (f"no counterfactual policy with at most k = {k} changes exists (pins, forbidden actions or actions not "
            f"enabled in counterfactual states force more changes){hint}")
