"""The bounds a counterfactual strategy must meet, validated once: what each means and how it is encoded.

A bound is a PCTL property with a threshold that Storm checks on the DTMC a strategy induces:

- ``P<=γ [F φ]``, ``P<=γ [ψ U φ]`` (also ``<``): a bad outcome, reached (without leaving ψ) with probability at most γ;
- ``P>=γ [F φ]``, ``P>=γ [ψ U φ]`` (also ``>``): a good outcome, reached (through ψ) with probability at least γ;
- ``R{"r"}<=c [F φ]`` (also ``<``): the expected total reward (cost, steps) collected until φ is at most c;
- ``R{"r"}>=c [F φ]`` (also ``>``): the expected total reward (revenue) until φ is at least c.

Storm's convention for expected rewards: ``R [F φ]`` is infinite from a state that reaches φ with probability < 1.
So an upper bound ``R<=c`` requires the strategy to reach φ almost surely, and a lower bound ``R>=c`` would be met
by any strategy that never ends; :mod:`~stormcf.counterfactual.preanalysis` says how each case is handled.

Step-bounded properties (``F<=k``, ``U<=k``, ``C<=k``) are refused: meeting them needs strategies that count steps
(memory), and stormcf's counterfactuals are memoryless strategies of the model as given.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import PropertyError
from ..model import ExplicitModel
from ..modes import Maximize, Minimize, Optimization
from ..properties import Property
from ..storm import parse_property

#: the kinds of value a bound constrains
PROBABILITY, REWARD = "probability", "reward"


@dataclass(frozen=True, eq=False)
class Bound:
    """One validated bound (see the module docstring).

    Attributes:
        property: the property as Storm parsed it.
        kind: :data:`PROBABILITY` or :data:`REWARD`.
        target: the states of φ; ``constraint``: the states of ψ (all states for ``F φ``).
        reward_model: the reward model of an ``R`` bound; ``rewards``: what one step from each choice earns there
            (the state reward of its state plus its expected state-action and transition reward), else None.
        threshold: γ or c as an exact fraction; ``comparison``: ``<=``, ``<``, ``>=`` or ``>``.
    """

    property: Property
    kind: str
    target: np.ndarray
    constraint: np.ndarray
    reward_model: str | None
    rewards: np.ndarray | None
    threshold: Fraction
    comparison: str

    @builtins.property          # the field ``property`` hides the builtin in the class body (for mypy)
    def text(self) -> str:
        return self.property.text

    @builtins.property
    def optimization(self) -> Optimization:
        """What a counterfactual does with the bounded value: :data:`Minimize` for ``<=``/``<``, else
        :data:`Maximize`."""
        return Minimize if self.comparison in ("<", "<=") else Maximize

    @builtins.property
    def strict(self) -> bool:
        return self.comparison in ("<", ">")

    @builtins.property
    def value(self) -> float:
        return float(self.threshold)

    @builtins.property
    def is_until(self) -> bool:
        return not bool(self.constraint.all())

    def quantity(self) -> str:
        """What the bound is about, in words: ``probability of "rejected"``, ``expected "steps" until ...``."""
        if self.kind == PROBABILITY:
            return f"probability of {self.path_text()}"
        return f'expected "{self.reward_model}" until {self.path_text(target_only=True)}'

    def path_text(self, target_only: bool = False) -> str:
        """The path formula as the user wrote it (``"rejected"``, ``!"Consultation" U "rejected"``)."""
        text = self.property.text
        inner = text[text.index("[") + 1:text.rindex("]")].strip() if "[" in text else text
        if inner.startswith("F "):
            inner = inner[2:].strip()
        elif target_only and " U " in inner:
            inner = inner.split(" U ", 1)[1].strip()
        return inner


def parse_bound(model: ExplicitModel, prop: Property | str) -> Bound:
    """Validate ``prop`` as a bound (module docstring); :class:`PropertyError` names what is wrong."""
    prop = parse_property(model, prop) if isinstance(prop, str) else prop
    if prop.operator == "multi":
        raise PropertyError(f"{prop.text}: give every bound on its own (several bounds at once: one --require per "
                            f"bound, or bounds=[...] in the API)")
    if prop.operator not in ("P", "R"):
        raise PropertyError(f"counterfactual strategies need a probability bound like P<=0.2 [F \"bad\"] or "
                            f"P<=0.2 [ψ U φ], or an expected-reward bound like R{{\"cost\"}}<=5 [F \"done\"]; "
                            f"got {prop.text}")
    _refuse_memory(prop)
    if prop.comparison is None or prop.threshold is None:     # no bound (a bound has both)
        example = "P<=γ [F φ] (or P<γ, P>=γ, P>γ)" if prop.operator == "P" else "R{\"r\"}<=c [F φ] (or R>=c)"
        raise PropertyError(f"{prop.text} has no bound: write {example}")
    if prop.operator == "P":
        if prop.path not in ("eventually", "until") or prop.target is None:
            raise PropertyError(f"{prop.text}: a probability bound must be on F φ or ψ U φ (unbounded); got a "
                                f"{prop.path.replace('_', ' ')} formula")
        constraint = prop.constraint if prop.path == "until" else np.ones(model.n_states, dtype=bool)
        assert constraint is not None       # the mask of ψ: parse_property computes it for every ψ U φ
        return Bound(prop, PROBABILITY, prop.target, constraint, None, None, prop.threshold, prop.comparison)
    if prop.path != "eventually" or prop.target is None:
        raise PropertyError(f"{prop.text}: an expected-reward bound must be on the reward collected until a target, "
                            f"R{{\"r\"}}<=c [F φ]; got a {prop.path.replace('_', ' ')} formula")
    rewards = step_rewards(model, prop.reward_model)
    negative = np.flatnonzero(rewards < 0)
    if negative.size:
        s = int(model.state_of_choice[negative[0]])
        raise PropertyError(f"{prop.text}: the reward model \"{prop.reward_model}\" has a negative reward in state "
                            f"{model.state_name(s)}; expected-reward bounds need non-negative rewards")
    return Bound(prop, REWARD, prop.target, np.ones(model.n_states, dtype=bool), prop.reward_model, rewards,
                 prop.threshold, prop.comparison)


def _refuse_memory(prop: Property) -> None:
    if prop.path in ("bounded_until", "cumulative", "instantaneous", "reward_bounded_until"):
        raise PropertyError(
            f"{prop.text} is step- or reward-bounded: meeting it needs a strategy that counts steps (memory), while "
            f"counterfactual strategies are memoryless strategies of the model as given; add a step counter to the "
            f"model (a variable k with k'=min(k+1, K)) and state the bound unbounded, e.g. F (φ & k<=K)")


def step_rewards(model: ExplicitModel, name: str | None) -> np.ndarray:
    """Per choice: what one step earns in Storm's total-reward semantics: the state reward of its state plus its
    expected state-action and transition reward."""
    rm = model.reward_model(name)
    r = model.expected_choice_rewards(rm.name)
    if rm.state is not None:
        r = r + rm.state[model.state_of_choice]
    return r
