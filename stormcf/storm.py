"""The Storm bridge: the only module of stormcf that imports stormpy (2.0).

What crosses the bridge:

- **in**: PRISM / JANI / DRN files with constants and properties are parsed and built by Storm (with state
  valuations, choice labels and all reward models) and turned into an :class:`~stormcf.model.ExplicitModel` through
  Storm's bulk UMB export (a tar of raw CSR arrays; 12-80x faster than Python loops over stormpy entries);
- **out**: explicit models (MDPs, DTMCs induced by strategies, interval MDPs) are rebuilt in Storm from arrays with
  ``SparseMatrixBuilder`` and model-checked there, in floating point or in exact rational arithmetic.

Keeping every stormpy call here means a future stormpy change touches one file.
"""
from __future__ import annotations

import json
import re
import tarfile
import tempfile
import weakref
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
import stormpy
import stormpy.io as _sio
from stormpy.developer import storage as _storage
from stormpy.datastructures import BitVector, SparseMatrixBuilder
from stormpy.models import (ChoiceLabeling, SparseDtmc, SparseMdp, SparseModelComponents, SparseRewardModel,
                            StateLabeling)

from .errors import ConstantsError, ModelError, PropertyError, StormcfError
from .examples import resolve_file
from .model import ExplicitModel, RewardModel
from .properties import Property

stormpy.developer.set_log_level(stormpy.developer.LogLevel.OFF)   # Storm's own log lines would pollute stdout

#: relative precision of Storm's sound value iteration for floating-point checks
PRECISION = Fraction(1, 10**10)
_PRISM_SUFFIXES = (".prism", ".nm", ".pm", ".sm")


def storm_version() -> str:
    import stormpy.info
    return f"stormpy {stormpy.__version__} (Storm {stormpy.info.storm_version()})"


# ================================================================================================== loading models
@dataclass(eq=False)
class StormHandle:
    """What stormcf keeps of a model Storm built: the symbolic description, the sparse model and its properties."""

    description: Any                    # stormpy PrismProgram / JaniModel, or None (DRN, arrays)
    model: Any                          # stormpy sparse model (double)
    properties: list = field(default_factory=list)
    exact_model: Any = None             # the stormpy.Rational build, on demand
    exact_values: tuple | None = None   # its transition probabilities as Fractions
    _fresh_label: int = 0


def load_model(path: str | Path, constants: str | Mapping[str, Any] | None = None,
               properties: Sequence[str] = (), naming: str = "valuation",
               extraction: str = "umb") -> ExplicitModel:
    """Parse and build a PRISM (``.prism/.nm/.pm``), JANI (``.jani``) or DRN (``.drn``) model with Storm.

    Args:
        path: the model file.
        constants: undefined constants, as ``"N=3,p=0.5"`` or ``{"N": 3, "p": 0.5}``.
        properties: property strings the model is built for; Storm adds a label for every expression they use
            (``F s=3``), so they can be checked later.
        naming: state-naming scheme of the result (see :class:`~stormcf.model.ExplicitModel`).
        extraction: ``"umb"`` (bulk export, the default) or ``"iteration"`` (Python loops over stormpy's entries;
            slow, kept as an independent cross-check for the tests).
    """
    name = str(path)                      # messages name the file as the user gave it
    file = resolve_file(path)
    suffix = file.suffix.lower()
    if suffix == ".drn":
        if constants:
            raise ConstantsError(f"{name}: DRN files have no constants")
        handle = _build_drn(file, name)
    else:
        description = _parse_description(file, suffix, name)
        description = _instantiate(description, constants, name)
        handle = _build(description, properties, name)
    arrays = _arrays_by_umb(handle.model) if extraction == "umb" else _arrays_by_iteration(handle.model)
    source = file.name + (f" ({_constants_text(constants)})" if constants else "")
    return _explicit_model(handle, arrays, source, naming)


def _parse_description(file: Path, suffix: str, name: str):
    try:
        if suffix == ".jani":
            jani, _ = stormpy.parse_jani_model(str(file))
            return jani
        return stormpy.parse_prism_program(str(file))
    except Exception as err:   # Storm raises RuntimeError with its exception name in the text
        raise ModelError(_parse_error_message(name, err)) from None


