"""The sequential recourse problem of seed 002 (Naumann & Ntoutsi, "Consequence-aware sequential counterfactual
generation"), validated once where it is built.

A person x_0 is rejected by a classifier f. An **action** a_i: X x V -> X changes features of a state (a main feature
by a tweaking value v_i, others as side effects), may be refused by pre/post-conditions C_i, and has an effort
b_i(x_{t-1}, x_t) >= 0. A **plan** (sequential counterfactual) is an ordered sequence of distinct actions with one
value each, S = <(a^1, v^1), ..., (a^T, v^T)>; it is feasible when every step is valid and f(x_T) is the target.
Its objectives (all minimized, paper Eq. 3):

    o_1 = C_S = Σ_t b_i(x_{t-1}, x_t) · g_i(x_{t-1})        consequence-aware cost ("cscf"; Σ_t b_i when not
                                                             discounted: "scf")
    o_2 = Gower(x_0, x_T) = (1/d) Σ_h s_h                    s_h = |x_h - x0_h| / R_h (numeric), [x_h != x0_h]
    o_{2+h} = #steps that changed feature h                  (tweak frequency, side effects included)

with the consequence discount of Eq. (1)-(2): ĝ_h(x) = mean{τ_kh(x) : k -> h in G} and g_i(x) = mean{ĝ_h(x) : h
changed by the step, h has an incoming edge} (1 when no such h).

Two fronts share the solver (:mod:`.brkga`) and the exact answers (:mod:`.exact`):

- :class:`RecourseProblem`: the components in Python (continuous features allowed). Features are columns of a float
  matrix (categorical features hold the index of their category); effects, efforts, conditions and τ functions are
  vectorised over a batch of states, which they receive as :class:`Rows` (``x["edu"]`` is a column);
- :class:`~stormcf.recourse.prism.PrismRecourse`: a PRISM MDP whose variables are the features, whose labelled
  commands are the actions and whose reward model is the (discounted) cost.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import RecourseError
from .decoder import Evaluation, Plans
from .domains import Rows, ValueDomain
from .objectives import simulate

#: refuse to build plan MDPs (:mod:`.exact`) larger than this, and grids (:meth:`RecourseProblem.with_grid`) whose
#: plan MDP would be larger in its first step alone
MAX_STATES = 2_000_000

#: the objectives a problem can minimize, in the order of the objective vector F
OBJECTIVES = ("cost", "gower", "freq")


# ================================================================================================ features
@dataclass(frozen=True)
class Feature:
    """One feature X_h: numeric (a real value) or categorical (the index of one of ``categories``).

    ``lower``/``upper`` bound a numeric feature; they give its Gower range R_h = upper - lower unless the problem
    gives ranges explicitly.
    """

    name: str
    categories: tuple[str, ...] = ()
    lower: float | None = None
    upper: float | None = None

    @classmethod
    def numeric(cls, name: str, lower: float | None = None, upper: float | None = None) -> "Feature":
        return cls(name, (), lower, upper)

    @classmethod
    def categorical(cls, name: str, categories: Sequence[str]) -> "Feature":
        return cls(name, tuple(str(c) for c in categories))

    @property
    def is_categorical(self) -> bool:
        return bool(self.categories)

    def code(self, category: str) -> int:
        """The index that stands for ``category`` in a state."""
        try:
            return self.categories.index(category)
        except ValueError:
            raise RecourseError(f"feature '{self.name}' has no category {category!r} "
                                f"(categories: {', '.join(self.categories)})") from None

    def text(self, value: float) -> str:
        """A value of this feature for people: the category name, or the number (6 significant digits)."""
        if self.is_categorical:
            return self.categories[int(value)]
        return f"{value:.6g}"


# ================================================================================================ actions
Effect = Callable[[Rows, np.ndarray], Mapping[str, Any]]
Effort = Callable[[Rows, Rows, np.ndarray], np.ndarray]
Precondition = Callable[[Rows], np.ndarray]
Postcondition = Callable[[Rows, Rows, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Action:
    """An action a_i with its tweaking values V_i, effect, effort b_i and conditions C_i (all vectorised).

    Attributes:
        name: the action's name (as in the paper's Sankey plots: ``addEdu``).
        domain: the tweaking values.
        effect: ``effect(x, v) -> {feature: new values}``: the changed features (main feature and side effects) of
            the states ``x`` for the values ``v``; scalars broadcast.
        effort: ``effort(x, y, v) -> b``: b_i(x_{t-1}, x_t) >= 0 per state.
        pre: ``pre(x) -> bool`` per state (pre-requirement), or None.
        post: ``post(x, y, v) -> bool`` per state (post-requirement, may check side effects), or None.
        feature: the main feature (what the value tweaks), for the text.
    """

    name: str
    domain: ValueDomain
    effect: Effect
    effort: Effort
    pre: Precondition | None = None
    post: Postcondition | None = None
    feature: str | None = None


def set_to(feature: str) -> Effect:
    """The effect "feature := v" (absolute tweaking values, as the paper's Fig. 3)."""
    return lambda x, v: {feature: v}


def add(feature: str, scale: float = 1.0) -> Effect:
    """The effect "feature += scale·v" (relative tweaking values, as the experiments' z-space deltas)."""
    return lambda x, v: {feature: x[feature] + scale * v}


# ================================================================================================ relation graph
Tau = Callable[[Rows], np.ndarray]


@dataclass(frozen=True)
class RelationGraph:
    """The feature relationship graph G: an edge k -> h with τ_kh(x) in [0, 1] says "the value of k makes changing h
    easier" (0: free, 1: no help). ``edges`` maps (k, h) to τ_kh, vectorised over states."""

    edges: Mapping[tuple[str, str], Tau] = field(default_factory=dict)

    @property
    def targets(self) -> tuple[str, ...]:
        """The features with at least one incoming edge, in first-seen order."""
        return tuple(dict.fromkeys(h for _, h in self.edges))

    def incoming(self, h: str) -> list[tuple[str, Tau]]:
        return [(k, tau) for (k, target), tau in self.edges.items() if target == h]


# ================================================================================================ rounding
@dataclass(frozen=True)
class Rounding:
    """The roundings of the authors' code (notes §2.4 item 4), for replication: states to ``state`` decimals after
    every action, a feature counts as changed only if it moved by at least ``change`` (absolute), per-step efforts to
    ``effort`` decimals, Gower to ``gower`` decimals. ``None`` everywhere is exact (stormcf's default)."""

    state: int | None = None
    change: float = 0.0
    effort: int | None = None
    gower: int | None = None


#: what the seed authors' code does
AUTHORS_ROUNDING = Rounding(state=3, change=0.1, effort=4, gower=2)


# ================================================================================================ the problem
Classifier = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class RecourseProblem:
    """A sequential recourse problem given by Python components (notes §5.3 item 1).

    Attributes:
        features: the features X_1..X_d in the column order of states.
        x0: the instance, by feature name (categories by name or index).
        classifier: f on a batch of states (an (n, d) float array in feature order, categories as indices) ->
            labels; a scikit-learn estimator (its ``predict``) works when trained on that representation.
        target: the desired label y*.
        actions: the actions A (at most one use each in a plan).
        graph: the relation graph G (None: no consequence discounts).
        discounted: o_1 is the discounted cost Σ b·g ("cscf", default) or the plain effort Σ b ("scf").
        objectives: which objectives are minimized, a subset of ``("cost", "gower", "freq")`` (cost is required).
        gower_ranges: R_h per numeric feature (default: the feature's upper - lower).
        rounding: the authors' roundings for replication (default: exact).
        name: how the instance is called in texts.
    """

    features: Sequence[Feature]
    x0: Mapping[str, Any]
    classifier: Classifier | Any
    target: Any
    actions: Sequence[Action]
    graph: RelationGraph | None = None
    discounted: bool = True
    objectives: Sequence[str] = OBJECTIVES
    gower_ranges: Mapping[str, float] | None = None
    rounding: Rounding = Rounding()
    name: str = "x0"
    _x0: np.ndarray = field(init=False, repr=False)
    _ranges: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        set_("features", tuple(self.features))
        set_("actions", tuple(self.actions))
        set_("objectives", parse_objectives(self.objectives))
        names = [f.name for f in self.features]
        if len(set(names)) != len(names) or not names:
            raise RecourseError(f"feature names must be distinct and non-empty, got {names}")
        _check_actions(self.actions)
        graph = self.graph or RelationGraph()
        set_("graph", graph)
        for k, h in graph.edges:
            for end in (k, h):
                if end not in names:
                    raise RecourseError(f"relation graph edge {k} -> {h}: unknown feature '{end}'")
        set_("x0", dict(self.x0))
        set_("_x0", self._state_of(self.x0))
        set_("_ranges", self._gower_ranges())
        if not (callable(self.classifier) or hasattr(self.classifier, "predict")):
            raise RecourseError("the classifier must be a callable on feature rows or have a predict method")

    # ------------------------------------------------------------------------------------------ validation
    def _state_of(self, x0: Mapping[str, Any]) -> np.ndarray:
        unknown = sorted(set(x0) - {f.name for f in self.features})
        if unknown:
            raise RecourseError(f"x0 names unknown feature '{unknown[0]}'")
        row = np.empty(len(self.features))
        for j, f in enumerate(self.features):
            if f.name not in x0:
                raise RecourseError(f"x0 has no value for feature '{f.name}'")
            value = x0[f.name]
            if f.is_categorical:
                row[j] = f.code(value) if isinstance(value, str) else _category_index(f, value)
            else:
                if isinstance(value, (bool, str)) or not np.isfinite(float(value)):
                    raise RecourseError(f"x0: feature '{f.name}' needs a finite number, got {value!r}")
                row[j] = float(value)
        return row

    def _gower_ranges(self) -> np.ndarray:
        given = dict(self.gower_ranges or {})
        unknown = sorted(set(given) - {f.name for f in self.features})
        if unknown:
            raise RecourseError(f"Gower range for unknown feature '{unknown[0]}'")
        ranges = np.zeros(len(self.features))
        for j, f in enumerate(self.features):
            if f.is_categorical:
                continue
            if f.name in given:
                r = float(given[f.name])
            elif f.lower is not None and f.upper is not None:
                r = float(f.upper) - float(f.lower)
            else:
                raise RecourseError(f"numeric feature '{f.name}' needs a Gower range: give lower/upper bounds or "
                                    f"gower_ranges['{f.name}']")
            if not np.isfinite(r) or r < 0:
                raise RecourseError(f"Gower range of '{f.name}' must be a finite number >= 0, got {r}")
            ranges[j] = r
        return ranges

    # ------------------------------------------------------------------------------------------ accessors
    @property
    def state0(self) -> np.ndarray:
        """x_0 as a row of feature values (categories as indices)."""
        return self._x0

    @property
    def ranges(self) -> np.ndarray:
        """R_h per feature (0 for categorical features, whose s_h is [x_h != x0_h])."""
        return self._ranges

    @cached_property
    def index(self) -> dict[str, int]:
        return {f.name: j for j, f in enumerate(self.features)}

    @cached_property
    def categorical(self) -> np.ndarray:
        return np.array([f.is_categorical for f in self.features])

    @property
    def action_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actions)

    @property
    def domains(self) -> tuple[ValueDomain, ...]:
        return tuple(a.domain for a in self.actions)

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)

    def predict(self, states: np.ndarray) -> np.ndarray:
        """f on a batch of states."""
        f = self.classifier.predict if hasattr(self.classifier, "predict") else self.classifier
        return np.asarray(f(states))

    def accepts(self, states: np.ndarray) -> np.ndarray:
        """[f(x) = y*] per state."""
        return self.predict(states) == self.target

    def with_grid(self, points: int) -> "RecourseProblem":
        """The same problem with every interval of tweaking values discretised into ``points`` values (a finite
        problem: brute force and Storm's exact optimum apply). The plan MDP's first step alone has a state per value
        of every interval action: a grid that makes it larger than the plan MDP may be is refused before it is
        allocated."""
        intervals = sum(1 for a in self.actions if not a.domain.is_finite)
        if intervals and points * intervals > MAX_STATES:
            raise RecourseError(f"a grid of {points:,} values for {intervals} interval actions gives the plan MDP "
                                f"{points * intervals:,} states in its first step alone; at most {MAX_STATES:,} "
                                f"(use at most {MAX_STATES // intervals:,} values)")
        actions = [Action(a.name, a.domain.grid(points), a.effect, a.effort, a.pre, a.post, a.feature)
                   for a in self.actions]
        return _replace(self, actions=actions)

    def variant(self, **changes: Any) -> "RecourseProblem":
        """The same problem with some attributes changed (validated again), e.g. ``variant(discounted=False)``."""
        return _replace(self, **changes)

    @property
    def is_finite(self) -> bool:
        return all(a.domain.is_finite for a in self.actions)

    def evaluate(self, plans: "Plans") -> "Evaluation":
        """The objectives of a batch of plans (:func:`~stormcf.recourse.objectives.simulate`)."""
        return simulate(self, plans).evaluation


