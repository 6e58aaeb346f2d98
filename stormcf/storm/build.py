"""From stormcf's arrays to Storm models: MDPs and DTMCs (float or exact), interval MDPs."""
from __future__ import annotations

import json
import tarfile
import weakref
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
import stormpy
from stormpy.datastructures import BitVector, SparseMatrixBuilder
from stormpy.models import SparseMdp, SparseModelComponents, SparseRewardModel, StateLabeling

from ..errors import StormcfError
from ..interrupt import temporary_directory
from ..limits import STORM_BUILD_HEADROOM, require_headroom
from ..model import ExplicitModel
from .extract import scratch_error
from .load import builder_options
from .handle import StormHandle, copy_model, storm_message


_BUILT: "weakref.WeakKeyDictionary[ExplicitModel, StormHandle]" = weakref.WeakKeyDictionary()


def storm_model_of(model: ExplicitModel):
    """The stormpy sparse model of an explicit model: Storm's own if the model was loaded from a file, else one
    built from the arrays (cached)."""
    return handle_of(model).model


def handle_of(model: ExplicitModel) -> StormHandle:
    """The Storm handle of a model: the one of its file, else one built from its arrays (cached per model)."""
    if isinstance(model.storm, StormHandle):
        return model.storm
    handle = _BUILT.get(model)
    if handle is None:
        handle = StormHandle(None, _model_from_arrays(model))
        _BUILT[model] = handle
    return handle


def sparse_matrix(P: sp.csr_matrix, row_groups: np.ndarray | None, value_type=float, values: Sequence | None = None):
    """A stormpy SparseMatrix from CSR arrays (rows in order, columns ascending within a row)."""
    n_rows, n_cols = P.shape
    n_groups = 0 if row_groups is None else len(row_groups) - 1
    builder = SparseMatrixBuilder[value_type](rows=n_rows, columns=n_cols, entries=P.nnz, force_dimensions=True,
                                              has_custom_row_grouping=row_groups is not None, row_groups=n_groups)
    rows = np.repeat(np.arange(n_rows), np.diff(P.indptr)).tolist()
    data = P.data.tolist() if values is None else list(values)
    if row_groups is not None:
        builder.add_next_values(rows, P.indices.tolist(), data, row_groups[:-1].tolist())
        return builder.build(n_rows, n_cols, n_groups)
    builder.add_next_values(rows, P.indices.tolist(), data)
    return builder.build(n_rows, n_cols)


def state_labeling(labels: Mapping[str, np.ndarray], initial: int, n: int):
    """Storm's state labelling of ``n`` states: ``init`` at ``initial`` and each label at its mask."""
    labeling = StateLabeling(n)
    labeling.add_label("init")
    labeling.add_label_to_state("init", initial)
    for name, mask in labels.items():
        labeling.add_label(name)
        labeling.set_states(name, BitVector(n, np.flatnonzero(mask).tolist()))
    return labeling


def _model_from_arrays(model: ExplicitModel):
    """Storm's model of the arrays, written in bulk as a UMB archive (:func:`_model_by_umb`): labels, reward models
    (transition rewards as their expectation per choice: the same expected accumulated reward) and, for an MDP,
    the action name of every choice."""
    rewards: dict[str, dict[str, np.ndarray]] = {}
    for name, rm in model.rewards.items():
        parts = rewards.setdefault(name, {})
        if rm.state is not None:
            parts["states"] = _f64(rm.state)
        if rm.choice is not None or rm.transition is not None:
            parts["choices"] = _f64(model.expected_choice_rewards(name))
    if model.model_type == "dtmc":
        return _model_by_umb(model.transitions, _f64(model.transitions.data), _DOUBLE, None, model.labels, rewards,
                             model.initial_state, "DTMC")
    return _model_by_umb(model.transitions, _f64(model.transitions.data), _DOUBLE, model.row_groups, model.labels,
                         rewards, model.initial_state, "MDP", (model.action_names, model.choice_actions))


def storm_rational(x) -> Any:
    """A Storm rational of a Fraction, or of the exact value of a float."""
    return stormpy.Rational(x if isinstance(x, Fraction) else Fraction(repr(float(x))))


