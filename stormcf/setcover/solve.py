"""One entry point for one agent, :func:`solve_setcover`: an engine chosen by name, then Storm's re-check.

1. the engine (``bnb``, the default, ``dp``, ``milp``, ``storm``, ``bruteforce``; ``greedy`` as the baseline) finds
   the canonical set;
2. Storm checks the plan on the DTMC it induces (``R{"cost"}=? [F "goal"]``, a chain of |I| + 1 states): the cost
   shown is Storm's;
3. Storm computes ``Rmin=? [F "goal"]`` on the agent's projected MDP (built from arrays, reduced to the actions
   providing each state's pivot feature, parallel choices merged; see :meth:`Transitions.explicit_model`):
   the optimum, compared with the engine's (a disagreement is refused). When the projected MDP is too large to
   build, optimality rests on the engine's proof (branch and bound, DP, HiGHS, enumeration) and the notes say so.
"""
from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp

from ..deadline import Deadline
from ..errors import SolverError
from ..model import ExplicitModel, RewardModel
from ..verify import check_model
from .engines import DEFAULT_METHOD, RMIN, EngineSolution, agent_transitions, close, lp_bound, run_engine
from .problem import SetCoverProblem
from .result import SetCoverResult

#: the plan's cost on the DTMC it induces
PLAN_COST = 'R{"cost"}=? [F "goal"]'


def solve_setcover(problem: SetCoverProblem, method: str = DEFAULT_METHOD, verify: bool = True,
                   deadline: Deadline | None = None) -> SetCoverResult:
    """The optimal counterfactual explanation of one agent (or the greedy baseline's), checked by Storm within
    ``deadline`` (default: the active one)."""
    deadline = deadline if deadline is not None else Deadline.current()
    start = time.perf_counter()
    if problem.positive:
        solution = EngineSolution((), (), 0.0, True, True)
    else:
        solution = run_engine(problem, method)
    timings = {"solve": time.perf_counter() - start}
    deadline.check(f"the {method} engine")
    checks, notes, mdp = [], [], None
    optimum = solution.value if solution.optimal else None
    cost = solution.value if solution.feasible else math.inf
    if verify:
        checking = time.perf_counter()
        try:
            trans, s0 = agent_transitions(problem)
            mdp = trans.explicit_model(s0, source=f"{problem.instance.source} (agent {problem.agent_text()})")
        except SolverError as err:
            notes.append(f"optimality proven by the {method} engine, not re-checked by Storm: {err}"
                         if solution.optimal else f"Storm's optimum not computed: {err}")
        if mdp is not None:
            rmin = check_model(mdp, RMIN, subject=f"projected MDP ({mdp.n_states} states, {mdp.n_choices} choices)",
                               **({"expected": solution.value} if solution.optimal else {})).confirm()
            checks.append(rmin)
            optimum = rmin.value
        if solution.feasible:
            plan = check_model(plan_dtmc(problem, solution.plan), PLAN_COST, expected=solution.value,
                               subject=f"DTMC of the plan ({len(solution.plan) + 1} states)").confirm()
            checks.append(plan)
            cost = plan.value
        timings["check"] = time.perf_counter() - checking
    elif not solution.optimal:
        notes.append("not checked by Storm (verify=False)")
    status = _status(problem, solution, cost, optimum)
    lower = None
    if status == "suboptimal" and optimum is None:
        lower = lp_bound(problem)
    if problem.instance.stochastic:
        notes.append("stochastic effects: the cost is the expected cost of repeating each action until it succeeds")
    return SetCoverResult(problem, status, method, solution.actions, solution.plan, cost, optimum,
                          solution.unique if status != "suboptimal" else None, lower, checks, timings, notes, mdp)


def _status(problem: SetCoverProblem, solution: EngineSolution, cost: float, optimum: float | None) -> str:
    if problem.positive:
        return "trivial"
    if not solution.feasible:
        return "infeasible"
    if solution.optimal or (optimum is not None and close(cost, optimum)):
        return "optimal"
    return "suboptimal"


def plan_dtmc(problem: SetCoverProblem, plan: tuple[int, ...]) -> ExplicitModel:
    """The DTMC a plan induces: states x = s_0, s_1, ..., s_k along the plan (s_{r+1} = s_r + e_{i_r} with p_i,
    s_r with 1 − p_i), the goal label where ``s >= t``, reward c_i on each step."""
    inst = problem.instance
    k = len(plan)
    states = np.cumsum(np.vstack([problem.agent[None, :], inst.effects[list(plan)]]), axis=0)
    p = np.ones(k) if inst.success is None else inst.success[list(plan)]
    rows = np.arange(k + 1)
    succ = np.append(np.arange(1, k + 1), k)
    prob = np.append(p, 1.0)
    fail = np.flatnonzero(prob < 1)
    P = sp.csr_matrix((np.concatenate([prob, 1 - prob[fail]]), (np.concatenate([rows, fail]),
                                                                  np.concatenate([succ, fail]))), shape=(k + 1, k + 1))
    reward = np.append(inst.costs[list(plan)], 0.0)
    valuations = {f: states[:, j] for j, f in enumerate(inst.features)}
    actions = ("",) + inst.action_names
    choice_actions = np.append(np.asarray(plan, dtype=np.int64) + 1, 0)
    return ExplicitModel(P, np.arange(k + 2), choice_actions, actions, {"goal": inst.is_positive(states)},
                         valuations, {"cost": RewardModel("cost", choice=reward)}, 0, model_type="dtmc",
                         source=f"plan of agent {problem.agent_text()}")
