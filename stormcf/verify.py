"""THE Storm re-check every analysis ends with, and its one record type, :class:`Check`.

A number stormcf reports as "the value under this strategy/policy" is Storm's, model-checked on an explicit model
built from stormcf's arrays:

- :func:`check_strategy`: the DTMC M^σ induced by a memoryless randomized strategy σ,

      P_σ = S · P          with S[s, row] = σ(row) for the choices of s      (n x n)
      r_σ = S · r          expected state-action (and transition) reward of every state

  (labels and the initial state are the MDP's; state rewards stay state rewards). With ``exact=True`` the transition
  probabilities come from Storm's rational build of the model (``0.4`` is exactly 2/5), the strategy's probabilities
  are read as the shortest decimals that print them (``0.3`` is 3/10), and Storm checks over ``stormpy.Rational``;
- :func:`check_model`: a model itself (an MDP needs ``Pmin``/``Pmax``; a Storm-optimal value);
- :func:`check_interval_model`: an interval MDP, with nature :class:`~stormcf.modes.Nature` pessimistic (Storm's
  robust resolution) or optimistic (cooperative).

Every check can carry the analysis's own value (``expected``) and a tolerance; :attr:`Check.agrees` says whether
Storm confirms it, and :meth:`Check.confirm` refuses (raises :class:`~stormcf.errors.VerificationFailure`) when it
does not, so that a wrong number is never printed.

A bound is decided three-valued (:meth:`~stormcf.properties.Property.decide`): exactly for exact values (and where
Storm decides it by graph analysis, :func:`~stormcf.storm.check.storm_decides`); for a floating-point value from
its error interval, value ± the engine's relative precision (:data:`~stormcf.storm.check.PRECISIONS`) times
|value|: ``holds`` is None when the interval contains the bound (:attr:`Check.undecided` says why). On models of at
most :data:`EXACT_RECHECK_STATES` states an undecided check of a strategy or a model is settled by Storm in exact
arithmetic when that answers within :data:`EXACT_RECHECK_SECONDS`.
"""
from __future__ import annotations

import builtins
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence, TypeVar, cast

import numpy as np
import scipy.sparse as sp

from . import storm
from .errors import PropertyError, StormcfError, TimeLimitReached, VerificationFailure
from .model import ExplicitModel
from .modes import Nature, Optimization
from .properties import Property, relative_error
from .run import Run
from .strategy import Strategy

T = TypeVar("T")

#: default agreement required between an analysis's own value and Storm's, relative to max(1, |value|); Storm's
#: floating-point checks have relative precision 1e-10
TOLERANCE = 1e-8
#: an undecided floating-point verdict on a bound is settled in exact arithmetic on models of at most this many
#: states, when Storm's exact check answers within this many seconds
EXACT_RECHECK_STATES, EXACT_RECHECK_SECONDS = 1_000, 10.0


def format_value(x: float) -> str:
    """A model-checking number for people: up to 6 significant digits (the JSON keeps every digit)."""
    return f"{x:.6g}"


def format_exact(x: Fraction, digits: int = 40) -> str:
    """An exact value for people: the fraction, shortened to ``digits`` characters per side when longer (the JSON
    keeps the whole fraction)."""
    text = str(x)
    num, _, den = text.partition("/")
    if len(num) <= digits and len(den) <= digits:
        return text
    return f"{format_value(float(x))} (exact fraction of {len(num)}/{len(den)} digits in the JSON)"


