"""Model checking with Storm: properties on models and induced DTMCs (float or exact), reachability, schedulers,
prob0/1 sets, interval MDPs.

Every model-checking call runs in a child process stopped at the command's deadline (:mod:`.isolate`). A check of an
unbounded property (reachability, expected rewards, long-run averages, conditional probabilities) is answered by the
first of several engines: Storm's sound default for it (topological optimistic value iteration, the long-run average
solver, the conditional algorithm), and, when that has not answered after :func:`fallback_after` CPU seconds (each
can crawl on stiff chains; CPU, not wall time: a loaded machine does not start a second check beside a first that
does not crawl), exact rational arithmetic on small models (at most :data:`EXACT_FALLBACK_STATES` states),
Storm's sparse LU solves (:data:`SPARSE_LU`, a direct method that cannot crawl) and, beside optimistic value
iteration, Storm's sound value iteration. The result says which engine answered (:attr:`CheckResult.method`).
"""
from __future__ import annotations

import functools
import json
import re
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
import stormpy
from stormpy.models import SparseDtmc, SparseMdp, SparseModelComponents, SparseRewardModel

from ..errors import PropertyError, StormcfError
from ..model import ExplicitModel
from ..properties import FILTER_KINDS, Property, relative_error
from .build import (dtmc, exact_state_rewards, exact_storm_model, handle_of, sparse_matrix, state_labeling,
                    storm_rational)
from .handle import bitvector_mask, labelled_model, storm_message
from .isolate import Engine, first_answer, isolated
from .rewards import refuse_unsound

#: relative precision of Storm's sound value iterations for floating-point checks
PRECISION = Fraction(1, 10**10)
#: relative precision of Storm's long-run average solver: its default, which stormpy 2.0 does not let us set
LRA_PRECISION = Fraction(1, 10**6)
#: models of at most this many states fall back to exact rational arithmetic when value iteration is slow
EXACT_FALLBACK_STATES = 5_000
#: the fallback engines start after this many CPU seconds of the first, plus :data:`FALLBACK_PER_TRANSITION` per
#: transition
FALLBACK_AFTER, FALLBACK_PER_TRANSITION = 1.0, 1e-6
#: exact values have many thousand digits (a 400-state grid: 7,089), beyond Python's default limit on converting
#: integers from and to text (4,300 digits, against denial of service by untrusted input): Storm's rationals are
#: read and their fractions printed (JSON) without that limit
sys.set_int_max_str_digits(0)
#: the engines' names, as results report them
OPTIMISTIC = f"Storm, topological optimistic value iteration (sound, relative precision {float(PRECISION):g})"
SOUND = f"Storm, sound value iteration (relative precision {float(PRECISION):g})"
EXACT = "Storm, exact rational arithmetic"
EXACT_ON_FLOATS = "Storm, exact rational arithmetic on the floating-point probabilities"
LRA = f"Storm, long-run average solver (its default relative precision {float(LRA_PRECISION):g})"
FINITE_HORIZON = "Storm, finite-horizon iteration (floating point)"
INTERVAL_VALUE_ITERATION = "Storm, finite-horizon robust value iteration on the interval MDP (floating point)"
SPARSE_LU = ("Storm, sparse LU solves of the linear equation systems (Eigen's SparseLU; policy iteration on MDPs; "
             "floating point, a direct method without an error bound)")
CONDITIONAL = (f"Storm, conditional probability by Baier et al.'s transformation (on MDPs its restart method), value "
               f"iteration at relative precision {float(PRECISION):g} (Storm bounds the error of the final solve, not of "
               f"the transformation's own approximations)")
