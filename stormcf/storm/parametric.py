"""Parametric models: PRISM programs whose undefined ``double`` constants are parameters, built by Storm over rational
functions (Storm's parametric engine, storm-pars, through ``stormpy.pars``).

What crosses the bridge:

- :func:`load_parametric`: a PRISM file with some constants given (``-c``); the undefined ``double`` constants left
  are the candidate parameters (:class:`ParametricModel`);
- :meth:`ParametricModel.build`: Storm's build over ``stormpy.RationalFunction`` for a set of bounds (only the labels
  and reward models they need, so that a constant used only by another reward structure is no parameter of theirs),
  with the state valuations and action names (:class:`ParametricBuild`); its distinct transition functions, whether
  every one is multi-affine, and where a box of valuations changes the model's graph (:meth:`ParametricBuild.graph_change`);
- :class:`RegionChecker`: Storm's region checking of one bound over a box of valuations by **parameter lifting**, as
  sound bounds on the bound's quantity over the box: floating point with Storm's sound value iteration (the values
  widened by its relative precision), in exact rational arithmetic, or Storm's **robust** lifting (for DTMCs whose
  transition functions are not multi-affine or whose graph changes in the box; its value iteration has no error
  bound);
- :meth:`ParametricBuild.values`: Storm's values of the bounds at one valuation (Storm's instantiation model checker,
  floating point or exact); :meth:`ParametricBuild.solution_function`: the value as a rational function of the
  parameters (Storm's state elimination, DTMCs), with its gradient; :meth:`ParametricBuild.feasible`: Storm's own
  feasibility search (some satisfying valuation: parameter lifting or gradient descent);
- :meth:`ParametricBuild.induced`: the parametric DTMC a memoryless strategy induces on a parametric MDP.

Parameter lifting bounds a transition function over a box by its values at the box's vertices: sound for
multi-affine functions (each parameter of degree at most 1, a constant denominator) on boxes where no transition
vanishes. Storm does not check either (a model with ``4*p*(1-p)`` got a maximum of 0.76 where the true one is 1), so
the bridge says which functions are multi-affine and which box changes the graph, and the analysis picks the engine.

Storm's calls cannot be interrupted, and a value iteration can crawl (robust lifting of expected rewards over a
box reaching p = 0.001 ran for ten minutes), so they run in a child process stopped at the run's end, or at the end
of a share of it that the caller gives (``seconds``: the call then answers None). A search makes thousands of calls
that take a fraction of a millisecond on small models, where a fork per call (:func:`~.isolate.isolated`, about 10
ms) would cost more than the calls: a build's region checks and values go to one forked child that answers them in
turn (:class:`~.isolate.Worker`), forked again after a call it did not finish in time.
"""
from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence, overload

import numpy as np
import stormpy
import stormpy.pars as _pars
from stormpy.datastructures import SparseMatrixBuilder
from stormpy.models import SparseDtmc, SparseModelComponents, SparseRewardModel

from ..errors import ConstantsError, ModelError, ParameterError, PropertyError, TimeLimitReached
from ..examples import resolve_file
from ..limits import STORM_BUILD_HEADROOM, THREAD_STACK, require_headroom
from ..run import Run
from .check import PRECISION, SOUND, storm_environment
from .extract import valuation_arrays
from .formulas import parse_storm_properties
from .handle import storm_message
from .isolate import Worker, in_thread, isolated
from .load import constants_text, parse_description, precheck_file

_developer = _pars.developer
_cln = stormpy.numbers.developer.cln

#: the file types a parametric model is read from: PRISM programs (their undefined constants are the parameters)
PARAMETRIC_SUFFIXES = (".prism", ".pm", ".nm")
#: Storm's state elimination gives the solution function of DTMCs with at most this many states
SOLUTION_FUNCTION_STATES = 5_000
#: a multi-affine function of more parameters than this is not checked at the 2^k vertices of a box
MAX_VERTEX_PARAMETERS = 12

