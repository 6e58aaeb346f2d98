"""Storm's exact answers for recourse: the plan MDP, the least-cost plan, and the re-check of every reported plan.

**The plan MDP** (notes §5.1): states (x, U) with U the set of actions used so far, one choice per valid
(action, value) of an unused action, leading to (x', U ∪ {a}); the state-action reward "cost" is b·g (or b for
"scf") and "effort" is b. U grows along every path, so the model is acyclic and the once-only rule holds by
construction. States without a valid choice get the self-loop Storm adds to deadlocks (action ``""``, reward 0).
On the Python front the plan MDP of a finite problem is built here by a vectorised forward search (one
:func:`~.objectives.apply_action` call per layer and action, all values at once; equal states merged); on the PRISM
front it is the product of the model with the used-action flags (:mod:`.prism`).

**The least-cost plan** is Storm's ``R{"cost"}min=? [F "accept"]`` on the plan MDP: the cheapest plan whose final
state is accepted (costs are >= 0, so stopping at the first accepted state is optimal). On deterministic models it is
the exact optimum over plans, and following Storm's optimal scheduler from x_0 gives the plan; on stochastic models
it is the optimum over closed-loop strategies (that may react to outcomes), a lower bound for every open-loop plan.

**Storm's achievable set** (deterministic models): the plan MDP restricted to the states from which acceptance is
reachable, with a choice "stop" from every accepted state to a sink ``"done"`` that earns the reward "gower" =
Gower(x_0, x); every path then ends in ``"done"``. Storm's Pareto query ``multi(R{"cost"}min=? [F "done"],
R{"gower"}min=? [F "done"])`` ranges over randomised strategies, so its achievable set is the convex hull of the pure
plans' (cost, Gower) points plus everything worse: every plan lies inside Storm's over-approximation of it (a test
of the GA), and the cost-extreme point is the least cost.

**Re-check of a plan**: the DTMC the plan induces, with states (t, s) for every step t and state s the plan reaches
with positive probability, plus a sink ``"done"`` after the last step; the final states where f is the target are
labelled ``"accept"``. Storm's ``R{"cost"}=? [F "done"]``, ``R{"effort"}=? [F "done"]`` and ``P=? [F "accept"]`` on
it are the plan's expected cost, effort and P(f(x_T) = y*); they are compared with the GA's values and refused on
disagreement.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from .. import storm
from ..limits import require_memory
from ..model import ExplicitModel, RewardModel
from ..reachability import can_reach, optimal_strategy
from ..solvers import FormulationBuilder, solve
from ..verify import Check, check_model
from .objectives import apply_action, gower
from .problem import MAX_STATES, RecourseError, RecourseProblem

#: refuse to expand a step of the plan MDP into more (state, action, value) candidates than this
MAX_CANDIDATES = 20_000_000
#: agreement required between the GA's values and Storm's (relative to max(1, |value|))
TOLERANCE = 1e-8
COST, EFFORT, ACCEPT, DONE = "cost", "effort", "accept", "done"


@dataclass(frozen=True, eq=False)
class RecourseMDP:
    """The plans of a problem as an explicit MDP (module docs).

    Attributes:
        model: the MDP (initial state x_0 with no action used); reward models ``cost_reward`` and ``effort_reward``,
            label ``accept_label`` on the states f accepts.
        action: per choice, the action index (-1 for the self-loop of a dead end).
        value: per choice, the tweaking value.
        gower: per state, Gower(x_0, x).
        deterministic: every choice has one successor.
    """

    model: ExplicitModel
    action: np.ndarray
    value: np.ndarray
    gower: np.ndarray
    cost_reward: str
    effort_reward: str
    accept_label: str
    deterministic: bool

    @property
    def optimum_property(self) -> str:
        return f'R{{"{self.cost_reward}"}}min=? [F "{self.accept_label}"]'


def assemble_mdp(n_states: int, source: np.ndarray, successors: sp.csr_matrix, action: np.ndarray,
                 names: Sequence[str], rewards: dict[str, np.ndarray],
                 labels: dict[str, np.ndarray], valuations: dict[str, np.ndarray],
                 source_name: str) -> tuple[ExplicitModel, np.ndarray]:
    """An MDP from choices in any order (``source[c]`` owns choice c, ``successors`` row c its distribution, ``action``
    indexes ``names``), with the deadlock self-loop added to states without a choice. Returns the model and
    ``order``: row r of the model is the given choice ``order[r]`` (the self-loops are numbered after them)."""
    has_choice = np.zeros(n_states, dtype=bool)
    has_choice[source] = True
    dead = np.flatnonzero(~has_choice)
    order = np.argsort(np.concatenate([source, dead]), kind="stable")
    loops = sp.csr_matrix((np.ones(dead.size), (np.arange(dead.size), dead)), shape=(dead.size, n_states))
    P = sp.vstack([successors, loops], format="csr")[order]
    owner = np.concatenate([source, dead])[order]
    names = tuple(names) + ("",)
    choice_actions = np.concatenate([action, np.full(dead.size, len(names) - 1)])[order]
    row_groups = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n_states))])
    choice_rewards = {k: RewardModel(k, choice=np.concatenate([r, np.zeros(dead.size)])[order])
                      for k, r in rewards.items()}
    model = ExplicitModel(P, row_groups, choice_actions, names, labels, valuations, choice_rewards, 0,
                          source=source_name)
    return model, order


def reorder(order: np.ndarray, per_choice: np.ndarray, fill: float) -> np.ndarray:
    """A per-choice array given in the order choices were passed to :func:`assemble_mdp`, in the model's order (the
    self-loops of dead ends get ``fill``)."""
    return np.concatenate([per_choice, np.full(order.size - per_choice.size, fill)])[order]


# ================================================================================================ Python front
def plan_mdp(problem: RecourseProblem, max_states: int = MAX_STATES) -> RecourseMDP:
    """The plan MDP of a problem with finite value domains (module docs)."""
    if not problem.is_finite:
        raise RecourseError("the plan MDP needs finite value domains: discretise the intervals (with_grid)")
    n_actions = len(problem.actions)
    layer_X, layer_used = problem.state0[None, :], np.zeros((1, n_actions), dtype=bool)
    states_X, states_used = [layer_X], [layer_used]
    offset, total = 0, 1
    parts: list[tuple[np.ndarray, ...]] = []
    while len(layer_X):
        _require_layer_fits(problem, layer_used, len(states_X))
        next_X, next_used, src, act, val, cost, effort = [], [], [], [], [], [], []
        for i, action in enumerate(problem.actions):
            free = np.flatnonzero(~layer_used[:, i])
            if free.size == 0:
                continue
            values = np.asarray(action.domain.values)
            rows = np.repeat(free, values.size)
            v = np.tile(values, free.size)
            out = apply_action(problem, i, layer_X[rows], v)
            ok = out.valid
            used = layer_used[rows[ok]].copy()
            used[:, i] = True
            next_X.append(out.after[ok])
            next_used.append(used)
            src.append(offset + rows[ok])
            act.append(np.full(int(ok.sum()), i))
            val.append(v[ok])
            effort.append(out.effort[ok])
            cost.append(out.effort[ok] * (out.discount[ok] if problem.discounted else 1.0))
        if not next_X or sum(len(x) for x in next_X) == 0:
            break
        X, used = np.vstack(next_X), np.vstack(next_used)
        first, inverse = unique_rows(X, used, problem.state0)
        offset += len(layer_X)
        layer_X, layer_used = X[first], used[first]
        parts.append((np.concatenate(src), offset + inverse, np.concatenate(act), np.concatenate(val),
                      np.concatenate(cost), np.concatenate(effort)))
        total += len(layer_X)
        if total > max_states:
            raise RecourseError(f"the plan MDP has more than {max_states:,} states; use fewer values per action")
        states_X.append(layer_X)
        states_used.append(layer_used)
    return _python_mdp(problem, np.vstack(states_X), total, parts)


def _require_layer_fits(problem: RecourseProblem, layer_used: np.ndarray, depth: int) -> None:
    """Refuse a layer whose (state, action, value) candidates would pass :data:`MAX_CANDIDATES` or the memory
    (a few float64 copies of every candidate state), before they are allocated."""
    candidates = sum(int((~layer_used[:, i]).sum()) * len(a.domain.finite_values)
                     for i, a in enumerate(problem.actions))
    if candidates > MAX_CANDIDATES:
        raise RecourseError(f"step {depth} of the plan MDP has {candidates:,} (state, action, value) candidates; "
                            f"at most {MAX_CANDIDATES:,}: use fewer values per action")
    require_memory(candidates * (32.0 * len(problem.features) + 64),
                   f"step {depth} of the plan MDP ({candidates:,} candidates)")


def unique_rows(X: np.ndarray, used: np.ndarray, x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct states (x, U): the index of the first row of each and every row's class (np.unique's return_index
    and return_inverse), comparing only the columns some row changed and U packed into bits (rows as bytes)."""
    changed = np.flatnonzero(np.any(X != x0, axis=0))
    bits = np.packbits(used, axis=1).view(np.uint8)
    keys = np.hstack([np.ascontiguousarray(X[:, changed] + 0.0).view(np.uint8).reshape(len(X), -1), bits])
    keys = np.ascontiguousarray(keys).view(np.dtype((np.void, keys.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _python_mdp(problem: RecourseProblem, X: np.ndarray, n: int, parts: list[tuple[np.ndarray, ...]]) -> RecourseMDP:
    columns = [np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in range(6)]
    source, target, action, value, cost, effort = columns
    source, target, action = source.astype(np.int64), target.astype(np.int64), action.astype(np.int64)
    successors = sp.csr_matrix((np.ones(source.size), (np.arange(source.size), target)), shape=(source.size, n))
    index = [{v: k for k, v in enumerate(a.domain.finite_values)} for a in problem.actions]
    names = [f"{a.name}__{k}" for a in problem.actions for k in range(len(a.domain.finite_values))]
    offsets = np.concatenate([[0], np.cumsum([a.domain.size for a in problem.actions])])
    name_of = offsets[action] + np.array([index[i][v] for i, v in zip(action.tolist(), value.tolist())],
                                         dtype=np.int64)
    accept = np.concatenate([problem.accepts(X[k:k + 100_000]) for k in range(0, n, 100_000)])
    valuations = {f.name: X[:, j] for j, f in enumerate(problem.features)}
    model, order = assemble_mdp(n, source, successors, name_of, names, {COST: cost, EFFORT: effort},
                                {ACCEPT: accept}, valuations, f"plan MDP of {problem.name}")
    return RecourseMDP(model, reorder(order, action, -1).astype(np.int64), reorder(order, value, 0.0),
                       gower(problem, X), COST, EFFORT, ACCEPT, True)


# ================================================================================================ optimum
@dataclass(frozen=True, eq=False)
class Optimum:
    """Storm's least cost to acceptance on the plan MDP and, on deterministic models, the plan achieving it."""

    check: Check
    plan: list[tuple[int, float]] | None
    states: int
    choices: int
    seconds: float

    @property
    def value(self) -> float:
        return self.check.value


def optimum(mdp: RecourseMDP) -> Optimum:
    """Storm's ``R{"cost"}min=? [F "accept"]`` and, on deterministic models with a finite value, the optimal plan
    from Storm's scheduler."""
    import time
    start = time.perf_counter()
    prop = mdp.optimum_property
    check = check_model(mdp.model, prop, subject="plan MDP (states x used actions)")
    plan = None
    if mdp.deterministic and np.isfinite(check.value):
        values, strategy = optimal_strategy(mdp.model, prop)
        plan = _follow(mdp, strategy.probabilities)
    return Optimum(check, plan, mdp.model.n_states, mdp.model.n_choices, time.perf_counter() - start)


def _follow(mdp: RecourseMDP, probabilities: np.ndarray) -> list[tuple[int, float]]:
    """The plan a deterministic scheduler plays from the initial state until an accepted state."""
    m = mdp.model
    accept = m.label(mdp.accept_label)
    s, plan = m.initial_state, []
    while not accept[s]:
        rows = m.choices(s)
        row = rows.start + int(np.argmax(probabilities[rows.start:rows.stop]))
        plan.append((int(mdp.action[row]), float(mdp.value[row])))
        s = int(m.transitions.indices[m.transitions.indptr[row]])
    return plan


# ================================================================================================ achievable set
#: absolute precision asked of Storm's Pareto front
FRONT_PRECISION = 1e-6


def stop_mdp(mdp: RecourseMDP) -> ExplicitModel:
    """The plan MDP with the "stop" choices and the sink "done" of the achievable-set query (module docs)."""
    if not mdp.deterministic:
        raise RecourseError("Storm's achievable (cost, Gower) set is computed for deterministic models only")
    m = mdp.model
    accept = m.label(mdp.accept_label)
    good = can_reach(m, accept)
    if not good[m.initial_state]:
        raise RecourseError("no plan reaches acceptance: there is no achievable set")
    successor = m.transitions.indices[m.transitions.indptr[:-1]]
    keep = np.flatnonzero(good[m.state_of_choice] & good[successor] & (successor != m.state_of_choice))
    states = np.flatnonzero(good)
    new = np.full(m.n_states, -1)
    new[states] = np.arange(states.size)
    sink = states.size
    stops = np.flatnonzero(accept & good)
    source = np.concatenate([new[m.state_of_choice[keep]], new[stops]])
    target = np.concatenate([new[successor[keep]], np.full(stops.size, sink)])
    successors = sp.csr_matrix((np.ones(source.size), (np.arange(source.size), target)), shape=(source.size,
                                                                                               sink + 1))
    names = m.action_names + ("stop",)
    action = np.concatenate([m.choice_actions[keep], np.full(stops.size, len(names) - 1)])
    cost = m.rewards[mdp.cost_reward].choice
    assert cost is not None  # assemble_mdp gives every plan MDP choice rewards
    rewards = {mdp.cost_reward: np.concatenate([cost[keep], np.zeros(stops.size)]),
               "gower": np.concatenate([np.zeros(keep.size), mdp.gower[stops]])}
    done = np.zeros(sink + 1, dtype=bool)
    done[sink] = True
    model, _ = assemble_mdp(sink + 1, source, successors, action, names, rewards, {DONE: done}, {},
                            f"{m.source} with stop choices")
    return model


def achievable_set(mdp: RecourseMDP, precision: float = FRONT_PRECISION):
    """Storm's Pareto answer for (cost, Gower) on the plan MDP (module docs): the achievable Pareto points and the
    vertices of the over-approximation, as :class:`stormcf.storm.MultiObjectiveResult`."""
    query = f'multi(R{{"{mdp.cost_reward}"}}min=? [F "{DONE}"], R{{"gower"}}min=? [F "{DONE}"])'
    _, result = storm.pareto_points(stop_mdp(mdp), query, precision)
    return result


def inside(points: np.ndarray, vertices: np.ndarray, tolerance: float, solver: str = "auto") -> np.ndarray:
    """Whether each point (minimisation) lies in the convex hull of ``vertices`` plus the non-negative orthant,
    up to ``tolerance`` per coordinate: a feasibility LP per point, λ >= 0, Σ λ = 1, Σ_v λ_v v <= p + tolerance, on
    the solver chosen by name (:data:`stormcf.solvers.SOLVERS`)."""
    vertices = np.atleast_2d(vertices)
    k = len(vertices)
    out = []
    for p in np.atleast_2d(points):
        fb = FormulationBuilder()
        weights = fb.variables(k)
        fb.rows(np.ones((1, k)), weights, lhs=1.0, rhs=1.0)
        fb.rows(vertices.T, weights, rhs=p + tolerance)
        lp = solve(fb.build(np.zeros(k)), solver).proven("an achievable-set LP")
        out.append(lp.optimal)
    return np.array(out, dtype=bool)


# ================================================================================================ plan re-check
@dataclass(frozen=True)
class Layer:
    """One step of a plan: P_t (states reached at t -> states reached at t+1) and the expected step rewards of the
    states reached at t."""

    transitions: sp.csr_matrix
    cost: np.ndarray
    effort: np.ndarray


def plan_dtmc(layers: Sequence[Layer], accept: np.ndarray, gower_final: np.ndarray, source: str) -> ExplicitModel:
    """The DTMC a plan induces (module docs): the states of every step, then the sink "done"."""
    sizes = [layer.transitions.shape[0] for layer in layers] + [len(accept)]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = int(offsets[-1]) + 1
    sink = n - 1
    blocks = [[None] * (len(sizes) + 1) for _ in range(len(sizes) + 1)]
    for t, layer in enumerate(layers):
        blocks[t][t + 1] = layer.transitions
    blocks[-2][-1] = sp.csr_matrix(np.ones((sizes[-1], 1)))
    blocks[-1][-1] = sp.csr_matrix(np.ones((1, 1)))
    for t, size in enumerate(sizes + [1]):
        if blocks[t][t] is None:
            blocks[t][t] = sp.csr_matrix((size, size))
    P = sp.bmat(blocks, format="csr")
    P.eliminate_zeros()
    final = np.zeros(n, dtype=bool)
    final[offsets[-2]:offsets[-1]] = True
    accepted = np.zeros(n, dtype=bool)
    accepted[offsets[-2]:offsets[-1]] = accept
    done = np.zeros(n, dtype=bool)
    done[sink] = True
    zeros = np.zeros(sizes[-1] + 1)
    rewards = {COST: np.concatenate([layer.cost for layer in layers] + [zeros]),
               EFFORT: np.concatenate([layer.effort for layer in layers] + [zeros]),
               "gower": np.concatenate([np.zeros(int(offsets[-2])), gower_final, [0.0]])}
    return ExplicitModel(P, np.arange(n + 1), np.zeros(n, dtype=np.int64), ("",), {ACCEPT: accepted, DONE: done},
                         {}, {k: RewardModel(k, choice=v) for k, v in rewards.items()}, 0, model_type="dtmc",
                         source=source)


def check_plan(dtmc: ExplicitModel, cost: float, effort: float, p_accept: float, gower_value: float) -> list[Check]:
    """Storm's expected cost, effort, Gower distance and acceptance probability of a plan, each compared with the
    GA's value (refused on disagreement)."""
    subject = "DTMC induced by the plan"
    checks = [check_model(dtmc, f'R{{"{COST}"}}=? [F "{DONE}"]', expected=cost, tolerance=TOLERANCE, subject=subject),
              check_model(dtmc, f'P=? [F "{ACCEPT}"]', expected=p_accept, tolerance=TOLERANCE, subject=subject),
              check_model(dtmc, f'R{{"{EFFORT}"}}=? [F "{DONE}"]', expected=effort, tolerance=TOLERANCE,
                          subject=subject),
              check_model(dtmc, f'R{{"gower"}}=? [F "{DONE}"]', expected=gower_value, tolerance=TOLERANCE,
                          subject=subject)]
    return [c.confirm() for c in checks]
