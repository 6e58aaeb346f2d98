"""What stormcf keeps of a model Storm built, and small helpers shared by the bridge modules.

The Storm model a handle keeps is **never modified** by stormcf: a user who asks for it (``storm_model_of``) gets
Storm's build of the whole model, and it stays as it was however many properties are checked. Properties whose
state formulas are PRISM expressions (``F s=3``) and reachability targets given as masks need labels Storm does not
have; the bridge adds them to its own copy of the model (:func:`labelled_model`), built once, whose labelling only
the bridge touches.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from stormpy import Rational
from stormpy.datastructures import BitVector
from stormpy.developer import storage as _storage
from stormpy.models import SparseDtmc, SparseMdp, SparseModelComponents, StateLabeling

from ..limits import is_out_of_memory

if TYPE_CHECKING:       # numpy is imported where masks are made: loading a model for ``info`` needs none
    import numpy as np


@dataclass(eq=False)
class StormHandle:
    """What stormcf keeps of a model Storm built: the symbolic description and the sparse model (float and, on
    demand, exact), plus the bridge's private labelled copies of them."""

    description: Any                    # stormpy PrismProgram / JaniModel, or None (DRN, arrays)
    model: Any                          # stormpy sparse model (double): the whole model, never modified
    exact_model: Any = None             # the stormpy.Rational build, on demand
    exact_values: tuple | None = None   # its transition probabilities as Fractions
    exact_rewards: dict = field(default_factory=dict)   # its reward models: name -> (state, choice rewards), Fractions
    copies: dict = field(default_factory=dict)    # exact (bool) -> the bridge's labelled copy of that model
    timings: dict = field(default_factory=dict)   # loading a file: phase (parse, build, extract) -> seconds


@dataclass
class Build:
    """What loading a model file gives the extraction: Storm's build and the PRISM transition-reward items Storm
    could not build (with the names stormcf gave unlabelled commands, to which ``[]`` items apply)."""

    handle: StormHandle
    transition_items: dict = field(default_factory=dict)
    unlabelled: set = field(default_factory=set)


def labelled_model(handle: StormHandle, labels: Mapping[str, np.ndarray], exact: bool = False):
    """The handle's Storm model (float, or exact) with the extra state labels ``labels`` (name -> mask).

    Without extra labels this is the model itself; otherwise the bridge's private copy, whose labels are set to
    exactly these masks (a label set earlier for another mask is overwritten, so the copy does not grow)."""
    base = handle.exact_model if exact else handle.model
    if not labels:
        return base
    copy = handle.copies.get(exact)
    if copy is None:
        copy = handle.copies[exact] = copy_model(base)
    set_labels(copy.labeling, labels, base.nr_states)
    return copy


def copy_model(model, reward_models: Mapping[str, Any] | None = None):
    """A copy of a sparse MDP or DTMC (any value type) with its own labelling (same matrix, rewards, choice labels,
    valuations), with some reward models replaced by ``reward_models``."""
    value_type = _value_type(model)
    labeling = StateLabeling(model.nr_states)
    for name in model.labeling.get_labels():
        labeling.add_label(name)
        labeling.set_states(name, model.labeling.get_states(name))
    components = SparseModelComponents[value_type](transition_matrix=model.transition_matrix,
                                                   state_labeling=labeling,
                                                   reward_models={**model.reward_models, **(reward_models or {})})
    if model.has_choice_labeling():
        components.choice_labeling = model.choice_labeling
    if model.has_state_valuations():
        components.state_valuations = model.state_valuations
    if model.is_nondeterministic_model:
        return SparseMdp[value_type](components)
    return SparseDtmc[value_type](components)


def _value_type(model):
    return Rational if model.is_exact else float


def set_labels(labeling, labels: Mapping[str, np.ndarray], n: int) -> None:
    """Set (add or overwrite) state labels of a Storm labelling from boolean masks."""
    import numpy as np
    for name, mask in labels.items():
        if not labeling.contains_label(name):
            labeling.add_label(name)
        labeling.set_states(name, BitVector(n, np.flatnonzero(mask).tolist()))


def storm_message(text: str | BaseException) -> str:
    """Storm's message without the exception class prefix, on one line. Storm running out of memory
    (``std::bad_alloc``, a :class:`MemoryError` in Python, or Storm's own "out of memory") is no message about the
    input: it is raised as a :class:`MemoryError`, for the caller (the command line) to report as such."""
    if is_out_of_memory(text if isinstance(text, BaseException) else RuntimeError(text)):
        raise text if isinstance(text, MemoryError) else MemoryError(" ".join(str(text).split())) from None
    text = re.sub(r"^\w+(Exception|Error): ", "", str(text).strip())
    return " ".join(text.split())


def bitvector_mask(bitvector, n: int) -> np.ndarray:
    """The states of a Storm bit vector as a boolean mask over ``n`` states."""
    import numpy as np
    mask = np.zeros(n, dtype=bool)
    mask[np.fromiter(iter(bitvector), dtype=np.int64)] = True
    return mask


def state_variables(model, description=None) -> dict[str, tuple[type, list]]:
    """The state variables' values in every state, as Storm lists them, with their Python type (``bool``, ``int``
    or ``float``). JANI's transient variables (labels, rewards) are not state variables and are left out."""
    if not model.has_state_valuations():
        return {}
    transient = set()
    if isinstance(description, _storage.JaniModel):
        variables = [v for a in description.automata for v in a.variables] + list(description.global_variables)
        transient = {v.name for v in variables if v.is_transient}
    sv = model.state_valuations
    out: dict[str, tuple[type, list]] = {}
    for var in sv.get_all_variables():
        if var.name in transient:
            continue
        if var.has_boolean_type():
            out[var.name] = (bool, sv.get_values_states(var))
        elif var.has_integer_type():
            out[var.name] = (int, sv.get_values_states(var))
        else:
            out[var.name] = (float, sv.get_double_values(var))
    return out