#: the engines that iterate to a precision and can crawl on stiff chains: fallback engines start beside them
CRAWLING = (OPTIMISTIC, LRA, CONDITIONAL)
#: the relative precision of a sparse LU solve's values for bound decisions: a direct method has no error bound
#: (on stiff.pm, condition number about 1e9, it lost 7 digits), so a bound within 1e-6 of its value is undecided
SPARSE_LU_PRECISION = Fraction(1, 10**6)
#: the relative precision of each engine's values (None: exact), from which a value's error interval comes: Storm's
#: precision setting for value iteration and the conditional algorithm, its default for long-run averages; the
#: finite-horizon iteration and exact arithmetic on floating-point probabilities err by rounding only, which stormcf
#: bounds by the same relative 1e-10; the sparse LU solves by :data:`SPARSE_LU_PRECISION`
PRECISIONS: dict[str, Fraction | None] = {OPTIMISTIC: PRECISION, SOUND: PRECISION, CONDITIONAL: PRECISION,
                                          FINITE_HORIZON: PRECISION, EXACT_ON_FLOATS: PRECISION, LRA: LRA_PRECISION,
                                          SPARSE_LU: SPARSE_LU_PRECISION, EXACT: None}


@dataclass(frozen=True)
class CheckResult:
    """A Storm model-checking result.

    ``values`` holds the quantitative result of every state (``None`` for state formulas); ``exact`` the same as
    Fractions when the check was exact; ``holds`` the truth value of a state formula in every state, and of a
    bounded property where Storm decides it exactly by graph analysis (:func:`storm_decides`), else None (the
    bound is decided from the values: :meth:`~stormcf.properties.Property.decide`); ``method`` how Storm computed
    it (one of the engine names of this module, whose precision :data:`PRECISIONS` gives).
    """

    values: np.ndarray | None
    exact: tuple[Fraction | float, ...] | None
    holds: np.ndarray | None
    method: str = ""
    filtered: "FilterResult | None" = None


@dataclass(frozen=True)
class FilterResult:
    """Storm's answer to a filtered property ``filter(kind, φ, states)`` (Storm's own aggregates of its result).

    ``states``: the states of the filter (indices); ``value``: the aggregate (max, min, sum, avg of φ's values;
    count of the states where φ holds; 1.0/0.0 for forall/exists), None for ``values``; ``exact``: the same as a
    Fraction when the check was exact; ``holds``: the truth of forall/exists; ``values``/``exact_values``: for
    ``values``, φ's value (or truth, 1.0/0.0, NaN where undecided) in each of ``states``; ``undecided``: why truth
    values in floating point are undecided (φ's value within its precision of the bound somewhere), else ""."""

    kind: str
    states: np.ndarray
    value: float | None = None
    exact: Fraction | None = None
    holds: bool | None = None
    values: np.ndarray | None = None
    exact_values: tuple[Fraction | float, ...] | None = None
    undecided: str = ""


def storm_environment(exact: bool, method: str = OPTIMISTIC):
    if exact:
        return stormpy.environments.exact()
    if method == SPARSE_LU:
        return _sparse_lu_environment()
    env = stormpy.environments.sound()
    precision = stormpy.Rational(f"{PRECISION.numerator}/{PRECISION.denominator}")
    env.solver().min_max().precision = precision
    env.solver().native().precision = precision
    if method == SOUND:
        env.solver().native().method = stormpy.environments.NativeLinearEquationSolverMethod.SOUND_VALUE_ITERATION
        env.solver().min_max().method = stormpy.environments.MinMaxMethod.SOUND_VALUE_ITERATION
    conditional = env.modelchecker().conditional()      # Storm's conditional algorithm has its own precision
    conditional.precision = precision                   # (default 1e-6), which overrides the solvers' above
    conditional.relative_precision = True
    return env


def _sparse_lu_environment():
    """Storm's environment of :data:`SPARSE_LU`: linear equation systems solved by Eigen's SparseLU, and MDPs by
    policy iteration over such solves. stormpy 2.0 sets Eigen's method only through Storm's settings, which are
    global and can be given once per process (:func:`_sparse_lu_settings`); the engines run in child processes
    (:func:`~.isolate.first_answer`), so the settings never reach this process's other checks (whose environments
    do not read them anyway)."""
    _sparse_lu_settings()
    return stormpy.developer.EnvironmentBuilder.build_environment()


@functools.cache
def _sparse_lu_settings() -> None:
    stormpy.developer.set_from_exploded_string(["--eqsolver", "eigen", "--eigen:method", "sparselu",
                                                "--minmax:method", "pi"])


