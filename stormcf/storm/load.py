"""Parsing and building models with Storm: PRISM, JANI and DRN files, constants, model types."""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

import stormpy
import stormpy.io as _sio
from stormpy.developer import storage as _storage

from ..errors import ConstantsError, ModelError
from ..examples import resolve_file
from ..limits import STORM_BUILD_HEADROOM, THREAD_STACK, require_headroom
from . import precheck
from .handle import Build, StormHandle, storm_message
from .isolate import in_thread
from .rewards import transition_reward_items

if TYPE_CHECKING:       # the extraction (numpy, scipy) is imported when a model is extracted: not for ``info``
    from ..model import ExplicitModel

T = TypeVar("T")

def storm_version() -> str:
    import stormpy.info
    return f"stormpy {stormpy.__version__} (Storm {stormpy.info.storm_version()})"



def load_model(path: str | Path, constants: str | Mapping[str, Any] | None = None, naming: str = "valuation",
               extraction: str = "umb", shown_as: str | None = None) -> ExplicitModel:
    """Parse and build a PRISM (``.prism/.nm/.pm``), JANI (``.jani``) or DRN (``.drn``) model with Storm.

    The whole model is built once, with all labels, reward models, state valuations and action names, and every
    property is then evaluated on it (:func:`~stormcf.storm.parse_property`): the model never depends on a property.

    Args:
        path: the model file.
        constants: undefined constants, as ``"N=3,p=0.5"`` or ``{"N": 3, "p": 0.5}``.
        naming: state-naming scheme of the result (see :class:`~stormcf.model.ExplicitModel`).
        extraction: ``"umb"`` (bulk export, the default) or ``"iteration"`` (Python loops over stormpy's entries;
            slow, kept as an independent cross-check for the tests).
        shown_as: the file's name in messages and in the model's source (default: ``path`` as given), e.g. the
            name a user gave for a file loaded by its absolute path.

    Raises :class:`ModelError` for files stormcf cannot work on (syntax errors, model types other than MDPs and
    DTMCs, several initial states) and :class:`ConstantsError` for undefined or unknown constants. Storm's work runs
    within the active deadline (:func:`~stormcf.storm.isolate.in_thread`).
    """
    shown = str(path) if shown_as is None else shown_as
    return in_loading_thread(lambda: _load_model(path, constants, naming, extraction, shown), shown)


def in_loading_thread(load: Callable[[], T], shown: str) -> T:
    """``load()`` in a thread of its own within the active deadline (:func:`~stormcf.storm.isolate.in_thread`),
    refused first when the memory left cannot hold Storm's builder and that thread's stack."""
    require_headroom(STORM_BUILD_HEADROOM + THREAD_STACK, "Storm's model builder")
    return in_thread(load, f"loading {shown}")


def _load_model(path: str | Path, constants: str | Mapping[str, Any] | None, naming: str,
                extraction: str, shown_as: str) -> ExplicitModel:
    from .extract import arrays_by_iteration, arrays_by_umb, explicit_model
    build, timings = build_file(path, constants, shown_as)
    tick, cpu = time.perf_counter(), time.thread_time()
    arrays = arrays_by_umb(build.handle.model) if extraction == "umb" else arrays_by_iteration(build.handle.model)
    model = explicit_model(build, arrays, model_source(shown_as, constants), naming)
    timings["extract"], timings["extract_cpu"] = time.perf_counter() - tick, time.thread_time() - cpu
    build.handle.timings.update(timings)
    return model


def build_file(path: str | Path, constants: str | Mapping[str, Any] | None, shown_as: str) -> tuple[Build, dict]:
    """Storm's parse and build of a model file (in the calling thread) and the seconds they took: ``parse``,
    ``build`` (wall clock) and ``parse_cpu``, ``build_cpu`` (this thread's CPU: Storm computes in it)."""
    name = shown_as                       # messages name the file as the user gave it
    file = resolve_file(path)
    suffix = file.suffix.lower()
    build: Build
    tick, cpu = time.perf_counter(), time.thread_time()
    timings = {}
    if suffix == ".drn":
        if constants:
            raise ConstantsError(f"{name}: DRN files have no constants")
        build = Build(_build_drn(file, name))
    else:
        precheck_file(file, suffix, name, constants)
        description = parse_description(file, suffix, name)
        if suffix != ".jani":
            _check_declarations(_instantiate(description, constants, name), file, name)
            description = description.simplify().simplify()     # what Storm's parser does by default
        description = _instantiate(description, constants, name)
        timings["parse"], tick = time.perf_counter() - tick, time.perf_counter()
        timings["parse_cpu"], cpu = time.thread_time() - cpu, time.thread_time()
        build = _build(description, name, file.read_bytes().decode("utf-8", "replace") if suffix != ".jani" else "")
    timings["build"] = time.perf_counter() - tick
    timings["build_cpu"] = time.thread_time() - cpu
    return build, timings


