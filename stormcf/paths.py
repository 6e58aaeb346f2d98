"""Observed paths (episodes) of an MDP, their JSON format, and a seeded simulator.

JSON format (unknown keys are errors; states by PRISM valuation, actions by choice name: the PRISM action name, or ``a#k`` when a state has
several choices of action ``a``, see :meth:`~stormcf.model.ExplicitModel.choice_name`)::

    {"steps": [{"state": {"x": 0, "y": 0}, "action": "east"},
               {"state": {"x": 1, "y": 0}, "action": "south"}],
     "final_state": {"x": 1, "y": 1}}

The path has T steps (s_t, a_t), t = 0..T-1; the successor of step t is the state of step t+1, and the successor of
the last step is ``final_state`` (optional: analyses that need the last observed transition require it).
Validation names the step: an unknown state, an action not enabled in its state, or a successor that the chosen
action reaches with probability 0.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from .errors import PathError, StateError
from .examples import read_json
from .model import ExplicitModel
from .report import write_json
from .strategy import Strategy


@dataclass(frozen=True, eq=False, repr=False)
class ObservedPath:
    """An observed path: ``states[t]`` = s_t, ``choices[t]`` = the row of (s_t, a_t), ``final_state`` = s_T."""

    model: ExplicitModel
    states: np.ndarray
    choices: np.ndarray
    final_state: int | None = None

    def __post_init__(self) -> None:
        states = np.asarray(self.states, dtype=np.int64)
        choices = np.asarray(self.choices, dtype=np.int64)
        m = self.model
        if states.ndim != 1 or states.shape != choices.shape or states.size == 0:
            raise PathError("a path needs one state and one action per step, and at least one step")
        for a in (states, choices):
            a.flags.writeable = False
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "choices", choices)
        if np.any((states < 0) | (states >= m.n_states)):
            raise PathError(f"step {int(np.flatnonzero((states < 0) | (states >= m.n_states))[0])}: no such state")
        wrong = np.flatnonzero((choices < m.row_groups[states]) | (choices >= m.row_groups[states + 1]))
        if wrong.size:
            t = int(wrong[0])
            raise PathError(f"step {t}: choice {choices[t]} is not enabled in state {m.state_name(int(states[t]))}")
        q = self.transition_probabilities()
        zero = np.flatnonzero(~(q > 0))
        if zero.size:
            t = int(zero[0])
            raise PathError(f"step {t}: action '{m.choice_name(int(choices[t]))}' in state {m.state_name(int(states[t]))} "
                            f"reaches {m.state_name(int(self.next_states[t]))} with probability 0")

    # ------------------------------------------------------------------------------------------ queries
    @property
    def T(self) -> int:
        """Number of steps."""
        return int(self.states.size)

    @property
    def actions(self) -> list[str]:
        """a_0..a_{T-1} by choice name."""
        return self.model.choice_names_of(self.choices)

    @property
    def next_states(self) -> np.ndarray:
        """s_1..s_T; the last entry is -1 when the final state is not given."""
        last = -1 if self.final_state is None else int(self.final_state)
        return np.append(self.states[1:], last)

    @property
    def observed_transitions(self) -> int:
        """How many steps have an observed successor (T with a final state, else T-1)."""
        return self.T if self.final_state is not None else self.T - 1

    def transition_probabilities(self) -> np.ndarray:
        """q_t = P(s_{t+1} | s_t, a_t) for the steps with an observed successor."""
        k = self.observed_transitions
        if k == 0:                                   # one step without a final state (scipy mis-shapes empty picks)
            return np.zeros(0)
        P = self.model.transitions
        return np.asarray(P[self.choices[:k], self.next_states[:k]]).ravel()

    def outcome(self, step_rewards: np.ndarray) -> float:
        """o(τ) = Σ_t R(s_t, a_t) for per-choice rewards R (e.g. ``model.step_rewards("r")``)."""
        return float(np.sum(np.asarray(step_rewards)[self.choices]))

    def __repr__(self) -> str:
        m, shown = self.model, min(self.T, 3)
        steps = ", ".join(f"({m.state_name(int(s))}, {m.choice_name(int(r))})"
                          for s, r in zip(self.states[:shown], self.choices[:shown]))
        more = ", ..." if self.T > shown else ""
        end = "" if self.final_state is None else f" → {m.state_name(int(self.final_state))}"
        return f"<ObservedPath on {m.source}, {self.T} steps: {steps}{more}{end}>"

    # ------------------------------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        m = self.model
        data: dict[str, Any] = {"steps": [{"state": m.valuation(int(s)), "action": name}
                                          for s, name in zip(self.states, self.actions)]}
        if self.final_state is not None:
            data["final_state"] = m.valuation(int(self.final_state))
        return data

    def save(self, path: str | os.PathLike) -> None:
        """Write the JSON form to ``path`` (atomically)."""
        write_json(self.to_dict(), path)

    @classmethod
    def from_dict(cls, model: ExplicitModel, data: Any, source: str = "path") -> "ObservedPath":
        """Read the JSON form; errors name the file and the step."""
        if not isinstance(data, Mapping) or not isinstance(data.get("steps"), list) or not data["steps"]:
            raise PathError(f'{source}: expected an object {{"steps": [{{"state": {{...}}, "action": "..."}}, ...], '
                            f'"final_state": {{...}}}} with at least one step')
        _require_keys(data, ("steps", "final_state"), source)
        for t, step in enumerate(data["steps"]):
            if not isinstance(step, Mapping) or "state" not in step or not isinstance(step.get("action"), str):
                raise PathError(f'{source}: step {t}: expected {{"state": {{...}}, "action": "name"}}')
            _require_keys(step, ("state", "action"), f"{source}: step {t}")
        steps, final = data["steps"], data.get("final_state")
        valuations = [step["state"] for step in steps] + ([] if final is None else [final])
        found = model.state_indices(valuations)                 # the full valuations, in one pass over the states
        states = found[:len(steps)].copy()
        choices = model.choices_named(np.maximum(states, 0), [step["action"] for step in steps])
        for t in np.flatnonzero((states < 0) | (choices < 0)).tolist():  # partial valuations; else the first problem
            states[t] = _state(model, valuations[t], f"{source}: step {t}")
            try:
                choices[t] = model.choice_of(int(states[t]), steps[t]["action"])
            except StateError as err:
                raise PathError(f"{source}: step {t}: {err}") from None
        if final is not None:
            final = _state(model, final, f"{source}: final_state") if found[-1] < 0 else int(found[-1])
        try:
            return cls(model, states, choices, final)
        except PathError as err:
            raise PathError(f"{source}: {err}") from None

    @classmethod
    def load(cls, model: ExplicitModel, path: str | Path) -> "ObservedPath":
        return cls.from_dict(model, read_json(path, PathError), source=str(path))


def _require_keys(data: Mapping, known: tuple[str, ...], where: str) -> None:
    unknown = [k for k in data if k not in known]
    if unknown:
        raise PathError(f'{where}: unknown key "{unknown[0]}" (keys: {", ".join(known)})')


def _state(model: ExplicitModel, valuation: Any, where: str) -> int:
    try:
        return model.state_index(valuation)
    except StateError as err:
        raise PathError(f"{where}: {err}") from None


def simulate(model: ExplicitModel, strategy: Strategy, steps: int, seed: int | None = 0,
             start: int | None = None) -> ObservedPath:
    """Sample a path of ``steps`` steps from ``start`` (default: the initial state) under ``strategy``.

    Seeded (``numpy.random.default_rng(seed)``); the final state is the successor of the last step.
    """
    if steps < 1:
        raise PathError(f"a simulated path needs at least one step, got {steps}")
    if strategy.model is not model:
        raise PathError("the strategy belongs to another model")
    rng = np.random.default_rng(seed)
    sigma = strategy.matrix()
    s = np.array([model.initial_state if start is None else int(start)])
    states, choices = [], []
    for u_choice, u_next in rng.random((steps, 2)):
        row = draw_successors(sigma, s, np.array([u_choice]))
        states.append(int(s[0]))
        choices.append(int(row[0]))
        s = draw_successors(model.transitions, row, np.array([u_next]))
    return ObservedPath(model, np.array(states), np.array(choices), int(s[0]))


def draw_successors(rows: sp.csr_matrix, pos: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One column per requested row ``pos[i]`` of a CSR matrix of weights, by inverse CDF with the uniform number
    ``u[i]`` in [0, 1): the first entry whose cumulative weight within the row exceeds ``u[i]`` times the row's
    total (an entry of weight 0 is never drawn). Vectorised over the requests; only their rows are read."""
    lo, hi = rows.indptr[pos], rows.indptr[pos + 1]
    lengths = hi - lo
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    entries = np.repeat(lo - starts, lengths) + np.arange(int(lengths.sum()))
    cdf = np.cumsum(rows.data[entries])
    end = starts + lengths - 1
    base = np.where(starts > 0, cdf[np.maximum(starts - 1, 0)], 0.0)
    target = base + u * (cdf[end] - base)
    j = np.clip(np.searchsorted(cdf, target, side="right"), starts, end)
    return rows.indices[entries[j]]
