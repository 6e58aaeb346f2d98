"""Whole families (notes §1.8, §5.2): one MDP for every agent of an instance, one Storm call for V* of all of them.

Fixing the classifier and the catalogue fixes one deterministic MDP; agents differ only in their initial state.
:func:`label_agents` builds the states reachable from all agents at once (shared by all of them), asks Storm for
``Rmin=? [F "goal"]`` in every state (or runs the DP over the same arrays), and reads every agent's canonical
optimal set off V* in one vectorised step (the optimal first steps O(x), see :mod:`.engines`); only agents whose
optimum is tied go through the per-agent canonical search.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..run import Run
from ..errors import SolverError
from .engines import EXACT, canonical_set, run_engine, storm_values
from .problem import TIE_TOLERANCE, SetCoverInstance, SetCoverProblem
from .space import StateSpace, Transitions

#: how a family is labelled: one MDP for all agents (Storm or DP), or one engine call per agent
FAMILY_METHODS = ("storm", "dp")


@dataclass(eq=False)
class FamilyLabels:
    """The optimal CFE of every agent of a family.

    Attributes:
        values: OPT(x) per agent (Storm's values with ``method="storm"``), inf where no cover exists.
        actions: the canonical optimal set per agent (ascending indices).
        unique: whether each optimum is unique (None where undecided).
        method: how the labels were computed.
        states, choices: size of the family MDP (0 for per-agent engines).
        timings: seconds per phase.
    """

    values: np.ndarray
    actions: list[tuple[int, ...]]
    unique: list[bool | None]
    method: str
    states: int = 0
    choices: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def tied(self) -> np.ndarray:
        """Whether each agent's optimum is known to be tied (another optimal set exists), as a mask."""
        return np.array([u is not None and not u for u in self.unique], dtype=bool)


def label_agents(instance: SetCoverInstance, X: np.ndarray, method: str = "storm", group: str | None = None,
                 solver: str = "auto", run: Run | None = None) -> FamilyLabels:
    """Label the agents ``X`` (one per row) with their canonical optimal CFE within ``run`` (default: unlimited;
    its progress reporter names each phase, and it is checked between them).

    ``storm``/``dp``: one family MDP (one Storm call); any other exact engine: one call per agent (``milp`` on the
    solver chosen by name)."""
    run = run if run is not None else Run()
    X = instance.agents(X)
    if group is not None and method in FAMILY_METHODS:
        return _within_group(instance, X, method, group, run)
    if method not in FAMILY_METHODS:
        if method not in EXACT:
            raise SolverError(f"labelling needs an exact engine: {', '.join(EXACT)}; got '{method}'")
        return _per_agent(instance, X, method, group, solver, run)
    if instance.ordered:
        raise SolverError("labelling data sets of CFE sets needs an instance without preconditions")
    with run.activity(f"labelling {len(X):,} agents (one family MDP)"):
        return _family(instance, X, method, group, run)


def _family(instance: SetCoverInstance, X: np.ndarray, method: str, group: str | None, run: Run) -> FamilyLabels:
    """One MDP for every agent, its values by Storm or DP, the agents' sets read off them (module docs)."""
    start = time.perf_counter()
    space = StateSpace.for_agents(instance, X, instance.available(group))
    codes = space.encode(X)
    with run.activity("the family MDP's reachable states"):
        trans = space.reachable(codes, run=run)
    built = time.perf_counter()
    timings = {"states": built - start}
    if method == "storm":
        with run.activity(f"Storm's model of the family MDP ({trans.n_states:,} states)"):
            model = trans.explicit_model(0, source=f"{instance.source} (family of {len(X)} agents)")
        timings["model"] = time.perf_counter() - built
        run.check("the family MDP's model")
        with run.activity("Storm's optimal values of the family MDP"):
            model_values = storm_values(model)
        choices = model.n_choices
    else:
        with run.activity(f"the family MDP's values by dynamic programming ({trans.n_states:,} states)"):
            model_values = trans.state_values()
        choices = int(trans.effective.sum())
    run.check("the family MDP's values")
    solved = time.perf_counter()
    timings["values"] = solved - built - timings.get("model", 0.0)
    with run.activity(f"the optimal sets of {len(X):,} agents from the values"):
        values, actions, unique = _read_sets(instance, X, group, trans, model_values, trans.index(codes), run)
    timings["sets"] = time.perf_counter() - solved
    return FamilyLabels(values, actions, unique, method, trans.n_states, choices, timings)


def _within_group(instance: SetCoverInstance, X: np.ndarray, method: str, group: str, run: Run) -> FamilyLabels:
    """A group's family: the MDP of the group's actions alone (its tables as wide as the group's catalogue, not
    the whole one), its sets mapped back to catalogue indices (ascending order kept, so the canonical sets too)."""
    keep = np.flatnonzero(instance.available(group))
    with run.activity(f"group {group}"):
        labels = label_agents(instance.with_actions(keep), X, method, run=run)
    labels.actions = [tuple(int(keep[i]) for i in a) for a in labels.actions]
    return labels


def _read_sets(instance: SetCoverInstance, X: np.ndarray, group: str | None, trans: Transitions,
               model_values: np.ndarray, s0: np.ndarray, run: Run):
    """Canonical sets of all agents from V*: O(x) is the set when it is a cover of cost V*(x) without zero-cost
    actions (then it is unique iff no zero-cost action is available); the others are searched one by one (the run
    checked between them)."""
    values = model_values[s0]
    tolerance = TIE_TOLERANCE * np.maximum(1.0, np.abs(np.where(np.isfinite(values), values, 0)))
    first = trans.q_values(model_values, s0) <= (values + tolerance)[:, None]
    costs = instance.expected_costs
    zero = instance.available(group) & (costs == 0)
    valid = np.all(X + first.astype(np.int64) @ instance.effects >= instance.thresholds, axis=1)
    fast = valid & (np.abs(first @ costs - values) <= tolerance) & ~(first & zero).any(axis=1) & instance.binary
    actions: list[tuple[int, ...]] = [()] * len(X)
    unique: list[bool | None] = [None] * len(X)
    for k in np.flatnonzero(fast):
        actions[k] = tuple(np.flatnonzero(first[k]).tolist())
        unique[k] = not zero.any()
    for k in np.flatnonzero(~fast & np.isfinite(values)):
        run.check("the search of tied optimal sets")
        problem = SetCoverProblem(instance, X[k], group)
        if problem.positive:
            unique[k] = True
            continue
        actions[k] = canonical_set(problem, float(values[k]), np.flatnonzero(first[k]))
        if instance.binary:
            unique[k] = bool(len(actions[k]) == first[k].sum() and np.isin(np.flatnonzero(zero), actions[k]).all())
    for k in np.flatnonzero(~np.isfinite(values)):
        unique[k] = True
    return values, actions, unique


def _per_agent(instance: SetCoverInstance, X: np.ndarray, method: str, group: str | None, solver: str,
               run: Run) -> FamilyLabels:
    start = time.perf_counter()
    values = np.zeros(len(X))
    actions: list[tuple[int, ...]] = []
    unique: list[bool | None] = []
    for k, x in enumerate(run.progress(X, desc=f"labelling by {method}", unit="agent")):
        run.check(f"the labelling by {method}")
        problem = SetCoverProblem(instance, x, group)
        if problem.positive:
            actions.append(())
            unique.append(True)
            continue
        solution = run_engine(problem, method, solver, run)
        values[k] = solution.value
        actions.append(solution.actions)
        unique.append(solution.unique)
    return FamilyLabels(values, actions, unique, method, timings={"values": time.perf_counter() - start})