def model_source(shown_as: str, constants: str | Mapping[str, Any] | None) -> str:
    """The model's source in messages and documents: the file's name and the constants, ``loan.prism (N=3)``."""
    return Path(shown_as).name + (f" ({constants_text(constants)})" if constants else "")


def load_timings(model: ExplicitModel, cpu: bool = False) -> dict[str, float]:
    """Seconds per phase of loading a model file: ``parse`` (Storm parses the PRISM/JANI file and sets the
    constants), ``build`` (Storm builds the model), ``extract`` (stormcf's explicit model); wall-clock seconds, or
    with ``cpu`` the CPU seconds of the thread that loaded it (Storm computes in it); empty for other models."""
    timings = model.storm.timings if isinstance(model.storm, StormHandle) else {}
    if cpu:
        return {phase[:-len("_cpu")]: t for phase, t in timings.items() if phase.endswith("_cpu")}
    return {phase: t for phase, t in timings.items() if not phase.endswith("_cpu")}


def precheck_file(file: Path, suffix: str, name: str, constants: str | Mapping[str, Any] | None) -> None:
    """Refuse what would crash Storm's parser (:mod:`.precheck`): a division by a constant zero in the file or in the
    constants' values, nesting too deep."""
    given = precheck.split_constants(constants_text(constants))
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return                                  # Storm reports an unreadable file
    if suffix == ".jani":
        precheck.check_nesting(precheck.tokens(text), name)
        precheck.given_constants(given, name)
    else:
        precheck.check_model_text(text, name, given)


def parse_description(file: Path, suffix: str, name: str):
    try:
        if suffix == ".jani":
            jani, _ = stormpy.parse_jani_model(str(file))
            return jani
        return stormpy.parse_prism_program(str(file), simplify=False)     # as written: see _check_declarations
    except Exception as err:   # Storm raises RuntimeError with its exception name in the text
        if suffix != ".jani":
            _refuse_by_type_in_prism_mode(file, name)
        raise ModelError(_parse_error_message(name, err)) from None


def _check_declarations(program, file: Path, name: str) -> None:
    """Refuse what PRISM refuses in the declaration of an integer variable: an empty range (``s : [5..1]``) or an
    initial value outside the range (``s : [0..2] init 5``). Storm's simplification turns a variable that no command
    assigns into a constant, so that it accepted such a declaration ("DTMC with 1 states"); on a variable in use it
    reported "The model does not have a single initial state". ``program``: as written, with the constants given."""
    program = program.substitute_constants()
    # with an ``init ... endinit`` block the variables have no initial values: Storm's expression is then
    # "not initialized", and evaluating it kills the process (SIGSEGV)
    own_inits = not program.has_initial_states_expression
    variables = list(program.global_integer_variables) + [v for m in program.modules for v in m.integer_variables]
    for var in variables:
        try:
            low, high = var.lower_bound_expression.evaluate_as_int(), var.upper_bound_expression.evaluate_as_int()
            init = var.initial_value_expression.evaluate_as_int() if own_inits else None
        except Exception:       # an expression Storm cannot evaluate without a state: left to Storm
            continue
        if low > high:
            raise ModelError(f"{_declared_at(file, name, var.name)}: the variable {var.name} has the empty range "
                             f"[{low}..{high}]")
        if init is not None and not low <= init <= high:
            raise ModelError(f"{_declared_at(file, name, var.name)}: the initial value {init} of the variable "
                             f"{var.name} is outside its range [{low}..{high}]")


def _declared_at(file: Path, name: str, variable: str) -> str:
    """``name:line`` of the declaration ``variable : [`` in the PRISM file (``name`` alone if it is not found)."""
    toks = precheck.tokens(file.read_text(encoding="utf-8", errors="replace"))
    for k in range(len(toks) - 2):
        if toks[k].text == variable and toks[k + 1].text == ":" and toks[k + 2].text == "[":
            return f"{name}:{toks[k].line}"
    return name


def _refuse_by_type_in_prism_mode(file: Path, name: str) -> None:
    """Storm's parser rejects PRISM-style CTMCs unless in PRISM compatibility mode; read such a file in that mode
    only to refuse it by its model type."""
    try:
        kind = _description_type(stormpy.parse_prism_program(str(file), prism_compatibility=True))
    except Exception:
        return
    _require_supported_type(kind, name)


