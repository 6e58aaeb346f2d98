#!/usr/bin/env python3
"""A seeded generator of process-mining-like MDPs of the sizes in seed 000's evaluation (MSSD: 5.7k-15k states,
11k-33k transitions, maximal out-degree 2k-5.6k).

Shape (what automata learning from event logs produces): an initial hub state whose out-degree is a large share of
the model, a few further hubs with Pareto-distributed out-degree, most states with one or two actions (event
types) of one to three successors each, mostly forward (the process advances) with some back edges (rework loops),
and two absorbing outcomes, ``"positive"`` and ``"negative"``, which are entered more often the deeper a state is.
Every state is reachable from the initial state. The model is built as an :class:`stormcf.ExplicitModel` from
arrays (the Storm bridge converts it on demand); states are named ``s=<index>``. With ``costs=True`` it has the
reward model ``"cost"``: every event of a non-absorbing state costs 1 to 10 (seeded by ``seed`` on a stream of
its own, so the transitions are the same with or without costs), the outcomes cost nothing.

    python scripts/process_mdp.py --states 10000 --seed 1      # prints the model's sizes
    python scripts/process_mdp.py --quick                      # 200 states (the CI smoke test)
"""
from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp

from stormcf import ExplicitModel
from stormcf.model import RewardModel

ACTIONS = tuple(f"e{k}" for k in range(12))


def process_mdp(n_states: int = 10_000, seed: int = 0, hubs: int = 8, hub_share: float = 0.35,
                back_edge: float = 0.08, costs: bool = False) -> ExplicitModel:
    """A process-like MDP with ``n_states`` states (two of them the absorbing outcomes), with the reward model
    ``"cost"`` when ``costs``."""
    rng = np.random.default_rng(seed)
    n = n_states - 2
    positive, negative = n, n + 1
    succ: list[list[dict[int, float]]] = [[] for _ in range(n)]     # state -> actions -> successor -> weight
    hub_states = [0] + sorted(rng.choice(np.arange(1, n), size=hubs - 1, replace=False).tolist())
    # a spanning structure: every state s > 0 is entered from an earlier state (hubs adopt a share of them)
    hub_weights = np.r_[0.8, np.full(hubs - 1, 0.2 / (hubs - 1))]
    parents = np.where(rng.random(n) < hub_share, rng.choice(hub_states, size=n, p=hub_weights),
                       np.maximum(np.arange(n) - 1 - rng.geometric(0.3, size=n), 0))
    for s in range(n):
        k = 1 + min(rng.geometric(0.7) - 1, 3)
        succ[s] = [dict() for _ in range(k)]
    for s in range(1, n):
        p = int(min(parents[s], s - 1))
        succ[p][rng.integers(len(succ[p]))][s] = float(rng.integers(1, 10))
    for s in range(n):
        depth = s / n
        for action in succ[s]:
            extra = rng.geometric(0.8) - 1
            for _ in range(extra):
                if rng.random() < back_edge:
                    t = int(rng.integers(0, s + 1))
                else:
                    t = int(min(n - 1, s + rng.geometric(0.2)))
                action[t] = action.get(t, 0.0) + float(rng.integers(1, 10))
            if rng.random() < 0.1 + 0.4 * depth or not action:
                outcome = negative if rng.random() < 0.3 + 0.4 * rng.random() else positive
                action[outcome] = action.get(outcome, 0.0) + float(rng.integers(1, 10))
    rows, cols, vals, groups, names = [], [], [], [0], []
    for s in range(n):
        for a, action in enumerate(succ[s]):
            total = sum(action.values())
            for t, w in sorted(action.items()):
                rows.append(len(names)), cols.append(t), vals.append(w / total)
            names.append(a % len(ACTIONS))
        groups.append(len(names))
    for t in (positive, negative):                       # absorbing outcomes
        rows.append(len(names)), cols.append(t), vals.append(1.0)
        names.append(len(ACTIONS))
        groups.append(len(names))
    P = sp.csr_matrix((vals, (rows, cols)), shape=(len(names), n_states))
    P = sp.diags(1.0 / np.asarray(P.sum(axis=1)).ravel()) @ P
    labels = {"positive": np.arange(n_states) == positive, "negative": np.arange(n_states) == negative}
    rewards = {}
    if costs:
        cost = np.random.default_rng([seed, 1]).integers(1, 11, size=len(names)).astype(float)
        cost[-2:] = 0.0                                  # the absorbing outcomes
        rewards = {"cost": RewardModel("cost", choice=cost)}
    return ExplicitModel(P.tocsr(), np.array(groups), np.array(names), ACTIONS + ("end",), labels,
                         {"s": np.arange(n_states)}, rewards, 0, "mdp",
                         source=f"process_mdp(n={n_states}, seed={seed}{', costs' if costs else ''})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--costs", action="store_true", help='with the reward model "cost"')
    ap.add_argument("--quick", action="store_true", help="200 states: a smoke test in seconds")
    args = ap.parse_args()
    if args.quick:
        args.states = 200
    m = process_mdp(args.states, args.seed, costs=args.costs)
    degree = np.diff(m.transitions.indptr)
    out = np.bincount(m.state_of_choice, weights=degree, minlength=m.n_states)
    print(f"{m.source}: {m.n_states} states, {m.n_choices} choices, {m.n_transitions} transitions, "
          f"{int(m.decision_states.sum())} decision states, max out-degree {int(out.max())}")


if __name__ == "__main__":
    main()
