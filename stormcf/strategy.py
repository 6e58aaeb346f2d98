"""Memoryless randomized strategies σ: S → Distr(A), stored as one probability per choice (row).

JSON format (states by PRISM valuation, actions by choice name: the PRISM action name, or ``a#k`` when a state has
several choices of action ``a``, see :meth:`~stormcf.model.ExplicitModel.choice_name`)::

    {"states": [{"state": {"s": 0}, "actions": {"Apply": 1.0}},
                {"state": {"s": 5}, "actions": {"Quit": 0.7, "Submit": 0.3}}],
     "default": "uniform"}

- ``default`` is ``"uniform"`` (decision states not listed play uniformly; the default when the key is absent) or
  ``"error"`` (every decision state, i.e. every state with two or more enabled actions, must be listed).
- States with a single enabled action need no entry. Actions not named in an entry get probability 0.
- Every entry's probabilities must be in [0, 1] and sum to 1 within 1e-9; a state may appear only once.
- A probability is 0 or at least 2.2e-308 (the smallest normal double): subnormal numbers such as 5e-324 lose
  their precision in floating point, so that Storm's floating-point and exact checks would disagree.
- Unknown keys are errors (a misspelt ``"defualt"`` must not silently mean ``"uniform"``).
- Writing lists every decision state with its non-zero actions and ``"default": "error"``, so a written file
  reads back to the same strategy.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from .errors import StateError, StrategyError
from .examples import read_json
from .model import ExplicitModel
from .report import write_json

#: tolerance on "probabilities sum to 1"
SUM_TOLERANCE = 1e-9

#: the JSON types of a state variable's value, by the numpy kind of its column (Boolean, integer, float)
_JSON_TYPES: dict[str, set[type]] = {"b": {bool}, "i": {int}, "u": {int}, "f": {int, float}}

#: the smallest positive probability a strategy may give (the smallest normal double); see the module docstring
SMALLEST_PROBABILITY = float(np.finfo(float).tiny)


@dataclass(frozen=True, eq=False, repr=False)
class Strategy:
    """A memoryless randomized strategy: ``probabilities[row]`` = σ(s)(a) for the choice ``row`` = (s, a)."""

    model: ExplicitModel
    probabilities: np.ndarray

    def __post_init__(self) -> None:
        p = np.array(self.probabilities, dtype=float)
        m = self.model
        if p.shape != (m.n_choices,):
            raise StrategyError(f"a strategy needs one probability per choice ({m.n_choices}), got shape {p.shape}")
        if not np.all(np.isfinite(p)):
            s = int(m.state_of_choice[np.flatnonzero(~np.isfinite(p))[0]])
            raise StrategyError(f"state {m.state_name(s)}: probabilities must be finite numbers")
        if np.any(p < 0):
            row = int(np.flatnonzero(p < 0)[0])
            raise StrategyError(f"state {m.state_name(int(m.state_of_choice[row]))}: probability of action "
                                f"'{m.choice_name(row)}' is negative ({p[row]:g})")
        subnormal = np.flatnonzero((p > 0) & (p < SMALLEST_PROBABILITY))
        if subnormal.size:
            row = int(subnormal[0])
            raise StrategyError(f"state {m.state_name(int(m.state_of_choice[row]))}: probability of action "
                                f"'{m.choice_name(row)}' is {p[row]:g}, below the smallest normal double "
                                f"{SMALLEST_PROBABILITY:.3g}; floating-point and exact checks would disagree "
                                f"(write 0 or a larger probability)")
        sums = np.bincount(m.state_of_choice, weights=p, minlength=m.n_states)
        bad = np.flatnonzero(np.abs(sums - 1.0) > SUM_TOLERANCE)
        if bad.size:
            raise StrategyError(f"state {m.state_name(int(bad[0]))}: probabilities sum to {sums[bad[0]]:.12g}, "
                                f"not 1 (tolerance {SUM_TOLERANCE:g})")
        p.flags.writeable = False
        object.__setattr__(self, "probabilities", p)

    # ------------------------------------------------------------------------------------------ constructors
    @classmethod
    def uniform(cls, model: ExplicitModel) -> "Strategy":
        """σ(s)(a) = 1/|A(s)|."""
        return cls(model, 1.0 / model.choice_counts[model.state_of_choice])

    @classmethod
    def deterministic(cls, model: ExplicitModel, rows: np.ndarray) -> "Strategy":
        """The strategy that plays choice ``rows[s]`` in state ``s`` with probability 1."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.shape != (model.n_states,) or np.any(rows < model.row_groups[:-1]) \
                or np.any(rows >= model.row_groups[1:]):
            raise StrategyError("a deterministic strategy needs one enabled choice per state")
        p = np.zeros(model.n_choices)
        p[rows] = 1.0
        return cls(model, p)

    @classmethod
    def random(cls, model: ExplicitModel, seed: int = 0, concentration: float = 1.0) -> "Strategy":
        """A seeded random strategy: σ(s) ~ Dirichlet(concentration, ..., concentration) in every state."""
        rng = np.random.default_rng(seed)
        w = rng.gamma(concentration, size=model.n_choices)
        w = np.maximum(w, 1e-300)                           # every action keeps a normal, positive probability
        return cls(model, w / np.bincount(model.state_of_choice, weights=w)[model.state_of_choice])

    @classmethod
    def from_solution(cls, model: ExplicitModel, probabilities: np.ndarray, tolerance: float = 1e-6) -> "Strategy":
        """A strategy from a solver's numbers: values within ``tolerance`` of [0, 1] are clipped and every state's
        distribution is renormalised; larger violations raise :class:`StrategyError`."""
        p = np.asarray(probabilities, dtype=float)
        if p.shape != (model.n_choices,) or np.any(p < -tolerance) or np.any(p > 1 + tolerance):
            raise StrategyError("solver returned probabilities outside [0, 1]")
        p = np.clip(p, 0.0, 1.0)
        p[p < 1e-12] = 0.0
        sums = np.bincount(model.state_of_choice, weights=p, minlength=model.n_states)
        if np.any(np.abs(sums - 1.0) > tolerance * model.choice_counts.max()):
            raise StrategyError("solver returned distributions that do not sum to 1")
        return cls(model, p / sums[model.state_of_choice])

    # ------------------------------------------------------------------------------------------ queries
    def distribution(self, state: int) -> dict[str, float]:
        """σ(s) as ``{choice name: probability}`` (all enabled choices)."""
        m = self.model
        return {name: float(self.probabilities[r]) for r, name in zip(m.choices(state), m.enabled_actions(state))}

    def matrix(self) -> sp.csr_matrix:
        """σ as a CSR matrix S (states x choices) with S[s, row] = σ(row): the induced DTMC is S · P, and each row is
        the distribution a state draws its choice from."""
        m = self.model
        return sp.csr_matrix((self.probabilities, np.arange(m.n_choices), m.row_groups),
                             shape=(m.n_states, m.n_choices))

    @property
    def is_deterministic(self) -> bool:
        return bool(np.all((self.probabilities == 0) | (self.probabilities == 1)))

    def replace_states(self, states: np.ndarray, other: "Strategy") -> "Strategy":
        """This strategy with the distributions of ``other`` in the states of the boolean mask ``states``."""
        take = np.asarray(states, dtype=bool)[self.model.state_of_choice]
        return Strategy(self.model, np.where(take, other.probabilities, self.probabilities))

    def __repr__(self) -> str:
        m = self.model
        decision = np.flatnonzero(m.decision_states)
        mixed = int(np.count_nonzero(np.bincount(m.state_of_choice, weights=(self.probabilities > 0),
                                                 minlength=m.n_states)[decision] > 1))
        kind = "deterministic" if mixed == 0 else f"randomized in {mixed} of {decision.size} decision states"
        return f"<Strategy on {m.source}: {kind}>"

    def allclose(self, other: "Strategy", atol: float = 1e-12) -> bool:
        return other.model is self.model and bool(np.allclose(self.probabilities, other.probabilities, atol=atol,
                                                              rtol=0))

    # ------------------------------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every decision state with its non-zero actions, and ``"default": "error"``."""
        m = self.model
        rows = np.flatnonzero((self.probabilities > 0) & m.decision_states[m.state_of_choice])
        actions: dict[int, dict[str, float]] = {s: {} for s in np.flatnonzero(m.decision_states).tolist()}
        for s, name, p in zip(m.state_of_choice[rows].tolist(), m.choice_names_of(rows),
                              self.probabilities[rows].tolist()):
            actions[s][name] = p
        entries = [{"state": m.valuation(s), "actions": chosen} for s, chosen in actions.items()]
        return {"states": entries, "default": "error"}

    def save(self, path: str | os.PathLike) -> None:
        """Write the JSON form to ``path`` (atomically)."""
        write_json(self.to_dict(), path)

    @classmethod
    def from_dict(cls, model: ExplicitModel, data: Any, source: str = "strategy") -> "Strategy":
        """Read the JSON form (see the module docstring); errors name the file, entry, state and action."""
        return _StrategyReader(model, source).read(data)

    @classmethod
    def load(cls, model: ExplicitModel, path: str | Path) -> "Strategy":
        return cls.from_dict(model, read_json(path, StrategyError), source=str(path))