#: the region-checking engines: name -> (Storm's engine, how it computes, whether its bounds are proofs)
LIFTING, EXACT_LIFTING, ROBUST_LIFTING = "lifting", "exact lifting", "robust lifting"
ENGINES = {
    LIFTING: ("PARAMETER_LIFTING", f"Storm's parameter lifting, sound value iteration (relative precision "
                                   f"{float(PRECISION):g}, bounds widened by it)", True),
    EXACT_LIFTING: ("EXACT_PARAMETER_LIFTING", "Storm's parameter lifting in exact rational arithmetic", True),
    ROBUST_LIFTING: ("ROBUST_PARAMETER_LIFTING", f"Storm's robust parameter lifting (robust value iteration to "
                                                 f"{float(PRECISION):g}, without an error bound)", False),
}
#: Storm's feasibility searches (some valuation that meets one bound)
FEASIBILITY = {"lifting": "PLA", "gradient descent": "GD"}


@dataclass(eq=False)
class ParametricModel:
    """A PRISM program with the constants the user gave set; its undefined ``double`` constants are the candidate
    parameters (``undefined``, in declaration order). :meth:`build` builds it for a set of bounds (cached)."""

    source: str
    file: Path
    program: Any
    constants: str
    undefined: tuple[str, ...]
    _builds: dict = field(default_factory=dict, repr=False)

    def build(self, bounds: Sequence[str]) -> "ParametricBuild":
        """Storm's parametric build for ``bounds`` (bounded P or R properties, as the user wrote them)."""
        key = tuple(bounds)
        if key not in self._builds:
            require_headroom(STORM_BUILD_HEADROOM + THREAD_STACK, "Storm's parametric model builder")
            self._builds[key] = in_thread(lambda: _build(self, key), f"building {self.source} parametrically")
        return self._builds[key]

    def constants_with(self, valuation: Mapping[str, Fraction]) -> str:
        """The constants of a PRISM build at ``valuation`` (the user's constants and the parameters' values as exact
        fractions, which Storm reads exactly)."""
        given = [self.constants] if self.constants else []
        return ",".join(given + [f"{name}={exact_text(value)}" for name, value in valuation.items()])


def load_parametric(path: str | Path, constants: str | Mapping[str, Any] | None = None,
                    shown_as: str | None = None) -> ParametricModel:
    """Parse a PRISM file and set the given constants; the undefined ``double`` constants left are the candidate
    parameters. Refuses other file types, undefined constants of other types (they need values) and a program
    without undefined ``double`` constants (:class:`~stormcf.errors.ParameterError`)."""
    name = str(path) if shown_as is None else shown_as
    file = resolve_file(path)
    suffix = file.suffix.lower()
    if suffix not in PARAMETRIC_SUFFIXES:
        raise ModelError(f"{name}: a parametric model is a PRISM program (.prism, .pm, .nm) whose undefined "
                         f"constants are the parameters, not a {suffix or 'file without extension'}")
    precheck_file(file, suffix, name, constants)
    text = constants_text(constants)
    program = parse_description(file, suffix, name)
    if text:
        try:
            program, _ = stormpy.instantiate_constants(program, text)
        except Exception as err:
            raise ConstantsError(f"{name}: {storm_message(err)}") from None
    undefined = [c for c in program.constants if not c.defined]
    others = [c.name for c in undefined if not c.type.is_rational]
    if others:
        raise ConstantsError(f"{name}: undefined constants {', '.join(others)} are not of type double (parameters "
                             f"are); give them with --constants {','.join(o + '=...' for o in others)}")
    if not undefined:
        raise ParameterError(f"{name}: the model has no parameters (no undefined constant of type double, "
                             f"e.g. 'const double p;')")
    return ParametricModel(name, file, program, text, tuple(c.name for c in undefined))


