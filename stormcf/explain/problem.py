"""The k-change path-explanation problem (Tsirtsis, De, Gomez-Rodriguez, NeurIPS 2021, Eq. 7), validated when built.

Given an MDP with a reward model and one observed path τ = {(s_t, a_t)}, t = 0..T-1, find the policy π over
(counterfactual state s, changes used l, step t) that maximizes the expected counterfactual outcome
E[Σ_t R(s'_t, a'_t)] under the Gumbel-max counterfactual transition probabilities P_τ,t, subject to at most k steps
with a'_t ≠ a_t on every counterfactual path.

Allowed actions A_t(s) (notes §4.8): an action is allowed at step t in state s only if it is enabled there (Storm's
choice labels), is the pinned action of step t when the step is pinned, and is not forbidden. Forbidding an action
means it is never *introduced by a change*; keeping the observed action is always allowed (so ``--forbid STR`` with
``--pin 0:STR`` reproduces the therapy experiment's STR/END rule).

A **change** is a step whose action name differs from the observed a_t, except in states with a single enabled
choice (e.g. the self-loop Storm adds to deadlock states): there the move is forced and never counts. Where the
observed action is not enabled in a counterfactual state, every allowed action is a change; with no budget left such
a state is infeasible (value -inf), and the optimal policy avoids reaching it with positive probability.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from ..counterfactual_mdp import ESTIMATORS, nominal_transitions
from ..counterfactual_mdp.gumbel import require_sample_memory
from ..errors import StormcfError
from ..limits import require_unrolled_size
from ..model import ExplicitModel
from ..modes import Optimization
from ..paths import ObservedPath


class ExplanationError(StormcfError):
    """Bad parameters of a k-change explanation (negative budget, bad pin, unknown action), or no policy meets them."""


@dataclass(frozen=True, eq=False)
class ExplanationProblem:
    """A validated k-change explanation problem.

    Attributes:
        path: the observed path τ (its model is the MDP).
        reward_model: name of the reward model R (state plus state-action rewards; transition rewards are rejected).
        k: the change budget the explanation is asked for.
        k_max: the largest budget the values h(s_0, T, k') are reported for (one DP run gives all k' <= k_max);
            defaults to k.
        estimator: ``"exact"`` (closed form, notes §2.3) or ``"mc"`` (the paper's Monte Carlo, d posterior samples).
        samples: d, the number of posterior noise samples per step for ``"mc"``.
        seed: seed of the Monte Carlo streams (step t uses ``default_rng([seed, t])``).
        pins: step -> action name; negative steps count from the end (-1 is the last step).
        forbidden: action names never introduced by a change.
        optimization: maximize the outcome (rewards) or minimize it (costs).
    """

    path: ObservedPath
    reward_model: str | None = None
    k: int = 1
    k_max: int | None = None
    estimator: str = "exact"
    samples: int = 1000
    seed: int = 0
    pins: Mapping[int, str] = field(default_factory=dict)
    forbidden: frozenset[str] = frozenset()
    optimization: Optimization = Optimization.MAXIMIZE

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        for name in ("k", "samples", "seed"):
            if not _is_int(getattr(self, name)):
                raise ExplanationError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if self.k < 0:
            raise ExplanationError(f"the change budget k must be >= 0, got {self.k}")
        if self.k > self.T:
            raise ExplanationError(f"the change budget k = {self.k} exceeds the path's {self.T} steps: at most "
                                   f"{self.T} actions can change (k <= {self.T})")
        if self.seed < 0:
            raise ExplanationError(f"the seed must be >= 0, got {self.seed}")
        k_max = self.k if self.k_max is None else self.k_max
        if not _is_int(k_max) or k_max < self.k:
            raise ExplanationError(f"k_max must be an integer >= k = {self.k}, got {k_max!r}")
        if k_max > self.T:
            raise ExplanationError(f"k_max = {k_max} exceeds the path's {self.T} steps: at most {self.T} actions "
                                   f"can change (k_max <= {self.T})")
        set_("k_max", int(k_max))
        if self.estimator not in ESTIMATORS:
            raise ExplanationError(f"unknown estimator {self.estimator!r}: use one of {', '.join(ESTIMATORS)}")
        if self.samples < 1:
            raise ExplanationError(f"the Monte Carlo estimator needs at least 1 sample, got {self.samples}")
        set_("pins", self._normalized_pins())
        set_("forbidden", frozenset(self.forbidden))
        set_("optimization", Optimization.parse(self.optimization))
        for action in self.forbidden:
            self._action_index(action, "forbidden action")
        self._require_pins_allowed()
        if self.estimator == "mc":
            require_sample_memory(self.model, self.samples)
        self.step_rewards                                      # raises PropertyError for transition rewards
        # Storm re-checks the policy on the (t, s, l) MDP: the path's layers (times the budgets left, which cost Storm
        # far less than the layers: counted once)
        require_unrolled_size(self.T, nominal_transitions(self.path), "the unrolled (t, s, l) MDP")

    # ------------------------------------------------------------------------------------------ derived data
    @property
    def model(self) -> ExplicitModel:
        return self.path.model

    @property
    def T(self) -> int:
        return self.path.T

    @property
    def step_rewards(self) -> np.ndarray:
        """R(s, a) per choice: state reward plus state-action reward."""
        return self.model.step_rewards(self.reward_model)

    @property
    def reward_name(self) -> str:
        return self.model.reward_model(self.reward_model).name

    @property
    def observed_outcome(self) -> float:
        """o(τ) = Σ_t R(s_t, a_t)."""
        return self.path.outcome(self.step_rewards)

    @property
    def observed_action_ids(self) -> np.ndarray:
        """a_t as indices into ``model.action_names``."""
        return self.model.choice_actions[self.path.choices]

    def allowed_and_changes(self, t: int, choices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For candidate choices (rows) at step t: which are allowed, and which spend a change (module docs)."""
        m = self.model
        action = m.choice_actions[choices]
        observed = int(self.observed_action_ids[t])
        forced = m.choice_counts[m.state_of_choice[choices]] == 1
        change = (action != observed) & ~forced
        allowed = np.ones(choices.size, dtype=bool)
        if self.forbidden:
            banned = [self._action_index(a, "forbidden action") for a in self.forbidden]
            allowed &= ~(np.isin(action, banned) & change)
        if t in self.pins:
            allowed &= action == self._action_index(self.pins[t], f"pinned action at step {t}")
        return allowed, change

    # ------------------------------------------------------------------------------------------ validation
    def _action_index(self, name: str, what: str) -> int:
        names = self.model.action_names
        if name not in names or name == "":
            known = ", ".join(repr(a) for a in sorted(a for a in names if a))
            raise ExplanationError(f"{what} '{name}' is not an action of {self.model.source} (actions: {known})")
        return names.index(name)

    def _require_pins_allowed(self) -> None:
        """A pinned action that differs from the observed one is a change; it must not be forbidden."""
        observed = self.path.actions
        for t, action in self.pins.items():
            if action in self.forbidden and _action_name(observed[t]) != action:
                raise ExplanationError(f"step {t} is pinned to '{action}', which differs from the observed "
                                       f"'{_action_name(observed[t])}' and is forbidden as a change: no policy can "
                                       f"meet both")

    def _normalized_pins(self) -> dict[int, str]:
        pins: dict[int, str] = {}
        for step, action in dict(self.pins).items():
            if not _is_int(step) or not -self.T <= step < self.T:
                raise ExplanationError(f"pin {step}:{action}: the path has steps 0..{self.T - 1} (or -{self.T}..-1)")
            t = int(step) % self.T
            self._action_index(action, f"pinned action at step {t}")
            if pins.get(t, action) != action:
                raise ExplanationError(f"step {t} is pinned to both '{pins[t]}' and '{action}'")
            pins[t] = action
        return pins


def parse_pins(texts: Iterable[str]) -> dict[int, str]:
    """``["0:STR", "-1:END"]`` -> ``{0: "STR", -1: "END"}`` (the CLI's ``--pin T:ACTION``)."""
    pins: dict[int, str] = {}
    for text in texts:
        match = re.fullmatch(r"\s*(-?\d+)\s*:\s*(\S+)\s*", text)
        if not match:
            raise ExplanationError(f"bad pin '{text}': expected STEP:ACTION, e.g. 0:STR or -1:END")
        step, action = int(match.group(1)), match.group(2)
        if pins.get(step, action) != action:
            raise ExplanationError(f"step {step} is pinned to both '{pins[step]}' and '{action}'")
        pins[step] = action
    return pins


def _action_name(choice_name: str) -> str:
    """The action of a choice name (``a#1`` -> ``a``)."""
    return choice_name.split("#", 1)[0]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)

