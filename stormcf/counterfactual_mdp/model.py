"""The time-indexed counterfactual MDP of an observed path: ONE representation for point and interval rows.

An observed path τ = (s_0, a_0), ..., (s_{T-1}, a_{T-1}) conditions the exogenous noise of every step, so a
counterfactual MDP of τ is **non-stationary**: at step t its transition function P_t(s' | s, a) (a point
distribution: the Gumbel-max SCM, seed 001) or its interval [LB_t, UB_t] (every causal model consistent with τ,
seed 004) depends on the observation (s_t, a_t) -> s_{t+1}. A :class:`CounterfactualMDP` stores one :class:`Step`
per t = 0..T-1:

- the states S_t it contains (the **layers**; S_0 = {s_0}), the choices of those states an analysis may use (the
  *choice rule*: all enabled choices, or those a problem allows) and whether each spends a change (its action name
  differs from a_t and its state has more than one choice);
- for every such choice its transitions as indices into the model's ``transitions.data`` (``entries``: successors
  never leave the model's support) with the values ``lower``/``upper`` (the same array for point rows).

The layers are built forward from s_0: S_{t+1} is the set of successors of the step's choices, either through the
model's support (``layers="nominal"``: every counterfactual MDP of the same path and choice rule then has the same
layers, so a policy of one can be evaluated on another), or through the counterfactual MDP's own positive entries
(``layers="support"``: the fewest rows), or all states at every step (``layers="all"``: every transition, for
reproducing published per-transition tables). A path without ``final_state`` has no observation at its last step;
that step's rows are the nominal P.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ..errors import OptionError, PathError
from ..model import ExplicitModel
from ..paths import ObservedPath

#: how the states of step t+1 are collected from step t (module docs)
LAYERS = ("nominal", "support", "all")

#: a choice rule: (t, candidate rows) -> (allowed mask, change mask)
ChoiceRule = Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray]]
#: a row computer for an observed step: (t, rows, entries of those rows, observed row, observed successor) ->
#: (lower, upper) aligned with the entries
RowValues = Callable[[int, np.ndarray, np.ndarray, int, int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True, eq=False)
class Step:
    """Step t of a counterfactual MDP.

    Attributes:
        states: S_t, the states of the step (model ids, ascending).
        groups: offsets (|S_t| + 1) of each state's choices in ``choices``.
        choices: the usable choices (model rows) of the states of S_t, grouped by state.
        change: per choice, whether it spends a change (module docs).
        indptr: offsets (|choices| + 1) of each choice's transitions in ``entries``.
        entries: the transitions (indices into ``model.transitions.data``), the model's order within a choice.
        lower, upper: P_t(s' | s, a) bounds per transition (``lower is upper`` for point rows).
        successors: per transition, the index of its successor in ``next_states``.
        next_states: S_{t+1} (model ids, ascending); the states of step t+1, and after the last step the states
            the horizon ends in.
    """

    states: np.ndarray
    groups: np.ndarray
    choices: np.ndarray
    change: np.ndarray
    indptr: np.ndarray
    entries: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    successors: np.ndarray
    next_states: np.ndarray

    @property
    def is_point(self) -> bool:
        return self.lower is self.upper

    @property
    def n_choices(self) -> int:
        return int(self.choices.size)

    @cached_property
    def owner(self) -> np.ndarray:
        """Local index (into ``states``) of the state of every choice."""
        return np.repeat(np.arange(self.states.size), np.diff(self.groups))

    @cached_property
    def choice_of_entry(self) -> np.ndarray:
        """Local index (into ``choices``) of every transition."""
        return np.repeat(np.arange(self.choices.size), np.diff(self.indptr))

    def local(self, states: np.ndarray) -> np.ndarray:
        """Local indices of model state ids (which must be in S_t)."""
        return np.searchsorted(self.states, states)

    @cached_property
    def keep(self) -> np.ndarray:
        """Per state of S_t: the position in ``choices`` of the choice that spends no change, or -1."""
        keep = np.full(self.states.size, -1, dtype=np.int64)
        free = np.flatnonzero(~self.change)
        keep[self.owner[free]] = free
        return keep

    def matrix(self, values: np.ndarray | None = None) -> sp.csr_matrix:
        """The rows as CSR (|choices| x |S_{t+1}|) with ``values`` (default ``lower``) as data; zeros are dropped
        (so that 0 · ∞ never enters a product)."""
        data = self.lower if values is None else values
        M = sp.csr_matrix((data, self.successors, self.indptr), shape=(self.choices.size, self.next_states.size),
                          copy=True)
        M.eliminate_zeros()                             # in place: hence the copy above
        return M

    @cached_property
    def rows(self) -> sp.csr_matrix:
        """The point rows P_t (|choices| x |S_{t+1}|); for interval rows, the lower bounds."""
        return self.matrix()


@dataclass(frozen=True, eq=False, repr=False)
class CounterfactualMDP:
    """A non-stationary counterfactual MDP of an observed path (module docs).

    Attributes:
        path: the observation τ (its model is the MDP).
        steps: one :class:`Step` per t = 0..T-1.
        layers: ``"nominal"``, ``"support"`` or ``"all"``.
        kind: what the rows are: ``"interval"`` or ``"point"``.
        method: where the numbers come from (e.g. ``"cs+m, closed forms"``, ``"gumbel-max, exact"``,
            ``"gumbel-max, Monte Carlo, 1000 samples per (t, s, a)"``, ``"sampled from an ICFMDP"``).
        approximate: whether the rows are estimates (Monte Carlo).
        seconds: construction time.
    """

    path: ObservedPath
    steps: tuple[Step, ...]
    layers: str
    kind: str
    method: str
    approximate: bool = False
    seconds: float = field(default=0.0, compare=False)

    @property
    def model(self) -> ExplicitModel:
        return self.path.model

    @property
    def horizon(self) -> int:
        return len(self.steps)

    T = horizon

    @property
    def start(self) -> int:
        return int(self.path.states[0])

    @property
    def n_pairs(self) -> int:
        """Number of (t, s) pairs."""
        return sum(step.states.size for step in self.steps)

    @property
    def n_rows(self) -> int:
        """Number of counterfactual rows P_t(. | s, a)."""
        return sum(step.n_choices for step in self.steps)

    @property
    def n_transitions(self) -> int:
        return sum(step.entries.size for step in self.steps)

    def __repr__(self) -> str:
        return (f"<CounterfactualMDP of a {self.horizon}-step path on {self.model.source}: {self.kind} rows "
                f"({self.method}), {self.n_pairs} (t, s) pairs, {self.n_rows} rows>")

    def transitions(self, t: int) -> sp.csr_matrix:
        """Step t's point rows (for interval rows: the lower bounds) with model indices: one row per model choice,
        one column per model state (zero rows for the choices the step does not use)."""
        step = self.steps[t]
        m = self.model
        M = sp.csr_matrix((step.lower, (np.repeat(step.choices, np.diff(step.indptr)),
                                        m.transitions.indices[step.entries])), shape=(m.n_choices, m.n_states))
        M.eliminate_zeros()
        return M

    def aligned(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) as arrays (T, nnz) aligned with ``model.transitions.data``; NaN where a step has no row
        (with ``layers="all"`` every entry is filled)."""
        nnz = self.model.n_transitions
        lower, upper = np.full((self.T, nnz), np.nan), np.full((self.T, nnz), np.nan)
        for t, step in enumerate(self.steps):
            lower[t, step.entries], upper[t, step.entries] = step.lower, step.upper
        return lower, upper

    def mean_bound_width(self) -> float:
        """Mean of UB - LB over the transitions with UB > 0 of every step (the paper's Table 3 metric, taken over
        the transitions this counterfactual MDP contains)."""
        total, count = 0.0, 0
        for step in self.steps:
            live = step.upper > 0
            total += float((step.upper[live] - step.lower[live]).sum())
            count += int(live.sum())
        return total / count if count else 0.0

    def validity_violations(self, tolerance: float = 1e-9) -> list[str]:
        """What breaks the guarantees of the rows (empty when valid): 0 <= LB <= UB <= 1, Σ LB <= 1 <= Σ UB per
        (t, s, a), and the point mass [1, 1] on the observed transition."""
        problems = []
        for t, step in enumerate(self.steps):
            if np.any(step.lower > step.upper) or step.lower.min(initial=0) < 0 or step.upper.max(initial=0) > 1:
                problems.append(f"step {t}: a bound lies outside 0 <= LB <= UB <= 1")
            lo = np.add.reduceat(step.lower, step.indptr[:-1]) if step.entries.size else np.zeros(0)
            hi = np.add.reduceat(step.upper, step.indptr[:-1]) if step.entries.size else np.zeros(0)
            bad = np.flatnonzero((lo > 1 + tolerance) | (hi < 1 - tolerance))
            if bad.size:
                i = int(bad[0])
                problems.append(f"step {t}: choice {int(step.choices[i])}: sum LB = {lo[i]:.17g}, "
                                f"sum UB = {hi[i]:.17g}")
            observed = observed_entry(self.path, t)
            if observed is not None:
                at = np.flatnonzero(step.entries == observed)
                if at.size != 1 or step.lower[at[0]] != 1 or step.upper[at[0]] != 1:
                    problems.append(f"step {t}: the observed transition is not the point mass 1")
        return problems

    def same_layers(self, other: "CounterfactualMDP") -> bool:
        """Whether both have the same steps' states and choices (a policy of one then applies to the other)."""
        return self.path is other.path and self.T == other.T and all(
            np.array_equal(a.states, b.states) and np.array_equal(a.choices, b.choices)
            for a, b in zip(self.steps, other.steps))

    def with_rows(self, values: list[np.ndarray], kind: str, method: str, approximate: bool = False,
                  seconds: float = 0.0) -> "CounterfactualMDP":
        """A point counterfactual MDP with the same layers and choices, and the given per-step row values."""
        steps = tuple(Step(s.states, s.groups, s.choices, s.change, s.indptr, s.entries, v, v, s.successors,
                           s.next_states)
                      for s, v in zip(self.steps, values))
        return CounterfactualMDP(self.path, steps, self.layers, kind, method, approximate, seconds)

    def to_dict(self) -> dict[str, Any]:
        return {"horizon": self.T, "kind": self.kind, "method": self.method, "layers": self.layers,
                "pairs": self.n_pairs, "rows": self.n_rows, "transitions": self.n_transitions,
                "approximate": self.approximate, "seconds": self.seconds}


# ================================================================================================ construction
def observed_steps(path: ObservedPath) -> list[tuple[int, int] | None]:
    """(observed row, observed successor) of every step; ``None`` for a last step without final state."""
    return [(int(r), int(k)) if k >= 0 else None for r, k in zip(path.choices, path.next_states)]


def observed_entry(path: ObservedPath, t: int) -> int | None:
    """The index in ``model.transitions.data`` of the observed transition of step t (None if unobserved)."""
    obs = observed_steps(path)[t]
    if obs is None:
        return None
    row, k = obs
    P = path.model.transitions
    lo, hi = P.indptr[row], P.indptr[row + 1]
    at = lo + int(np.searchsorted(P.indices[lo:hi], k))
    if at >= hi or P.indices[at] != k:
        raise PathError(f"step {t}: the observed successor is not a successor of the observed choice")
    return int(at)


def all_choices(model: ExplicitModel, path: ObservedPath) -> ChoiceRule:
    """The default choice rule: every enabled choice is allowed; a choice is a change when its action name differs
    from the observed a_t and its state has more than one choice."""
    observed = model.choice_actions[path.choices]

    def rule(t: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        forced = model.choice_counts[model.state_of_choice[rows]] == 1
        return np.ones(rows.size, dtype=bool), (model.choice_actions[rows] != observed[t]) & ~forced
    return rule


def choices_of(row_groups: np.ndarray, states: np.ndarray) -> np.ndarray:
    """All choices (rows) of the given states, grouped by state in the given order."""
    counts = row_groups[states + 1] - row_groups[states]
    offsets = np.repeat(row_groups[states] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return offsets + np.arange(counts.sum())


def _whole_model(model: ExplicitModel) -> tuple[np.ndarray, ...]:
    """(states, choices, groups, entries, indptr) of every state of the model, shared by the steps of ``layers="all"``."""
    P = model.transitions
    return (np.arange(model.n_states), np.arange(model.n_choices), model.row_groups, np.arange(P.nnz), P.indptr)


def length_buckets(lengths: np.ndarray) -> list[np.ndarray]:
    """Positions of ``lengths`` grouped into the buckets (2^(j-1), 2^j] (empty rows are in none), so that rows of
    similar length can be padded to a common width and processed as one dense block: padding costs at most twice
    the work of the rows themselves."""
    lengths = np.asarray(lengths)
    top = int(lengths.max(initial=1))
    buckets = []
    for hi in 2 ** np.arange(int(np.ceil(np.log2(max(top, 1)))) + 1):
        at = np.flatnonzero((lengths <= hi) & (lengths > hi // 2))
        if at.size:
            buckets.append(at)
    return buckets


def entries_of(P: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The transitions (indices into ``P.data``) of the given rows, and their offsets per row."""
    lengths = P.indptr[rows + 1] - P.indptr[rows]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    entries = np.repeat(P.indptr[rows] - indptr[:-1], lengths) + np.arange(indptr[-1])
    return entries, indptr


def nominal_transitions(path: ObservedPath) -> int:
    """The transitions of the nominal layers of ``path`` (module docs) with every enabled choice, over all steps: the
    size of the largest counterfactual MDP of ``path`` with ``layers="nominal"`` or ``"support"``, counted from the
    model's support alone (no row values), one layer at a time."""
    P, rg = path.model.transitions, path.model.row_groups
    states, total = path.states[:1].astype(np.int64), 0
    for _ in range(path.T):
        entries, _ = entries_of(P, choices_of(rg, states))
        total += entries.size
        states = np.unique(P.indices[entries])
    return total


def build_cfmdp(path: ObservedPath, row_values: RowValues, kind: str, method: str, layers: str = "nominal",
                choice_rule: ChoiceRule | None = None, approximate: bool = False) -> CounterfactualMDP:
    """Build a counterfactual MDP forward from s_0 (module docs).

    ``row_values(t, rows, entries, observed_row, observed_successor)`` returns the (lower, upper) values of the given
    transitions of an observed step t (the same array twice for point rows); a step without observation gets the
    nominal P. ``choice_rule`` says which choices are usable and which spend a change (default:
    :func:`all_choices`).
    """
    if layers not in LAYERS:
        raise OptionError(f"unknown layers {layers!r}: use one of {', '.join(LAYERS)}")
    start = time.perf_counter()
    model = path.model
    P, rg = model.transitions, model.row_groups
    rule = choice_rule or all_choices(model, path)
    observed = observed_steps(path)
    everything = _whole_model(model) if layers == "all" else None
    states = everything[0] if everything else path.states[:1].astype(np.int64)
    steps = []
    for t in range(path.T):
        candidates = choices_of(rg, states) if everything is None else everything[1]
        allowed, change = rule(t, candidates)
        if everything is not None and allowed.all():       # every step shares the model's own index arrays
            _, choices, groups, entries, indptr = everything
        else:
            choices = candidates[allowed]
            owner = np.repeat(np.arange(states.size), model.choice_counts[states])[allowed]
            groups = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=states.size))])
            entries, indptr = entries_of(P, choices)
        seen = observed[t]
        if seen is None:
            lower = upper = P.data[entries]
        else:
            lower, upper = row_values(t, choices, entries, *seen)
        targets = P.indices[entries]
        if everything is not None:
            nxt, successors = states, targets
        else:
            nxt = np.unique(targets if layers == "nominal" else targets[upper > 0])
            successors = np.searchsorted(nxt, targets)
        if layers == "support":                                # entries leaving the support point nowhere useful
            successors = np.minimum(successors, max(nxt.size - 1, 0))
        steps.append(Step(states, groups, choices, change[allowed], indptr, entries, lower, upper, successors, nxt))
        states = nxt
    return CounterfactualMDP(path, tuple(steps), layers, kind, method, approximate, time.perf_counter() - start)
