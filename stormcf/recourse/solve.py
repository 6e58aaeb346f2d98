"""The one entry point :func:`solve_recourse`: the BRKGA front, Storm's exact least cost where it applies, and a
Storm re-check of every reported plan."""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..errors import VerificationFailure
from ..run import Run
from .brkga import BRKGASettings, GAResult, brkga, dominates, sorted_front
from .decoder import Evaluation, Plans
from .exact import TOLERANCE, Optimum, RecourseMDP, achievable_set, check_plan, inside, optimum, plan_dtmc, plan_mdp
from .prism import PrismRecourse
from .problem import MAX_STATES, RecourseProblem
from .result import RecoursePlan, RecourseResult
from .trace import trace

Space = RecourseProblem | PrismRecourse
#: the share of the time limit the GA may use; the rest is for Storm's least cost and its checks of the front
GA_SHARE = 0.8


def solve_recourse(problem: Space, settings: BRKGASettings = BRKGASettings(), *, exact: bool = True,
                   achievable: bool = False, max_states: int = MAX_STATES, solver: str = "auto",
                   run: Run | None = None, time_limit: float | None = None) -> RecourseResult:
    """Plans for a recourse problem (Python or PRISM front).

    1. The BRKGA (``settings``) gives the front of feasible, mutually non-dominated plans.
    2. With ``exact`` and where the model is discrete (finite values on the Python front; any PRISM model), Storm
       computes ``R{"cost"}min=? [F "accept"]`` on the plan MDP (at most ``max_states`` states). On deterministic
       models that is the least cost over plans: Storm's optimal plan joins the front if the GA missed it, and the
       gap of the GA's cheapest plan is reported. On stochastic models (θ = 1) it is a lower bound.
    3. Every plan of the front is re-checked by Storm on the DTMC it induces; the numbers reported are Storm's.
    4. With ``achievable`` (deterministic models with an optimum), Storm's multi-objective achievable (cost, Gower)
       set; every plan of the front must lie inside its over-approximation (else VerificationFailure): one
       feasibility LP per plan on ``solver`` (:data:`stormcf.solvers.SOLVERS`).

    ``run`` (or a new one of ``time_limit`` seconds) bounds it all: when it expires (or the user asks to stop) the
    GA ends with the front of the generations run so far, each plan still checked by Storm.
    """
    run = Run.of(run, time_limit)
    with run.active():
        return _solve(problem, settings, exact, achievable, max_states, solver, run)


def _solve(problem: Space, settings: BRKGASettings, exact: bool, achievable: bool, max_states: int, solver: str,
           deadline: Run) -> RecourseResult:
    timings: dict[str, float] = {}
    start = time.perf_counter()
    if _accepted_initially(problem):
        return _result(problem, settings, "trivial", [], None, None, None, None, None, [], timings)
    ga = brkga(problem, settings, deadline.sub(fraction=GA_SHARE))
    timings["ga"] = ga.seconds
    rows = sorted_front(ga)
    candidates = [(ga.population.plans.take(np.array([k])), "GA") for k in rows]
    exact_answer, notes = None, []
    if ga.interrupted or ga.timed_out:
        who = "the user" if ga.interrupted else "the time limit"
        notes.append(f"stopped by {who} after {ga.generations} of {settings.generations} generations"
                     + ("; Storm's least cost was not computed" if exact else ""))
    if exact and not (ga.interrupted or ga.timed_out):
        tick = time.perf_counter()
        exact_answer, notes = _exact(problem, max_states)
        timings["exact"] = time.perf_counter() - tick
    tick = time.perf_counter()
    optimal, lower = _optimum_values(exact_answer)
    if optimal is not None and exact_answer is not None and exact_answer[1].plan is not None:
        candidates = _with_storm_plan(problem, candidates, exact_answer[1].plan)
    checked = [_checked_plan(problem, plans, found_by) for plans, found_by in candidates]
    timings["checks"] = time.perf_counter() - tick
    ga_costs = [plan.cost for plan in checked if "GA" in plan.found_by]
    ga_cost = min(ga_costs) if ga_costs else None
    _confirm_bound(optimal if optimal is not None else lower, checked)
    front = _non_dominated(checked, problem)
    status = "interrupted" if ga.interrupted else _status(front, optimal, ga_cost, exact_answer)
    storm_front = None
    if achievable and optimal is not None and exact_answer is not None:
        tick = time.perf_counter()
        storm_front = _achievable(exact_answer[0], front, solver)
        timings["achievable"] = time.perf_counter() - tick
    checks = [c for plan in checked for c in plan.checks]
    if exact_answer is not None:
        checks.insert(0, exact_answer[1].check)
    timings["total"] = time.perf_counter() - start
    return _result(problem, settings, status, front, optimal, lower, ga_cost, ga, exact_answer, checks, timings,
                   notes, storm_front)


def _accepted_initially(problem: Space) -> bool:
    if isinstance(problem, PrismRecourse):
        return bool(problem.accept[problem.model.initial_state])
    return bool(problem.accepts(problem.state0[None, :])[0])


def _exact(problem: Space, max_states: int) -> tuple[tuple[RecourseMDP, Optimum] | None, list[str]]:
    if isinstance(problem, PrismRecourse):
        if not problem.deterministic and problem.threshold < 1:
            return None, ["no exact bound for θ < 1 on a stochastic model (Storm's Rmin needs acceptance surely)"]
        mdp = problem.recourse_mdp()
    elif problem.is_finite:
        mdp = plan_mdp(problem, max_states)
    else:
        return None, ["no exact optimum: some actions take values from an interval (discretise them with a grid "
                      "for Storm's optimum over the grid)"]
    return (mdp, optimum(mdp)), []


