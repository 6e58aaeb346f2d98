"""Reachability analysis: Storm computes Pmin/Pmax, prob0/prob1 sets and optimal schedulers; graph reachability
runs on the explicit state graph with scipy's csgraph (C loops, O(states + transitions))."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from . import storm
from .errors import PropertyError
from .model import ExplicitModel
from .properties import Property
from .strategy import Strategy

Target = str | np.ndarray | Property


def target_mask(model: ExplicitModel, target: Target) -> np.ndarray:
    """The target states of a label name, a boolean mask or a reachability property ``P.. [F φ]``."""
    if isinstance(target, Property):
        return target.require_reachability("this analysis")
    if isinstance(target, str):
        return model.label(target)
    mask = np.asarray(target, dtype=bool)
    if mask.shape != (model.n_states,):
        raise PropertyError(f"target mask has shape {mask.shape}, expected ({model.n_states},)")
    return mask


def _direction(direction: str) -> str:
    if direction not in ("min", "max"):
        raise PropertyError(f"direction must be 'min' or 'max', got {direction!r}")
    return direction


def reach_probability(model: ExplicitModel, target: Target, direction: str = "max") -> np.ndarray:
    """Pmin or Pmax of ``F target`` from every state, computed by Storm (sound value iteration, 1e-10)."""
    values, _ = storm.reach_values(model, target_mask(model, target), _direction(direction))
    return values


def prob01_states(model: ExplicitModel, target: Target, direction: str = "max") -> tuple[np.ndarray, np.ndarray]:
    """Storm's prob0/prob1 sets for Pmin or Pmax of ``F target``: masks of the states where it is 0 and 1."""
    return storm.prob01_states(model, target_mask(model, target), _direction(direction))


def state_graph(model: ExplicitModel) -> sp.csr_matrix:
    """The state-to-state graph (n x n, 1 where some choice of s reaches s' with positive probability)."""
    P = model.transitions
    pick = sp.csr_matrix((np.ones(model.n_choices), (model.state_of_choice, np.arange(model.n_choices))),
                         shape=(model.n_states, model.n_choices))
    support = sp.csr_matrix((np.ones(P.nnz), P.indices, P.indptr), shape=P.shape)
    graph = (pick @ support).tocsr()
    graph.data[:] = 1.0
    return graph


def reached_from(graph: sp.csr_matrix, sources: np.ndarray) -> np.ndarray:
    """States reachable in ``graph`` from any of ``sources`` (a virtual root joins them; one BFS in C)."""
    n = graph.shape[0]
    root = sp.csr_matrix((np.ones(sources.size), (np.zeros(sources.size, dtype=np.int64), sources)), shape=(1, n))
    full = sp.bmat([[graph, sp.csr_matrix((n, 1))], [root, sp.csr_matrix((1, 1))]], format="csr", dtype=float)
    order = breadth_first_order(full, n, directed=True, return_predecessors=False)
    mask = np.zeros(n + 1, dtype=bool)
    mask[order] = True
    return mask[:n]


def reachable_states(model: ExplicitModel, sources: np.ndarray | None = None) -> np.ndarray:
    """States reachable from ``sources`` (default: the initial state) under some strategy."""
    src = np.array([model.initial_state]) if sources is None else np.flatnonzero(np.asarray(sources, dtype=bool))
    return reached_from(state_graph(model), src)


def can_reach(model: ExplicitModel, target: Target) -> np.ndarray:
    """States from which ``target`` is reachable under some strategy (backward graph search)."""
    return reached_from(state_graph(model).T.tocsr(), np.flatnonzero(target_mask(model, target)))


def optimal_strategy(model: ExplicitModel, prop: Property | str) -> tuple[np.ndarray, Strategy]:
    """An optimal memoryless scheduler of Storm for ``prop`` (e.g. ``Pmin=? [F "rejected"]``), as a strategy, with
    the optimal values of every state (see :class:`~stormcf.storm.SchedulerChoices`: deterministic unless Storm
    randomises; the first choice where Storm leaves the choice open)."""
    if isinstance(prop, str):
        prop = storm.parse_property(model, prop)
    choices = storm.optimal_choices(model, prop)
    return choices.values, Strategy(model, choices.probabilities)