@dataclass(frozen=True, repr=False)
class Check:
    """One Storm model-checking result at the initial state, with what it was compared with.

    Attributes:
        property: the property as Storm prints it.
        value: Storm's value (1.0/0.0 for the truth of a state formula).
        exact: the value as a Fraction when the check was exact, else None.
        holds: for bounded properties and state formulas, whether they hold; None when there is no bound, or when
            the error interval of a floating-point value contains the bound (``undecided`` says so).
        method: how Storm computed it (sound value iteration and its precision, or exact arithmetic).
        subject: what was checked, in words ("DTMC induced by the strategy", "robust policy on the unrolled ICFMDP").
        expected: the analysis's own value of the same quantity, if it has one.
        tolerance: the agreement required with ``expected``, relative to max(1, |value|).
        seconds: building and checking in Storm.
        details: further facts of the check (sizes of the checked model, ...), for JSON.
        name: a short identifier of the check within its result (e.g. ``robust_policy``).
        undecided: why ``holds`` is None for a bounded property (the bound within the value's error interval),
            else "".
    """

    property: str
    value: float
    exact: Fraction | None = None
    holds: bool | None = None
    method: str = ""
    subject: str = ""
    expected: float | None = None
    tolerance: float | None = None
    seconds: float = 0.0
    details: Mapping[str, Any] | None = None
    name: str = ""
    undecided: str = ""

    @builtins.property          # the field ``property`` hides the builtin in the class body (for mypy)
    def verdict(self) -> str | None:
        """``holds``, ``violated`` or ``undecided`` for a bounded property (or a state formula), else None."""
        if self.holds is not None:
            return "holds" if self.holds else "violated"
        return "undecided" if self.undecided else None

    @builtins.property
    def agrees(self) -> bool | None:
        """Whether Storm's value confirms the analysis's own (None when there is nothing to compare)."""
        if self.expected is None:
            return None
        if not (np.isfinite(self.value) and np.isfinite(self.expected)):
            return bool(self.value == self.expected)
        tolerance = TOLERANCE if self.tolerance is None else self.tolerance
        return bool(abs(self.value - self.expected) <= tolerance * max(1.0, abs(self.value)))

    def compared_with(self, expected: float, tolerance: float = TOLERANCE) -> "Check":
        """The same check, compared with the analysis's value ``expected``."""
        return replace(self, expected=float(expected), tolerance=tolerance)

    def named(self, name: str) -> "Check":
        """The same check with the identifier ``name``."""
        return replace(self, name=name)

    def confirm(self) -> "Check":
        """Return the check if Storm agrees with the analysis; refuse (VerificationFailure) if it does not."""
        if self.agrees is False:
            raise VerificationFailure(
                f"Storm's value of {self.property} on the {self.subject or 'checked model'} is {self.value!r}, the "
                f"analysis computed {self.expected!r} (tolerance {self.tolerance:g}); refusing to report either")
        return self

    def value_text(self) -> str:
        """The value for people: the exact fraction when there is one (shortened), else 6 significant digits."""
        if self.exact is not None:
            text = format_exact(self.exact)
            return text if self.exact.denominator == 1 or "(" in text else f"{text} (= {format_value(self.value)})"
        return format_value(self.value)

    def __str__(self) -> str:
        text = f"{self.property} = {self.value_text()}"
        return text if self.verdict is None else f"{text} ({self.verdict})"

    def __repr__(self) -> str:
        agreement = "" if self.agrees is None else (", agrees" if self.agrees else ", DISAGREES")
        return f"<Check {self.property} = {self.value_text()}{agreement}>"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "property": self.property, "value": self.value, "exact": None, "holds": self.holds,
            "method": self.method, "subject": self.subject, "expected": self.expected, "agrees": self.agrees,
            "tolerance": self.tolerance if self.expected is not None else None, "seconds": self.seconds}
        if self.exact is not None:
            out["exact"] = str(self.exact)
        if self.undecided:
            out["undecided"] = self.undecided
        if self.details:
            out["details"] = dict(self.details)
        return out


# ================================================================================================ strategies
def induced_dtmc(strategy: Strategy) -> sp.csr_matrix:
    """P_σ = S · P, the transition matrix of the DTMC induced by σ (n x n CSR, zeros removed, indices sorted)."""
    P = (strategy.matrix() @ strategy.model.transitions).tocsr()
    P.eliminate_zeros()
    P.sort_indices()
    return P