def exact_storm_model(model: ExplicitModel):
    """Storm's build of the model over ``stormpy.Rational`` (cached); same states and choices as the float build,
    transition rewards lifted to their exact expectation per choice as in the float build."""
    handle = handle_of(model)
    if handle.exact_model is None:
        if handle.description is None:
            raise StormcfError(f"{model.source}: exact arithmetic needs a model given as a PRISM or JANI file")
        require_headroom(STORM_BUILD_HEADROOM, "Storm's model builder")
        exact = stormpy.build_model[stormpy.Rational](handle.description, options=builder_options())
        if exact.nr_states != model.n_states or exact.nr_choices != model.n_choices:
            raise StormcfError("the exact (rational) build of the model differs from the float build")
        handle.exact_model = exact
        lifted = [name for name, rm in model.rewards.items() if rm.transition is not None]
        handle.exact_rewards = {name: _reward_parts(exact, name) for name in lifted}   # before they are replaced
        if lifted:
            values = exact_transition_values(model)
            handle.exact_model = copy_model(exact, {name: _exact_lifted_rewards(model, name, values)
                                                    for name in lifted})
    return handle.exact_model


def _reward_parts(exact, name: str) -> tuple[list[Fraction] | None, list[Fraction] | None]:
    """The state and state-action rewards of the reward model ``name`` of Storm's rational build ``exact`` as
    Fractions (None for a part it does not have), each distinct number parsed once (rewards repeat a few values)."""
    if name not in exact.reward_models:
        return None, None
    rm = exact.reward_models[name]
    parsed: dict[str, Fraction] = {}

    def fractions(values) -> list[Fraction]:
        return [parsed[t] if t in parsed else parsed.setdefault(t, Fraction(t)) for t in map(str, values)]
    return (fractions(rm.state_rewards) if rm.has_state_rewards else None,
            fractions(rm.state_action_rewards) if rm.has_state_action_rewards else None)


def _exact_lifted_rewards(model: ExplicitModel, name: str, values: Sequence[Fraction]):
    """The reward model ``name`` over rationals, transition rewards as Σ_s' P(s,a,s')·r(s,a,s') per choice."""
    per_choice = expected_choice_rewards_exact(model, name, values)
    kwargs = {"optional_state_action_reward_vector": [storm_rational(x) for x in per_choice]}
    state = exact_state_rewards(model, name)
    if state is not None:
        kwargs["optional_state_reward_vector"] = [storm_rational(x) for x in state]
    return SparseRewardModel[stormpy.Rational](**kwargs)


def _exact_reward_parts(model: ExplicitModel, name: str) -> tuple[list[Fraction] | None, list[Fraction] | None]:
    """The state and state-action rewards of the reward model ``name`` as Fractions (None for a part it does not
    have): Storm's rational build's for a model given as a PRISM or JANI file (a reward ``1/3`` is 1/3), else each
    float read as the shortest decimal that prints it."""
    rm = model.rewards[name]
    handle = handle_of(model)
    if handle.description is None:
        state, choice = (None if a is None else [Fraction(repr(float(x))) for x in a.tolist()]
                         for a in (rm.state, rm.choice))
        return state, choice
    exact = exact_storm_model(model)
    if name not in handle.exact_rewards:
        handle.exact_rewards[name] = _reward_parts(exact, name)
    return handle.exact_rewards[name]


def exact_state_rewards(model: ExplicitModel, name: str) -> list[Fraction] | None:
    """The state rewards of the reward model ``name`` as exact Fractions (:func:`_exact_reward_parts`), or None."""
    return _exact_reward_parts(model, name)[0]


def expected_choice_rewards_exact(model: ExplicitModel, name: str, values: Sequence[Fraction]) -> list[Fraction]:
    """Per choice, exactly: the state-action reward (as Storm's rational build has it, :func:`_exact_reward_parts`)
    plus Σ_s' P(s,a,s')·r(s,a,s') with the exact transition probabilities ``values`` (aligned with
    ``model.transitions.data``), transition rewards read as the shortest decimals that print them."""
    rm = model.rewards[name]
    choice = _exact_reward_parts(model, name)[1]
    per_choice = list(choice) if choice is not None else [Fraction(0)] * model.n_choices
    if rm.transition is not None:
        entries = np.flatnonzero(rm.transition)
        rows = np.searchsorted(model.transitions.indptr, entries, side="right") - 1
        for k, row in zip(entries.tolist(), rows.tolist()):
            per_choice[row] += values[k] * Fraction(repr(float(rm.transition[k])))
    return per_choice


