"""How well the log covers the learned MDP: every case replayed on the automaton, and the support of every choice.

- ``cases_replayed``: the cases whose trace is a path of the learned MDP (IOAlergia keeps every trace, so all of
  them; the replay checks it);
- ``open_ends``: cases whose last state has successors in the learned MDP, so that the model continues where the
  case stopped (IOAlergia normalises over the continuations and ignores where cases stop);
- ``choice_support``: how many log steps each learned (state, action) frequency rests on: the smallest, the
  median, and how many choices rest on a single step or fewer than 10 steps (their frequencies are rough);
- ``visits``: log steps entering each state (the initial state counts every case).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .alergia import Automaton, Traces

#: choices resting on fewer steps than this are reported as thinly supported
THIN = 10


@dataclass(frozen=True)
class Coverage:
    cases: int
    cases_replayed: int
    open_ends: int
    choices: int
    choices_seen_once: int
    choices_thin: int
    support_min: int
    support_max: int
    support_median: float
    states_visited_once: int

    def to_dict(self) -> dict[str, Any]:
        return {"cases": self.cases, "cases_replayed": self.cases_replayed, "open_ends": self.open_ends,
                "choice_support": {"choices": self.choices, "min": self.support_min, "max": self.support_max,
                                   "median": self.support_median,
                                   "seen_once": self.choices_seen_once, f"under_{THIN}": self.choices_thin},
                "states_visited_once": self.states_visited_once}


def coverage(traces: Traces, a: Automaton) -> Coverage:
    n_cases = traces.offsets.size - 1
    at, replayed = _replay(traces, a)
    key = a.source * traces.n_inputs + a.action
    unique, inverse = np.unique(key, return_inverse=True)
    support = np.bincount(inverse.ravel(), weights=a.count).astype(np.int64)
    has_successor = np.zeros(a.n_states, dtype=bool)
    has_successor[a.source] = True
    visits = np.bincount(a.target, weights=a.count, minlength=a.n_states)
    visits[0] += n_cases
    if not support.size:
        support = np.zeros(1, dtype=np.int64)        # a log without steps: one state, no choice
    return Coverage(n_cases, int(replayed.sum()), int(np.sum(has_successor[at] & replayed)), int(unique.size),
                    int(np.sum(support == 1)), int(np.sum(support < THIN)), int(support.min()), int(support.max()),
                    float(np.median(support)), int(np.sum(visits == 1)))


def _replay(traces: Traces, a: Automaton) -> tuple[np.ndarray, np.ndarray]:
    """The state every case ends in, and whether its whole trace is a path of the automaton (vectorised by step)."""
    n_out = traces.n_outputs
    keys = (a.source * traces.n_inputs + a.action) * n_out + a.outputs[a.target]
    order = np.argsort(keys)
    keys, targets = keys[order], a.target[order]
    lengths = np.diff(traces.offsets)
    at = np.zeros(lengths.size, dtype=np.int64)
    ok = np.ones(lengths.size, dtype=bool)
    for depth in range(int(lengths.max(initial=0))):
        live = np.flatnonzero((lengths > depth) & ok)
        k = traces.offsets[live] + depth
        want = (at[live] * traces.n_inputs + traces.inputs[k]) * n_out + traces.outputs[k]
        pos = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
        found = keys[pos] == want if keys.size else np.zeros(live.size, dtype=bool)
        ok[live[~found]] = False
        at[live[found]] = targets[pos[found]]
    return at, ok