def _build(owner: ParametricModel, bounds: tuple[str, ...]) -> "ParametricBuild":
    properties = parse_storm_properties(owner.program, bounds)
    formulas = tuple(p.get_raw_formula() for p in properties)
    for text, formula in zip(bounds, formulas):
        _require_bounded(text, formula)
    options = stormpy.BuilderOptions(list(formulas))
    options.set_build_state_valuations()
    options.set_build_choice_labels()
    try:
        model = stormpy.build_model[stormpy.RationalFunction](owner.program, options=options)
    except Exception as err:
        message = storm_message(err)
        if "bad_any_cast" in message:           # Storm's words for min, max, log, ... of a parameter
            message = "an expression of the parameters that is not a rational function of them (min, max, log, ...)"
        raise ModelError(f"{owner.source}: Storm's parametric engine cannot build it: {message}") from None
    kind = model.model_type.name
    if kind not in ("DTMC", "MDP"):
        raise ModelError(f"{owner.source}: repair works on parametric DTMCs and MDPs, not {kind} models")
    if len(model.initial_states) != 1:
        raise ModelError(f"{owner.source}: the model has {len(model.initial_states)} initial states; Storm's "
                         f"parametric engine needs exactly one")
    rewarded = sorted(v.name for v in model.collect_reward_parameters())
    if rewarded:
        raise ParameterError(f"{owner.source}: a reward structure of the bounds depends on {', '.join(rewarded)}; "
                             f"repair changes transition probabilities only: give {rewarded[0]} with --constants")
    return ParametricBuild.of(owner.source, model, formulas, owner.undefined)


def _require_bounded(text: str, formula) -> None:
    if type(formula).__name__ not in ("ProbabilityOperatorFormula", "RewardOperatorFormula") or not formula.has_bound:
        raise PropertyError(f"{text}: repair needs a bound on a probability or an expected reward, e.g. "
                            f"'P<=0.1 [F \"error\"]' or 'R{{\"cost\"}}<=5 [F \"done\"]'")