def float_method(prop: Property) -> str:
    """How Storm's floating-point check of ``prop`` computes: finite-horizon iteration for step-bounded and
    cumulative properties, the long-run average solver, the conditional algorithm, else optimistic value
    iteration."""
    if prop.path == "long_run_average":
        return LRA
    if prop.path == "conditional":
        return CONDITIONAL
    if prop.path in ("bounded_until", "cumulative", "instantaneous", "next") or prop.step_bound is not None:
        return FINITE_HORIZON
    return OPTIMISTIC


def fallback_after(n_transitions: int) -> float:
    """CPU seconds of the first engine after which a check's fallback engines start beside it."""
    return FALLBACK_AFTER + FALLBACK_PER_TRANSITION * n_transitions


def check(model: ExplicitModel, prop: Property) -> CheckResult:
    """Model-check a property on the model itself (an MDP needs ``min``/``max``; Storm says so otherwise)."""
    require_checkable(model, prop)
    storm_model = labelled_model(handle_of(model), prop.labels)
    return _first(model, prop, lambda method: _check_storm(storm_model, model, prop, False, method),
                  Engine(EXACT, lambda: _exact_check(model, prop)))


def _first(model: ExplicitModel, prop: Property, float_check: Callable[[str], CheckResult],
           exact: Engine) -> CheckResult:
    """The answer of the first engine: ``float_check(float_method(prop))``, or, for a method that can crawl
    (:data:`CRAWLING`), a fallback started after :func:`fallback_after` CPU seconds: the ``exact`` engine on small
    models, :data:`SPARSE_LU` (on small models once more that long later: exact arithmetic answers them best), and
    :data:`SOUND` value iteration beside optimistic value iteration."""
    method = float_method(prop)
    engines = [Engine(method, lambda: float_check(method))]
    if method in CRAWLING:
        after = fallback_after(model.n_transitions)
        small = model.n_states <= EXACT_FALLBACK_STATES
        engines.append(Engine(SPARSE_LU, lambda: float_check(SPARSE_LU), start_after=2 * after if small else after))
        if small:
            engines.append(replace(exact, start_after=after))
        if method == OPTIMISTIC:
            engines.append(Engine(SOUND, lambda: float_check(SOUND), start_after=after))
    result, engine = first_answer(engines, f"checking {prop.text}")
    return replace(result, method=engine.method)


def _check_storm(storm_model, model: ExplicitModel, prop: Property, exact: bool,
                 method: str | None = None) -> CheckResult:
    """Check ``prop`` on ``storm_model`` (the model, or a DTMC over the same states) in this process. Reward-bounded
    properties are answered as Storm answers them, for the initial state only (``values`` holds NaN elsewhere)."""
    require_checkable(model, prop)
    method = method or (EXACT if exact else float_method(prop))
    env = storm_environment(exact, method)
    if prop.filter is not None:
        return replace(_check_filtered(storm_model, model, prop, env, exact, method), method=method)
    formula = prop.storm.get_raw_formula()
    n = model.n_states
    initial_only = prop.initial_state_only
    try:
        holds = None
        if prop.operator is None:
            result = stormpy.model_checking(storm_model, formula, environment=env)
            return CheckResult(None, None, bitvector_mask(result.get_truth_values_vector(), n), method)
        if prop.has_bound:
            if not exact and storm_decides(prop):
                qualitative = stormpy.model_checking(storm_model, formula, environment=env,
                                                     only_initial_states=initial_only)
                holds = _truth_values(qualitative, n, model.initial_state, initial_only)
            formula = _without_bound(storm_model, prop)
        result = stormpy.model_checking(storm_model, formula, environment=env, only_initial_states=initial_only)
    except Exception as err:
        raise PropertyError(f"Storm cannot check {prop.text} here: {storm_message(err)}") from None
    if result.is_pareto_curve_check_result() or not result.is_quantitative():
        raise PropertyError(f"Storm's answer to {prop.text} is not a number (e.g. a multi-dimensional quantile); "
                            f"stormcf reports numbers only")
    raw = result.get_value_vector()
    if initial_only:
        raw = _initial_only(result, n, model.initial_state)
    if exact:
        fractions = tuple(_fraction(v) for v in raw)
        return CheckResult(np.array([float(f) for f in fractions]), fractions, None, method)
    return CheckResult(np.array(raw, dtype=float), None, holds, method)


