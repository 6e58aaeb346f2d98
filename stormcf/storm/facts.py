"""The facts ``stormcf info`` prints, read straight from Storm's sparse model: sizes, initial state, labels, actions,
choices of one action in a state, reward models, variable ranges (:class:`~stormcf.modelinfo.ModelFacts`).

No explicit model is built and no numpy is imported: on a small model ``info`` then costs little more than Storm's
parse and build (issue 34); on a large one the per-choice work is C-level iteration (``map``, ``set``) over Storm's
lists and bit vectors, about what the extraction it replaces cost (docs/benchmarks.md: 10^6 states).
:meth:`ModelFacts.of` reads the same facts from an explicit model (the tests compare both on every example model);
one state's choice names follow :func:`stormcf.naming.choice_names`, as the explicit model's do."""
from __future__ import annotations

import time
from collections import Counter, deque
from itertools import chain, islice, repeat
from operator import add, sub
from pathlib import Path
from typing import Any, Mapping

from ..errors import ModelError
from ..modelinfo import ModelFacts
from ..naming import check_naming, choice_names, state_name, user_labels
from .handle import state_variables
from .load import build_file, in_loading_thread, model_source


def model_facts(path: str | Path, constants: str | Mapping[str, Any] | None = None, naming: str = "valuation",
                shown_as: str | None = None) -> ModelFacts:
    """The facts of a PRISM, JANI or DRN model file as :func:`~stormcf.storm.load_model` would load it (the same
    refusals), named under ``naming``; Storm's work runs within the active deadline."""
    shown = str(path) if shown_as is None else shown_as
    return in_loading_thread(lambda: _facts(path, constants, naming, shown), shown)


def _facts(path: str | Path, constants: str | Mapping[str, Any] | None, naming: str, shown_as: str) -> ModelFacts:
    build, timings = build_file(path, constants, shown_as)
    tick, cpu = time.perf_counter(), time.thread_time()
    model, source = build.handle.model, model_source(shown_as, constants)
    initial = list(model.initial_states)
    if len(initial) != 1:
        raise ModelError(f"{source}: stormcf needs exactly one initial state, the model has {len(initial)}")
    s0 = initial[0]
    columns = state_variables(model, build.handle.description)
    valuation = {v: kind(values[s0]) for v, (kind, values) in columns.items()}
    check_naming(naming, tuple(columns), valuation)
    row_groups = (model.nondeterministic_choice_indices if model.is_nondeterministic_model
                  else range(model.nr_states + 1))
    counts = list(map(sub, islice(row_groups, 1, None), row_groups))
    names, codes = choice_actions(model)
    shared = _shared_action_states(counts, codes, len(names))

    def name(s: int) -> str:
        labels = model.labeling.get_labels_of_state(s) if naming == "labels" else ()
        return state_name(naming, s, {v: kind(values[s]) for v, (kind, values) in columns.items()}, labels)

    example = None
    if shared:
        s = shared[0]
        example = (name(s), choice_names([names[c] for c in codes[row_groups[s]:row_groups[s + 1]]]))
    timings["extract"], timings["extract_cpu"] = time.perf_counter() - tick, time.thread_time() - cpu
    return ModelFacts(
        source=source, model_type="mdp" if model.is_nondeterministic_model else "dtmc", n_states=model.nr_states,
        n_choices=model.nr_choices, n_transitions=model.nr_transitions,
        n_decision_states=sum(map((1).__lt__, counts)), initial_state=valuation if columns else s0,
        initial_name=name(s0), labels=user_labels(model.labeling.get_labels()),
        actions=sorted(a for a in names if a), shared_action_states=len(shared), shared_example=example,
        reward_models=_reward_parts(model, build.transition_items),
        variables={v: [kind(min(values)), kind(max(values))] for v, (kind, values) in columns.items()},
        timings=timings)


def _reward_parts(model, transition_items: Mapping[str, Any]) -> dict[str, list[str]]:
    """The parts (state, choice, transition rewards) of every reward model: Storm's, and the PRISM transition
    rewards Storm could not build (``transition_items``)."""
    parts = {name: [part for part, has in (("state", rm.has_state_rewards), ("choice", rm.has_state_action_rewards),
                                           ("transition", rm.has_transition_rewards)) if has]
             for name, rm in model.reward_models.items()}
    for name in transition_items:
        if "transition" not in parts.setdefault(name, []):
            parts[name].append("transition")
    return parts


def choice_actions(model) -> tuple[list[str], list[int]]:
    """The distinct action names of a model's choices (``""`` first: a choice without one) and the index of every
    choice's name among them. A choice with several labels is named by them joined, ``a,b`` (sorted), as Storm's
    export names it."""
    names, codes = [""], [0] * model.nr_choices
    if not model.has_choice_labeling():
        return names, codes
    labeling = model.choice_labeling
    choices = {label: labeling.get_choices(label) for label in sorted(labeling.get_labels())}
    for label, bits in choices.items():
        names.append(label)
        deque(map(codes.__setitem__, bits, repeat(len(names) - 1)), maxlen=0)
    if sum(bits.get_number_of_set_bits() for bits in choices.values()) == len(codes) - codes.count(0):
        return names, codes
    index = {"": 0}                     # a choice with several labels: name every choice by its labels
    for choice in range(len(codes)):
        codes[choice] = index.setdefault(",".join(sorted(labeling.get_labels_of_choice(choice))), len(index))
    return list(index), codes


def _shared_action_states(counts: list[int], codes: list[int], n_names: int) -> list[int]:
    """The states (ascending) with two or more choices of one action name: one key ``state * #names + action`` per
    choice, and a state is such a state where its keys repeat."""
    states = chain.from_iterable(map(repeat, range(len(counts)), counts))
    keys = list(map(add, map(n_names.__mul__, states), codes))
    if len(set(keys)) == len(keys):
        return []
    return sorted({key // n_names for key, times in Counter(keys).items() if times > 1})