def _parse_error_message(path: str, err: Exception) -> str:
    text = str(err).strip()
    m = re.search(r"Parsing error at (\d+):(\d+):\s*(.*?)(?:, here:|\n|$)", text)
    if m:
        return f"{path}:{m.group(1)}:{m.group(2)}: syntax error: {m.group(3).strip()}"
    m = re.search(r"in line (\d+)", text)
    first = _storm_message(text)
    return f"{path}:{m.group(1)}: {first}" if m else f"{path}: {first}"


def _storm_message(text: str) -> str:
    """Storm's message without the exception class prefix, on one line."""
    text = re.sub(r"^\w+(Exception|Error): ", "", str(text).strip())
    return " ".join(text.split())


def _constants_text(constants: str | Mapping[str, Any] | None) -> str:
    if constants is None:
        return ""
    if isinstance(constants, str):
        return constants
    return ",".join(f"{k}={v}" for k, v in constants.items())


def _instantiate(description, constants, path: str):
    text = _constants_text(constants)
    if text:
        try:
            description, _ = stormpy.instantiate_constants(description, text)
        except Exception as err:
            raise ConstantsError(f"{path}: {_storm_message(err)}") from None
    undefined = [c.name for c in description.constants if not c.defined]
    if undefined:
        raise ConstantsError(f"{path}: undefined constants {', '.join(undefined)}; "
                             f"give them with --constants {','.join(u + '=...' for u in undefined)}")
    return description


def _build(description, properties: Sequence[str], path: str) -> StormHandle:
    if isinstance(description, _storage.PrismProgram):
        if description.model_type not in (_storage.PrismModelType.MDP, _storage.PrismModelType.DTMC):
            raise ModelError(f"{path}: stormcf works on MDPs and DTMCs, not {description.model_type.name}")
        if description.model_type == _storage.PrismModelType.MDP:
            # unlabelled commands get the names <module>_cmd_<i>, so that every choice has an action name
            description = description.label_unlabelled_commands({})
    props = _parse_storm_properties(description, properties)
    try:
        model = stormpy.build_model(description, options=stormpy.BuilderOptions(props, build_full=True))
    except Exception as err:
        raise ModelError(f"{path}: {_storm_message(err)}") from None
    if model.model_type not in (stormpy.models.ModelType.MDP, stormpy.models.ModelType.DTMC):
        raise ModelError(f"{path}: stormcf works on MDPs and DTMCs, not {model.model_type.name}")
    return StormHandle(description, model, list(props))


def _build_drn(file: Path, path: str) -> StormHandle:
    options = _sio.DirectEncodingParserOptions()
    options.build_choice_labeling = True
    try:
        model = stormpy.build_model_from_drn(str(file), options=options)
    except Exception as err:
        raise ModelError(f"{path}: {_storm_message(err)}") from None
    if model.model_type not in (stormpy.models.ModelType.MDP, stormpy.models.ModelType.DTMC):
        raise ModelError(f"{path}: stormcf works on MDPs and DTMCs, not {model.model_type.name}")
    return StormHandle(None, model)


def _parse_storm_properties(description, properties: Iterable[str]) -> list:
    props = []
    for text in properties:
        try:
            parsed = (stormpy.parse_properties(text, description) if description is not None
                      else stormpy.parse_properties(text))
        except Exception as err:
            raise PropertyError(f"cannot parse property '{text}': {_storm_message(err)}") from None
        if not parsed:
            raise PropertyError(f"no property in '{text}'")
        if isinstance(description, _storage.PrismProgram):
            known = {label.name for label in description.labels} | {"init", "deadlock"}
            for prop in parsed:
                unknown = sorted(set(_quoted_labels(str(prop.get_raw_formula()))) - known)
                if unknown:
                    raise PropertyError(f"unknown label \"{unknown[0]}\" in property '{text}' "
                                        f"(labels: {', '.join(sorted(known - {'init', 'deadlock'})) or 'none'})")
        props.extend(parsed)
    return props


def _quoted_labels(formula: str) -> list[str]:
    """The quoted label names of a formula (reward model names ``R{"name"}`` are not labels)."""
    return re.findall(r'"([^"]*)"', re.sub(r'\{"[^"]*"\}', "", formula))