def storm_decides(prop: Property) -> bool:
    """Whether Storm decides the bound of ``prop`` exactly whatever its values' precision: ``P ⋈ 0`` and ``P ⋈ 1``
    of (unbounded) reachability, which Storm answers by graph analysis (its qualitative mode)."""
    return prop.operator == "P" and prop.threshold in (0, 1) and prop.path in ("eventually", "until")


def _without_bound(storm_model, prop: Property):
    """The formula of a bounded property without its bound, for its value. On a model with nondeterminism a bound
    without ``min``/``max`` must hold for every scheduler, so Storm decides it by the optimum
    :attr:`~stormcf.properties.Property.bound_optimum` (``P>=b``: Pmin, ``P<=b``: Pmax): the value is that one."""
    formula = prop.storm.get_raw_formula().clone()
    formula.remove_bound()
    if storm_model.is_nondeterministic_model and prop.bound_optimum is not None:
        formula.set_optimality_type(stormpy.logic.OptimizationDirection.MINIMIZE if prop.bound_optimum == "min"
                                    else stormpy.logic.OptimizationDirection.MAXIMIZE)
    return formula


def _check_filtered(storm_model, model: ExplicitModel, prop: Property, env, exact: bool, method: str) -> CheckResult:
    """``filter(kind, φ, states)`` as Storm's command line answers it: φ checked in every state (with its bound: a
    truth value per state), restricted to the states where the states formula holds, then aggregated by Storm's
    own functions of the result (max, min, sum, avg of values; count, forall, exists of truth values). A count,
    forall or exists in floating point is undecided when φ's value in one of the states is within its precision of
    φ's bound (:func:`_undecided_in`)."""
    state_filter = prop.filter
    assert state_filter is not None                 # _check_storm sends filter properties only
    kind = state_filter.kind
    try:
        result = stormpy.model_checking(storm_model, prop.storm.get_raw_formula(), environment=env)
        states = stormpy.model_checking(storm_model, state_filter.storm, environment=env)
        indices = np.flatnonzero(bitvector_mask(states.get_truth_values_vector(), model.n_states))
        if not indices.size and kind in ("max", "min", "avg"):
            raise PropertyError(f"{prop.text}: no state satisfies {state_filter.states}, and the {kind} of no value "
                                f"is not defined")
        truth = None if result.is_quantitative() else bitvector_mask(result.get_truth_values_vector(), model.n_states)
        result.filter(states)
        if result.is_quantitative():
            if FILTER_KINDS[kind] == "truth":
                raise PropertyError(f"{prop.text}: filter {kind} counts the states where a property holds; "
                                    f"{prop.storm.get_raw_formula()} has values, not truth values (give it a bound)")
            if kind == "values":
                raw = [result.get_value(int(s)) for s in indices]
                return _filter_result(kind, indices, values=raw, exact=exact)
            aggregate = {"max": result.get_max, "min": result.get_min, "sum": result.sum, "avg": result.average}
            return _filter_result(kind, indices, value=aggregate[kind](), exact=exact)
        if FILTER_KINDS[kind] == "number":
            raise PropertyError(f"{prop.text}: filter {kind} aggregates values; {prop.storm.get_raw_formula()} has "
                                f"truth values (drop its bound, or use forall, exists or count)")
        near, undecided = (np.zeros(indices.size, bool), "") if exact else \
            _undecided_in(storm_model, prop, env, indices, method)
        assert truth is not None                # the result has truth values (it is not quantitative)
        if kind == "values":                   # a truth value within precision of the bound is NaN: undecided
            values = np.where(near, np.nan, truth[indices].astype(float))
            return _filter_result(kind, indices, values=values.tolist(), exact=False, undecided=undecided)
        if kind == "count":
            return _filter_result(kind, indices, value=result.count(), exact=exact, undecided=undecided)
        holds = bool(result.forall_true() if kind == "forall" else result.exists_true())
        return _filter_result(kind, indices, value=float(holds), exact=False, holds=None if undecided else holds,
                              undecided=undecided)
    except PropertyError:
        raise
    except Exception as err:
        raise PropertyError(f"Storm cannot check {prop.text} here: {storm_message(err)}") from None