def exact_transition_values(model: ExplicitModel) -> tuple[Fraction, ...]:
    """The transition probabilities as exact fractions, aligned with ``model.transitions.data``.

    For a model Storm built from a PRISM/JANI description, the model is rebuilt over ``stormpy.Rational`` (so
    ``0.4`` is exactly 2/5); otherwise each float is read as the shortest decimal that prints it.
    """
    handle = handle_of(model)
    if handle.exact_values is None:
        if handle.description is None:
            handle.exact_values = tuple(Fraction(repr(float(x))) for x in model.transitions.data)
        else:
            cols, values = [], []
            for e in exact_storm_model(model).transition_matrix:
                cols.append(e.column)
                values.append(Fraction(str(e.value)))
            if not np.array_equal(np.array(cols, dtype=np.int64), model.transitions.indices):
                raise StormcfError("the exact (rational) build of the model differs from the float build")
            handle.exact_values = tuple(values)
    return handle.exact_values



# ================================================================================================== interval MDPs


def interval_mdp(lower: sp.csr_matrix, upper: sp.csr_matrix, row_groups: np.ndarray,
                 choice_rewards: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray], initial: int,
                 construction: str = "umb"):
    """The interval MDP with P(s' | row) ∈ [lower, upper] (two CSR matrices with the same sparsity; rows = choices
    grouped by ``row_groups``) as a ``stormpy.Interval`` sparse MDP with state-action reward models.

    ``construction``: ``"umb"`` (the default) writes the arrays in bulk as a UMB archive (Storm's binary format: raw
    CSR arrays, intervals as (lower, upper) pairs) and lets Storm read it; ``"builder"`` adds one
    ``stormpy.Interval`` per transition through stormpy's matrix builder (slow, kept as an independent cross-check).
    """
    n = len(row_groups) - 1
    if lower.shape != upper.shape or lower.nnz != upper.nnz or not np.array_equal(lower.indices, upper.indices) \
            or not np.array_equal(lower.indptr, upper.indptr):
        raise StormcfError("interval MDP: lower and upper bounds need the same sparsity")
    if construction == "umb":
        return _interval_mdp_by_umb(lower, upper, np.asarray(row_groups), choice_rewards, labels, initial)
    if construction != "builder":
        raise StormcfError(f"unknown interval MDP construction {construction!r}: use 'umb' or 'builder'")
    intervals = [stormpy.Interval(lo, hi) for lo, hi in zip(lower.data.tolist(), upper.data.tolist())]
    matrix = sparse_matrix(lower, np.asarray(row_groups), stormpy.Interval, intervals)
    rewards = {name: SparseRewardModel[stormpy.Interval](
        optional_state_action_reward_vector=[stormpy.Interval(x) for x in np.asarray(r, dtype=float).tolist()])
        for name, r in choice_rewards.items()}
    comps = SparseModelComponents[stormpy.Interval](transition_matrix=matrix,
                                                    state_labeling=state_labeling(labels, initial, n),
                                                    reward_models=rewards)
    return SparseMdp[stormpy.Interval](comps)


def _interval_mdp_by_umb(lower: sp.csr_matrix, upper: sp.csr_matrix, row_groups: np.ndarray,
                         choice_rewards: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray], initial: int):
    """The interval MDP written as a UMB archive and read by Storm (:func:`_model_by_umb`)."""
    rewards = {name: {"choices": _pairs(r, r)} for name, r in
               ((name, np.asarray(r, dtype=float)) for name, r in choice_rewards.items())}
    return _model_by_umb(lower, _pairs(lower.data, upper.data), _INTERVAL, row_groups, labels, rewards, initial,
                         "interval MDP")


def dtmc(P: sp.csr_matrix, labels: Mapping[str, np.ndarray], initial: int,
         state_rewards: Mapping[str, np.ndarray], choice_rewards: Mapping[str, np.ndarray]):
    """The DTMC with transition matrix ``P`` (n x n CSR) as a Storm model (floating point), written in bulk as a UMB
    archive: reward models from per-state rewards and per-state "action" rewards (one choice per state)."""
    rewards: dict[str, dict[str, np.ndarray]] = {}
    for name, r in state_rewards.items():
        rewards.setdefault(name, {})["states"] = _f64(r)
    for name, r in choice_rewards.items():
        rewards.setdefault(name, {})["choices"] = _f64(r)
    return _model_by_umb(P, _f64(P.data), _DOUBLE, None, labels, rewards, initial, "DTMC")


_DOUBLE = {"size": 64, "type": "double"}
_INTERVAL = {"size": 128, "type": "double-interval"}


