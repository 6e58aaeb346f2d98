"""The synthetic benchmark of the paper's §5 (notes §3.1), written as PRISM so that Storm builds it.

n states s = 0..n-1 and m actions ``a0 .. a{m-1}`` enabled everywhere; R(s, a) = s (a state reward). Every row
P(. | s, a) draws weights w ~ U[0, α]^n, sets w_{s*} = 1 for a uniformly drawn s* and normalizes; α = 0 gives
deterministic transitions. Episodes follow the finite-horizon Bellman-optimal policy of the nominal MDP (ties to the
lowest action) from a uniform s_0 and play a different, uniformly drawn action with probability 0.05.

The random draws replay the authors' generator call for call (facts from their code, notes §3.1): the MDP uses
``numpy.random.default_rng(param_seed)`` looping over actions, then states (uniforms first, then s*); episode i uses
``default_rng(i)``. The Bellman backup sums over successors in index order as the authors do, so near-ties resolve
identically. Probabilities are written with 17 significant digits; Storm reads them back within 1e-16.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def synthetic_transitions(n: int = 20, m: int = 10, alpha: float = 0.4, param_seed: int = 1) -> np.ndarray:
    """P with shape (m, n, n): ``P[a, s, s']``."""
    rng = np.random.default_rng(seed=param_seed)
    P = np.zeros((m, n, n))
    for a in range(m):
        for s in range(n):
            weights = rng.uniform(low=0, high=alpha, size=n)
            weights[rng.choice(range(n))] = 1
            P[a, s] = weights
    return P / P.sum(axis=2, keepdims=True)


def synthetic_prism(P: np.ndarray, initial: int = 0, name: str = "synthetic") -> str:
    """The MDP as a PRISM program: variable ``s``, actions ``a0..``, reward model ``"r"`` with R(s, a) = s."""
    m, n, _ = P.shape
    lines = ["// synthetic MDP of Tsirtsis et al. (NeurIPS 2021, §5): R(s, a) = s", "mdp", "", f"module {name}",
             f"  s : [0..{n - 1}] init {initial};"]
    for a in range(m):
        for s in range(n):
            support = np.flatnonzero(P[a, s])
            update = " + ".join(f"{float(P[a, s, j])!r} : (s'={j})" for j in support)
            lines.append(f"  [a{a}] s={s} -> {update};")
    lines += ["endmodule", "", 'rewards "r"', "  true : s;", "endrewards", ""]
    return "\n".join(lines)


def bellman_policy(P: np.ndarray, R: np.ndarray, T: int) -> np.ndarray:
    """Finite-horizon optimal policy of the nominal MDP, ``pi[s, t]`` (ties to the lowest action), with R[s, a]."""
    m, n, _ = P.shape
    h = np.zeros(n)
    pi = np.zeros((n, T), dtype=np.int64)
    for r in range(1, T + 1):
        value = R.T.astype(float).copy()                 # (m, n), successors summed in index order
        for j in range(n):
            value += P[:, :, j] * h[j]
        pi[:, T - r] = np.argmax(value, axis=0)
        h = value.max(axis=0)
    return pi


def synthetic_episode(P: np.ndarray, pi: np.ndarray, T: int, episode: int,
                      error_prob: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """States s_0..s_{T-1} and actions a_0..a_{T-1} of episode ``episode`` (``default_rng(episode)``)."""
    m, n, _ = P.shape
    rng = np.random.default_rng(seed=episode)
    states = [rng.choice(range(n))]
    actions = []
    for t in range(T):
        s = states[t]
        a = best = pi[s, t]
        if rng.binomial(1, error_prob) == 1:
            while a == best:
                a = rng.choice(range(m))
        actions.append(a)
        if t != T - 1:
            states.append(rng.choice(a=range(n), p=P[a, s]))
    return np.array(states), np.array(actions)


def path_dict(states: np.ndarray, actions: np.ndarray) -> dict[str, Any]:
    """The episode in stormcf's path JSON format."""
    return {"steps": [{"state": {"s": int(s)}, "action": f"a{int(a)}"} for s, a in zip(states, actions)]}