def _undecided_in(storm_model, prop: Property, env, states: np.ndarray, method: str) -> tuple[np.ndarray, str]:
    """Where Storm's floating-point truth values of a bounded φ cannot be trusted among ``states`` (a mask over
    them: φ's value within its precision, :data:`PRECISIONS`, of the bound) and why; none when Storm decides the
    bound exactly (:func:`storm_decides`)."""
    near = np.zeros(states.size, dtype=bool)
    precision = PRECISIONS[method]
    if not prop.has_bound or storm_decides(prop) or precision is None:     # precision None: an exact method
        return near, ""
    result = stormpy.model_checking(storm_model, _without_bound(storm_model, prop), environment=env)
    for k, s in enumerate(states.tolist()):
        value = float(result.get_value(s))
        near[k] = prop.decide(value, relative_error(value, precision)) is None
    if not near.any():
        return near, ""
    return near, (f"undecided at relative precision {float(precision):g}: the bound {prop.threshold} lies within the "
                  f"error interval of Storm's floating-point value in {int(near.sum())} of the filter's states")


def _filter_result(kind: str, states: np.ndarray, *, value=None, values=None, exact: bool,
                   holds: bool | None = None, undecided: str = "") -> CheckResult:
    """A filter's answer as Storm gave it (Storm numbers: rationals when ``exact``, as Fractions)."""
    if exact:
        value = None if value is None else _fraction(value)
        values = None if values is None else tuple(_fraction(v) for v in values)
    filtered = FilterResult(kind, states, None if value is None else float(value),
                            value if isinstance(value, Fraction) else None, holds,
                            None if values is None else np.array([float(v) for v in values], dtype=float),
                            values if exact else None, undecided)
    return CheckResult(None, None, None, filtered=filtered)


def require_checkable(model: ExplicitModel, prop: Property) -> None:
    """Refuse (:class:`PropertyError`, one line) what Storm cannot answer for this model, before asking it."""
    if prop.operator == "multi":
        raise PropertyError(f"{prop.text} is a multi-objective query: Storm answers it on an MDP as a whole "
                            f"(stormcf.storm.check_multiobjective), not as one value")
    refuse_unsound(model, prop)


def _truth_values(result, n: int, initial: int, initial_only: bool) -> np.ndarray:
    if not initial_only:
        return bitvector_mask(result.get_truth_values_vector(), n)
    holds = np.zeros(n, dtype=bool)
    holds[initial] = bool(result[initial])
    return holds


def _initial_only(result, n: int, initial: int) -> list:
    """A result Storm computed for the initial state only, as a vector with NaN elsewhere."""
    values = [float("nan")] * n
    values[initial] = result.get_value(initial)
    return values


def _fraction(value) -> Fraction | float:
    """A Storm rational as a Fraction (infinite expected rewards stay ``inf``)."""
    text = str(value)
    return float(text) if text in ("inf", "-inf", "nan") else Fraction(text)


def check_dtmc(P: sp.csr_matrix, model: ExplicitModel, prop: Property, state_rewards: Mapping[str, np.ndarray],
               choice_rewards: Mapping[str, np.ndarray], exact_P: Sequence[Fraction] | None = None,
               exact_choice_rewards: Mapping[str, Sequence[Fraction]] | None = None) -> CheckResult:
    """Build the DTMC with transition matrix ``P`` (n x n CSR, the labels and initial state of ``model``) in Storm
    and model-check ``prop`` on it.

    Rewards: per reward model, a state-reward vector and a state-action-reward vector (one entry per state).
    In floating point the DTMC is written in bulk (:func:`~stormcf.storm.build.dtmc`); when value iteration is slow,
    small DTMCs are checked in exact arithmetic on their floating-point probabilities (the method says so). With
    ``exact_P`` (Fractions aligned with ``P.data``) it is built over ``stormpy.Rational`` and checked in exact
    arithmetic, with the model's state rewards as Storm's rational build has them; the result's ``exact`` holds the
    fractions.
    """
    require_checkable(model, prop)
    if exact_P is not None:
        exact_state = {name: exact_state_rewards(model, name) or state_rewards[name] for name in state_rewards}
        return isolated(lambda: _exact_dtmc_check(P, model, prop, exact_state, choice_rewards, exact_P,
                                                  exact_choice_rewards), f"checking {prop.text} exactly")
    labels = {**model.labels, **prop.labels}

    def float_check(method: str) -> CheckResult:
        storm_dtmc = dtmc(P, labels, model.initial_state, state_rewards, choice_rewards)
        return _check_storm(storm_dtmc, model, prop, False, method)

    def exact_on_floats() -> CheckResult:
        fractions = [Fraction(x) for x in P.data.tolist()]
        result = _exact_dtmc_check(P, model, prop, state_rewards, choice_rewards, fractions, None)
        return replace(result, exact=None)

    return _first(model, prop, float_check, Engine(EXACT_ON_FLOATS, exact_on_floats))


