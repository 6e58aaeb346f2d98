"""How states are named in output, and which labels a model author wrote: the rules shared by the explicit model
(:class:`~stormcf.model.ExplicitModel`) and the facts ``stormcf info`` reads straight from Storm's model
(:mod:`stormcf.storm.facts`). Plain Python on one state's valuation and labels (no numpy: ``info`` does not import
it)."""
from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from .errors import ModelError

#: labels Storm adds by itself; they are kept but never used to name states
RESERVED_LABELS = frozenset({"init", "deadlock"})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_+\-]*$")
#: the state-naming schemes besides templates such as ``"{s}/{d}"``
SCHEMES = ("valuation", "labels", "index")


def is_user_label(name: str) -> bool:
    """A label a model author wrote: not ``init``/``deadlock``, not an expression label of a property."""
    return name not in RESERVED_LABELS and bool(_IDENTIFIER.match(name))


def user_labels(names: Iterable[str]) -> list[str]:
    """The labels a model author wrote, sorted."""
    return sorted(name for name in names if is_user_label(name))


def valuation_text(state: int, valuation: Mapping[str, Any]) -> str:
    """PRISM-style valuation text ``s=3 & d=0`` (Booleans as ``b`` / ``!b``); ``state k`` without variables."""
    if not valuation:
        return f"state {state}"
    return " & ".join((var if value else f"!{var}") if isinstance(value, bool) else f"{var}={value}"
                      for var, value in valuation.items())


def state_name(naming: str, state: int, valuation: Mapping[str, Any], labels: Iterable[str]) -> str:
    """The name of ``state`` under the scheme ``naming`` (see :class:`~stormcf.model.ExplicitModel`), from its
    variables' values and the names of the labels it has."""
    if naming == "index":
        return f"state {state}"
    if naming == "labels":
        names = user_labels(labels)
        if names:
            return ",".join(names)
    elif "{" in naming:
        try:
            return naming.format_map(valuation)
        except (KeyError, ValueError, IndexError) as err:
            raise ModelError(f"state naming template {naming!r} does not fit the variables "
                             f"({', '.join(valuation)}): {err}") from None
    return valuation_text(state, valuation)


def check_naming(naming: str, variables: Sequence[str], initial: Mapping[str, Any]) -> None:
    """Refuse an unknown naming scheme, and a template with a field that is not a variable of the model or that
    does not format the initial state's values ``initial``. A template names variables only (``{s}``, ``{s:>3}``):
    no attribute access, no indexing, no other names."""
    if naming not in SCHEMES and "{" not in naming:
        raise ModelError(f"unknown state naming {naming!r}: use valuation, labels, index or a template like '{{s}}'")
    if "{" not in naming:
        return
    prefix = f"state naming template {naming!r} does not fit the variables ({', '.join(variables)})"
    try:
        fields = [(name, spec) for _, name, spec, _ in string.Formatter().parse(naming) if name is not None]
    except ValueError as err:
        raise ModelError(f"{prefix}: {err}") from None
    for name, spec in fields:
        if name not in variables:
            what = ("positional fields are not allowed" if name == "" or name.isdigit() else
                    f"'{{{name}}}': attribute access and indexing are not allowed" if re.search(r"[.\[]", name)
                    else f"'{name}' is not a variable of the model")
            raise ModelError(f"{prefix}: {what}")
        if spec and "{" in spec:
            raise ModelError(f"{prefix}: nested fields are not allowed")
    try:
        naming.format_map(initial)
    except (ValueError, TypeError) as err:
        raise ModelError(f"{prefix}: {err}") from None


def choice_names(actions: Sequence[str]) -> list[str]:
    """The names of one state's choices from their action names, in row order: the action name, ``a#k`` for the k-th
    of several choices of ``a`` (the rule of :meth:`~stormcf.model.ExplicitModel.choice_name`, which names many
    states' choices at once with arrays)."""
    seen: Counter[str] = Counter()
    times = Counter(actions)
    names = []
    for action in actions:
        names.append(f"{action}#{seen[action]}" if times[action] > 1 else action)
        seen[action] += 1
    return names
