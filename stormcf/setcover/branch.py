"""Best-first branch and bound over covers: the ``bnb`` engine (exact: a proven optimum, the canonical set, and
whether the optimum is unique).

**Covering program.** On the missing features M(x) an agent needs the deficit ``d_j = t_j − x_j`` and action i
provides ``cov_ij = min(e_ij, d_j)`` units; a cover is a multiset I of available actions with
``Σ_{i∈I} cov_ij >= d_j`` for every j (a set in the paper's 0/1 setting), of cost ``Σ_{i∈I} c_i`` (``c_i / p_i``
with stochastic effects, see :attr:`SetCoverInstance.expected_costs`).

**Branching.** A node is a partial cover F with its remaining deficit ``d = max(d − Σ_{i∈F} cov_i, 0)`` and the
actions it excludes. It branches on its uncovered feature j* with the fewest allowed actions covering it,
``i_1, …, i_K``: the k-th child takes ``i_k`` once more and excludes ``i_1 … i_{k−1}``. Every cover of the node
takes some action for j*, and the first of them in that order names its child, so the children partition the
node's covers; every cover I is found in exactly one leaf (d = 0), as ``I = F ⊎ Y`` with Y a multiset of actions
the leaf allows. F is the cheapest cover of its leaf and the one with the fewest actions.

**Bound** (LP duality). A price ``y >= 0`` with ``Σ_j cov_ij y_j <= c_i`` for every allowed i bounds every cover
I of the node from below:

    Σ_{i∈I} c_i  >=  Σ_{i∈I} Σ_j cov_ij y_j  >=  Σ_j d_j y_j

The per-unit price ``y_j = min_{i allowed, cov_ij > 0} c_i / g_i`` with ``g_i = Σ_j cov_ij`` (the units i provides)
is such a price. A node's price is computed when it leaves the queue; its children inherit it (still a valid price
for their smaller deficits and allowed sets) and enter the queue with ``f = cost(F) + c_{i_k} + Σ_j d_j y_j`` at no
cost; a node whose own price raises its bound above the queue's best goes back (lazy best-first search).

**Optimality and ties.** Nodes leave the queue by increasing f, and the search stops when f exceeds the cheapest
leaf V plus the tie tolerance, so every leaf of cost ``<= V + tol`` is found. The canonical optimum is the tied
leaf with the fewest actions, then the least sorted tuple (the canonical set is a leaf: the leaf that holds it has
a cover F inside it that is optimal with no more actions). For 0/1 instances the optimum is unique iff one leaf is
tied and no other available action fits in the slack ``V + tol − cost(F)`` (a zero-cost action doubles every
optimum).

**Dominance.** Action i is dropped before the search when an action k provides at least as much
(``cov_k >= cov_i``) for less (``c_k < c_i − tol``): swapping i for k (or dropping i when k is taken) makes any
cover cheaper by more than the tolerance, so i is in no optimal or tied cover.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from ..deadline import Deadline
from ..errors import SolverError
from ..limits import available_memory
from .problem import TIE_TOLERANCE, SetCoverProblem

#: the search refuses beyond this many queued nodes (memory), pointing to the MILP
NODE_LIMIT = 500_000


def tolerance(value: float) -> float:
    """The tie tolerance at cost ``value`` (relative to max(1, |value|))."""
    return TIE_TOLERANCE * max(1.0, abs(value))


@dataclass(frozen=True)
class Covering:
    """The covering program of one agent after dominance: the actions still in play (``pool``, catalogue
    indices), what each provides (``cov``, pool x missing features), their costs and the deficit."""

    pool: np.ndarray
    cov: np.ndarray
    costs: np.ndarray
    deficit: np.ndarray

    @classmethod
    def of(cls, problem: SetCoverProblem) -> "Covering":
        pool = np.flatnonzero(problem.effective())
        cov, costs, deficit = problem.coverage()[pool], problem.instance.expected_costs[pool], problem.deficit()
        # every pool action taken max(d) times covers the agent if anything does: a bound on OPT for the tolerance
        margin = tolerance(float(costs.sum()) * int(deficit.max(initial=0)))
        keep = ~dominated(cov, costs, margin)
        return cls(pool[keep], cov[keep], costs[keep], deficit)

    def price(self, deficit: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """The per-unit price y_j = min_{i allowed, cov_ij > 0} c_i / g_i at a node (inf where nothing covers j,
        0 where nothing is needed)."""
        cov = np.minimum(self.cov, deficit) * allowed[:, None]
        units = cov.sum(axis=1)
        ratio = self.costs / np.maximum(units, 1)
        price = np.where(cov > 0, ratio[:, None], np.inf).min(axis=0, initial=np.inf)
        return np.where(deficit > 0, price, 0.0)


def dominated(cov: np.ndarray, costs: np.ndarray, margin: float) -> np.ndarray:
    """Actions i with some k: cov_k >= cov_i and c_k < c_i − margin."""
    if cov.shape[1] and cov.max(initial=0) <= 1:          # 0/1 coverage: i ⊆ k iff i has no unit outside k
        units = cov.astype(float)
        covers = (units @ (1.0 - units).T).T == 0          # covers[k, i]
    else:
        covers = np.all(cov[:, None, :] >= cov[None, :, :], axis=2)
    return (covers & (costs[:, None] < costs[None, :] - margin)).any(axis=0)


@dataclass(frozen=True)
class Leaf:
    """A cover F found by the search: its cost and its actions (pool indices, in the order taken)."""

    cost: float
    actions: tuple[int, ...]


def search(covering: Covering, deadline: Deadline) -> list[Leaf]:
    """Every leaf of cost <= V + tol (V the cheapest), by best-first branch and bound within ``deadline``; [] if no
    cover exists."""
    if not covering.deficit.any():
        return [Leaf(0.0, ())]
    P = covering.pool.size
    # a queued node holds its deficit, an allowed mask and its actions: bound the queue by a quarter of the memory
    node_bytes = 8 * covering.deficit.size + P + 8 * int(covering.deficit.sum()) + 200
    node_limit = max(min(NODE_LIMIT, int(available_memory() / 4 / node_bytes)), 1)
    leaves: list[Leaf] = []
    best = math.inf
    nothing = np.zeros(0, dtype=np.int64)
    # queue entries: (f, tie-break, priced, deficit, parent's allowed mask, actions excluded on top of it, F, cost)
    queue = [(0.0, 0, False, covering.deficit, np.ones(P, dtype=bool), nothing, (), 0.0)]
    pushed = popped = 1
    while queue:
        popped += 1
        if popped % 1024 == 0:
            deadline.check("branch and bound")
        f, _, priced, deficit, allowed, excluded, chosen, cost = heapq.heappop(queue)
        if f > best + tolerance(best):
            break
        if excluded.size:
            allowed = allowed.copy()
            allowed[excluded] = False
        price = covering.price(deficit, allowed)
        bound = cost + float(price @ deficit)
        if not bound <= best + tolerance(best):             # also inf: a feature nothing allowed covers
            continue
        if not priced and bound > f and queue and bound > queue[0][0]:
            heapq.heappush(queue, (bound, pushed, True, deficit, allowed, nothing, chosen, cost))
            pushed += 1
            continue
        for i, child_deficit, child_cost, child_f, siblings in _children(covering, deficit, allowed, price, cost):
            actions = chosen + (i,)
            if not child_deficit.any():
                leaves.append(Leaf(child_cost, actions))
                best = min(best, child_cost)
            elif child_f <= best + tolerance(best):
                heapq.heappush(queue, (child_f, pushed, False, child_deficit, allowed, siblings, actions, child_cost))
                pushed += 1
        if pushed + len(leaves) > node_limit:
            raise SolverError(f"branch and bound queued more than {node_limit:,} nodes and leaves; use the MILP "
                              f"engine (method milp)")
    return [leaf for leaf in leaves if leaf.cost <= best + tolerance(best)]


def _children(covering: Covering, deficit: np.ndarray, allowed: np.ndarray, price: np.ndarray, cost: float):
    """The children of a node, branching on the uncovered feature with the fewest allowed covering actions,
    cheapest bound first: (pool index, deficit, cost, inherited bound f, the earlier siblings it excludes)."""
    covers = (covering.cov > 0) & (deficit > 0) & allowed[:, None]
    count = np.where(deficit > 0, covers.sum(axis=0), covering.pool.size + 1)
    branch = np.flatnonzero(covers[:, int(np.argmin(count))])
    child_deficit = np.maximum(deficit - covering.cov[branch], 0)
    child_cost = cost + covering.costs[branch]
    child_f = child_cost + child_deficit @ price
    order = np.argsort(child_f, kind="stable")
    branch = branch[order]
    for k, row in enumerate(order):
        yield int(branch[k]), child_deficit[row], float(child_cost[row]), float(child_f[row]), branch[:k]
