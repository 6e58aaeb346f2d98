"""One plan step by step, in the problem's words, with the DTMC that Storm re-checks it on (:mod:`.exact`).

On the Python front a plan is a chain x_0 -> ... -> x_T (one state per step); on the PRISM front it is the
distribution of states per step. Every step says which action with which value was taken, what changed, its effort
b, its discount g (the cost reward divided by the effort reward on the PRISM front, when they differ) and its cost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..verify import format_value
from .decoder import Plans
from .exact import Layer
from .objectives import simulate
from .prism import PrismRecourse
from .problem import RecourseProblem


@dataclass(frozen=True)
class StepText:
    """One step of a plan: the action, its value, what changed, and expected effort, discount and cost."""

    action: str
    value: str
    changes: str
    effort: float
    cost: float
    discount: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "value": self.value, "changes": self.changes, "effort": self.effort,
                "discount": self.discount, "cost": self.cost}

    def text(self) -> str:
        value = f" {self.value}" if self.value else ""
        if self.discount is None:
            return f"{self.action}{value}: {self.changes}; cost {format_value(self.cost)}"
        return (f"{self.action}{value}: {self.changes}; effort {format_value(self.effort)} x discount "
                f"{format_value(self.discount)} = cost {format_value(self.cost)}")


@dataclass(frozen=True, eq=False)
class PlanTrace:
    """A plan's steps, its states (a list of valuations, or of distributions on stochastic models) and the layers of
    the DTMC it induces."""

    steps: list[StepText]
    states: list[Any]
    layers: list[Layer]
    accept: np.ndarray
    gower: np.ndarray


def trace(space: RecourseProblem | PrismRecourse, plans: Plans) -> PlanTrace:
    """The trace of the single plan in ``plans``."""
    if isinstance(space, PrismRecourse):
        return _prism_trace(space, plans)
    return _python_trace(space, plans)


def _python_trace(problem: RecourseProblem, plans: Plans) -> PlanTrace:
    simulation = simulate(problem, plans, record=True)
    features = problem.features
    states = [problem.state0]
    steps, layers = [], []
    assert simulation.steps is not None  # record=True keeps every step
    for t, _, out, before in simulation.steps:
        i, value = plans.steps(0)[t]
        after = out.after[0]
        states.append(after)
        action = problem.actions[i]
        changed = [f"{f.name} {f.text(before[0, j])} → {f.text(after[j])}"
                   for j, f in enumerate(features) if out.changed[0, j]]
        b, g = float(out.effort[0]), float(out.discount[0])
        cost = b * g if problem.discounted else b
        steps.append(StepText(action.name, _value_text(problem, i, value), ", ".join(changed), b, cost,
                              g if problem.discounted else None))
        layers.append(Layer(sp.csr_matrix(np.ones((1, 1))), np.array([cost]), np.array([b])))
    evaluation = simulation.evaluation
    valuations = [{f.name: _plain(f, x[j]) for j, f in enumerate(features)} for x in states]
    return PlanTrace(steps, valuations, layers, evaluation.p_accept[:1] > 0.5, evaluation.gower[:1])


def _value_text(problem: RecourseProblem, i: int, value: float) -> str:
    action = problem.actions[i]
    if action.domain.labels is not None:
        return action.domain.text(value)
    if action.feature is not None and problem.features[problem.index[action.feature]].is_categorical:
        return problem.features[problem.index[action.feature]].text(value)
    return f"{value:.6g}"


def _plain(feature, x: float) -> Any:
    return feature.text(x) if feature.is_categorical else float(x)


def _prism_trace(space: PrismRecourse, plans: Plans) -> PlanTrace:
    layers, accept, gower, distributions = space.plan_layers(plans)
    m = space.model
    steps = []
    for t, (i, value) in enumerate(plans.steps(0)):
        family = space.families[i]
        label = family.domain.text(value)
        before, after = distributions[t], distributions[t + 1]
        cost, effort = float(layers[t].cost @ _weights(before)), float(layers[t].effort @ _weights(before))
        discount = cost / effort if space.effort is not None and effort > 0 else None
        steps.append(StepText(family.name, label, _changes(space, before, after), effort, cost, discount))
    states = [_distribution_text(m, d, space.deterministic) for d in distributions]
    return PlanTrace(steps, states, layers, accept, gower)


def _weights(distribution: dict[int, float]) -> np.ndarray:
    return np.array([distribution[s] for s in sorted(distribution)])


def _changes(space: PrismRecourse, before: dict[int, float], after: dict[int, float]) -> str:
    if len(before) == 1 and len(after) == 1:
        return space.changes_text(next(iter(before)), next(iter(after)))
    outcomes = ", ".join(f"{space.state_text(s)} with probability {format_value(p)}" for s, p in sorted(after.items()))
    return f"then {outcomes}"


def _distribution_text(m, distribution: dict[int, float], deterministic: bool) -> Any:
    if deterministic:
        return m.valuation(next(iter(distribution)))
    return [{"state": m.valuation(s), "probability": p} for s, p in sorted(distribution.items())]
