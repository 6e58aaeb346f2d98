"""An independent oracle for the d∞ special case: the least reachability probability over the strategies within
total-variation distance δ of σ in every state, by one linear programme (no stormcf counterfactual code).

For a radius δ, the inner problem of state s, min_{μ ∈ Δ, Σ_a (σ_a - μ_a)^+ <= δ} Σ_a μ_a Q_a, is an LP; its dual
is max λ + Σ_a σ_a w_a - δ ν subject to λ + w_a <= Q_a, 0 <= w_a <= ν. So the least fixed point of the robust
Bellman operator is the optimum of

    max Σ_s p_s   s.t.  p_s <= λ_s + Σ_a σ_sa w_sa - δ ν_s,   λ_s + w_sa <= Σ_s' P(s, a, s') p_s',   0 <= w_sa <= ν_s,
                        p_t = 1 on the target,  p_s = 0 where some strategy of the ball avoids the target surely,

the last set found by Storm's graph analysis (prob0 of Pmin) on the explicit MDP whose choices in s are the
vertices of the ball (the greedy points of every order of the actions). scipy's HiGHS solves the LP.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

import stormcf


def ball_vertices(sigma: np.ndarray, delta: float) -> np.ndarray:
    """The vertices of {μ ∈ Δ : TV(μ, σ) <= δ}: move min(δ, 1 - σ_j) to j, taken from the others in every order
    (an action whose whole mass fits within 1e-12 of what is left to take gives all of it: the radius is a float)."""
    points = set()
    for order in itertools.permutations(range(sigma.size)):
        mu = sigma.copy()
        receiver = order[-1]
        left = min(delta, 1.0 - sigma[receiver])
        for a in order[:-1]:
            take = mu[a] if left >= mu[a] - 1e-12 else left
            mu[a] -= take
            left = max(left - take, 0.0)
        mu[receiver] = 1.0 - (mu.sum() - mu[receiver])
        points.add(tuple(mu))
    return np.array(sorted(points))


def vertex_mdp(model: stormcf.ExplicitModel, sigma: np.ndarray, delta: float) -> stormcf.ExplicitModel:
    """The MDP whose choices in every state are the vertices of the δ-ball around σ(s)."""
    P = model.transitions
    blocks, groups = [], [0]
    for s in range(model.n_states):
        choices = list(model.choices(s))
        vertices = ball_vertices(sigma[choices], delta)
        blocks.append(sp.csr_matrix(vertices) @ P[choices])
        groups.append(groups[-1] + len(vertices))
    mixed = sp.vstack(blocks).tocsr()
    np.clip(mixed.data, 0.0, 1.0, out=mixed.data)       # a vertex times P may round to 1 + 2e-16 (models need [0, 1])
    return stormcf.ExplicitModel(mixed, np.array(groups), np.zeros(groups[-1], dtype=int), ("",),
                                 dict(model.labels), {}, {}, model.initial_state, "mdp", source="vertex MDP")


def ball_min_reach(model: stormcf.ExplicitModel, sigma: np.ndarray, target: np.ndarray, delta: float) -> float:
    """min over the strategies within d∞ <= δ of σ of Pr(F target) from the initial state."""
    avoid, _ = stormcf.prob01_states(vertex_mdp(model, sigma, delta), target, "min")
    n, c = model.n_states, model.n_choices
    soc = model.state_of_choice
    # variables: p (n), λ (n), ν (n), w (c)
    P, L, N, W = 0, n, 2 * n, 3 * n
    size = 3 * n + c
    rows, rhs = [], []
    free = ~(target | avoid)
    eye = sp.identity(n, format="csr")
    idx = np.flatnonzero(free)
    block = sp.lil_matrix((idx.size, size))
    for k, s in enumerate(idx):
        block[k, P + s] = 1.0
        block[k, L + s] = -1.0
        block[k, N + s] = delta
        for r in model.choices(int(s)):
            block[k, W + r] = -sigma[r]
    rows.append(block.tocsr())
    rhs.append(np.zeros(idx.size))
    free_rows = np.flatnonzero(free[soc])
    qrow = sp.hstack([-model.transitions[free_rows], eye[soc[free_rows]],
                      sp.csr_matrix((free_rows.size, n)), sp.identity(c, format="csr")[free_rows]])
    rows.append(qrow.tocsr())
    rhs.append(np.zeros(free_rows.size))
    wnu = sp.hstack([sp.csr_matrix((c, 2 * n)), -eye[soc], sp.identity(c, format="csr")])
    rows.append(wnu.tocsr())
    rhs.append(np.zeros(c))
    lower = np.r_[np.where(target, 1.0, 0.0), np.full(n, -np.inf), np.zeros(n + c)]
    upper = np.r_[np.where(free, 1.0, np.where(target, 1.0, 0.0)), np.full(n, np.inf), np.full(n + c, np.inf)]
    cost = np.r_[-np.ones(n), np.zeros(2 * n + c)]
    res = linprog(cost, A_ub=sp.vstack(rows).tocsr(), b_ub=np.concatenate(rhs), bounds=list(zip(lower, upper)),
                  method="highs")
    assert res.status == 0, res.message
    return float(res.x[P + model.initial_state])