def _exact_dtmc_check(P: sp.csr_matrix, model: ExplicitModel, prop: Property,
                      state_rewards: Mapping[str, Sequence | np.ndarray],
                      choice_rewards: Mapping[str, np.ndarray], exact_P: Sequence[Fraction],
                      exact_choice_rewards: Mapping[str, Sequence[Fraction]] | None) -> CheckResult:
    choice = {name: (exact_choice_rewards or {}).get(name, choice_rewards[name]) for name in choice_rewards}
    storm_dtmc = _exact_model_of_arrays(P, None, {**model.labels, **prop.labels}, model.initial_state, exact_P,
                                        state_rewards, choice)
    return _check_storm(storm_dtmc, model, prop, exact=True)


def _exact_model_of_arrays(P: sp.csr_matrix, row_groups: np.ndarray | None, labels: Mapping[str, np.ndarray],
                           initial: int, exact_P: Sequence[Fraction], state_rewards: Mapping[str, Sequence | np.ndarray],
                           choice_rewards: Mapping[str, Sequence | np.ndarray]):
    """A Storm model over ``stormpy.Rational`` with the structure of ``P`` (a DTMC, or an MDP with ``row_groups``),
    the values ``exact_P`` (aligned with ``P.data``) and reward models of per-state and per-choice rewards."""
    matrix = sparse_matrix(P, row_groups, stormpy.Rational, [storm_rational(x) for x in exact_P])
    reward_models = {}
    for name in set(state_rewards) | set(choice_rewards):
        kwargs = {}
        if name in state_rewards:
            kwargs["optional_state_reward_vector"] = [storm_rational(x) for x in state_rewards[name]]
        if name in choice_rewards:
            kwargs["optional_state_action_reward_vector"] = [storm_rational(x) for x in choice_rewards[name]]
        reward_models[name] = SparseRewardModel[stormpy.Rational](**kwargs)
    comps = SparseModelComponents[stormpy.Rational](transition_matrix=matrix,
                                                    state_labeling=state_labeling(labels, initial, P.shape[1]),
                                                    reward_models=reward_models)
    return (SparseDtmc if row_groups is None else SparseMdp)[stormpy.Rational](comps)


def exact_optimal_choices(model: ExplicitModel, exact_P: Sequence[Fraction], prop: Property,
                          choice_rewards: Mapping[str, Sequence[Fraction]] | None = None
                          ) -> tuple[tuple[Fraction | float, ...], np.ndarray]:
    """Storm's optimum of ``prop`` (``Pmin=?``, ``R{"r"}max=?``, ...) in exact rational arithmetic on the MDP with the
    structure, labels and initial state of ``model``, the transition probabilities ``exact_P`` (aligned with
    ``model.transitions.data``) and the per-choice rewards ``choice_rewards``: the value of every state (Fractions;
    ``inf`` for infinite rewards) and the row an optimal memoryless deterministic scheduler (Storm's, exact)
    chooses in every state."""
    require_checkable(model, prop)

    def compute() -> tuple[tuple[Fraction | float, ...], np.ndarray]:
        storm_mdp = _exact_model_of_arrays(model.transitions, model.row_groups, {**model.labels, **prop.labels},
                                           model.initial_state, exact_P, {}, choice_rewards or {})
        try:
            result = stormpy.model_checking(storm_mdp, prop.storm.get_raw_formula(), extract_scheduler=True,
                                            environment=storm_environment(True))
        except Exception as err:
            raise PropertyError(f"Storm cannot check {prop.text} here: {storm_message(err)}") from None
        values = tuple(_fraction(v) for v in result.get_value_vector())
        return values, _scheduler_rows(model, storm_mdp, result, prop.text)
    return isolated(compute, f"computing {prop.text} exactly")


