"""The counterfactual-strategy problem of seed 000 (Kobialka et al., Def. 1 and 2), validated when it is built.

Given an MDP M, an initial strategy σ and a bound ``P<=γ [F φ]`` that σ violates, find σ* minimising

    d(σ, σ*) = r0·d0 + r1·d1 + r∞·d∞        subject to   Pr^σ*(s0 ⊨ ◇φ) <= γ

changing σ only where the user has control (*actionability*). With ``epsilon`` the problem is the
ε-counterfactual of Def. 2: any σ* with d(σ, σ*) <= ε.

What the user controls is given per choice (a state's action): by default every choice of every decision state;
``controllable_actions`` keeps only choices with those PRISM action names, ``controllable_states`` (a label or a
PRISM expression, evaluated by Storm) only choices of those states. Uncontrollable choices keep σ's probability
exactly; the controllable choices of a state share the probability mass σ gives them.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from ..errors import ModelError, PropertyError, StrategyError
from ..modes import Maximize, Minimize
from ..properties import Property
from ..storm import parse_property
from ..strategy import Strategy


@dataclass(frozen=True)
class Weights:
    """The weights r0, r1, r∞ of d = r0·d0 + r1·d1 + r∞·d∞ (paper default 1, 1, 1)."""

    r0: float = 1.0
    r1: float = 1.0
    rinf: float = 1.0

    def __post_init__(self) -> None:
        values = (self.r0, self.r1, self.rinf)
        if not all(isinstance(w, (int, float)) and np.isfinite(w) and w >= 0 for w in values):
            raise PropertyError(f"weights must be non-negative numbers, got {','.join(map(str, values))}")
        if not any(values):
            raise PropertyError("at least one of the weights r0, r1, r∞ must be positive")

    @classmethod
    def parse(cls, text: str | Sequence[float] | "Weights") -> "Weights":
        """``"1,1,1"``, a sequence of three numbers, or a :class:`Weights`."""
        if isinstance(text, Weights):
            return text
        parts = text.split(",") if isinstance(text, str) else list(text)
        try:
            values = [float(p) for p in parts]
        except (TypeError, ValueError):
            raise PropertyError(f"weights must be three numbers r0,r1,r∞ like 1,1,1; got {text!r}") from None
        if len(values) != 3:
            raise PropertyError(f"weights must be three numbers r0,r1,r∞ like 1,1,1; got {text!r}")
        return cls(*values)

    @property
    def kind(self) -> str:
        """``"d0"`` or ``"dinf"`` when only that norm counts (an exact special case), else ``"mixed"``."""
        if self.r1 == 0 and self.rinf == 0:
            return "d0"
        if self.r0 == 0 and self.r1 == 0:
            return "dinf"
        return "mixed"

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.r0, self.r1, self.rinf)


class CounterfactualProblem:
    """A validated counterfactual-strategy problem.

    Args:
        strategy: the initial strategy σ (of an MDP).
        prop: ``P<=γ [F φ]`` or ``P<γ [F φ]`` (φ a label or an expression); ``P>=γ`` / ``P>γ`` are accepted here
            and checked for soundness by the pre-analysis (see :mod:`stormcf.counterfactual.analysis`).
        weights: r0, r1, r∞ (``"1,1,1"`` or a triple).
        controllable_actions: PRISM action names the user controls (default: all).
        controllable_states: a label name or a PRISM state expression (pass expressions to ``load_model``'s
            ``properties`` so Storm builds their label); default: all states.
        epsilon: look for an ε-counterfactual (d <= ε) instead of an optimal one.

    Attributes (derived): ``target`` (mask of φ), ``bound`` (γ as a Fraction), ``strict``, ``optimization``
    (what a counterfactual does with the probability of φ: :data:`~stormcf.modes.Minimize` for ``<=``/``<``, a bad
    outcome, :data:`~stormcf.modes.Maximize` for ``>=``/``>``), ``free`` (mask over choices the user controls).
    """

    def __init__(self, strategy: Strategy, prop: Property | str, weights: str | Sequence[float] | Weights = (1, 1, 1),
                 controllable_actions: Iterable[str] | None = None, controllable_states: str | None = None,
                 epsilon: float | None = None) -> None:
        model = strategy.model
        if model.model_type != "mdp":
            raise ModelError(f"{model.source} is a DTMC: there are no decisions to change")
        self.model, self.strategy = model, strategy
        self.property = parse_property(model, prop) if isinstance(prop, str) else prop
        self.weights = Weights.parse(weights)
        self.target = self._check_property(self.property)
        self.bound: Fraction = self.property.threshold
        self.strict = self.property.comparison in ("<", ">")
        self.optimization = Minimize if self.property.comparison in ("<", "<=") else Maximize
        self.epsilon = self._check_epsilon(epsilon)
        self.controllable_actions = None if controllable_actions is None else list(controllable_actions)
        self.controllable_states = controllable_states
        self.free = self._free_choices(self.controllable_actions, controllable_states)

    @staticmethod
    def _check_property(prop: Property) -> np.ndarray:
        if prop.operator != "P" or prop.path != "eventually" or prop.target is None:
            raise PropertyError(f"counterfactual strategies need an unbounded reachability bound like "
                                f"P<=0.2 [F \"bad\"]; got {prop.text}")
        if not prop.has_bound:
            raise PropertyError(f"{prop.text} has no bound: write P<=γ [F φ] (or P<γ, P>=γ, P>γ)")
        if not 0 <= prop.threshold <= 1:
            raise PropertyError(f"the bound {float(prop.threshold):g} of {prop.text} is outside [0, 1]")
        return prop.target

    @staticmethod
    def _check_epsilon(epsilon: float | None) -> float | None:
        if epsilon is None:
            return None
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not np.isfinite(epsilon) \
                or epsilon < 0:
            raise PropertyError(f"epsilon must be a non-negative number, got {epsilon!r}")
        return float(epsilon)

    def _free_choices(self, actions: list[str] | None, states: str | None) -> np.ndarray:
        m = self.model
        free = m.decision_states[m.state_of_choice].copy()
        if actions is not None:
            names = [a.strip() for a in actions if a.strip()]
            if not names:
                raise StrategyError("the list of controllable actions is empty")
            unknown = sorted(set(names) - set(m.action_names))
            if unknown:
                known = ", ".join(sorted(a for a in m.action_names if a))
                raise StrategyError(f"unknown action '{unknown[0]}' in the controllable actions (actions: {known})")
            codes = [m.action_names.index(a) for a in names]
            free &= np.isin(m.choice_actions, codes)
        if states is not None:
            free &= self.state_predicate(states)[m.state_of_choice]
        return free

    def state_predicate(self, text: str) -> np.ndarray:
        """The states of a label name (``Rework`` or ``"Rework"``) or of a PRISM state expression (``s=5 | s=3``)."""
        name = text.strip()
        if name.strip('"') in self.model.labels:
            return self.model.label(name.strip('"'))
        prop = parse_property(self.model, name)
        if prop.operator is not None or prop.target is None:
            raise PropertyError(f"controllable states must be a label or a state expression, got {text!r}")
        return prop.target

    @property
    def controllable_states_mask(self) -> np.ndarray:
        """States with two or more controllable choices (the only ones that can change)."""
        counts = np.bincount(self.model.state_of_choice, weights=self.free.astype(float), minlength=self.model.n_states)
        return counts >= 2