def check_strategy(strategy: Strategy, prop: Property | str, exact: bool = False, *,
                   expected: float | None = None, tolerance: float = TOLERANCE,
                   subject: str = "DTMC induced by the strategy") -> Check:
    """Model-check ``prop`` on the DTMC induced by ``strategy`` with Storm; the value is at the initial state.

    Bounded properties (``P<=0.2 [F "rejected"]``) report the value and whether the bound holds.
    """
    start = time.perf_counter()
    m = strategy.model
    prop = _parsed(m, prop)
    _require_action_independent_bounds(strategy, prop)
    S = strategy.matrix()
    state_rewards = {k: rm.state for k, rm in m.rewards.items() if rm.state is not None}
    choice_rewards = {k: S @ m.expected_choice_rewards(k) for k, rm in m.rewards.items()
                      if rm.choice is not None or rm.transition is not None}
    if exact:                 # the rational DTMC is assembled in Storm's child too: the deadline bounds it all
        result = storm.isolated(lambda: _exact_induced_check(strategy, prop, state_rewards, choice_rewards),
                                f"building the DTMC in rational arithmetic and checking {prop.text} exactly")
    else:
        result = storm.check_dtmc(induced_dtmc(strategy), m, prop, state_rewards, choice_rewards)
    check = _at_initial_state(m, prop, result, exact, subject, time.perf_counter() - start)
    if check.undecided:
        check = _settled(check, m, lambda: check_strategy(strategy, prop, exact=True, subject=subject))
    return _compared(check, expected, tolerance)


def _require_action_independent_bounds(strategy: Strategy, prop: Property) -> None:
    """The induced DTMC carries each state's expected reward Σ_a σ(s, a)·r(s, a): exact for expected rewards, but a
    reward bound counts the reward of the action actually taken. Refuse a reward bound over a reward model whose
    rewards differ between the choices σ mixes in a state."""
    m = strategy.model
    support = strategy.probabilities > 0
    for name in prop.reward_bounds:
        r = m.expected_choice_rewards(name)
        low = np.minimum.reduceat(np.where(support, r, np.inf), m.row_groups[:-1])
        high = np.maximum.reduceat(np.where(support, r, -np.inf), m.row_groups[:-1])
        mixed = np.flatnonzero(high > low)
        if mixed.size:
            raise PropertyError(f"{prop.text}: in state {m.state_name(int(mixed[0]))} the strategy mixes choices with "
                                f"different \"{name}\" rewards, and the DTMC it induces has only their average, "
                                f"which a reward bound cannot use")


def check_model(model: ExplicitModel, prop: Property | str, exact: bool = False, *,
                expected: float | None = None, tolerance: float = TOLERANCE, subject: str = "model") -> Check:
    """Storm's value of ``prop`` on the model itself, at the initial state (an MDP needs ``Pmin``/``Pmax``)."""
    start = time.perf_counter()
    prop = _parsed(model, prop)
    result = storm.check_exact(model, prop) if exact else storm.check(model, prop)
    optimum = prop.bound_optimum if model.model_type != "dtmc" else None
    check = _at_initial_state(model, prop, result, exact, subject, time.perf_counter() - start, optimum)
    if check.undecided:
        check = _settled(check, model, lambda: check_model(model, prop, exact=True, subject=subject))
    return _compared(check, expected, tolerance)


def _compared(check: Check | StateValues, expected: float | None, tolerance: float) -> Check:
    """The check compared with the analysis's value ``expected`` (if any). A StateValues, Storm's answer to a
    ``filter(values, …)`` that only :mod:`stormcf.modelcheck` parses (and reads as either), is passed through: the
    declared Check is the shape of every other property."""
    if isinstance(check, StateValues):
        if expected is not None:
            raise PropertyError(f"{check.property}: values in many states are not compared with one value")
        return cast(Check, check)
    return check if expected is None else check.compared_with(expected, tolerance)


def _settled(check: Check | StateValues, model: ExplicitModel,
             exact_check: Callable[[], Check | StateValues]) -> Check | StateValues:
    """An undecided floating-point check settled by Storm's exact check (``exact_check()``) where that is cheap
    (:func:`exact_within_limit`), else the undecided check, its reason saying why there is no exact verdict."""
    exact, failure = exact_within_limit(exact_check, model)
    if exact is None:
        return replace(check, undecided=f"{check.undecided}; {failure}")
    return replace(exact, method=f"{exact.method} (re-check of a floating-point verdict within its precision of "
                                 f"the bound)", seconds=check.seconds + exact.seconds)


