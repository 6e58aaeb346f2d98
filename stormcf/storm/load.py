"""Parsing and building models with Storm: PRISM, JANI and DRN files, constants, model types."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import stormpy
import stormpy.io as _sio
from stormpy.developer import storage as _storage

from ..errors import ConstantsError, ModelError
from ..examples import resolve_file
from ..model import ExplicitModel
from .extract import _arrays_by_iteration, _arrays_by_umb, _explicit_model
from .formulas import _parse_storm_properties
from .handle import StormHandle, _storm_message


def storm_version() -> str:
    import stormpy.info
    return f"stormpy {stormpy.__version__} (Storm {stormpy.info.storm_version()})"



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