def _optimum_values(exact_answer) -> tuple[float | None, float | None]:
    """(exact optimum over plans, lower bound) from Storm's answer."""
    if exact_answer is None:
        return None, None
    mdp, answer = exact_answer
    value = answer.value if np.isfinite(answer.value) else None
    return (value, None) if mdp.deterministic else (None, value)


def _with_storm_plan(problem: Space, candidates: list[tuple[Plans, str]],
                     plan: list[tuple[int, float]]) -> list[tuple[Plans, str]]:
    """Add Storm's optimal plan to the GA's front (or mark the GA's identical plan)."""
    storm_plan = Plans.from_steps([plan], len(problem.domains))
    key = storm_plan.keys()[0]
    for k, (plans, found_by) in enumerate(candidates):
        if np.array_equal(plans.keys()[0], key):
            candidates[k] = (plans, "GA and Storm")
            return candidates
    return [(storm_plan, "Storm")] + candidates


def _checked_plan(problem: Space, plans: Plans, found_by: str) -> RecoursePlan:
    evaluation: Evaluation = problem.evaluate(plans)
    if not evaluation.feasible[0]:
        raise VerificationFailure(f"a plan reported as feasible is not ({found_by}): {plans.steps(0)}")
    steps = trace(problem, plans)
    dtmc = plan_dtmc(steps.layers, steps.accept, steps.gower, f"plan of {_name(problem)}")
    checks = check_plan(dtmc, float(evaluation.cost[0]), float(evaluation.effort[0]), float(evaluation.p_accept[0]),
                        float(evaluation.gower[0]))
    cost, p_accept, effort, gower = (c.value for c in checks)
    names = problem.action_names
    freq = dict(zip(problem.feature_names, evaluation.freq[0].tolist()))
    return RecoursePlan([names[i] for i, _ in plans.steps(0)], [s.value for s in steps.steps], cost, effort, gower,
                        p_accept, freq, steps.states, steps.steps, checks, found_by)


def _confirm_bound(bound: float | None, plans: list[RecoursePlan]) -> None:
    """No feasible plan may be cheaper than Storm's least cost (beyond the tolerance)."""
    if bound is None:
        return
    for plan in plans:
        if plan.cost < bound - TOLERANCE * max(1.0, abs(bound)):
            raise VerificationFailure(f"plan {plan.actions} costs {plan.cost!r}, below Storm's least cost {bound!r}")


def _vector(plan: RecoursePlan, problem: Space) -> np.ndarray:
    parts = [plan.cost]
    if "gower" in problem.objectives:
        parts.append(plan.gower)
    if "freq" in problem.objectives:
        parts += list(plan.freq.values())
    return np.array(parts)


def _non_dominated(plans: list[RecoursePlan], problem: Space) -> list[RecoursePlan]:
    """Drop plans another one dominates (Storm's optimal plan may dominate GA plans), cheapest first."""
    vectors = [_vector(p, problem) for p in plans]
    keep = [p for k, p in enumerate(plans)
            if not any(dominates(vectors[j], vectors[k]) for j in range(len(plans)) if j != k)]
    return sorted(keep, key=lambda p: (p.cost, p.gower, len(p.steps)))


def _status(front: list[RecoursePlan], optimal: float | None, ga_cost: float | None,
            exact_answer) -> str:
    if exact_answer is not None and exact_answer[0].deterministic and not np.isfinite(exact_answer[1].value):
        if front:
            raise VerificationFailure("Storm finds no plan to acceptance, but the GA reports one")
        return "infeasible"
    if not front:
        return "timeout"
    if optimal is None:
        return "feasible"
    close = ga_cost is not None and abs(ga_cost - optimal) <= TOLERANCE * max(1.0, abs(optimal))
    return "optimal" if close else "suboptimal"


def _achievable(mdp: RecourseMDP, front: list[RecoursePlan], solver: str) -> dict:
    """Storm's achievable (cost, Gower) set, and the check that every plan of the front lies inside it."""
    answer = achievable_set(mdp)
    points = np.array([[p.cost, p.gower] for p in front]).reshape(-1, 2)
    ok = inside(points, answer.over_approximation, answer.precision, solver)
    if not ok.all():
        plan = front[int(np.flatnonzero(~ok)[0])]
        raise VerificationFailure(f"plan {plan.actions} (cost {plan.cost!r}, Gower {plan.gower!r}) lies outside "
                                  f"Storm's achievable set of {answer.property}")
    return {"property": answer.property, "points": answer.points.tolist(),
            "vertices": answer.over_approximation.tolist(), "precision": answer.precision,
            "seconds": answer.seconds, "front_inside": bool(ok.all())}


def _name(problem: Space) -> str:
    return problem.model.source if isinstance(problem, PrismRecourse) else problem.name


def _result(problem: Space, settings: BRKGASettings, status: str, front: list[RecoursePlan], optimal, lower,
            ga_cost, ga: GAResult | None, exact_answer, checks, timings, notes=(), storm_front=None) -> RecourseResult:
    exact_model = None
    if exact_answer is not None:
        mdp, answer = exact_answer
        exact_model = {"property": answer.check.property, "subject": answer.check.subject, "states": answer.states,
                       "choices": answer.choices, "seconds": answer.seconds, "value": answer.value,
                       "kind": "optimum over plans" if mdp.deterministic else "closed-loop lower bound"}
    model = problem.model if isinstance(problem, PrismRecourse) else None
    return RecourseResult(status, _name(problem), problem.objectives, front, optimal, lower, ga_cost,
                          ga.generations if ga else 0, ga.evaluations if ga else 0, ga.seconds if ga else 0.0,
                          dataclasses.asdict(settings), exact_model, checks, timings, model, storm_front,
                          list(notes))
