"""Event logs sampled from a known MDP under a strategy: the ground truth of the round-trip tests, the demo and the
benchmark.

Every case starts in the initial state; in state s the strategy σ picks an action a with probability σ(s)(a), the
successor s' follows P(s' | s, a); a case ends when it enters an absorbing state (every choice is a self-loop, e.g.
the self-loop Storm adds to a deadlock state) or after ``max_steps`` steps. The observation of a state is its name
(``model.state_name``, so ``model.with_naming("labels")`` observes labels), the action is the PRISM action name.

This is :func:`stormcf.paths.simulate` for many cases at once: all live cases take a step together, with the same
vectorised inverse-CDF draws (:func:`stormcf.paths.draw_successors`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import PathError
from ..limits import require_memory
from ..model import ExplicitModel
from ..paths import draw_successors
from ..strategy import Strategy
from .log import EventLog


def absorbing_states(model: ExplicitModel) -> np.ndarray:
    """Mask of the states all of whose choices stay in the state with probability 1."""
    P = model.transitions
    stay = np.asarray(P[np.arange(model.n_choices), model.state_of_choice]).ravel() >= 1.0
    return np.bincount(model.state_of_choice, weights=stay, minlength=model.n_states) == model.choice_counts


def sample_log(model: ExplicitModel, strategy: Strategy, cases: int, seed: int = 0, max_steps: int = 1000,
               observe: Callable[[int], str] | None = None) -> EventLog:
    """``cases`` cases sampled under ``strategy`` (module docs), seeded with ``numpy.random.default_rng(seed)``."""
    if strategy.model is not model:
        raise PathError("the strategy belongs to another model")
    if cases < 1 or max_steps < 1:
        raise PathError(f"need at least one case and one step, got {cases} cases and max_steps {max_steps}")
    require_memory(cases * 10 * 8, f"{cases} sampled cases")   # per case and step: a few int64 and float64 entries
    rng = np.random.default_rng(seed)
    sigma = strategy.matrix()
    P = model.transitions
    done = absorbing_states(model)
    state = np.full(cases, model.initial_state, dtype=np.int64)
    live = np.flatnonzero(~done[state])
    steps_case, steps_row, steps_next = [], [], []
    for _ in range(max_steps):
        if live.size == 0:
            break
        u = rng.random((2, live.size))
        row = draw_successors(sigma, state[live], u[0])
        nxt = draw_successors(P, row, u[1])
        steps_case.append(live)
        steps_row.append(row)
        steps_next.append(nxt)
        state[live] = nxt
        live = live[~done[nxt]]
    case = np.concatenate(steps_case) if steps_case else np.zeros(0, dtype=np.int64)
    order = np.argsort(case, kind="stable")                # by case, steps in time order
    rows = np.concatenate(steps_row)[order] if steps_row else case
    successors = np.concatenate(steps_next)[order] if steps_next else case
    lengths = np.bincount(case, minlength=cases)
    return _as_log(model, observe or model.state_name, rows, successors, lengths, live.size)


def _as_log(model: ExplicitModel, observe: Callable[[int], str], rows: np.ndarray, successors: np.ndarray,
            lengths: np.ndarray, truncated: int) -> EventLog:
    seen_states = np.unique(np.concatenate([[model.initial_state], successors]))
    names = {int(s): observe(int(s)) for s in seen_states}
    observations = sorted(set(names.values()))
    o_code = {o: k for k, o in enumerate(observations)}
    state_code = np.zeros(model.n_states, dtype=np.int64)
    state_code[seen_states] = [o_code[names[int(s)]] for s in seen_states]
    choice_action = model.choice_actions[rows]
    used = np.unique(choice_action)
    actions = sorted({model.action_names[a] for a in used})
    a_code = np.zeros(len(model.action_names), dtype=np.int64)
    a_code[used] = [actions.index(model.action_names[a]) for a in used]
    n = lengths.size
    return EventLog(model.source, "sampled", tuple(f"c{c}" for c in range(n)), tuple(actions), tuple(observations),
                    np.full(n, state_code[model.initial_state]), np.concatenate([[0], np.cumsum(lengths)]),
                    a_code[choice_action], state_code[successors], int(lengths.sum() + n),
                    {"truncated": int(truncated)} if truncated else {})