def check_exact(model: ExplicitModel, prop: Property) -> CheckResult:
    """Model-check a property on the model itself in exact rational arithmetic."""
    require_checkable(model, prop)
    return isolated(lambda: _exact_check(model, prop), f"checking {prop.text} exactly")


def _exact_check(model: ExplicitModel, prop: Property) -> CheckResult:
    exact_storm_model(model)
    return _check_storm(labelled_model(handle_of(model), prop.labels, exact=True), model, prop, exact=True)


# ================================================================================================== reachability
#: the label of the bridge's copy of a model that marks a reachability target given as a mask
TARGET_LABEL = "__stormcf_target"


def _reachability(model: ExplicitModel, target: np.ndarray, direction: str) -> tuple[object, str]:
    """The Storm model to check ``P.. [F target]`` on, and that property: a label of the model itself when one
    holds exactly on ``target``, else the bridge's copy with :data:`TARGET_LABEL` set to ``target``."""
    op = "P" if model.model_type == "dtmc" else ("Pmin" if direction == "min" else "Pmax")
    handle = handle_of(model)
    for name, mask in model.labels.items():      # expression labels such as "(s = 8)" cannot be quoted in a property
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and np.array_equal(mask, target):
            return handle.model, f'{op}=? [F "{name}"]'
    return labelled_model(handle, {TARGET_LABEL: target}), f'{op}=? [F "{TARGET_LABEL}"]'


def reach_values(model: ExplicitModel, target: np.ndarray, direction: str, scheduler: bool = False):
    """Pmin/Pmax (``direction`` ``"min"``/``"max"``) of ``F target`` in every state, by Storm.

    Returns ``(values, choices)``: ``choices`` is, with ``scheduler=True``, the row chosen by an optimal
    memoryless deterministic scheduler in every state (else ``None``).
    """
    storm_model, text = _reachability(model, target, direction)

    def compute():
        try:
            result = stormpy.model_checking(storm_model, stormpy.parse_property(text), extract_scheduler=scheduler,
                                            environment=storm_environment(False))
        except Exception as err:
            raise StormcfError(f"Storm failed on {text}: {storm_message(err)}") from None
        values = np.array(result.get_value_vector(), dtype=float)
        return values, (_scheduler_rows(model, storm_model, result, text) if scheduler else None)
    return isolated(compute, f"computing {text}")


@dataclass(frozen=True)
class SchedulerChoices:
    """An optimal memoryless scheduler Storm computed, as stormcf's arrays.

    ``values``: Storm's optimal value of every state; ``probabilities``: σ(row) for every choice (Storm's randomised
    choices as distributions); ``open_states``: the states where Storm left the choice open (its schedulers are
    partial where the value does not depend on the choice); σ plays their first choice, as Storm does when it
    completes a partial scheduler."""

    values: np.ndarray
    probabilities: np.ndarray
    open_states: np.ndarray

    @property
    def deterministic(self) -> bool:
        return bool(np.all((self.probabilities == 0) | (self.probabilities == 1)))

    @property
    def rows(self) -> np.ndarray:
        """The row chosen in every state, for a deterministic scheduler."""
        if not self.deterministic:
            raise StormcfError("Storm's optimal scheduler randomises; a deterministic one was needed")
        return np.flatnonzero(self.probabilities == 1.0)


