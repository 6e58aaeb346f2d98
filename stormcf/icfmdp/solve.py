"""Solving an interval counterfactual MDP problem: robust value iteration, the Gumbel-max baseline, and Storm's
re-check of every reported value on the time-unrolled model.

Robust value iteration (spec §4; Lally et al. §5, after Givan et al. and Mathiesen et al.) is the shared backward
induction of :mod:`stormcf.counterfactual_mdp.backward` without a budget:

    V_T(s) = 0
    V_t(s) = max_a [ R(s, a) + min_{P ∈ I_t(s, a)} Σ_s' P(s') V_{t+1}(s') ],      π_t(s) = the maximising a

(min over the intervals for a pessimistic nature, max for an optimistic one; max/min over actions swapped when the
reward is a cost to minimize). R(s, a) is the state plus the state-action reward of a PRISM reward model (Storm's
cumulative-reward semantics). Ties go to the observed action, so the policy deviates from the observation only
where that pays.
"""
from __future__ import annotations

import time

from ..counterfactual_mdp import CounterfactualMDP, Policy, evaluate, gumbel_cfmdp, optimal_policy, unroll
from ..modes import Nature, Optimization
from ..run import Run
from ..verify import Check
from .problem import ICFMDPProblem, ICFMDPSettings, interval_cfmdp
from .result import ICFMDPResult


def robust_value_iteration(cfmdp: CounterfactualMDP, reward: str | None = None,
                           optimization: Optimization | str = Optimization.MAXIMIZE,
                           nature: Nature | str = Nature.PESSIMISTIC) -> Policy:
    """The robust (``nature="pessimistic"``) or optimistic counterfactual policy of an ICFMDP and its values
    V_t(s); on point rows (a Gumbel-max or sampled CFMDP) the optimal policy and its expected values."""
    model = cfmdp.model
    return optimal_policy(cfmdp, model.step_rewards(reward), model.reward_model(reward).name, optimization, nature)


def policy_value(policy: Policy, cfmdp: CounterfactualMDP, nature: Nature | str = Nature.PESSIMISTIC) -> float:
    """V_0(s_0) of a fixed policy on ``cfmdp`` (same layers): its expectation on point rows, its worst case
    (pessimistic) or best case (optimistic) on interval rows."""
    return evaluate(cfmdp, cfmdp.model.step_rewards(policy.reward), policy.weight_function(), None,
                    policy.optimization, nature)


def storm_value(cfmdp: CounterfactualMDP, reward: str | None = None, policy: Policy | None = None,
                optimization: Optimization | str = Optimization.MAXIMIZE, nature: Nature | str = Nature.PESSIMISTIC,
                expected: float | None = None) -> Check:
    """Storm's finite-horizon value at (0, s_0) of the unrolled counterfactual MDP (``R{"r"}max=? [C<=T]``,
    ``min`` when minimizing; robust or cooperative nature on interval rows), or of ``policy`` on it."""
    model = cfmdp.model
    rewards = model.step_rewards(reward if reward is not None or policy is None else policy.reward)
    unrolled = unroll(cfmdp, rewards)
    if policy is None:
        return unrolled.optimum(optimization, nature, expected=expected)
    return unrolled.policy_value(policy.weight_function(), policy.optimization, nature, expected=expected)


def solve_icfmdp(problem: ICFMDPProblem, settings: ICFMDPSettings = ICFMDPSettings(), *, run: Run | None = None,
                 time_limit: float | None = None) -> ICFMDPResult:
    """Build the ICFMDP of the observed path, solve it robustly (and optimistically), optionally compute the
    Gumbel-max baseline, and re-check every reported value with Storm (each check compared with stormcf's own) on
    the time-unrolled model (unrolled once per counterfactual MDP). ``run`` (or a new one of ``time_limit``
    seconds, :meth:`~stormcf.run.Run.of`) bounds it all: :class:`~stormcf.errors.TimeLimitReached` names the phase
    it ran out in."""
    run = Run.of(run, time_limit)
    with run.active():
        return _solve(problem, settings, run)


def _solve(problem: ICFMDPProblem, settings: ICFMDPSettings, deadline: Run) -> ICFMDPResult:
    settings.require_memory(problem.model)
    timings: dict[str, float] = {}
    opt, reward = problem.optimization, problem.reward
    ic = interval_cfmdp(problem.path, problem.assumptions, settings.bounds, solver=settings.solver, run=deadline)
    deadline.check("the interval counterfactual MDP's bounds")
    timings["icfmdp"] = ic.seconds
    tick = time.perf_counter()
    robust = robust_value_iteration(ic, reward, opt, Nature.PESSIMISTIC)
    timings["robust_value_iteration"] = time.perf_counter() - tick
    tick = time.perf_counter()
    unrolled = unroll(ic, problem.rewards)
    checks = [unrolled.policy_value(robust.weight_function(), opt, Nature.PESSIMISTIC,
                                    expected=robust.value()).named("robust_policy"),
              unrolled.optimum(opt, Nature.PESSIMISTIC, expected=robust.value()).named("robust_optimum")]
    optimistic = None
    if settings.optimistic:
        optimistic = robust_value_iteration(ic, reward, opt, Nature.OPTIMISTIC)
        checks.append(unrolled.policy_value(optimistic.weight_function(), opt, Nature.OPTIMISTIC,
                                            expected=optimistic.value()).named("optimistic_policy"))
    gumbel = gumbel_policy = None
    if settings.baseline == "gumbel":
        deadline.check("the Storm checks of the robust policy")
        gumbel = gumbel_cfmdp(problem.path, settings.estimator, settings.samples, settings.seed, layers=ic.layers,
                              run=deadline)
        deadline.check("the Gumbel-max counterfactual MDP")
        timings["gumbel_cfmdp"] = gumbel.seconds
        gumbel_policy = robust_value_iteration(gumbel, reward, opt)
        checks.append(storm_value(gumbel, reward, gumbel_policy, opt,
                                  expected=gumbel_policy.value()).named("gumbel_policy_on_gumbel"))
        checks.append(unrolled.policy_value(gumbel_policy.weight_function(), opt, Nature.PESSIMISTIC,
                                            expected=policy_value(gumbel_policy, ic)).named("gumbel_policy_worst_case"))
    timings["storm_checks"] = time.perf_counter() - tick
    for check in checks:
        check.confirm()
    return ICFMDPResult(problem, settings, ic, robust, tuple(checks), optimistic, gumbel, gumbel_policy, timings)
