"""Distances between strategies (seed 000, Section 3).

For strategies σ, σ' of the same model, Δ_s = TV(σ(s), σ'(s)) = ½ Σ_a |σ(s)(a) − σ'(s)(a)| and

- d0 = #{s : Δ_s > 0}            (how many states change; sparsity)
- d1 = (1/|S|) Σ_s Δ_s           (average change; proximity)
- d∞ = max_s Δ_s                 (largest change)
- d  = r0·d0 + r1·d1 + r∞·d∞     (the paper's weighted objective; default weights 1, 1, 1)

|S| in d1 counts the **decision states** (two or more enabled actions): the paper's Example 3 gives d1 = 0.14 for a
change of 0.56 at one of the 4 decision states of the loan model. States with one action never change.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import StrategyError
from .strategy import Strategy

#: a state counts as changed (d0) when Δ_s exceeds this
CHANGE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class StrategyDistance:
    """Δ per state and the three norms of seed 000."""

    per_state: np.ndarray
    d0: int
    d1: float
    dinf: float

    def weighted(self, r0: float = 1.0, r1: float = 1.0, rinf: float = 1.0) -> float:
        """d = r0·d0 + r1·d1 + r∞·d∞."""
        return r0 * self.d0 + r1 * self.d1 + rinf * self.dinf

    @property
    def changed_states(self) -> np.ndarray:
        return np.flatnonzero(self.per_state > CHANGE_TOLERANCE)

    def to_dict(self, weights: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> dict:
        return {"d0": self.d0, "d1": self.d1, "dinf": self.dinf, "weights": list(weights),
                "weighted": self.weighted(*weights)}


def state_changes(a: Strategy, b: Strategy) -> np.ndarray:
    """Δ_s = total variation distance between a(s) and b(s), for every state."""
    if a.model is not b.model:
        raise StrategyError("strategies of different models cannot be compared")
    m = a.model
    return 0.5 * np.bincount(m.state_of_choice, weights=np.abs(a.probabilities - b.probabilities), minlength=m.n_states)


def strategy_distance(a: Strategy, b: Strategy) -> StrategyDistance:
    """d0, d1 and d∞ between two strategies (d1 averages over the decision states)."""
    delta = state_changes(a, b)
    changed = delta > CHANGE_TOLERANCE
    n_decision = int(a.model.decision_states.sum())
    return StrategyDistance(per_state=delta, d0=int(changed.sum()),
                            d1=float(delta.sum() / n_decision) if n_decision else 0.0,
                            dinf=float(delta.max(initial=0.0)))