def _scheduler_choices(model: ExplicitModel, storm_model, result, what: str) -> tuple[np.ndarray, np.ndarray]:
    """σ(row) of the memoryless scheduler of a Storm result, and the states whose choice Storm left open (σ takes
    their first choice). A scheduler with memory is refused: stormcf's strategies are memoryless."""
    sched = result.get_scheduler()
    if not sched.memoryless:
        raise PropertyError(f"Storm's optimal scheduler for {what} needs memory ({sched.memory_size} memory states); "
                            f"strategies in stormcf are memoryless")
    n, starts = model.n_states, model.row_groups[:-1]
    local = np.zeros(n, dtype=np.int64)
    open_states, randomised = [], []
    for s in range(n):
        choice = sched.get_choice(s)
        if choice.deterministic:
            local[s] = choice.get_deterministic_choice()
        elif choice.defined:
            randomised.append(s)
        else:
            open_states.append(s)
    sigma = np.zeros(model.n_choices)
    sigma[starts + local] = 1.0
    if randomised:                      # Storm's JSON export lists each distribution by global row index
        chosen = {entry["s"]: entry["c"] for entry in json.loads(sched.to_json_str(storm_model))}
        for s in randomised:
            sigma[starts[s]:model.row_groups[s + 1]] = 0.0
            for c in chosen[s]:
                sigma[int(c["index"])] = float(c["prob"])
    return sigma, np.array(open_states, dtype=np.int64)


def _scheduler_rows(model: ExplicitModel, storm_model, result, what: str) -> np.ndarray:
    """The row chosen in every state by the memoryless deterministic scheduler of a Storm result (the first choice
    where Storm left it open)."""
    sigma, _ = _scheduler_choices(model, storm_model, result, what)
    randomised = np.flatnonzero((sigma > 0) & (sigma < 1))
    if randomised.size:
        state = model.state_name(int(model.state_of_choice[randomised[0]]))
        raise StormcfError(f"Storm's scheduler for {what} randomises in state {state}; a deterministic one was needed")
    return np.flatnonzero(sigma == 1.0)


def optimal_choices(model: ExplicitModel, prop: Property) -> SchedulerChoices:
    """Storm's optimal values of ``prop`` and an optimal memoryless scheduler for it (:class:`SchedulerChoices`)."""
    require_checkable(model, prop)
    storm_model = labelled_model(handle_of(model), prop.labels)
    formula = _without_bound(storm_model, prop) if prop.has_bound else prop.storm.get_raw_formula()

    def compute() -> SchedulerChoices:
        try:
            result = stormpy.model_checking(storm_model, formula, extract_scheduler=True,
                                            environment=storm_environment(False),
                                            only_initial_states=prop.initial_state_only)
        except Exception as err:
            raise PropertyError(f"Storm cannot check {prop.text} here: {storm_message(err)}") from None
        if not result.has_scheduler():
            raise PropertyError(f"Storm gives no memoryless scheduler for {prop.text} (bounded properties need "
                                f"memory)")
        sigma, open_states = _scheduler_choices(model, storm_model, result, prop.text)
        return SchedulerChoices(np.array(result.get_value_vector(), dtype=float), sigma, open_states)
    return isolated(compute, f"computing a scheduler for {prop.text}")


def prob01_states(model: ExplicitModel, target: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """Storm's graph analysis: the states with Pmin/Pmax(F target) = 0 and = 1."""
    storm_model, text = _reachability(model, target, direction)
    zero, one = stormpy.analysis.compute_prob01_states(storm_model, stormpy.parse_property(text))
    return bitvector_mask(zero, model.n_states), bitvector_mask(one, model.n_states)



def check_interval_mdp(imdp, formula: str, resolution: str = "ROBUST") -> np.ndarray:
    """Check ``formula`` (e.g. ``R{"r"}max=? [C<=10]``) on an interval MDP with nature resolving the intervals by
    Storm's ``UncertaintyResolutionMode`` ``resolution`` (``"ROBUST"``: against the objective, ``"COOPERATIVE"``);
    Storm's value of every state."""
    env = stormpy.environments.Environment()
    env.solver().min_max().method = stormpy.environments.MinMaxMethod.VALUE_ITERATION
    env.solver().min_max().precision = stormpy.Rational(f"{PRECISION.numerator}/{PRECISION.denominator}")
    mode = getattr(stormpy.UncertaintyResolutionMode, resolution)

    def compute() -> np.ndarray:
        try:
            result = stormpy.model_checking(imdp, stormpy.parse_properties(formula)[0], environment=env,
                                            uncertainty_resolution_mode=mode)
        except Exception as err:
            raise StormcfError(f"Storm cannot check {formula} on the interval MDP: {storm_message(err)}") from None
        return np.array(result.get_value_vector(), dtype=float)
    return isolated(compute, f"checking {formula} on the interval MDP")