@dataclass(eq=False)
class ParametricBuild:
    """Storm's parametric model for a set of bounds.

    Attributes:
        source: the file as the user named it.
        model: Storm's sparse model over rational functions (state valuations, action names).
        formulas: Storm's bounded formulas, one per bound.
        parameters: the parameters of the model, in declaration order.
        variables: parameter name -> Storm's variable.
        functions: the distinct non-constant transition functions.
    """

    source: str
    model: Any
    formulas: tuple
    parameters: tuple[str, ...]
    variables: Mapping[str, Any]
    functions: tuple
    _checkers: dict = field(default_factory=dict, repr=False)
    _worker: Worker | None = field(default=None, repr=False)
    _forked_with: int = field(default=0, repr=False)

    @classmethod
    def of(cls, source: str, model, formulas: tuple, declared: Sequence[str]) -> "ParametricBuild":
        variables = {v.name: v for v in model.collect_all_parameters()}
        if not variables:
            raise ParameterError(f"{source}: the bounds do not depend on any parameter (the model built for them has "
                                 f"no undefined constant in its transition probabilities)")
        order = [name for name in declared if name in variables] + sorted(set(variables) - set(declared))
        functions = tuple({entry.value for entry in model.transition_matrix if not entry.value.is_constant()})
        return cls(source, model, formulas, tuple(order), {name: variables[name] for name in order}, functions)

    @property
    def model_type(self) -> str:
        return "dtmc" if self.model.model_type.name == "DTMC" else "mdp"

    @property
    def n_states(self) -> int:
        return self.model.nr_states

    @property
    def n_transitions(self) -> int:
        return self.model.nr_transitions


    def valuations(self) -> dict[str, np.ndarray]:
        """The state variables' values in every state (to match states with another build of the program)."""
        return valuation_arrays(self.model)

    # ------------------------------------------------------------------------------------------ functions
    def not_polynomial(self) -> str | None:
        """A transition function with parameters in its denominator (a rational function, not a polynomial), as
        Storm prints it; None when every one is a polynomial. Storm's robust lifting crashes on such functions."""
        for f in self.functions:
            if not f.denominator.is_constant():
                return _printed(f)
        return None

    def not_multiaffine(self) -> str | None:
        """A transition function that is not multi-affine (a parameter of degree 2 or more, or parameters in a
        denominator), as Storm prints it; None when every one is multi-affine."""
        for f in self.functions:
            if not _multiaffine(f):
                return _printed(f)
        return None

    def graph_change(self, lo: Mapping[str, Fraction], hi: Mapping[str, Fraction]) -> str | None:
        """Where the box [lo, hi] changes the model's graph or leaves its probabilities ill-defined, in words (a
        transition function that reaches 0, or leaves [0, 1], at a vertex of the box); None when every transition
        function stays in (0, 1] on the box. Exact for multi-affine functions (their extrema over a box are at its
        vertices); call it only when :meth:`not_multiaffine` is None."""
        for f in self.functions:
            names = sorted(v.name for v in f.gather_variables())
            if len(names) > MAX_VERTEX_PARAMETERS:
                return f"{_printed(f)} depends on {len(names)} parameters, too many to check the box's vertices"
            for corner in itertools.product(*[(lo[n], hi[n]) for n in names]):
                point = dict(zip(names, corner))
                value = Fraction(str(f.evaluate({self.variables[n]: _coefficient(x) for n, x in point.items()})))
                if not 0 < value <= 1:
                    where = ", ".join(f"{n}={exact_text(x)}" for n, x in point.items())
                    what = "vanishes" if value == 0 else f"is {exact_text(value)}, outside [0, 1],"
                    return f"the transition probability {_printed(f)} {what} at {where}"
        return None

    # ------------------------------------------------------------------------------------------ Storm's values
    @overload
    def values(self, point: Mapping[str, Fraction], exact: bool = False,
               seconds: None = None) -> list[Fraction | float]: ...

    @overload
    def values(self, point: Mapping[str, Fraction], exact: bool,
               seconds: float | None) -> list[Fraction | float] | None: ...

    def values(self, point: Mapping[str, Fraction], exact: bool = False,
               seconds: float | None = None) -> list[Fraction | float] | None:
        """Storm's value of every bound's quantity at the valuation ``point`` (its instantiation model checker: sound
        value iteration at relative precision :data:`~.check.PRECISION`, or exact rational arithmetic); None when
        Storm took more than ``seconds``. On an MDP the quantity is the optimum over the schedulers that decides the
        bound (Storm's semantics of the bound)."""
        for k in range(len(self.formulas)):            # made here, so that the worker is forked with them
            self._instantiation_checker(k, exact)
        return self._ask(("values", dict(point), exact), "checking the bounds at a valuation", seconds)

    def _values(self, point: Mapping[str, Fraction], exact: bool) -> list[Fraction | float]:
        env = stormpy.environments.exact() if exact else storm_environment(False, SOUND)
        valuation = {self.variables[n]: _cln.Rational(str(Fraction(x))) for n, x in point.items()}
        initial = self.model.initial_states[0]
        return [_number(self._instantiation_checker(k, exact).check(env, valuation).get_value(initial))
                for k in range(len(self.formulas))]

    def _instantiation_checker(self, index: int, exact: bool):
        key = ("instantiation", index, exact)
        if key not in self._checkers:
            value_type = stormpy.Rational if exact else float
            env = stormpy.environments.exact() if exact else storm_environment(False, SOUND)
            checker = _developer.SparseInstantiationModelChecker[self.model.model_type, value_type](env, self.model)
            formula = _quantity(self.formulas[index], self.model_type == "mdp")
            task = stormpy.developer.CheckTask[stormpy.RationalFunction](formula, True)
            checker.specify_formula(task)
            self._checkers[key] = (checker, env, task, formula)   # Storm keeps references to all of them
        return self._checkers[key][0]

    def solution_function(self, index: int, point: Mapping[str, Fraction],
                          seconds: float | None = None) -> "SolutionFunction | None":
        """The bound's quantity as a rational function of the parameters (Storm's state elimination), its value and
        gradient at ``point`` in exact arithmetic; None for MDPs, for DTMCs of more than
        :data:`SOLUTION_FUNCTION_STATES` states, and when Storm needs more than ``seconds`` (state elimination can
        make rational functions of very high degree)."""
        if self.model_type != "dtmc" or self.n_states > SOLUTION_FUNCTION_STATES:
            return None

        def compute() -> SolutionFunction:
            formula = _quantity(self.formulas[index], False)
            f = stormpy.model_checking(self.model, formula, only_initial_states=True).get_value(
                self.model.initial_states[0])
            valuation = {self.variables[n]: _coefficient(x) for n, x in point.items()}
            gradient = {n: Fraction(str(f.derive(v).evaluate(valuation))) for n, v in self.variables.items()}
            return SolutionFunction(_printed(f), Fraction(str(f.evaluate(valuation))), gradient,
                                    frozenset(v.name for v in f.gather_variables()))
        run = Run.current()
        try:
            return isolated(compute, "computing the solution function", run if seconds is None else run.sub(seconds))
        except TimeLimitReached:
            if run.out_of_time:
                raise
            return None

    def feasible(self, index: int, lo: Mapping[str, Fraction], hi: Mapping[str, Fraction], method: str,
                 seconds: float | None = None) -> tuple[str, dict[str, Fraction] | None]:
        """Storm's feasibility search for bound ``index`` over the box [lo, hi] (``method``: a key of
        :data:`FEASIBILITY`): ``("sat", witness)``, ``("violated", None)`` (every valuation of the box violates the
        bound, proven by parameter lifting) or ``("unknown", None)``, also when Storm took more than ``seconds``
        (and the run still has time)."""
        def compute() -> tuple[str, dict[str, Fraction] | None]:
            result = _pars.check_feasibility(self.model, self.formulas[index], region=self._region(lo, hi),
                                             method=getattr(_pars.FeasibilityMethod, FEASIBILITY[method]),
                                             environment=storm_environment(False, SOUND))
            status = result.status.name
            if status == "EXISTS_SAT" and result.witness is not None:
                return "sat", {v.name: Fraction(str(x)) for v, x in result.witness.valuation.items()}
            return ("violated" if status == "ALL_VIOLATED" else "unknown"), None
        run = Run.current()
        try:
            return isolated(compute, f"Storm's feasibility search ({method})",
                            run if seconds is None else run.sub(seconds))
        except TimeLimitReached:
            if seconds is None or run.out_of_time:
                raise
            return "unknown", None
        except (RuntimeError, ValueError) as err:
            raise PropertyError(f"Storm's feasibility search ({method}) cannot answer "
                                f"{self.formulas[index]}: {storm_message(err)}") from None

    def region_checker(self, index: int, engine: str) -> "RegionChecker":
        """The region checker of bound ``index`` with ``engine`` (a key of :data:`ENGINES`), made once."""
        key = ("region", index, engine)
        if key not in self._checkers:
            self._checkers[key] = RegionChecker(self, index, engine)
        return self._checkers[key]

    def _region(self, lo: Mapping[str, Fraction], hi: Mapping[str, Fraction]):
        return _pars.create_region({self.variables[n]: (_coefficient(lo[n]), _coefficient(hi[n]))
                                    for n in self.parameters})

    def _ask(self, request: tuple, what: str, seconds: float | None = None) -> Any:
        """The build's worker's answer to ``request`` (module docstring); None when it did not answer within
        ``seconds`` (and the run still has time). The worker is forked again when this process made checkers since."""
        if self._worker is None or self._forked_with != len(self._checkers):
            self.close()
            self._worker, self._forked_with = Worker(self._answer), len(self._checkers)
        run = Run.current()
        try:
            return self._worker.call(request, what, run if seconds is None else run.sub(seconds))
        except TimeLimitReached:
            if seconds is None or run.out_of_time:
                raise
            return None

    def _answer(self, request: tuple) -> Any:
        """A request, answered in the worker."""
        kind, *args = request
        if kind == "values":
            return self._values(*args)
        key, lo, hi, direction = args
        return self._checkers[key].bound(lo, hi, direction)

    def close(self) -> None:
        """End the build's worker (a later call forks a new one)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    # ------------------------------------------------------------------------------------------ strategies
    def induced(self, probabilities: Sequence[Fraction]) -> "ParametricBuild":
        """The parametric DTMC a memoryless strategy induces on this MDP: row s is Σ_a σ(s, a)·P(s, a, ·) with
        ``probabilities[row]`` = σ of each choice (exact fractions); state rewards stay, state-action rewards become
        their expectation under σ. Labels and state valuations are the MDP's."""
        if self.model_type != "mdp":
            raise ParameterError(f"{self.source}: a strategy applies to an MDP; the model is a DTMC")
        return in_thread(lambda: self._induced(probabilities), "building the DTMC the strategy induces")

    def _induced(self, probabilities: Sequence[Fraction]) -> "ParametricBuild":
        model, n = self.model, self.model.nr_states
        weights = [_constant(p) if p else None for p in probabilities]
        groups = list(model.nondeterministic_choice_indices)
        builder = SparseMatrixBuilder[stormpy.RationalFunction](rows=n, columns=n, entries=0, force_dimensions=True)
        for s in range(n):
            row: dict[int, Any] = {}
            for choice in range(groups[s], groups[s + 1]):
                if weights[choice] is None:
                    continue
                for entry in model.transition_matrix.get_row(choice):
                    term = entry.value * weights[choice]
                    row[entry.column] = row[entry.column] + term if entry.column in row else term
            for column in sorted(row):
                builder.add_next_value(s, column, row[column])
        rewards = {name: self._induced_rewards(name, weights, groups) for name in model.reward_models}
        components = SparseModelComponents[stormpy.RationalFunction](
            transition_matrix=builder.build(n, n), state_labeling=model.labeling, reward_models=rewards)
        components.state_valuations = model.state_valuations
        dtmc = SparseDtmc[stormpy.RationalFunction](components)
        return ParametricBuild.of(self.source, dtmc, self.formulas, self.parameters)

    def _induced_rewards(self, name: str, weights: Sequence[Any], groups: Sequence[int]):
        rm = self.model.reward_models[name]
        if rm.has_transition_rewards:
            raise ParameterError(f"{self.source}: the reward structure \"{name}\" has transition rewards, which the "
                                 f"DTMC a strategy induces cannot carry")
        kwargs = {}
        if rm.has_state_rewards:
            kwargs["optional_state_reward_vector"] = list(rm.state_rewards)
        if rm.has_state_action_rewards:
            per_choice = list(rm.state_action_rewards)
            expected = []
            for s in range(len(groups) - 1):
                total = _constant(Fraction(0))
                for choice in range(groups[s], groups[s + 1]):
                    if weights[choice] is not None:
                        total = total + per_choice[choice] * weights[choice]
                expected.append(total)
            kwargs["optional_state_action_reward_vector"] = expected
        return SparseRewardModel[stormpy.RationalFunction](**kwargs)