class _StrategyReader:
    def __init__(self, model: ExplicitModel, source: str) -> None:
        self.model, self.source = model, source

    def fail(self, where: str, message: str) -> StrategyError:
        return StrategyError(f"{self.source}: {where}: {message}" if where else f"{self.source}: {message}")

    def require_keys(self, where: str, data: Mapping, known: tuple[str, ...]) -> None:
        unknown = [k for k in data if k not in known]
        if unknown:
            raise self.fail(where, f"unknown key \"{unknown[0]}\" (keys: {', '.join(known)})")

    def read(self, data: Any) -> Strategy:
        m = self.model
        if not isinstance(data, Mapping) or not isinstance(data.get("states"), list):
            raise self.fail("", 'expected an object {"states": [...], "default": "uniform" | "error"}')
        self.require_keys("", data, ("states", "default"))
        default = data.get("default", "uniform")
        if default not in ("uniform", "error"):
            raise self.fail("default", f'must be "uniform" or "error", got {default!r}')
        p = self.read_entries(data["states"])
        if p is None:                       # something is wrong: read entry by entry, which names the first problem
            p = np.full(m.n_choices, np.nan)
            seen: dict[int, int] = {}
            found = m.state_indices([e.get("state") if isinstance(e, Mapping) else None for e in data["states"]])
            for i, entry in enumerate(data["states"]):
                state = self.read_entry(i, entry, p, seen, int(found[i]))
                seen[state] = i
        missing = np.isnan(p)
        if missing.any():
            unlisted = np.zeros(m.n_states, dtype=bool)
            unlisted[m.state_of_choice[missing]] = True
            if default == "error":
                todo = np.flatnonzero(unlisted & m.decision_states)
                if todo.size:
                    names = ", ".join(m.state_name(int(s)) for s in todo[:3]) + (", ..." if todo.size > 3 else "")
                    raise self.fail("", f'{todo.size} decision state(s) not listed and "default" is "error": {names}')
            p[missing] = 1.0 / m.choice_counts[m.state_of_choice[missing]]
        return Strategy(m, p)

    def read_entries(self, entries: list) -> np.ndarray | None:
        """The probabilities the entries give (NaN for the choices of unlisted states) when every entry is a plain
        JSON object naming a state by its full valuation, else None (then :meth:`read_entry` reads them one by one
        and names the first problem). One lean pass over the entries; every check that numpy can make, in numpy
        (10^6 entries in seconds, where the entry-by-entry reading takes minutes)."""
        m = self.model
        p = np.full(m.n_choices, np.nan)
        if not entries:
            return p
        variables = m.variables
        if not variables:
            return None
        keys: list[tuple] = []
        entry_of: list[int] = []
        names: list[str] = []
        probabilities: list[Any] = []
        for i, entry in enumerate(entries):
            if type(entry) is not dict or len(entry) != 2:
                return None
            state, actions = entry.get("state"), entry.get("actions")
            if type(state) is not dict or len(state) != len(variables) or type(actions) is not dict or not actions:
                return None
            try:
                keys.append(tuple([state[v] for v in variables]))
            except KeyError:
                return None
            entry_of.extend([i] * len(actions))
            names.extend(actions)
            probabilities.extend(actions.values())
        for v, column in zip(variables, zip(*keys)):          # JSON types: a Boolean is no integer here
            if not set(map(type, column)) <= _JSON_TYPES[m.valuations[v].dtype.kind]:
                return None
        states = m.find_states(dict(zip(variables, zip(*keys))))
        if not set(map(type, probabilities)) <= {int, float} or (states < 0).any() \
                or np.unique(states).size != states.size:
            return None
        prob = np.array(probabilities, dtype=float)
        rows = m.choices_named(states[entry_of], names)
        sums = np.bincount(entry_of, weights=prob, minlength=len(entries))
        if (rows < 0).any() or not np.all((prob >= 0) & (prob <= 1)) \
                or ((prob > 0) & (prob < SMALLEST_PROBABILITY)).any() or (np.abs(sums - 1.0) > SUM_TOLERANCE).any():
            return None
        listed = np.zeros(m.n_states, dtype=bool)
        listed[states] = True
        p[listed[m.state_of_choice]] = 0.0
        p[rows] = prob
        return p

    def read_entry(self, i: int, entry: Any, p: np.ndarray, seen: dict[int, int], found: int = -1) -> int:
        """Read entry i into ``p``; ``found``: its state when already looked up (:meth:`ExplicitModel.state_indices`)."""
        m, where = self.model, f"states[{i}]"
        if not isinstance(entry, Mapping) or "state" not in entry or "actions" not in entry:
            raise self.fail(where, 'expected {"state": {...}, "actions": {...}}')
        self.require_keys(where, entry, ("state", "actions"))
        try:
            s = found if found >= 0 else m.state_index(entry["state"])
        except StateError as err:
            raise self.fail(where, str(err)) from None
        where = f"{where} ({m.state_name(s)})"
        if s in seen:
            raise self.fail(where, f"state given twice (also states[{seen[s]}])")
        actions = entry["actions"]
        if not isinstance(actions, Mapping) or not actions:
            raise self.fail(where, '"actions" must map action names to probabilities')
        rows = list(m.choices(s))
        p[rows] = 0.0
        for name, prob in actions.items():
            if isinstance(prob, bool) or not isinstance(prob, (int, float)) or prob != prob:
                raise self.fail(where, f"probability of '{name}' must be a number, got {prob!r}")
            if prob < 0:
                raise self.fail(where, f"probability of '{name}' is negative ({prob})")
            if 0 < prob < SMALLEST_PROBABILITY:
                raise self.fail(where, f"probability of '{name}' is {prob:g}, below the smallest normal double "
                                       f"{SMALLEST_PROBABILITY:.3g}; floating-point and exact checks would disagree "
                                       f"(write 0 or a larger probability)")
            try:
                p[m.choice_of(s, name)] = prob
            except StateError as err:
                raise self.fail(where, str(err)) from None
        above = [name for name, prob in actions.items() if prob > 1]
        if above:
            raise self.fail(where, f"probability of '{above[0]}' is {actions[above[0]]:g}, more than 1")
        total = float(p[rows].sum())
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise self.fail(where, f"probabilities sum to {total:.12g}, not 1 (tolerance {SUM_TOLERANCE:g})")
        return s
