"""Independent verification by Storm: the DTMC induced by a strategy, model-checked by Storm.

Every analysis of stormcf ends here: a number reported as "the probability under this strategy" is Storm's result on
the induced DTMC M^σ, built from explicit matrices:

    P_σ = S · P          with S[s, row] = σ(row) for the choices of s      (n x n)
    r_σ = S · r          expected state-action (and transition) reward of every state

Labels and the initial state are the MDP's; state rewards are kept as state rewards. With ``exact=True`` the
transition probabilities come from Storm's rational build of the model (``0.4`` is exactly 2/5), the strategy's
probabilities are read as the shortest decimals that print them (``0.3`` is exactly 3/10), and Storm checks the DTMC
over ``stormpy.Rational``.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from . import storm
from .model import ExplicitModel
from .properties import Property
from .strategy import Strategy


@dataclass(frozen=True)
class Verification:
    """Storm's value of a property on the DTMC induced by a strategy, at the initial state."""

    property: str
    value: float
    exact: Fraction | None = None
    holds: bool | None = None
    method: str = ""

    def __str__(self) -> str:
        text = f"{self.property} = {format_value(self.value)}"
        if self.exact is not None:
            text += f" = {self.exact}"
        if self.holds is not None:
            text += f" ({'holds' if self.holds else 'violated'})"
        return text

    def to_dict(self) -> dict:
        out = {"property": self.property, "value": self.value, "method": self.method}
        if self.exact is not None:
            out["exact"] = str(self.exact)
        if self.holds is not None:
            out["holds"] = self.holds
        return out


def format_value(x: float) -> str:
    """A model-checking number for people: up to 6 significant digits (the JSON keeps every digit)."""
    return f"{x:.6g}"


def strategy_matrix(strategy: Strategy) -> sp.csr_matrix:
    """S (n_states x n_choices) with S[s, row] = σ(row)."""
    m = strategy.model
    return sp.csr_matrix((strategy.probabilities, (m.state_of_choice, np.arange(m.n_choices))),
                         shape=(m.n_states, m.n_choices))


def induced_dtmc(strategy: Strategy) -> sp.csr_matrix:
    """P_σ = S · P, the transition matrix of the DTMC induced by σ (n x n CSR, zeros removed, indices sorted)."""
    P = (strategy_matrix(strategy) @ strategy.model.transitions).tocsr()
    P.eliminate_zeros()
    P.sort_indices()
    return P


def verify(strategy: Strategy, prop: Property | str, exact: bool = False) -> Verification:
    """Model-check ``prop`` on the DTMC induced by ``strategy`` with Storm; the value is at the initial state.

    Bounded properties (``P<=0.2 [F "rejected"]``) report the value and whether the bound holds.
    """
    m = strategy.model
    if isinstance(prop, str):
        prop = storm.parse_property(m, prop)
    S = strategy_matrix(strategy)
    state_rewards = {k: rm.state for k, rm in m.rewards.items() if rm.state is not None}
    choice_rewards = {k: S @ m.expected_choice_rewards(k) for k, rm in m.rewards.items()
                      if rm.choice is not None or rm.transition is not None}
    if exact:
        P, exact_P, exact_rewards = _exact_induced(strategy, choice_rewards)
        result = storm.check_dtmc(P, m, prop, state_rewards, choice_rewards, exact_P, exact_rewards)
    else:
        result = storm.check_dtmc(induced_dtmc(strategy), m, prop, state_rewards, choice_rewards)
    return _at_initial_state(m, prop, result, exact)


def check_model(model: ExplicitModel, prop: Property | str, exact: bool = False) -> Verification:
    """Storm's value of ``prop`` on the model itself, at the initial state (an MDP needs ``Pmin``/``Pmax``)."""
    if isinstance(prop, str):
        prop = storm.parse_property(model, prop)
    result = storm.check_exact(model, prop) if exact else storm.check(model, prop)
    return _at_initial_state(model, prop, result, exact)


def _at_initial_state(model: ExplicitModel, prop: Property, result: storm.CheckResult, exact: bool) -> Verification:
    method = ("Storm, exact rational arithmetic" if exact
              else f"Storm, sound value iteration (relative precision {float(storm.PRECISION):g})")
    s0 = model.initial_state
    if result.values is None:       # a state formula
        return Verification(prop.text, float(result.holds[s0]), None, bool(result.holds[s0]), method)
    value_exact = result.exact[s0] if result.exact is not None else None
    return Verification(prop.text, float(result.values[s0]),
                        value_exact if isinstance(value_exact, Fraction) else None,
                        None if result.holds is None else bool(result.holds[s0]), method)


def exact_strategy(strategy: Strategy) -> list[Fraction]:
    """σ as fractions: each probability read as the shortest decimal that prints it (``0.3`` -> 3/10); in every
    state the largest probability absorbs the rounding so that each distribution sums to exactly 1."""
    m = strategy.model
    out = [Fraction(repr(float(x))) if x > 0 else Fraction(0) for x in strategy.probabilities]
    for s in np.flatnonzero(m.decision_states):
        rows = m.choices(int(s))
        top = max(rows, key=lambda r: out[r])
        out[top] = 1 - sum(out[r] for r in rows if r != top)
    for s in np.flatnonzero(~m.decision_states):
        out[m.row_groups[s]] = Fraction(1)
    return out


def _exact_induced(strategy: Strategy, choice_rewards: dict) -> tuple[sp.csr_matrix, list[Fraction], dict]:
    """P_σ and r_σ in exact arithmetic (a Python loop: exact checks are meant for models up to ~10^5 transitions)."""
    m = strategy.model
    sigma = exact_strategy(strategy)
    values = storm.exact_transition_values(m)
    P = m.transitions
    indptr, indices, data, exact = [0], [], [], []
    for s in range(m.n_states):
        row: dict[int, Fraction] = defaultdict(Fraction)
        for r in m.choices(s):
            if sigma[r]:
                for k in range(P.indptr[r], P.indptr[r + 1]):
                    row[int(P.indices[k])] += sigma[r] * values[k]
        for col in sorted(c for c, v in row.items() if v):
            indices.append(col)
            exact.append(row[col])
            data.append(float(row[col]))
        indptr.append(len(indices))
    matrix = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int64), np.array(indptr)), shape=(m.n_states,) * 2)
    exact_rewards = {}
    for name in choice_rewards:
        per_choice = _exact_choice_rewards(m, name, values)
        exact_rewards[name] = [sum((sigma[r] * per_choice[r] for r in m.choices(s) if sigma[r]), Fraction(0))
                               for s in range(m.n_states)]
    return matrix, exact, exact_rewards


def _exact_choice_rewards(m: ExplicitModel, name: str, values: list[Fraction]) -> list[Fraction]:
    rm = m.rewards[name]
    to_q = lambda x: Fraction(repr(float(x)))        # noqa: E731
    out = [to_q(x) for x in rm.choice] if rm.choice is not None else [Fraction(0)] * m.n_choices
    if rm.transition is not None:
        P = m.transitions
        for r in range(m.n_choices):
            out[r] += sum((values[k] * to_q(rm.transition[k]) for k in range(P.indptr[r], P.indptr[r + 1])),
                          Fraction(0))
    return out
