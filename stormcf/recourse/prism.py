"""The PRISM front of sequential recourse (notes §5.1-5.3): an MDP whose variables are the features.

- **Actions** are the labelled commands. A family of commands ``[a__v]`` is one action ``a`` with the tweaking
  values ``v`` (numbers are sorted numerically); a plain label ``[a]`` is an action with one value. An action is
  enabled in a state when its command's guard holds there: the guard is the pre/post-condition (a post-condition of
  a deterministic update is a predicate on the pre-state). A choice that surely stays in its state changes nothing
  and is invalid, as on the Python front.
- **Target**: a state label (``"accept"``), or a classifier called once on all states' valuations.
- **Cost**: a reward model read as state-action reward (state rewards count when the state is left; transition
  rewards are rejected). It is o_1 and should already hold the consequence discount, c = b·g: g depends only on the
  state before the step, so c is an ordinary state-action reward (``[changeJob] true : 10 * (...)``). An optional
  second reward model is the undiscounted effort b (reported; default: the cost).
- **Probabilistic effects** (notes §5.2): a plan is open-loop; its state distribution is propagated forward,

      p_0 = δ(s_0),  p_t(s') = Σ_s p_{t-1}(s)·P(s' | s, a^t),  E[cost] = Σ_t Σ_s p_{t-1}(s)·c(s, a^t),
      P_acc = Σ_s p_T(s)·[s ∈ accept],   E[freq_h] and E[Gower] likewise;

  a step is invalid (a violation, the mass stays) where its action is not enabled or surely changes nothing, and a
  plan is feasible when every step is valid and P_acc >= θ.
- **Gower ranges**: the declared bounds hi - lo of integer variables (Booleans are categorical), unless given.

The whole population is propagated at once: the (plan, state, probability) entries of a step find their choice by a
binary search over sorted (state, action, value) keys and spread over the CSR rows with ``np.repeat``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from .. import storm
from ..model import ExplicitModel
from .decoder import Evaluation, Plans
from .exact import ACCEPT, Layer, RecourseMDP, assemble_mdp, reorder
from ..errors import RecourseError
from .domains import ValueDomain
from .problem import OBJECTIVES, parse_objectives

FAMILY_SEPARATOR = "__"


@dataclass(frozen=True)
class Family:
    """One action of the PRISM front: the choice labels ``a__v`` (or ``a``) and their values."""

    name: str
    domain: ValueDomain
    labels: tuple[str, ...]


def action_families(action_names: Sequence[str]) -> list[Family]:
    """Group choice labels into actions: ``a__v`` is action ``a`` with value ``v`` (module docs)."""
    grouped: dict[str, list[tuple[str, str | None]]] = {}
    for label in action_names:
        if not label:
            continue
        head, sep, tail = label.rpartition(FAMILY_SEPARATOR)
        name, value = (head, tail) if sep and head else (label, None)
        grouped.setdefault(name, []).append((label, value))
    families = []
    for name, members in grouped.items():
        values = [v for _, v in members]
        if None in values and len(values) > 1:
            raise RecourseError(f"action '{name}' is both a plain label and a family of values "
                                f"({', '.join(label for label, _ in members)})")
        if values == [None]:
            families.append(Family(name, ValueDomain.fixed(0.0, ""), (members[0][0],)))
            continue
        texts = [v for v in values if v is not None]  # all of them: None is only a lone plain label
        try:
            numbers = [float(v) for v in texts]
            order = np.argsort(numbers, kind="stable")
            domain = ValueDomain.finite([numbers[k] for k in order], [texts[k] for k in order])
        except ValueError:
            order = np.arange(len(texts))
            domain = ValueDomain.finite(list(range(len(texts))), texts)
        families.append(Family(name, domain, tuple(members[k][0] for k in order)))
    return families


@dataclass(frozen=True, eq=False)
class PrismRecourse:
    """A recourse problem on a PRISM MDP (module docs), validated when built.

    Attributes:
        model: the MDP (its initial state is x_0).
        target: a state label name, or a classifier on the states' valuations (an (n, d) float array with the
            variables in ``model.variables`` order) whose label ``target_class`` is the desired outcome.
        cost: the reward model that is o_1 (c = b·g).
        effort: the reward model of the undiscounted effort b (default: the cost).
        objectives: a subset of ``("cost", "gower", "freq")``.
        threshold: θ, the probability of acceptance a feasible plan needs (1 on deterministic models).
        gower_ranges: R_h per integer variable (default: its declared bounds).
        target_class: the desired label of a classifier target.
    """

    model: ExplicitModel
    target: str | Callable[[np.ndarray], np.ndarray] | Any
    cost: str
    effort: str | None = None
    objectives: Sequence[str] = OBJECTIVES
    threshold: float = 1.0
    gower_ranges: Mapping[str, float] | None = None
    target_class: Any = 1
    _arrays: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        m = self.model
        if m.model_type != "mdp":
            raise RecourseError(f"{m.source}: recourse needs an MDP whose commands are the actions, not a "
                                f"{m.model_type.upper()}")
        if not m.variables:
            raise RecourseError(f"{m.source}: the model has no state variables (features)")
        set_("objectives", parse_objectives(self.objectives))
        if not 0.0 < float(self.threshold) <= 1.0:
            raise RecourseError(f"the acceptance threshold θ must lie in (0, 1], got {self.threshold}")
        families = action_families(m.action_names)
        if not families:
            raise RecourseError(f"{m.source}: the model has no labelled commands (actions)")
        V = np.column_stack([np.asarray(m.valuations[v], dtype=float) for v in m.variables])
        accept = self._target_mask(V)
        cost = m.step_rewards(self.cost)
        effort = m.step_rewards(self.effort) if self.effort is not None else cost
        if np.any(cost < 0) or np.any(effort < 0):
            raise RecourseError(f"reward model \"{self.cost if np.any(cost < 0) else self.effort}\" has negative "
                                f"rewards; recourse costs must be >= 0")
        self._arrays.update(families=families, cost=cost, effort=effort, accept=accept)
        self._index_choices()
        self._arrays["gower"] = self._gower(V)
        self._arrays["freq"] = self._choice_changes(V)

    # ------------------------------------------------------------------------------------------ setup
    def _target_mask(self, V: np.ndarray) -> np.ndarray:
        if isinstance(self.target, str):
            return np.asarray(self.model.label(self.target), dtype=bool)
        f = self.target.predict if hasattr(self.target, "predict") else self.target
        if not callable(f):
            raise RecourseError("the target must be a label name or a classifier on valuations")
        return np.asarray(f(V)) == self.target_class

    def _index_choices(self) -> None:
        m = self.model
        families = self._arrays["families"]
        by_label = {label: (f, k) for f, fam in enumerate(families) for k, label in enumerate(fam.labels)}
        names = np.array(m.action_names, dtype=object)[m.choice_actions]
        pairs = np.array([by_label.get(label, (-1, -1)) for label in names.tolist()], dtype=np.int64).reshape(-1, 2)
        family, value = pairs[:, 0], pairs[:, 1]
        width = max(fam.domain.size for fam in families)
        keys = (m.state_of_choice * len(families) + family) * width + value
        labelled = family >= 0
        order = np.argsort(keys[labelled], kind="stable")
        rows = np.flatnonzero(labelled)[order]
        sorted_keys = keys[rows]
        repeated = np.flatnonzero(np.diff(sorted_keys) == 0)
        if repeated.size:
            row = int(rows[repeated[0]])
            raise RecourseError(f"state {m.state_name(int(m.state_of_choice[row]))} has two choices labelled "
                                f"'{m.action(row)}'; an action needs one command per state")
        P = m.transitions
        single = np.diff(P.indptr) == 1
        self_loop = single & (P.indices[P.indptr[:-1]] == m.state_of_choice)
        self._arrays.update(family=family, value=value, width=width, keys=sorted_keys, rows=rows,
                            self_loop=self_loop, deterministic=bool(np.all(single)))

    def _gower(self, V: np.ndarray) -> np.ndarray:
        m = self.model
        given = dict(self.gower_ranges or {})
        unknown = sorted(set(given) - set(m.variables))
        if unknown:
            raise RecourseError(f"Gower range for unknown variable '{unknown[0]}'")
        declared = storm.variable_bounds(m)
        x0 = V[m.initial_state]
        s = np.zeros_like(V)
        for j, var in enumerate(m.variables):
            if m.valuations[var].dtype == bool:
                s[:, j] = V[:, j] != x0[j]
                continue
            lo, hi = declared.get(var, (V[:, j].min(), V[:, j].max()))
            r = float(given.get(var, hi - lo))
            if r > 0:
                s[:, j] = np.abs(V[:, j] - x0[j]) / r
        return s.mean(axis=1)

    def _choice_changes(self, V: np.ndarray) -> np.ndarray:
        """E[changed_h] per choice: Σ_s' P(s' | s, a)·[x_h(s') != x_h(s)] (every choice has a successor)."""
        P = self.model.transitions
        owner = self.model.state_of_choice[np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))]
        changed = (V[P.indices] != V[owner]) * P.data[:, None]
        return np.add.reduceat(changed, P.indptr[:-1], axis=0)

    # ------------------------------------------------------------------------------------------ the PlanSpace
    @property
    def families(self) -> list[Family]:
        return self._arrays["families"]

    @property
    def domains(self) -> tuple[ValueDomain, ...]:
        return tuple(f.domain for f in self.families)

    @property
    def action_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.families)

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.model.variables

    @property
    def deterministic(self) -> bool:
        return self._arrays["deterministic"]

    @property
    def accept(self) -> np.ndarray:
        return self._arrays["accept"]

    @property
    def target_name(self) -> str:
        return self.target if isinstance(self.target, str) else ACCEPT

    @property
    def effort_name(self) -> str:
        return self.effort if self.effort is not None else self.cost

    def evaluate(self, plans: Plans) -> Evaluation:
        return self._propagate(plans)[0]

    def _value_index(self, family: np.ndarray, value: np.ndarray) -> np.ndarray:
        out = np.zeros(family.size, dtype=np.int64)
        for f, fam in enumerate(self.families):
            mine = family == f
            if mine.any():
                out[mine] = np.searchsorted(np.asarray(fam.domain.values), value[mine])
        return out

    def _rows(self, states: np.ndarray, family: np.ndarray, value_index: np.ndarray) -> np.ndarray:
        """The choice of (state, action, value), or -1 where there is none or it surely changes nothing."""
        a = self._arrays
        keys = (states * len(self.families) + family) * a["width"] + value_index
        at = np.minimum(np.searchsorted(a["keys"], keys), a["keys"].size - 1)
        rows = np.where(a["keys"][at] == keys, a["rows"][at], -1)
        return np.where((rows >= 0) & ~a["self_loop"][np.maximum(rows, 0)], rows, -1)

    def _propagate(self, plans: Plans, record: bool = False):
        """Forward propagation of the plans' state distributions (module docs); with ``record``, the entries of
        every step (plan, state, probability, row) for the plan DTMC."""
        a = self._arrays
        m = self.model
        P = m.transitions
        n, d = len(plans), len(m.variables)
        plan, state, prob = np.arange(n), np.full(n, m.initial_state), np.ones(n)
        cost, effort, violations = np.zeros(n), np.zeros(n), np.zeros(n)
        freq = np.zeros((n, d))
        values = plans.step_values()
        steps = []
        for t in range(plans.max_length):
            family = plans.order[plan, t]
            moving = np.flatnonzero(family >= 0)
            rows = np.full(plan.size, -1)
            rows[moving] = self._rows(state[moving], family[moving],
                                      self._value_index(family[moving], values[plan[moving], t]))
            blocked = (family >= 0) & (rows < 0)
            violations[np.unique(plan[blocked])] += 1
            go = np.flatnonzero(rows >= 0)
            r, q, p = rows[go], prob[go], plan[go]
            np.add.at(cost, p, q * a["cost"][r])
            np.add.at(effort, p, q * a["effort"][r])
            np.add.at(freq, p, q[:, None] * a["freq"][r])
            if record:
                steps.append((t, plan.copy(), state.copy(), prob.copy(), rows.copy()))
            spread, entries = _entries(P, r)
            stay = np.flatnonzero(rows < 0)
            plan = np.concatenate([plan[stay], p[spread]])
            state = np.concatenate([state[stay], P.indices[entries]])
            prob = np.concatenate([prob[stay], q[spread] * P.data[entries]])
            plan, state, prob = _merge(plan, state, prob, m.n_states)
        p_accept = np.bincount(plan, weights=prob * a["accept"][state], minlength=n)
        gower = np.bincount(plan, weights=prob * a["gower"][state], minlength=n)
        evaluation = Evaluation(cost, effort, gower, freq, p_accept, violations, plans.lengths,
                                float(self.threshold), tuple(self.objectives))
        if record:
            steps.append((plans.max_length, plan, state, prob, np.full(plan.size, -1)))
        return evaluation, steps

    # ------------------------------------------------------------------------------------------ one plan
    def plan_layers(self, plans: Plans) -> tuple[list[Layer], np.ndarray, np.ndarray, list[dict]]:
        """The plan DTMC's layers of the single (feasible) plan in ``plans``, the final states' acceptance and
        Gower distance, and per step the distribution before it (state -> probability) for the text."""
        _, steps = self._propagate(plans, record=True)
        a = self._arrays
        layers, supports = [], []
        for _, _, state, prob, rows in steps:          # one plan: its entries are (state, probability), sorted
            supports.append((state, prob, rows))
        for (s, _, rows), (s_next, _, _) in zip(supports[:-1], supports[1:]):
            step = self.model.transitions[rows].tocoo()
            position = np.searchsorted(s_next, step.col)
            layers.append(Layer(sp.csr_matrix((step.data, (step.row, position)), shape=(s.size, s_next.size)),
                                a["cost"][rows], a["effort"][rows]))
        final, _, _ = supports[-1]
        distributions = [dict(zip(s.tolist(), p.tolist())) for s, p, _ in supports]
        return layers, a["accept"][final], a["gower"][final], distributions

    # ------------------------------------------------------------------------------------------ plan MDP
    def recourse_mdp(self) -> RecourseMDP:
        """The product of the model with the set of actions used (the once-only rule), from the initial state with
        no action used (exact module docs)."""
        a = self._arrays
        m = self.model
        P = m.transitions
        usable = (a["family"] >= 0) & ~a["self_loop"]
        layer_s, layer_u = np.array([m.initial_state]), np.zeros(1, dtype=np.int64)
        states_s, states_u = [layer_s], [layer_u]
        offset, total = 0, 1
        sources, rows_all, targets = [], [], []
        while layer_s.size:
            owner, rows = _ranges(m.row_groups, layer_s)
            family = a["family"][rows]
            ok = usable[rows] & ((layer_u[owner] >> np.maximum(family, 0)) & 1 == 0)
            owner, rows, family = owner[ok], rows[ok], family[ok]
            if rows.size == 0:
                break
            choice, entries = _entries(P, rows)
            next_s = P.indices[entries]
            next_u = layer_u[owner][choice] | (np.int64(1) << family[choice])
            pairs, inverse = np.unique(np.column_stack([next_s, next_u]), axis=0, return_inverse=True)
            offset += layer_s.size
            sources.append(offset - layer_s.size + owner)
            rows_all.append(rows)
            targets.append((choice, offset + inverse.ravel(), P.data[entries]))
            layer_s, layer_u = pairs[:, 0], pairs[:, 1]
            states_s.append(layer_s)
            states_u.append(layer_u)
            total += layer_s.size
        return self._product(np.concatenate(states_s), total, sources, rows_all, targets)

    def _product(self, s: np.ndarray, n: int, sources: list, rows_all: list, targets: list) -> RecourseMDP:
        a = self._arrays
        m = self.model
        base = np.cumsum([0] + [r.size for r in rows_all])
        source = np.concatenate(sources) if sources else np.zeros(0, dtype=np.int64)
        rows = np.concatenate(rows_all) if rows_all else np.zeros(0, dtype=np.int64)
        choice = np.concatenate([c + base[k] for k, (c, _, _) in enumerate(targets)]) if targets else rows
        column = np.concatenate([t for _, t, _ in targets]) if targets else rows
        data = np.concatenate([p for _, _, p in targets]) if targets else np.zeros(0)
        successors = sp.csr_matrix((data, (choice, column)), shape=(rows.size, n))
        rewards = {self.cost: a["cost"][rows], self.effort_name: a["effort"][rows]}
        valuations = {var: m.valuations[var][s] for var in m.variables}
        model, order = assemble_mdp(n, source, successors, m.choice_actions[rows], m.action_names, rewards,
                                    {self.target_name: a["accept"][s]}, valuations,
                                    f"{m.source} x used actions (once-only)")
        family = reorder(order, a["family"][rows], -1).astype(np.int64)
        value = reorder(order, self._family_values(rows), 0.0)
        return RecourseMDP(model, family, value, a["gower"][s], self.cost, self.effort_name, self.target_name,
                           self.deterministic)

    def _family_values(self, rows: np.ndarray) -> np.ndarray:
        a = self._arrays
        values = np.zeros(rows.size)
        for f, fam in enumerate(self.families):
            mine = a["family"][rows] == f
            values[mine] = np.asarray(fam.domain.values)[a["value"][rows[mine]]]
        return values

    # ------------------------------------------------------------------------------------------ words
    def state_text(self, state: int) -> str:
        return self.model.state_name(state)

    def changes_text(self, before: int, after: int) -> str:
        """The variables that differ between two states, ``edu 0 → 1``."""
        m = self.model
        x, y = m.valuation(before), m.valuation(after)
        return ", ".join(f"{v} {_value(x[v])} → {_value(y[v])}" for v in m.variables if x[v] != y[v]) or "no change"


def _value(x: Any) -> str:
    return ("true" if x else "false") if isinstance(x, bool) else f"{x}"


def _ranges(indptr: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For CSR-like ``indptr``: (position in ``items``, index) of every index in the ranges of ``items``."""
    counts = indptr[items + 1] - indptr[items]
    owner = np.repeat(np.arange(items.size), counts)
    starts = np.repeat(indptr[items] - (np.cumsum(counts) - counts), counts)
    return owner, starts + np.arange(owner.size)


def _entries(P: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position in ``rows``, entry of ``P.data``) of every transition of the given rows."""
    return _ranges(P.indptr, rows)


def _merge(plan: np.ndarray, state: np.ndarray, prob: np.ndarray, n_states: int):
    """Sum the probabilities of equal (plan, state) entries."""
    keys = plan.astype(np.int64) * n_states + state
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique // n_states, unique % n_states, np.bincount(inverse.ravel(), weights=prob)
