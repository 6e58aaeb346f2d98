"""PRISM transition rewards, which Storm's sparse builder cannot build.

A PRISM reward item ``[a] g -> g' : r;`` earns ``r`` (evaluated in the source state) on every transition of an
``a``-choice from a state satisfying ``g`` to a state satisfying ``g'``. Storm's explicit builder refuses such
models ("Unable to treat transition rewards") and stormpy does not expose reward items, so the bridge reads the
items from Storm's printout of the program (one item per line, every expression parenthesised by Storm), lets Storm
parse each expression, and evaluates them on the built model (:mod:`.expressions`): the explicit model gets one
reward per transition, exactly PRISM's semantics.

For Storm, transition rewards become their expectation per choice, r(s, a) = Σ_s' P(s, a, s')·r(s, a, s') (added
to the state-action rewards). That gives the same expected reward for every expected-reward property (reachability,
cumulative, total, discounted, long-run average rewards), but not the same distribution of the accumulated reward:
properties with reward bounds over such a reward model are refused (:func:`refuse_unsound`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import ModelError, PropertyError

if TYPE_CHECKING:       # loading a model without transition-reward items (``info``) imports no numpy
    import numpy as np
    import scipy.sparse as sp

    from ..model import ExplicitModel
    from ..properties import Property

_BLOCK = re.compile(r'^rewards(?: "([^"]*)")?\s*$(.*?)^endrewards\s*$', re.MULTILINE | re.DOTALL)
#: a reward structure in a PRISM file as written (anywhere on a line; a comment may make it start early, never late)
_FILE_BLOCK = re.compile(r"\brewards\b(.*?)\bendrewards\b", re.DOTALL)
_ITEM = re.compile(r"^\s*\[([^\]]*)\]\s*(.*);\s*$")


@dataclass(frozen=True)
class TransitionRewardItem:
    """``[action] source -> target : value;`` with Storm expressions (``action`` is ``""`` for ``[]``)."""

    action: str
    source: Any
    target: Any
    value: Any


def transition_reward_items(program, file_text: str | None = None) -> dict[str, list[TransitionRewardItem]]:
    """The transition-reward items of every reward model of a PRISM program (constants and formulas substituted);
    reward models without such items are left out. With ``file_text``, the program's file, the program is printed
    (half a second for 10^4 commands) only when a reward structure of the file may hold such an item."""
    if not program.reward_models or (file_text is not None and not _may_have_items(file_text)):
        return {}
    from .expressions import parse_expression
    text = str(program.substitute_formulas().substitute_constants())
    items: dict[str, list[TransitionRewardItem]] = {}
    for name, body in _BLOCK.findall(text):
        for line in body.splitlines():
            match = _ITEM.match(line)
            if match is None or " -> " not in match.group(2):
                continue
            source, target, value = _split_item(match.group(2), line)
            items.setdefault(name, []).append(TransitionRewardItem(
                match.group(1), *(parse_expression(program, part) for part in (source, target, value))))
    return items


def _may_have_items(file_text: str) -> bool:
    """Whether a reward structure of a PRISM file may hold a transition-reward item (an arrow)."""
    return any("->" in body for body in _FILE_BLOCK.findall(file_text))


def _split_item(text: str, line: str) -> tuple[str, str, str]:
    """``source -> target: value`` split at the top-level ``->`` and ``:`` (Storm parenthesises every compound
    expression, so a ``?:`` inside one is never at the top level)."""
    depth, arrow = 0, None
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth:
            continue
        if arrow is None and text.startswith(" -> ", i):
            arrow = i
        elif arrow is not None and char == ":":
            return text[:arrow].strip(), text[arrow + 4:i].strip(), text[i + 1:].strip()
    raise ModelError(f"cannot read the transition reward item '{line.strip()}' of Storm's printout of the program")


def transition_rewards(items: Sequence[TransitionRewardItem], P: sp.csr_matrix, row_groups: np.ndarray,
                       choice_actions: np.ndarray, action_names: Sequence[str], unlabelled: set[str],
                       valuations: Mapping[str, np.ndarray]) -> np.ndarray:
    """One reward per transition (aligned with ``P.data``): the sum of the items that apply to it. ``unlabelled``
    are the action names stormcf gave unlabelled commands (the ``[]`` items apply to them)."""
    import numpy as np

    from .expressions import evaluate
    n = P.shape[1]
    rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    sources = np.repeat(np.arange(n), np.diff(row_groups))[rows]
    rewards = np.zeros(P.nnz)
    for item in items:
        names = unlabelled if item.action == "" else {item.action}
        codes = [k for k, name in enumerate(action_names) if name in names]
        applies = (np.isin(choice_actions[rows], codes) & evaluate(item.source, valuations, n, bool)[sources]
                   & evaluate(item.target, valuations, n, bool)[P.indices])
        rewards += np.where(applies, evaluate(item.value, valuations, n, float)[sources], 0.0)
    return rewards


def refuse_unsound(model: ExplicitModel, prop: Property) -> None:
    """Refuse (:class:`PropertyError`) a property whose answer would change when transition rewards become their
    expectation per choice: a reward bound over a reward model with transition rewards."""
    for name in prop.reward_bounds:
        if model.reward_model(name).has_transition_rewards:
            raise PropertyError(f"reward model \"{name}\" has transition rewards, which Storm cannot build; stormcf "
                                f"uses their expected value per choice, which is exact for expected rewards but not "
                                f"for the reward bound of {prop.text}")