@dataclass(frozen=True)
class SolutionFunction:
    """A bound's quantity as a rational function of the parameters (``text``, as Storm prints it), its value and
    gradient (parameter -> partial derivative) at a valuation, exactly, and the parameters it depends on."""

    text: str
    value: Fraction
    gradient: Mapping[str, Fraction]
    parameters: frozenset[str]


class RegionChecker:
    """Storm's region checking of one bound by parameter lifting (module docstring). :meth:`extremum` gives a sound
    bound on the bound's quantity over a box: a lower bound on its minimum, an upper bound on its maximum."""

    def __init__(self, build: ParametricBuild, index: int, engine: str) -> None:
        self.build, self.index, self.engine = build, index, engine
        name, self.method, self.proves = ENGINES[engine]
        self.exact = engine == EXACT_LIFTING
        self.precision = Fraction(0) if self.exact else PRECISION
        self.calls, self.seconds = 0, 0.0
        self.task = task = stormpy.developer.CheckTask[stormpy.RationalFunction](build.formulas[index], True)
        status = (_developer.GraphPreservationStatus.NONE if engine == ROBUST_LIFTING
                  else _developer.GraphPreservationStatus.GRAPH_PRESERVING)

        def initialise():
            return _developer.initialize_region_model_checker(self._environment(), build.model, task,
                                                              engine=getattr(_pars.RegionCheckEngine, name),
                                                              graph_preservation_status=status)
        try:
            self.checker = in_thread(initialise, f"preparing {self.engine.replace('lifting', 'parameter lifting')}")
        except (RuntimeError, ValueError) as err:
            raise PropertyError(f"{build.formulas[index]}: Storm's parameter lifting cannot check it: "
                                f"{storm_message(err)}") from None

    def _environment(self):
        if self.exact:
            return stormpy.environments.exact()
        env = storm_environment(False, SOUND)
        return env

    def extremum(self, lo: Mapping[str, Fraction], hi: Mapping[str, Fraction], direction: str,
                 seconds: float | None = None) -> Fraction | float | None:
        """A lower bound on the minimum (``direction`` "min") or an upper bound on the maximum ("max") of the bound's
        quantity over the box [lo, hi]: Storm's bound on the lifted model, widened by twice the solver's relative
        precision (floating point); ``inf`` for an unbounded expected reward; None when Storm took more than
        ``seconds``."""
        start = time.perf_counter()
        try:
            value = self.build._ask(("extremum", ("region", self.index, self.engine), dict(lo), dict(hi), direction),
                                    f"{self.engine.replace('lifting', 'parameter lifting')} on a box", seconds)
        except (RuntimeError, ValueError) as err:
            raise PropertyError(f"{self.build.formulas[self.index]}: Storm's parameter lifting cannot check it: "
                                f"{storm_message(err)}") from None
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - start
        if value is None or not isinstance(value, Fraction) or not self.precision:
            return value
        margin = 2 * self.precision * abs(value)
        return value - margin if direction == "min" else value + margin

    def bound(self, lo: Mapping[str, Fraction], hi: Mapping[str, Fraction], direction: str) -> Fraction | float:
        """Storm's bound on the lifted model, as it gives it (in the worker)."""
        optimization = (_pars.OptimizationDirection.MINIMIZE if direction == "min"
                        else _pars.OptimizationDirection.MAXIMIZE)
        return _number(self.checker.get_bound_at_init_state(self._environment(), self.build._region(lo, hi),
                                                            optimization))