# ================================================================================================== extraction
def _arrays_by_umb(model) -> dict:
    """Transition matrix, labels, rewards and action names of a sparse model through Storm's UMB export."""
    options = _sio.UmbExportOptions()
    options.compression = _sio.CompressionMode.NO_COMPRESSION
    with tempfile.TemporaryDirectory(prefix="stormcf-") as tmp:
        file = Path(tmp) / "model.umb"
        _sio.export_to_umb(model, str(file), options=options)
        with tarfile.open(file) as tar:
            return _decode_umb(tar, model)


def _decode_umb(tar: tarfile.TarFile, model) -> dict:
    names = set(tar.getnames())
    raw = lambda name: tar.extractfile(name).read()                          # noqa: E731
    index = json.loads(raw("index.json"))
    if index.get("format-version") != 1:
        raise StormcfError(f"unsupported UMB format version {index.get('format-version')} (stormcf reads version 1)")
    ts = index["transition-system"]
    n, n_choices = ts["#states"], ts["#choices"]
    u64 = lambda name: np.frombuffer(raw(name), "<u8").astype(np.int64)     # noqa: E731
    bits = lambda name: np.unpackbits(np.frombuffer(raw(name), np.uint8), bitorder="little")[:n].astype(bool)  # noqa
    if ts["branch-probability-type"]["type"] != "double":
        raise StormcfError(f"UMB export with {ts['branch-probability-type']['type']} probabilities is not supported")
    arrays = {
        "row_groups": u64("state-to-choices.bin") if "state-to-choices.bin" in names else np.arange(n + 1),
        "initial": np.flatnonzero(bits("state-is-initial.bin")),
        "transitions": sp.csr_matrix((np.frombuffer(raw("branch-to-probability.bin"), "<f8"),
                                      u64("branch-to-target.bin"), u64("choice-to-branches.bin")),
                                     shape=(n_choices, n)),
    }
    annotations = index.get("annotations", {})
    arrays["labels"] = {info.get("alias", key): bits(f"annotations/aps/{key}/states/values.bin")
                        for key, info in annotations.get("aps", {}).items() if "states" in info["applies-to"]}
    rewards = {}
    for key, info in annotations.get("rewards", {}).items():
        parts = {}
        for where, part in (("states", "state"), ("choices", "choice"), ("branches", "transition")):
            if where in info["applies-to"]:
                parts[part] = np.frombuffer(raw(f"annotations/rewards/{key}/{where}/values.bin"), "<f8")
        # Storm writes the unnamed PRISM reward structure as "default" without an alias; its own name is ""
        rewards[info["alias"] if "alias" in info else ("" if key == "default" else key)] = parts
    arrays["rewards"] = rewards
    if "actions/choices/values.bin" in names:
        offsets = np.frombuffer(raw("actions/choices/string-mapping.bin"), "<u8")
        text = raw("actions/choices/strings.bin").decode()
        arrays["action_names"] = [text[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
        arrays["choice_actions"] = np.frombuffer(raw("actions/choices/values.bin"), "<u4").astype(np.int64)
    else:
        arrays["action_names"], arrays["choice_actions"] = [""], np.zeros(n_choices, dtype=np.int64)
    return arrays


def _arrays_by_iteration(model) -> dict:
    """The same arrays as :func:`_arrays_by_umb`, read entry by entry through the stormpy API (slow; for tests)."""
    M, n = model.transition_matrix, model.nr_states
    indptr, cols, vals = [0], [], []
    for r in range(M.nr_rows):
        for e in M.get_row(r):
            cols.append(e.column)
            vals.append(e.value)
        indptr.append(len(cols))
    row_groups = (np.array(list(model.nondeterministic_choice_indices), dtype=np.int64)
                  if model.model_type == stormpy.models.ModelType.MDP else np.arange(n + 1))
    labels = {name: _mask(model.labeling.get_states(name), n)
              for name in model.labeling.get_labels() if name != "init"}
    names, choice_actions = [""], np.zeros(model.nr_choices, dtype=np.int64)
    if model.has_choice_labeling():
        cl = model.choice_labeling
        for r in range(model.nr_choices):
            name = ",".join(sorted(cl.get_labels_of_choice(r)))
            if name not in names:
                names.append(name)
            choice_actions[r] = names.index(name)
    rewards = {}
    for name, rm in model.reward_models.items():
        parts = {}
        if rm.has_state_rewards:
            parts["state"] = np.array(list(rm.state_rewards), dtype=float)
        if rm.has_state_action_rewards:
            parts["choice"] = np.array(list(rm.state_action_rewards), dtype=float)
        if rm.has_transition_rewards:
            parts["transition"] = np.array([e.value for e in rm.transition_rewards], dtype=float)
        rewards[name] = parts
    return {"row_groups": row_groups, "initial": np.array(list(model.initial_states), dtype=np.int64),
            "transitions": sp.csr_matrix((np.array(vals, dtype=float), np.array(cols, dtype=np.int64),
                                          np.array(indptr, dtype=np.int64)), shape=(M.nr_rows, M.nr_columns)),
            "labels": labels, "rewards": rewards, "action_names": names, "choice_actions": choice_actions}


def _mask(bitvector, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[np.fromiter(iter(bitvector), dtype=np.int64)] = True
    return mask


def _valuations(model, description=None) -> dict[str, np.ndarray]:
    """The state variables' values in every state. JANI's transient variables (labels, rewards) are not state
    variables and are left out."""
    if not model.has_state_valuations():
        return {}
    transient = set()
    if isinstance(description, _storage.JaniModel):
        variables = [v for a in description.automata for v in a.variables] + list(description.global_variables)
        transient = {v.name for v in variables if v.is_transient}
    sv = model.state_valuations
    out = {}
    for var in sv.get_all_variables():
        if var.name in transient:
            continue
        if var.has_boolean_type():
            out[var.name] = np.array(sv.get_values_states(var), dtype=bool)
        elif var.has_integer_type():
            out[var.name] = np.array(sv.get_values_states(var), dtype=np.int64)
        else:
            out[var.name] = np.array(sv.get_double_values(var), dtype=float)
    return out


def _explicit_model(handle: StormHandle, arrays: dict, source: str, naming: str) -> ExplicitModel:
    model = handle.model
    initial = arrays["initial"]
    if len(initial) != 1:
        raise ModelError(f"{source}: stormcf needs exactly one initial state, the model has {len(initial)}")
    # Storm writes a choice with several labels as one joined name "a,b"; PRISM choices carry one action name
    rewards = {name: RewardModel(name, **parts) for name, parts in arrays["rewards"].items()}
    explicit = ExplicitModel(
        transitions=arrays["transitions"], row_groups=arrays["row_groups"],
        choice_actions=arrays["choice_actions"], action_names=arrays["action_names"],
        labels=arrays["labels"], valuations=_valuations(model, handle.description), rewards=rewards,
        initial_state=int(initial[0]),
        model_type="dtmc" if model.model_type == stormpy.models.ModelType.DTMC else "mdp",
        source=source, storm=handle)
    return explicit.with_naming(naming) if naming != "valuation" else explicit


# ================================================================================================== explicit -> Storm
_BUILT: "weakref.WeakKeyDictionary[ExplicitModel, StormHandle]" = weakref.WeakKeyDictionary()


def storm_model_of(model: ExplicitModel):
    """The stormpy sparse model of an explicit model: Storm's own if the model was loaded from a file, else one
    built from the arrays (cached)."""
    return _handle_of(model).model


def _handle_of(model: ExplicitModel) -> StormHandle:
    if isinstance(model.storm, StormHandle):
        return model.storm
    handle = _BUILT.get(model)
    if handle is None:
        handle = StormHandle(None, _model_from_arrays(model))
        _BUILT[model] = handle
    return handle


def _matrix(P: sp.csr_matrix, row_groups: np.ndarray | None, value_type=float, values: Sequence | None = None):
    """A stormpy SparseMatrix from CSR arrays (rows in order, columns ascending within a row)."""
    n_rows, n_cols = P.shape
    grouped = row_groups is not None
    builder = SparseMatrixBuilder[value_type](rows=n_rows, columns=n_cols, entries=P.nnz, force_dimensions=True,
                                              has_custom_row_grouping=grouped,
                                              row_groups=len(row_groups) - 1 if grouped else 0)
    rows = np.repeat(np.arange(n_rows), np.diff(P.indptr)).tolist()
    data = P.data.tolist() if values is None else list(values)
    if grouped:
        builder.add_next_values(rows, P.indices.tolist(), data, row_groups[:-1].tolist())
        return builder.build(n_rows, n_cols, len(row_groups) - 1)
    builder.add_next_values(rows, P.indices.tolist(), data)
    return builder.build(n_rows, n_cols)


def _labeling(labels: Mapping[str, np.ndarray], initial: int, n: int):
    labeling = StateLabeling(n)
    labeling.add_label("init")
    labeling.add_label_to_state("init", initial)
    for name, mask in labels.items():
        labeling.add_label(name)
        labeling.set_states(name, BitVector(n, np.flatnonzero(mask).tolist()))
    return labeling


def _model_from_arrays(model: ExplicitModel):
    is_dtmc = model.model_type == "dtmc"
    matrix = _matrix(model.transitions, None if is_dtmc else model.row_groups)
    comps = SparseModelComponents(transition_matrix=matrix,
                                  state_labeling=_labeling(model.labels, model.initial_state, model.n_states))
    comps.reward_models = {name: _reward_model(rm, model) for name, rm in model.rewards.items()}
    if not is_dtmc:
        labeling = ChoiceLabeling(model.n_choices)
        for k, name in enumerate(model.action_names):
            if name:
                labeling.add_label(name)
                labeling.set_choices(name, BitVector(model.n_choices, np.flatnonzero(model.choice_actions == k).tolist()))
        comps.choice_labeling = labeling
    return SparseDtmc(comps) if is_dtmc else SparseMdp(comps)


def _reward_model(rm: RewardModel, model: ExplicitModel):
    kwargs = {}
    if rm.state is not None:
        kwargs["optional_state_reward_vector"] = rm.state.tolist()
    if rm.choice is not None or rm.transition is not None:
        # transition rewards enter as their expectation per choice (same expected accumulated reward)
        kwargs["optional_state_action_reward_vector"] = model.expected_choice_rewards(rm.name).tolist()
    return SparseRewardModel(**kwargs)


# ================================================================================================== properties
def parse_property(model: ExplicitModel, text: str) -> Property:
    """Parse a PCTL property against the model's program (so PRISM constants and expressions work).

    Raises :class:`PropertyError` for syntax errors, unknown labels, unknown reward models, and expressions whose
    label was not built (pass the property to :func:`load_model`).
    """
    handle = _handle_of(model)
    storm_property = _parse_storm_properties(handle.description, [text])
    if len(storm_property) != 1:
        raise PropertyError(f"expected one property, got {len(storm_property)} in '{text}'")
    storm_property = storm_property[0]
    formula = storm_property.get_raw_formula()
    printed = str(formula)
    _check_names(model, printed)
    kind = type(formula).__name__
    operator = {"ProbabilityOperatorFormula": "P", "RewardOperatorFormula": "R",
                "TimeOperatorFormula": "T"}.get(kind)
    if operator is None:
        return Property(printed, None, None, None, None, "state", target=_state_formula_mask(handle, formula, printed),
                        storm=storm_property)
    comparison = threshold = None
    if formula.has_bound:
        comparison = {"LESS": "<", "LEQ": "<=", "GREATER": ">", "GEQ": ">="}[formula.comparison_type.name]
        threshold = Fraction(str(formula.threshold))
    optimization = None
    if formula.has_optimality_type:
        optimization = "min" if formula.optimality_type.name == "MINIMIZE" else "max"
    reward_model = None
    if operator == "R":
        reward_model = formula.reward_name if formula.has_reward_model_name() else model.reward_model(None).name
    sub = formula.subformula
    path, target, constraint, steps = _path_formula(handle, sub, printed)
    return Property(printed, operator, optimization, comparison, threshold, path, target=target,
                    constraint=constraint, step_bound=steps, reward_model=reward_model, storm=storm_property)


def _check_names(model: ExplicitModel, printed: str) -> None:
    for name in re.findall(r'R\{"([^"]*)"\}', printed):
        model.reward_model(name)                                     # raises PropertyError if unknown
    for name in _quoted_labels(printed):
        model.label(name)                                            # raises PropertyError if unknown


def _path_formula(handle: StormHandle, sub, printed: str):
    kind = type(sub).__name__
    if kind == "EventuallyFormula":
        return "eventually", _state_formula_mask(handle, sub.subformula, printed), None, None
    if kind in ("UntilFormula", "BoundedUntilFormula"):
        target = _state_formula_mask(handle, sub.right_subformula, printed)
        constraint = _state_formula_mask(handle, sub.left_subformula, printed)
        if kind == "UntilFormula":
            return "until", target, constraint, None
        steps = None
        if not sub.has_lower_bound:
            try:
                steps = int(str(sub.upper_bound_expression))
            except ValueError:
                steps = None
        return "bounded_until", target, constraint, steps
    return {"GloballyFormula": "globally", "CumulativeRewardFormula": "cumulative",
            "InstantaneousRewardFormula": "instantaneous"}.get(kind, "other"), None, None, None


def _state_formula_mask(handle: StormHandle, formula, printed: str) -> np.ndarray:
    try:
        result = stormpy.model_checking(handle.model, formula)
    except Exception as err:
        message = _storm_message(err)
        if "unknown label" in message:
            raise PropertyError(f"property {printed}: {message}; expressions in properties need a label built with "
                                f"the model: pass the property when loading the model") from None
        raise PropertyError(f"property {printed}: {message}") from None
    return _mask(result.get_truth_values_vector(), handle.model.nr_states)


# ================================================================================================== model checking
@dataclass(frozen=True)
class CheckResult:
    """A Storm model-checking result.

    ``values`` holds the quantitative result of every state (``None`` for state formulas); ``exact`` the same as
    Fractions when the check was exact; ``holds`` the truth value of a bounded property in every state.
    """

    values: np.ndarray | None
    exact: tuple[Fraction | float, ...] | None
    holds: np.ndarray | None


def _environment(exact: bool):
    if exact:
        return stormpy.environments.exact()
    env = stormpy.environments.sound()
    precision = stormpy.Rational(f"{PRECISION.numerator}/{PRECISION.denominator}")
    env.solver().min_max().precision = precision
    env.solver().native().precision = precision
    return env


def check(model: ExplicitModel, prop: Property) -> CheckResult:
    """Model-check a property on the model itself (an MDP needs ``min``/``max``; Storm says so otherwise)."""
    return _check_storm(storm_model_of(model), prop, exact=False, n=model.n_states)


def _check_storm(storm_model, prop: Property, exact: bool, n: int) -> CheckResult:
    env = _environment(exact)
    formula = prop.storm.get_raw_formula()
    try:
        holds = None
        if prop.operator is None:
            result = stormpy.model_checking(storm_model, formula, environment=env)
            return CheckResult(None, None, _mask(result.get_truth_values_vector(), n))
        if prop.has_bound:
            qualitative = stormpy.model_checking(storm_model, formula, environment=env)
            holds = _mask(qualitative.get_truth_values_vector(), n)
            formula = formula.clone()
            formula.remove_bound()
        result = stormpy.model_checking(storm_model, formula, environment=env)
    except Exception as err:
        raise PropertyError(f"Storm cannot check {prop.text} here: {_storm_message(err)}") from None
    raw = result.get_value_vector()
    if exact:
        fractions = tuple(_fraction(v) for v in raw)
        return CheckResult(np.array([float(f) for f in fractions]), fractions, holds)
    return CheckResult(np.array(raw, dtype=float), None, holds)


def _fraction(value) -> Fraction | float:
    """A Storm rational as a Fraction (infinite expected rewards stay ``inf``)."""
    text = str(value)
    return float(text) if text in ("inf", "-inf") else Fraction(text)


def check_dtmc(P: sp.csr_matrix, model: ExplicitModel, prop: Property, state_rewards: Mapping[str, np.ndarray],
               choice_rewards: Mapping[str, np.ndarray], exact_P: Sequence[Fraction] | None = None,
               exact_choice_rewards: Mapping[str, Sequence[Fraction]] | None = None) -> CheckResult:
    """Build the DTMC with transition matrix ``P`` (n x n CSR, the labels and initial state of ``model``) in Storm
    and model-check ``prop`` on it.

    Rewards: per reward model, a state-reward vector and a state-action-reward vector (one entry per state).
    With ``exact_P`` (Fractions aligned with ``P.data``) the DTMC is built over ``stormpy.Rational`` and checked in
    exact arithmetic; the result's ``exact`` holds the fractions.
    """
    n = model.n_states
    value_type = stormpy.Rational if exact_P is not None else float
    conv = (lambda xs: [_rational(x) for x in xs]) if exact_P is not None else (lambda xs: [float(x) for x in xs])
    matrix = _matrix(P, None, value_type, conv(exact_P) if exact_P is not None else None)
    reward_models = {}
    for name in set(state_rewards) | set(choice_rewards):
        kwargs = {}
        if name in state_rewards:
            kwargs["optional_state_reward_vector"] = conv(
                [Fraction(repr(float(x))) for x in state_rewards[name]] if exact_P is not None else state_rewards[name])
        if name in choice_rewards:
            vec = exact_choice_rewards[name] if exact_choice_rewards else choice_rewards[name]
            kwargs["optional_state_action_reward_vector"] = conv(vec)
        reward_models[name] = SparseRewardModel[value_type](**kwargs)
    comps = SparseModelComponents[value_type](transition_matrix=matrix,
                                              state_labeling=_labeling(model.labels, model.initial_state, n),
                                              reward_models=reward_models)
    dtmc = SparseDtmc[value_type](comps)
    return _check_storm(dtmc, prop, exact=exact_P is not None, n=n)


def _rational(x) -> Any:
    return stormpy.Rational(x if isinstance(x, Fraction) else Fraction(repr(float(x))))


def _exact_storm_model(model: ExplicitModel):
    """Storm's build of the model over ``stormpy.Rational`` (cached); same states and choices as the float build."""
    handle = _handle_of(model)
    if handle.exact_model is None:
        if handle.description is None:
            raise StormcfError(f"{model.source}: exact arithmetic needs a model given as a PRISM or JANI file")
        exact = stormpy.build_model[stormpy.Rational](
            handle.description, options=stormpy.BuilderOptions(handle.properties, build_full=True))
        if exact.nr_states != model.n_states or exact.nr_choices != model.n_choices:
            raise StormcfError("the exact (rational) build of the model differs from the float build")
        handle.exact_model = exact
    return handle.exact_model


def check_exact(model: ExplicitModel, prop: Property) -> CheckResult:
    """Model-check a property on the model itself in exact rational arithmetic."""
    return _check_storm(_exact_storm_model(model), prop, exact=True, n=model.n_states)


def exact_transition_values(model: ExplicitModel) -> tuple[Fraction, ...]:
    """The transition probabilities as exact fractions, aligned with ``model.transitions.data``.

    For a model Storm built from a PRISM/JANI description, the model is rebuilt over ``stormpy.Rational`` (so
    ``0.4`` is exactly 2/5); otherwise each float is read as the shortest decimal that prints it.
    """
    handle = _handle_of(model)
    if handle.exact_values is None:
        if handle.description is None:
            handle.exact_values = tuple(Fraction(repr(float(x))) for x in model.transitions.data)
        else:
            cols, values = [], []
            for e in _exact_storm_model(model).transition_matrix:
                cols.append(e.column)
                values.append(Fraction(str(e.value)))
            if not np.array_equal(np.array(cols, dtype=np.int64), model.transitions.indices):
                raise StormcfError("the exact (rational) build of the model differs from the float build")
            handle.exact_values = tuple(values)
    return handle.exact_values


# ================================================================================================== reachability
def _target_label(model: ExplicitModel, target: np.ndarray) -> str:
    """A label of the Storm model that holds exactly on ``target`` (an existing one, or a fresh one added)."""
    for name, mask in model.labels.items():      # expression labels such as "(s = 8)" cannot be quoted in a property
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and np.array_equal(mask, target):
            return name
    handle = _handle_of(model)
    handle._fresh_label += 1
    name = f"__stormcf_target_{handle._fresh_label}"
    labeling = handle.model.labeling
    labeling.add_label(name)
    labeling.set_states(name, BitVector(model.n_states, np.flatnonzero(target).tolist()))
    return name


def reach_values(model: ExplicitModel, target: np.ndarray, direction: str, scheduler: bool = False):
    """Pmin/Pmax (``direction`` ``"min"``/``"max"``) of ``F target`` in every state, by Storm.

    Returns ``(values, choices)``: ``choices`` is, with ``scheduler=True``, the row chosen by an optimal
    memoryless deterministic scheduler in every state (else ``None``).
    """
    op = "Pmin" if direction == "min" else "Pmax"
    if model.model_type == "dtmc":
        op = "P"
    text = f'{op}=? [F "{_target_label(model, target)}"]'
    try:
        result = stormpy.model_checking(storm_model_of(model), stormpy.parse_property(text),
                                        extract_scheduler=scheduler, environment=_environment(False))
    except Exception as err:
        raise StormcfError(f"Storm failed on {text}: {_storm_message(err)}") from None
    values = np.array(result.get_value_vector(), dtype=float)
    return values, (_scheduler_rows(model, result) if scheduler else None)


def _scheduler_rows(model: ExplicitModel, result) -> np.ndarray:
    """The row chosen in every state by the memoryless deterministic scheduler of a Storm result."""
    sched = result.get_scheduler()
    local = np.fromiter((sched.get_choice(s).get_deterministic_choice() for s in range(model.n_states)),
                        dtype=np.int64, count=model.n_states)
    return model.row_groups[:-1] + local


def optimal_choices(model: ExplicitModel, prop: Property) -> tuple[np.ndarray, np.ndarray]:
    """Values and the rows of an optimal memoryless deterministic scheduler Storm computes for ``prop``."""
    formula = prop.storm.get_raw_formula()
    if prop.has_bound:
        formula = formula.clone()
        formula.remove_bound()
    try:
        result = stormpy.model_checking(storm_model_of(model), formula, extract_scheduler=True,
                                        environment=_environment(False))
    except Exception as err:
        raise PropertyError(f"Storm cannot check {prop.text} here: {_storm_message(err)}") from None
    if not result.has_scheduler():
        raise PropertyError(f"Storm gives no memoryless scheduler for {prop.text} (bounded properties need memory)")
    return np.array(result.get_value_vector(), dtype=float), _scheduler_rows(model, result)


def prob01_states(model: ExplicitModel, target: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """Storm's graph analysis: the states with Pmin/Pmax(F target) = 0 and = 1."""
    op = "Pmin" if direction == "min" else "Pmax"
    if model.model_type == "dtmc":
        op = "P"
    prop = stormpy.parse_property(f'{op}=? [F "{_target_label(model, target)}"]')
    zero, one = stormpy.analysis.compute_prob01_states(storm_model_of(model), prop)
    return _mask(zero, model.n_states), _mask(one, model.n_states)


# ================================================================================================== interval MDPs
#: how nature resolves the intervals of an interval MDP (Storm's UncertaintyResolutionMode)
RESOLUTION = {"robust": "ROBUST", "cooperative": "COOPERATIVE"}


def interval_mdp(lower: sp.csr_matrix, upper: sp.csr_matrix, row_groups: np.ndarray,
                 choice_rewards: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray], initial: int):
    """The interval MDP with P(s' | row) ∈ [lower, upper] (two CSR matrices with the same sparsity; rows = choices
    grouped by ``row_groups``) as a ``stormpy.Interval`` sparse MDP with state-action reward models."""
    n = len(row_groups) - 1
    if lower.shape != upper.shape or lower.nnz != upper.nnz or not np.array_equal(lower.indices, upper.indices):
        raise StormcfError("interval MDP: lower and upper bounds need the same sparsity")
    intervals = [stormpy.Interval(lo, hi) for lo, hi in zip(lower.data.tolist(), upper.data.tolist())]
    matrix = _matrix(lower, np.asarray(row_groups), stormpy.Interval, intervals)
    rewards = {name: SparseRewardModel[stormpy.Interval](
        optional_state_action_reward_vector=[stormpy.Interval(x) for x in np.asarray(r, dtype=float).tolist()])
        for name, r in choice_rewards.items()}
    comps = SparseModelComponents[stormpy.Interval](transition_matrix=matrix,
                                                    state_labeling=_labeling(labels, initial, n),
                                                    reward_models=rewards)
    return SparseMdp[stormpy.Interval](comps)


def check_interval_mdp(imdp, formula: str, resolution: str = "robust") -> np.ndarray:
    """Check ``formula`` (e.g. ``R{"r"}max=? [C<=10]``) on an interval MDP with nature ``"robust"`` (against the
    objective) or ``"cooperative"``; Storm's value of every state."""
    env = stormpy.environments.Environment()
    env.solver().min_max().method = stormpy.environments.MinMaxMethod.VALUE_ITERATION
    env.solver().min_max().precision = stormpy.Rational(f"{PRECISION.numerator}/{PRECISION.denominator}")
    mode = getattr(stormpy.UncertaintyResolutionMode, RESOLUTION[resolution])
    try:
        result = stormpy.model_checking(imdp, stormpy.parse_properties(formula)[0], environment=env,
                                        uncertainty_resolution_mode=mode)
    except Exception as err:
        raise StormcfError(f"Storm cannot check {formula} on the interval MDP: {_storm_message(err)}") from None
    return np.array(result.get_value_vector(), dtype=float)