def _parse_error_message(path: str, err: Exception) -> str:
    text = str(err).strip()
    m = re.search(r"Parsing error at (\d+):(\d+):\s*(.*?)(?:, here:|\n|$)", text)
    if m:
        return f"{path}:{m.group(1)}:{m.group(2)}: syntax error: {m.group(3).strip()}"
    m = re.search(r"in line (\d+)", text)
    first = storm_message(text)
    return f"{path}:{m.group(1)}: {first}" if m else f"{path}: {first}"


def constants_text(constants: str | Mapping[str, Any] | None) -> str:
    if constants is None:
        return ""
    if isinstance(constants, str):
        return constants
    return ",".join(f"{k}={v}" for k, v in constants.items())


def _instantiate(description, constants, path: str):
    text = constants_text(constants)
    if text:
        try:
            description, _ = stormpy.instantiate_constants(description, text)
        except Exception as err:
            raise ConstantsError(f"{path}: {storm_message(err)}") from None
    undefined = [c.name for c in description.constants if not c.defined]
    if undefined:
        raise ConstantsError(f"{path}: undefined constants {', '.join(undefined)}; "
                             f"give them with --constants {','.join(u + '=...' for u in undefined)}")
    return description



def builder_options():
    """What stormcf needs of a model Storm builds: every label and reward model, the state valuations and the action
    name of every choice; not Storm's choice origins (``build_full``), which cost a fifth of the build time."""
    options = stormpy.BuilderOptions()
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    options.set_build_state_valuations()
    options.set_build_choice_labels()
    return options


def _build(description, path: str, text: str = "") -> Build:
    """Storm's build of a PRISM program or JANI model (``text``: the file, which tells whether the program can have
    transition rewards at all)."""
    _require_supported_type(_description_type(description), path)
    items, unlabelled = {}, set()
    if isinstance(description, _storage.PrismProgram):
        items = transition_reward_items(description, text)   # label_unlabelled_commands drops them: read them first
        relabel = items or description.number_of_unlabeled_commands
        if description.model_type == _storage.PrismModelType.MDP and relabel:
            # unlabelled commands get the names <module>_cmd_<i>, so that every choice has an action name (and the
            # relabelled program has no transition-reward items, which Storm's builder refuses)
            labelled = description.label_unlabelled_commands({})
            unlabelled = {new.action_name for old_module, new_module in zip(description.modules, labelled.modules)
                          for old, new in zip(old_module.commands, new_module.commands) if not old.is_labeled}
            description = labelled
    require_headroom(STORM_BUILD_HEADROOM, "Storm's model builder")
    try:
        model = stormpy.build_model(description, options=builder_options())
    except Exception as err:
        raise ModelError(f"{path}: {storm_message(err)}") from None
    _require_supported_type(model.model_type.name, path)
    return Build(StormHandle(description, model), items, unlabelled)


def _description_type(description) -> str:
    """The model type of a PRISM or JANI description (stormpy's enum lacks some of Storm's types, e.g. SMG)."""
    try:
        return description.model_type.name
    except ValueError:
        return str(description).split(None, 1)[0].upper()


def _require_supported_type(kind: str, path: str) -> None:
    if kind not in ("MDP", "DTMC"):
        raise ModelError(f"{path}: stormcf works on MDPs and DTMCs, not {kind} models")


def _build_drn(file: Path, path: str) -> StormHandle:
    options = _sio.DirectEncodingParserOptions()
    options.build_choice_labeling = True
    require_headroom(STORM_BUILD_HEADROOM, "Storm's model builder")
    try:
        model = stormpy.build_model_from_drn(str(file), options=options)
    except Exception as err:
        raise ModelError(f"{path}: {storm_message(err)}") from None
    _require_supported_type(model.model_type.name, path)
    return StormHandle(None, model)




def variable_bounds(model: ExplicitModel) -> dict[str, tuple[int, int]]:
    """The declared bounds ``[lo..hi]`` of the bounded integer variables of a PRISM model (global and in modules),
    by variable name; empty for models without a PRISM description (JANI, DRN, arrays)."""
    description = model.storm.description if isinstance(model.storm, StormHandle) else None
    if not isinstance(description, _storage.PrismProgram):
        return {}
    variables = list(description.global_integer_variables)
    for module in description.modules:
        variables += list(module.integer_variables)
    bounds = {}
    for var in variables:
        try:
            bounds[var.name] = (var.lower_bound_expression.evaluate_as_int(),
                                var.upper_bound_expression.evaluate_as_int())
        except Exception:   # a bound Storm cannot evaluate without further constants: leave it out
            continue
    return bounds


def stormpy_example(kind: str, name: str) -> Path:
    """The path of a model shipped with stormpy (``stormpy.examples.files``), e.g. ``("mdp", "slipgrid.nm")``."""
    from stormpy.examples.files import _path
    return Path(_path(kind, name))