def exact_within_limit(call: Callable[[], T], model: ExplicitModel, run: Run | None = None) -> tuple[T | None, str]:
    """``call()`` (Storm in exact arithmetic on ``model`` or a model built from it) where that is cheap: on models of
    at most :data:`EXACT_RECHECK_STATES` states, given at most :data:`EXACT_RECHECK_SECONDS` of the time left of
    ``run`` (an analysis's own; default: the active run); and "". Else None and why there is no answer (too many
    states, out of that time, or exact arithmetic not available for the model). The run's own time limit still
    ends the command."""
    if model.n_states > EXACT_RECHECK_STATES:
        return None, f"no exact re-check on models of more than {EXACT_RECHECK_STATES:,} states"
    deadline = run or Run.current()
    try:
        with deadline.sub(seconds=EXACT_RECHECK_SECONDS).active():
            return call(), ""
    except TimeLimitReached:
        if deadline.out_of_time:
            raise
        return None, f"Storm's exact re-check did not answer within {EXACT_RECHECK_SECONDS:g} s"
    except StormcfError as err:              # exact arithmetic needs the model's PRISM or JANI file
        return None, f"no exact re-check: {err}"


def check_model_states(model: ExplicitModel, prop: Property | str, states: Sequence[int], subjects: Sequence[str],
                       *, expected: Sequence[float | None] | None = None, tolerance: float = TOLERANCE
                       ) -> list[Check]:
    """Storm's value of ``prop`` on ``model`` at each of ``states``, all from one Storm call: the checks of models
    that sit side by side in ``model`` (:func:`~stormcf.model.disjoint_union`), each with its ``subject`` and, where
    given, the analysis's own value. Each check's ``seconds`` is its share of the call."""
    start = time.perf_counter()
    prop = _parsed(model, prop)
    if prop.initial_state_only:
        raise PropertyError(f"{prop.text}: Storm answers it for the initial state only, not for many states at once")
    result = storm.check(model, prop)
    seconds = (time.perf_counter() - start) / max(len(states), 1)
    checks = []
    for k, (state, subject) in enumerate(zip(states, subjects)):
        check = _at_state(model, prop, result, subject, seconds, int(state))
        value = None if expected is None else expected[k]
        checks.append(check if value is None else check.compared_with(value, tolerance))
    return checks


def _parsed(model: ExplicitModel, prop: Property | str) -> Property:
    return storm.parse_property(model, prop) if isinstance(prop, str) else prop


def _at_initial_state(model: ExplicitModel, prop: Property, result: storm.CheckResult, exact: bool, subject: str,
                      seconds: float, optimum: str | None = None) -> "Check | StateValues":
    """The Check of Storm's result at the initial state (for a filter: Storm's aggregate over the filter's states;
    ``optimum``: the value is that optimum over all schedulers, :attr:`Property.bound_optimum`)."""
    if result.filtered is not None:
        return _filter_check(model, prop, result.filtered, result.method, subject, seconds)
    return _at_state(model, prop, result, subject, seconds, model.initial_state, optimum)


def _at_state(model: ExplicitModel, prop: Property, result: storm.CheckResult, subject: str, seconds: float,
              s0: int, optimum: str | None = None) -> Check:
    method = result.method
    if result.values is None:       # a state formula: Storm gives its truth in every state
        assert result.holds is not None
        return Check(prop.text, float(result.holds[s0]), None, bool(result.holds[s0]), method, subject,
                     seconds=seconds)
    value_exact = result.exact[s0] if result.exact is not None else None
    value = float(result.values[s0])
    holds, undecided = None, ""
    if result.holds is not None:                         # Storm decided the bound exactly (graph analysis)
        holds = bool(result.holds[s0])
    elif prop.has_bound:
        holds, undecided = _decided(prop, value if value_exact is None else value_exact, method)
    return Check(prop.text, value, value_exact if isinstance(value_exact, Fraction) else None, holds, method,
                 subject, seconds=seconds, details={"optimum": optimum} if optimum else None, undecided=undecided)


def _decided(prop: Property, value: float | Fraction, method: str) -> tuple[bool | None, str]:
    """The verdict on ``prop``'s bound of a value computed by the engine ``method``, and why it is undecided ("" when
    it is decided): exact values are compared exactly, floating-point ones through their error interval."""
    precision = None if isinstance(value, Fraction) else storm.PRECISIONS[method]
    if precision is None or isinstance(value, Fraction):        # (the second test for mypy: the same)
        return prop.decide(value), ""
    holds = prop.decide(value, relative_error(value, precision))
    if holds is not None:
        return holds, ""
    return None, (f"undecided at relative precision {float(precision):g}: the bound {prop.threshold} lies within "
                  f"the error interval of Storm's floating-point value {value!r}")