def _model_by_umb(P: sp.csr_matrix, probabilities: np.ndarray, value_type: dict, row_groups: np.ndarray | None,
                  labels: Mapping[str, np.ndarray], rewards: Mapping[str, Mapping[str, np.ndarray]], initial: int,
                  what: str, actions: tuple[Sequence[str], np.ndarray] | None = None):
    """Write a model as a UMB archive (format version 1, as Storm 2.0 writes it: raw CSR arrays) and read it with
    Storm: an MDP with choices grouped by ``row_groups``, or a DTMC (``row_groups`` None, one choice per state).
    ``probabilities`` and the reward values (``rewards[name][where]``, where is ``states`` or ``choices``) are
    encoded as ``value_type`` (doubles, or (lower, upper) pairs of doubles); ``actions`` are the action names and
    the index of every choice's (Storm's choice labels; the name ``""`` labels nothing)."""
    n = P.shape[1]
    initial_mask = np.zeros(n, dtype=bool)
    initial_mask[initial] = True
    files: dict[str, bytes | np.ndarray] = {
        "state-is-initial.bin": _bits(initial_mask),
        "choice-to-branches.bin": _u64(P.indptr),
        "branch-to-target.bin": _u64(P.indices),
        "branch-to-probability.bin": probabilities,
    }
    if row_groups is not None:
        files["state-to-choices.bin"] = _u64(row_groups)
    annotations: dict = {}
    for k, (name, mask) in enumerate(labels.items()):
        annotations.setdefault("aps", {})[f"ap{k}"] = {"alias": name, "applies-to": ["states"],
                                                       "type": {"size": 1, "type": "bool"}}
        files[f"annotations/aps/ap{k}/states/values.bin"] = _bits(np.asarray(mask, dtype=bool))
    for k, (name, parts) in enumerate(rewards.items()):
        annotations.setdefault("rewards", {})[f"r{k}"] = {"alias": name, "applies-to": list(parts),
                                                          "type": value_type}
        for where, data in parts.items():
            files[f"annotations/rewards/r{k}/{where}/values.bin"] = data
    names: Sequence[str] = ()
    if actions is not None:
        names, choice_actions = actions
        first: dict[str, int] = {}              # a name given twice is one action (Storm's labels are distinct)
        code = np.array([first.setdefault(name, len(first)) for name in names], dtype="<u4")
        names = list(first)
        encoded = [name.encode() for name in names]
        files["actions/choices/values.bin"] = np.ascontiguousarray(code[np.asarray(choice_actions)])
        files["actions/choices/string-mapping.bin"] = _u64(np.cumsum([0] + [len(e) for e in encoded]))
        files["actions/choices/strings.bin"] = b"".join(encoded)
    index = {"annotations": annotations, "file-data": {"tool": "stormcf"}, "format-revision": 0,
             "format-version": 1,
             "transition-system": {"#branch-actions": 0, "#branches": int(P.nnz), "#choice-actions": len(names),
                                   "#choices": int(P.shape[0]), "#initial-states": 1, "#observations": 0,
                                   "#players": 0 if row_groups is None else 1, "#states": int(n),
                                   "branch-probability-type": value_type, "time": "discrete"}}
    files = {"index.json": json.dumps(index).encode(), **files}
    with temporary_directory() as tmp:
        path = Path(tmp) / "model.umb"
        try:
            _write_tar(path, files)
        except OSError as err:
            raise scratch_error(err.strerror or str(err), path) from None
        try:
            return stormpy.build_model_from_umb(str(path))
        except Exception as err:
            raise StormcfError(f"Storm cannot read the {what} stormcf wrote: {storm_message(err)}") from None


def _write_tar(path: Path, files: Mapping[str, bytes | np.ndarray]) -> None:
    """An uncompressed tar archive of ``files``, each array written straight from its memory (no copy)."""
    with open(path, "wb") as out:
        for name, data in files.items():
            view = (data.data if isinstance(data, np.ndarray) else memoryview(data)).cast("B")
            info = tarfile.TarInfo(name)
            info.size = view.nbytes
            out.write(info.tobuf())
            out.write(view)
            out.write(bytes(-view.nbytes % tarfile.BLOCKSIZE))
        out.write(bytes(2 * tarfile.BLOCKSIZE))


def _u64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype="<u8")


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype="<f8")


def _pairs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.stack([np.asarray(lo, dtype="<f8"), np.asarray(hi, dtype="<f8")], axis=1)


def _bits(mask: np.ndarray) -> np.ndarray:
    """A bit vector as UMB stores it: little-endian bits in 64-bit words."""
    packed = np.packbits(mask, bitorder="little")
    return np.pad(packed, (0, -len(packed) % 8))