# ================================================================================================ helpers
def _quantity(formula, nondeterministic: bool):
    """The bounded formula's quantity: the formula without its bound; on an MDP with the optimum over the schedulers
    that decides the bound when it names none (``P<=b``: Pmax, ``P>=b``: Pmin), as Storm decides it."""
    quantity = formula.clone()
    quantity.remove_bound()
    if nondeterministic and not formula.has_optimality_type:
        upper = formula.comparison_type.name in ("LESS", "LEQ")
        quantity.set_optimality_type(stormpy.logic.OptimizationDirection.MAXIMIZE if upper
                                     else stormpy.logic.OptimizationDirection.MINIMIZE)
    return quantity


def _multiaffine(f) -> bool:
    if not f.denominator.is_constant():
        return False
    polynomial = f.numerator.polynomial()
    return all(polynomial.degree(v) <= 1 for v in f.gather_variables())


def _coefficient(x: Fraction):
    return stormpy.RationalFunctionCoefficient(str(Fraction(x)))


def _constant(x: Fraction):
    """The constant rational function ``x``."""
    return stormpy.RationalFunction(stormpy.Polynomial(_coefficient(x)))


def _number(value) -> Fraction | float:
    """A Storm number as a Fraction (``inf`` stays a float). Exact values can have more digits than Python converts
    by default (a BRP with 22,019 transitions: 6,908), so the limit is lifted while it is read."""
    text = str(value)
    if text in ("inf", "-inf"):
        return float(text)
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return Fraction(text)
    finally:
        sys.set_int_max_str_digits(limit)


def _printed(f) -> str:
    """A rational function as Storm prints it, without a denominator of 1."""
    text = str(f)
    return text.removesuffix("/(1)")


def exact_text(x: Fraction) -> str:
    """``x`` as a finite decimal where it has one (0.375), else as a fraction (1/3): both read exactly by Storm."""
    x = Fraction(x)
    d = x.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:
        return str(x)
    digits = max(twos, fives)
    scaled = x * 10 ** digits
    sign = "-" if scaled < 0 else ""
    whole = str(abs(scaled.numerator))
    if digits == 0:
        return sign + whole
    whole = whole.rjust(digits + 1, "0")
    return f"{sign}{whole[:-digits]}.{whole[-digits:]}".rstrip("0").rstrip(".")
