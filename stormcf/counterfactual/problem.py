"""The counterfactual-strategy problem of seed 000 (Kobialka et al., Def. 1 and 2), validated when it is built.

Given an MDP M, an initial strategy σ and bounds that σ violates, find σ* minimising

    d(σ, σ*) = r0·d0 + r1·d1 + r∞·d∞        subject to   σ* meets every bound

changing σ only where the user has control (*actionability*). Seed 000 asks one bound, Pr^σ*(s0 ⊨ ◇φ) <= γ; here a
bound is any of :mod:`~stormcf.counterfactual.bounds` (reachability and until probabilities from above or below,
expected rewards until a target from above or below), and several bounds must hold at once. With ``epsilon`` the
problem is the ε-counterfactual of Def. 2: any σ* with d(σ, σ*) <= ε.

What the user controls is given per choice (a state's action): by default every choice of every decision state;
``controllable_actions`` keeps only choices with those PRISM action names, ``controllable_states`` (a label or a
PRISM expression, evaluated by Storm) only choices of those states. Uncontrollable choices keep σ's probability
exactly; the controllable choices of a state share the probability mass σ gives them.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..distance import Weights
from ..errors import ModelError, PropertyError, StrategyError
from ..properties import Property
from ..storm import parse_property
from ..strategy import Strategy
from .bounds import Bound, parse_bound


class CounterfactualProblem:
    """A validated counterfactual-strategy problem.

    Args:
        strategy: the initial strategy σ (of an MDP).
        prop: one bound (``P<=γ [F φ]``, ``P<=γ [ψ U φ]``, ``R{"r"}<=c [F φ]``, also ``<``, ``>=``, ``>``; φ, ψ
            labels or expressions); the lower forms are checked for soundness by the pre-analysis (see
            :mod:`stormcf.counterfactual.preanalysis`).
        weights: r0, r1, r∞ (``"1,1,1"``, a sequence, or a mapping norm -> weight: :class:`~stormcf.distance.Weights`).
        controllable_actions: PRISM action names the user controls (default: all).
        controllable_states: a label name or a PRISM state expression (pass expressions to ``load_model``'s
            ``properties`` so Storm builds their label); default: all states.
        epsilon: look for an ε-counterfactual (d <= ε) instead of an optimal one.
        bounds: several bounds that σ* must meet at once (instead of ``prop``, or with it first).

    Attributes (derived): ``bounds`` (the validated :class:`~stormcf.counterfactual.bounds.Bound` of each), and of
    the first bound: ``property``, ``target`` (mask of φ), ``bound`` (its threshold as a Fraction), ``strict``,
    ``optimization`` (what a counterfactual does with its value: :data:`~stormcf.modes.Minimize` for ``<=``/``<``,
    :data:`~stormcf.modes.Maximize` for ``>=``/``>``); ``free`` (mask over choices the user controls).
    """

    def __init__(self, strategy: Strategy, prop: Property | str | None = None,
                 weights: str | Sequence[float] | Mapping[str, float] | Weights = (1, 1, 1),
                 controllable_actions: Iterable[str] | None = None, controllable_states: str | None = None,
                 epsilon: float | None = None, bounds: Sequence[Property | str] = ()) -> None:
        model = strategy.model
        if model.model_type != "mdp":
            raise ModelError(f"{model.source} is a DTMC: there are no decisions to change")
        self.model, self.strategy = model, strategy
        given = ([] if prop is None else [prop]) + list(bounds)
        if not given:
            raise PropertyError("a counterfactual strategy needs a bound to meet, e.g. P<=0.2 [F \"bad\"]")
        self.bounds: tuple[Bound, ...] = tuple(parse_bound(model, p) for p in given)
        texts = [b.text for b in self.bounds]
        if len(set(texts)) < len(texts):
            raise PropertyError(f"the bound {next(t for t in texts if texts.count(t) > 1)} is given twice")
        self.weights = Weights.parse(weights)
        first = self.bounds[0]
        self.property = first.property
        self.target = first.target
        self.bound: Fraction = first.threshold
        self.strict = first.strict
        self.optimization = first.optimization
        self.epsilon = self._check_epsilon(epsilon)
        self.controllable_actions = None if controllable_actions is None else list(controllable_actions)
        self.controllable_states = controllable_states
        self.free = self._free_choices(self.controllable_actions, controllable_states)

    @property
    def properties_text(self) -> str:
        """Every bound, as Storm prints them, joined by " and "."""
        return " and ".join(b.text for b in self.bounds)

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