def _filter_check(model: ExplicitModel, prop: Property, filtered: storm.FilterResult, method: str, subject: str,
                  seconds: float) -> "Check | StateValues":
    states = filtered.states
    if filtered.kind == "values":       # φ's values, where every other kind has an aggregate of them
        assert filtered.values is not None
        return StateValues(prop.text, tuple(model.state_name(int(s)) for s in states), tuple(filtered.values.tolist()),
                           filtered.exact_values, prop.has_bound, method, subject, seconds,
                           undecided=filtered.undecided)
    assert filtered.value is not None and prop.filter is not None
    return Check(prop.text, filtered.value, filtered.exact, filtered.holds, method, subject, seconds=seconds,
                 details={"filter": filtered.kind, "states": prop.filter.states, "state_count": int(states.size)},
                 undecided=filtered.undecided)


@dataclass(frozen=True, repr=False)
class StateValues:
    """Storm's answer to ``filter(values, φ, states)``: φ's value (truth, with a bound) in every state of a set.

    Attributes: ``property`` as Storm prints it, the ``states`` (names), their ``values`` (1.0/0.0 for truth
    values, NaN for a truth value undecided at the precision of a floating-point value), ``exact`` (Fractions, when
    the check was exact), ``truth`` (the values are truth values), ``method``, ``subject``, ``seconds`` and
    ``undecided`` (why some truth values are) as in :class:`Check`."""

    property: str
    states: tuple[str, ...]
    values: tuple[float, ...]
    exact: tuple[Fraction | float, ...] | None
    truth: bool
    method: str
    subject: str = ""
    seconds: float = 0.0
    name: str = ""
    undecided: str = ""
    holds = None            # a set of values is not a verdict (the status of a check command ignores it)

    def named(self, name: str) -> "StateValues":
        return replace(self, name=name)

    def value_text(self, k: int) -> str:
        if self.truth:
            return "undecided" if np.isnan(self.values[k]) else ("true" if self.values[k] else "false")
        exact = self.exact[k] if self.exact is not None else None
        return format_exact(exact) if isinstance(exact, Fraction) else format_value(self.values[k])

    def __str__(self) -> str:
        cells = [f"{state}: {self.value_text(k)}" for k, state in enumerate(self.states)]
        return f"{self.property} = {{{', '.join(cells)}}}"

    def __repr__(self) -> str:
        return f"<StateValues {self.property}: {len(self.states)} states>"

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "property": self.property, "filter": "values", "states": list(self.states),
               "values": [None if np.isnan(v) else bool(v) for v in self.values] if self.truth else list(self.values),
               "exact": None if self.exact is None else [str(v) for v in self.exact], "method": self.method,
               "subject": self.subject, "seconds": self.seconds}
        if self.undecided:
            out["undecided"] = self.undecided
        return out


# ================================================================================================ interval models
def check_interval_model(lower: sp.csr_matrix, upper: sp.csr_matrix, row_groups: np.ndarray,
                         choice_rewards: np.ndarray, horizon: int, optimization: Optimization | str,
                         nature: Nature | str, *, initial: int = 0, expected: float | None = None,
                         tolerance: float = TOLERANCE, subject: str = "interval MDP",
                         details: Mapping[str, Any] | None = None) -> Check:
    """Storm's finite-horizon reward ``R{"r"}max=? [C<=horizon]`` (``min`` when minimizing) of the interval MDP with
    P(s' | row) ∈ [lower, upper] and state-action rewards ``choice_rewards``, at ``initial``, with nature
    pessimistic (robust) or optimistic (cooperative)."""
    start = time.perf_counter()
    optimization, nature = Optimization.parse(optimization), Nature.parse(nature)
    formula = f'R{{"r"}}{optimization.value}=? [C<={horizon}]'
    imdp = storm.interval_mdp(lower, upper, row_groups, {"r": choice_rewards}, {}, initial)
    checking = time.perf_counter()
    values = storm.check_interval_mdp(imdp, formula, nature.storm_resolution)
    done = time.perf_counter()
    info = {"uncertainty_resolution": nature.value, "states": int(len(row_groups) - 1),
            "transitions": int(lower.nnz), "check_seconds": done - checking, **(details or {})}
    method = f"{storm.INTERVAL_VALUE_ITERATION}, {nature.value} nature"
    check = Check(formula, float(values[initial]), None, None, method, subject, seconds=done - start, details=info)
    return check if expected is None else check.compared_with(expected, tolerance)


