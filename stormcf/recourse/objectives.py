"""Objectives of plans on the Python front (notes §1.4, §1.6, pseudo-code EVALUATE of §2.5), vectorised over a batch.

A batch of plans is simulated position by position; at position t the plans are grouped by the action they apply, so
there is one vectorised call per (position, action): at most N² calls per batch, never one per plan. A step is
**invalid** when its pre/post-condition fails, it changes no feature, or its effort is not a finite number >= 0;
an invalid step counts as a violation and leaves the state unchanged (the rest of the plan still runs, as in the
authors' code). The classifier is called once per batch, on all final states x_T.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RecourseError
from .decoder import Evaluation, Plans
from .domains import Rows

if TYPE_CHECKING:
    from .problem import RecourseProblem


@dataclass(frozen=True, eq=False)
class StepOutcome:
    """Action a_i applied to a batch of states X with values v."""

    after: np.ndarray       # (n, d) x_t (meaningless where invalid)
    changed: np.ndarray     # (n, d) Δ: the features the step changed
    valid: np.ndarray       # (n,)
    effort: np.ndarray      # (n,) b_i(x_{t-1}, x_t)
    discount: np.ndarray    # (n,) g_i(x_{t-1})


def apply_action(problem: RecourseProblem, i: int, X: np.ndarray, v: np.ndarray) -> StepOutcome:
    """One step of action i from the states X (n, d) with tweaking values v (n,)."""
    action = problem.actions[i]
    index = problem.index
    x = Rows(X, index)
    Y = X.copy()
    for name, column in action.effect(x, v).items():
        if name not in index:
            raise RecourseError(f"action '{action.name}' changes unknown feature '{name}'")
        Y[:, index[name]] = column
    rounding = problem.rounding
    if rounding.state is not None:
        Y = np.round(Y, rounding.state)
    moved = np.abs(Y - X)
    changed = (moved >= rounding.change) & (moved > 0) | np.isnan(moved)
    y = Rows(Y, index)
    effort = np.broadcast_to(np.asarray(action.effort(x, y, v), dtype=float), (len(X),)).copy()
    if rounding.effort is not None:
        effort = np.round(effort, rounding.effort)
    valid = changed.any(axis=1) & np.isfinite(effort) & (effort >= 0) & np.isfinite(Y).all(axis=1)
    valid &= _categories_in_range(problem, Y, changed)
    if action.pre is not None:
        valid &= np.broadcast_to(np.asarray(action.pre(x), dtype=bool), valid.shape)
    if action.post is not None:
        valid &= np.broadcast_to(np.asarray(action.post(x, y, v), dtype=bool), valid.shape)
    return StepOutcome(Y, changed, valid, effort, discount(problem, x, changed))


def _categories_in_range(problem: RecourseProblem, Y: np.ndarray, changed: np.ndarray) -> np.ndarray:
    """Whether the changed categorical features hold a category index."""
    ok = np.ones(len(Y), dtype=bool)
    for j in np.flatnonzero(problem.categorical & changed.any(axis=0)).tolist():
        column = Y[:, j]
        ok &= (column >= 0) & (column < len(problem.features[j].categories)) & (column == np.floor(column))
    return ok


def discount(problem: RecourseProblem, x: Rows, changed: np.ndarray) -> np.ndarray:
    """g_i(x_{t-1}) = mean over the changed features h with incoming edges of ĝ_h(x_{t-1}) = mean_k τ_kh(x_{t-1})
    (Eq. 1-2; 1 when no changed feature has an incoming edge). τ is evaluated only for targets some row changed."""
    n = len(x)
    index = problem.index
    total, count = np.zeros(n), np.zeros(n)
    graph = problem.graph
    assert graph is not None  # RecourseProblem.__post_init__ puts an empty graph for None
    for h in graph.targets:
        rows = changed[:, index[h]]
        if not rows.any():
            continue
        taus = [np.broadcast_to(np.asarray(tau(x), dtype=float), (n,)) for _, tau in graph.incoming(h)]
        total += np.where(rows, np.mean(taus, axis=0), 0.0)
        count += rows
    return np.where(count > 0, total / np.maximum(count, 1), 1.0)


def gower(problem: RecourseProblem, X: np.ndarray) -> np.ndarray:
    """Gower(x_0, x) = (1/d) Σ_h s_h with s_h = |x_h - x0_h| / R_h (0 if R_h = 0) for numeric and [x_h != x0_h] for
    categorical features, per state."""
    X = np.atleast_2d(X)
    x0 = problem.state0
    ranges = problem.ranges
    numeric = np.divide(np.abs(X - x0), ranges, out=np.zeros_like(X), where=ranges > 0)
    s = np.where(problem.categorical, (X != x0).astype(float), numeric)
    distance = s.mean(axis=1)
    if problem.rounding.gower is not None:
        distance = np.round(distance, problem.rounding.gower)
    return distance


@dataclass(frozen=True, eq=False)
class Simulation:
    """What simulating a batch of plans gives: the evaluation, the final states x_T and, when recorded, every step."""

    evaluation: Evaluation
    final: np.ndarray
    steps: list[tuple[int, np.ndarray, StepOutcome, np.ndarray]] | None


def simulate(problem: RecourseProblem, plans: Plans, record: bool = False) -> Simulation:
    """EVALUATE of notes §2.5 for a batch of plans (``record``: keep every step's outcome, for the text)."""
    n = len(plans)
    d = len(problem.features)
    X = np.repeat(problem.state0[None, :], n, axis=0)
    effort, discounted = np.zeros(n), np.zeros(n)
    freq = np.zeros((n, d))
    violations = np.zeros(n)
    values = plans.step_values()
    steps: list[tuple[int, np.ndarray, StepOutcome, np.ndarray]] = []
    for t in range(plans.max_length):
        column = plans.order[:, t]
        for i in np.unique(column[column >= 0]).tolist():
            rows = np.flatnonzero(column == i)
            before = X[rows]
            out = apply_action(problem, i, before, values[rows, t])
            ok = rows[out.valid]
            effort[ok] += out.effort[out.valid]
            discounted[ok] += (out.effort * out.discount)[out.valid]
            freq[ok] += out.changed[out.valid]
            X[ok] = out.after[out.valid]
            violations[rows[~out.valid]] += 1
            if record:
                steps.append((t, rows, out, before))
    accept = problem.accepts(X).astype(float)
    evaluation = Evaluation(discounted if problem.discounted else effort, effort, gower(problem, X), freq, accept,
                            violations, plans.lengths, 1.0, tuple(problem.objectives))
    return Simulation(evaluation, X, steps if record else None)
