"""Independent oracles for counterfactuals of every bound (no stormcf counterfactual code): values of a strategy by
dense numpy linear algebra on the model's arrays, the least d0 by brute force over switched state sets, and the
least expected reward over total-variation balls (d∞) by a linear programme on the MDP of the balls' vertices."""
from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import linprog

import stormcf
from tv_ball_oracle import ball_vertices, vertex_mdp


def induced(model: stormcf.ExplicitModel, probs: np.ndarray) -> np.ndarray:
    S = np.zeros((model.n_states, model.n_choices))
    S[model.state_of_choice, np.arange(model.n_choices)] = probs
    return S @ model.transitions.toarray()


def _can_reach(P: np.ndarray, target: np.ndarray) -> np.ndarray:
    can = target.copy()
    while True:
        more = can | ((P[:, can] > 0).any(axis=1))
        if (more == can).all():
            return can
        can = more


def reach_value(model, probs, target: np.ndarray, constraint: np.ndarray | None = None) -> float:
    """P(ψ U φ) from the initial state (ψ = everything when ``constraint`` is None): least fixed point by graph
    analysis (0 where φ cannot be reached through ψ) and one dense solve."""
    P = induced(model, probs)
    stop = target | (~constraint if constraint is not None else np.zeros_like(target))
    P[stop] = 0.0
    can = _can_reach(P, target)
    rest = np.flatnonzero(can & ~target)
    x = np.where(target, 1.0, 0.0)
    A = np.eye(rest.size) - P[np.ix_(rest, rest)]
    x[rest] = np.linalg.solve(A, P[np.ix_(rest, np.flatnonzero(target))].sum(axis=1)) if rest.size else x[rest]
    return float(x[model.initial_state])


def reward_value(model, probs, target: np.ndarray, rewards: np.ndarray) -> float:
    """E[total reward until φ] from the initial state, infinite when φ is reached with probability < 1 (Storm's
    convention); ``rewards`` per choice."""
    P = induced(model, probs)
    P[target] = 0.0
    r = np.bincount(model.state_of_choice, weights=probs * rewards, minlength=model.n_states)
    reach = np.zeros(model.n_states, dtype=bool)
    reach[model.initial_state] = True
    while True:
        more = reach | ((P[reach] > 0).any(axis=0))
        if (more == reach).all():
            break
        reach = more
    if not _can_reach(P, target)[reach].all():
        return float("inf")
    rest = np.flatnonzero(reach & ~target)
    x = np.zeros(model.n_states)
    x[rest] = np.linalg.solve(np.eye(rest.size) - P[np.ix_(rest, rest)], r[rest])
    return float(x[model.initial_state])


def brute_force_d0(model, sigma: np.ndarray, meets, max_size: int = 4) -> int | None:
    """The least number of decision states whose switch to one action (each, deterministically) makes ``meets(probs)``
    true, trying every set and every choice of rows; None if none up to ``max_size`` does. For one bound a
    deterministic switch is optimal for a fixed set of changed states, so this is the least d0."""
    decision = [int(s) for s in np.flatnonzero(model.decision_states)]
    for size in range(1, min(max_size, len(decision)) + 1):
        for states in itertools.combinations(decision, size):
            for rows in itertools.product(*(list(model.choices(s)) for s in states)):
                p = np.array(sigma)
                for s, row in zip(states, rows):
                    p[list(model.choices(s))] = 0.0
                    p[row] = 1.0
                if meets(p):
                    return size
    return None


def ball_min_reward(model, sigma: np.ndarray, target: np.ndarray, rewards: np.ndarray, delta: float) -> float:
    """min over the strategies within d∞ <= δ of σ of E[reward until target] (infinite if none reaches it almost
    surely): the stochastic shortest path LP max Σ v s.t. v_s <= c_k + Σ P_k v on the MDP of the balls' vertices,
    over the states from which some vertex strategy reaches the target almost surely (Storm's prob1 of Pmax on that
    MDP), vertices leaving them excluded."""
    vm = vertex_mdp(model, sigma, delta)
    weights = np.zeros((vm.n_choices, model.n_choices))
    for s in range(model.n_states):
        choices = list(model.choices(s))
        vertices = ball_vertices(sigma[choices], delta)
        for k, row in enumerate(range(vm.row_groups[s], vm.row_groups[s + 1])):
            weights[row, choices] = vertices[k]
    cost = weights @ rewards
    _, sure = stormcf.prob01_states(vm, target, "max")
    good = sure | target
    if not good[model.initial_state]:
        return float("inf")
    P = vm.transitions.toarray()
    keep = good[vm.state_of_choice] & ~target[vm.state_of_choice] & (P[:, ~good].sum(axis=1) == 0)
    states = np.flatnonzero(good & ~target)
    index = {s: i for i, s in enumerate(states)}
    rows = np.flatnonzero(keep)
    A = np.zeros((rows.size, states.size))
    for k, r in enumerate(rows):
        A[k, index[int(vm.state_of_choice[r])]] += 1.0
        A[k] -= P[r, states]
    res = linprog(-np.ones(states.size), A_ub=A, b_ub=cost[rows], bounds=[(0, None)] * states.size, method="highs")
    assert res.status == 0, res.message
    return float(res.x[index[model.initial_state]])