def _replace(problem: RecourseProblem, **changes: Any) -> RecourseProblem:
    fields = {k: getattr(problem, k) for k in ("features", "x0", "classifier", "target", "actions", "graph",
                                               "discounted", "objectives", "gower_ranges", "rounding", "name")}
    fields.update(changes)
    return RecourseProblem(**fields)


def _category_index(feature: Feature, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < len(feature.categories):
        raise RecourseError(f"x0: feature '{feature.name}' needs one of {', '.join(feature.categories)}, got {value!r}")
    return int(value)


def _check_actions(actions: Sequence[Action]) -> None:
    names = [a.name for a in actions]
    if not names:
        raise RecourseError("a recourse problem needs at least one action")
    if len(set(names)) != len(names):
        raise RecourseError(f"action names must be distinct, got {names}")
    for a in actions:
        if not isinstance(a.domain, ValueDomain):
            raise RecourseError(f"action '{a.name}': domain must be a ValueDomain")


def parse_objectives(objectives: Sequence[str] | str) -> tuple[str, ...]:
    """Objective names (a sequence or ``"cost,gower,freq"``) in the canonical order; cost is required."""
    if isinstance(objectives, str):
        objectives = [o.strip() for o in objectives.split(",") if o.strip()]
    unknown = [o for o in objectives if o not in OBJECTIVES]
    if unknown:
        raise RecourseError(f"unknown objective '{unknown[0]}': use {', '.join(OBJECTIVES)}")
    if "cost" not in objectives:
        raise RecourseError("the objectives must include cost")
    return tuple(o for o in OBJECTIVES if o in objectives)