# ================================================================================================ exact arithmetic
def exact_strategy(strategy: Strategy) -> list[Fraction]:
    """σ as fractions: each probability read as the shortest decimal that prints it (``0.3`` -> 3/10); in every
    state the largest probability (the first of equal ones) absorbs the rounding so that each distribution sums to
    exactly 1."""
    m = strategy.model
    probabilities = strategy.probabilities
    out = [_decimal(x) if x > 0 else Fraction(0) for x in probabilities.tolist()]
    by_state = np.lexsort((np.arange(m.n_choices), -probabilities, m.state_of_choice))
    top = by_state[m.row_groups[:-1]]                    # the largest probability of every state
    is_top = np.zeros(m.n_choices, dtype=bool)
    is_top[top] = True
    rest = [Fraction(0)] * m.n_states
    for r in np.flatnonzero(~is_top & (probabilities > 0)).tolist():
        rest[int(m.state_of_choice[r])] += out[r]
    for s, r in enumerate(top.tolist()):
        out[r] = 1 - rest[s]
    return out


def _decimal(x: float) -> Fraction:
    return Fraction(repr(float(x)))


def _exact_induced_check(strategy: Strategy, prop: Property, state_rewards: dict,
                         choice_rewards: dict) -> storm.CheckResult:
    """Storm's exact check of ``prop`` on the DTMC σ induces, assembled in rational arithmetic (:func:`_exact_induced`;
    Python fractions, seconds on 10^5 transitions: :func:`check_strategy` runs it in Storm's child process)."""
    P, exact_P, exact_rewards = _exact_induced(strategy, choice_rewards)
    return storm.check_dtmc(P, strategy.model, prop, state_rewards, choice_rewards, exact_P, exact_rewards)


def _exact_induced(strategy: Strategy, choice_rewards: dict) -> tuple[sp.csr_matrix, list[Fraction], dict]:
    """P_σ and r_σ in exact arithmetic, assembled in bulk: the (state, successor) pairs come from the sparse product
    S·P; only the products σ(row)·P(row, s') and their sums are Python Fractions."""
    m = strategy.model
    sigma = exact_strategy(strategy)
    values = storm.exact_transition_values(m)
    P = m.transitions
    rows = np.repeat(np.arange(m.n_choices), np.diff(P.indptr))
    keep = strategy.probabilities[rows] > 0
    entries = np.flatnonzero(keep)
    states = m.state_of_choice[rows[entries]]
    cols = P.indices[entries]
    order = np.lexsort((cols, states))
    states, cols, entries = states[order], cols[order], entries[order]
    new = np.ones(states.size, dtype=bool)
    new[1:] = (states[1:] != states[:-1]) | (cols[1:] != cols[:-1])
    starts = np.flatnonzero(new)
    exact: list[Fraction] = []
    entry_list, row_list = entries.tolist(), rows[entries].tolist()
    bounds = starts.tolist() + [len(entry_list)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        exact.append(sum((sigma[row_list[i]] * values[entry_list[i]] for i in range(a, b)), Fraction(0)))
    nz = np.array([v != 0 for v in exact], dtype=bool)
    exact = [v for v, k in zip(exact, nz.tolist()) if k]
    s_out, c_out = states[starts][nz], cols[starts][nz]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(s_out, minlength=m.n_states))])
    matrix = sp.csr_matrix((np.array([float(v) for v in exact]), c_out, indptr), shape=(m.n_states,) * 2)
    exact_rewards = {name: _exact_state_rewards(m, name, values, sigma) for name in choice_rewards}
    return matrix, exact, exact_rewards


def _exact_state_rewards(m: ExplicitModel, name: str, values, sigma: list[Fraction]) -> list[Fraction]:
    """Σ_a σ(s, a)·(r(s, a) + Σ_s' P(s, a, s')·r(s, a, s')) per state, exactly."""
    per_choice = storm.expected_choice_rewards_exact(m, name, values)
    out = [Fraction(0)] * m.n_states
    for r in (r for r, x in enumerate(sigma) if x):
        out[int(m.state_of_choice[r])] += sigma[r] * per_choice[r]
    return out
