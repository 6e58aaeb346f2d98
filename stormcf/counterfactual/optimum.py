"""The exact optimum of one bound over the actionable strategies, for when Storm's floating-point optimum is within its
precision of the bound (a strict bound at the exact optimum, ``P<=γ`` with γ the exact Pmin) and cannot tell whether
some strategy meets it (issue 37). What stays undecided is never claimed: it does not make an instance infeasible.

M_C (:class:`~stormcf.counterfactual.preanalysis.ActionableMDP`) is rebuilt in rational arithmetic: each of its rows is
Σ_r w(r)·P(r, ·) over the original choices r of its state, with w(r) = σ(r) on the uncontrollable choices and the
controllable mass Σ σ on the choice the row puts it on, σ read as decimals (:func:`~stormcf.verify.exact_strategy`)
and P the model's exact probabilities; rewards mix the same way, read as Storm's rational build has them. Storm
computes the optimum of the bound's own path formula on it (``ψ U φ``: a target that is left again still counts)
with an optimal scheduler (:func:`~stormcf.storm.exact_optimal_choices`); that scheduler, lifted to the model and
checked exactly, is the witness of a bound met at the optimum. This is done where the exact re-checks of
:mod:`stormcf.verify` are (:func:`~stormcf.verify.exact_within_limit`: small models, seconds; Python loops over the
transitions).
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .. import storm
from ..model import ExplicitModel, RewardModel
from ..run import Run
from ..strategy import Strategy
from ..verify import Check, check_strategy, exact_strategy, exact_within_limit
from .bounds import REWARD, Bound
from .problem import CounterfactualProblem

if TYPE_CHECKING:
    from .preanalysis import ActionableMDP, BoundAnalysis

#: labels and reward model of the bound in the exact M_C
TARGET, CONSTRAINT, REWARDS = "cf_t", "cf_c", "cf_r"


def settle_optimum(problem: CounterfactualProblem, actionable: ActionableMDP, analysis: BoundAnalysis,
                   run: Run) -> str:
    """Storm's exact optimum of ``analysis``'s bound (:attr:`BoundAnalysis.exact_optimum`, and ``optimum`` its
    float) and its exact optimal scheduler as the witness when it meets the bound exactly; "" when that is done,
    else why not (the exact re-check's limits, :func:`~stormcf.verify.exact_within_limit`, with ``run``'s time)."""
    found, failure = exact_within_limit(lambda: _exact_optimum(problem, actionable, analysis.bound), problem.model,
                                        run)
    if found is None:
        return failure
    value, witness, check = found
    analysis.optimum, analysis.exact_optimum = float(value), value
    analysis.witness, analysis.witness_check = (witness if check.holds else None), check
    return ""


def _exact_optimum(problem: CounterfactualProblem, actionable: ActionableMDP, bound: Bound
                   ) -> tuple[Fraction | float, Strategy, Check]:
    """The optimum of ``bound`` at s0 on M_C over rationals, the lifted optimal scheduler and its exact check."""
    m, mc = problem.model, actionable.model
    weights = _row_weights(problem, actionable)
    probabilities = storm.exact_transition_values(m)
    P, exact_P = _mixed_rows(m, mc.state_of_choice, weights, probabilities)
    operator, rewards, floats = "P", {}, {}
    if bound.kind == REWARD:
        assert bound.rewards is not None        # a reward bound has its step rewards
        per_choice = _step_rewards(m, bound.reward_model, probabilities)
        rewards = {REWARDS: [sum((w * per_choice[r] for r, w in row.items()), Fraction(0)) for row in weights]}
        floats = {REWARDS: RewardModel(REWARDS, choice=actionable.mix(m, bound.rewards))}
        operator = f'R{{"{REWARDS}"}}'
    model = ExplicitModel(P, mc.row_groups, mc.choice_actions, mc.action_names,
                          {TARGET: bound.target, CONSTRAINT: bound.constraint}, mc.valuations, floats,
                          mc.initial_state, "mdp", source=mc.source, naming=mc.naming)
    path = f'"{CONSTRAINT}" U "{TARGET}"' if bound.is_until else f'F "{TARGET}"'
    query = storm.parse_property(model, f"{operator}{bound.optimization.value}=? [{path}]")
    values, rows = storm.exact_optimal_choices(model, exact_P, query, rewards)
    witness = actionable.lift(rows, problem.strategy)
    return values[mc.initial_state], witness, check_strategy(witness, bound.property, exact=True)


def _row_weights(problem: CounterfactualProblem, actionable: ActionableMDP) -> list[dict[int, Fraction]]:
    """For every row of M_C, the weight w(r) of each original choice r it mixes."""
    m, mc = problem.model, actionable.model
    sigma = exact_strategy(problem.strategy)
    free = actionable.free.tolist()
    out = []
    for s, origin in zip(mc.state_of_choice.tolist(), actionable.origin.tolist()):
        choices = range(int(m.row_groups[s]), int(m.row_groups[s + 1]))
        row = {r: sigma[r] for r in choices if not free[r] and sigma[r]}
        if origin >= 0:
            row[origin] = row.get(origin, Fraction(0)) + sum((sigma[r] for r in choices if free[r]), Fraction(0))
        out.append(row)
    return out


def _mixed_rows(m: ExplicitModel, state_of_row: np.ndarray, weights: list[dict[int, Fraction]],
                probabilities) -> tuple[sp.csr_matrix, list[Fraction]]:
    """The rows Σ_r w(r)·P(r, ·) as CSR (their floats) with their exact values (aligned with its data)."""
    P = m.transitions
    indptr, indices, values = [0], [], []
    for row in weights:
        mixed: dict[int, Fraction] = {}
        for r, w in row.items():
            for k in range(P.indptr[r], P.indptr[r + 1]):
                t = int(P.indices[k])
                mixed[t] = mixed.get(t, Fraction(0)) + w * probabilities[k]
        columns = sorted(t for t, x in mixed.items() if x)
        indices += columns
        values += [mixed[t] for t in columns]
        indptr.append(len(indices))
    matrix = sp.csr_matrix((np.array([float(x) for x in values]), indices, indptr), shape=(len(weights), m.n_states))
    return matrix, values


def _step_rewards(m: ExplicitModel, name: str | None, probabilities) -> list[Fraction]:
    """What one step from each choice earns, exactly (:func:`~stormcf.counterfactual.bounds.step_rewards`)."""
    rm = m.reward_model(name)
    per_choice = storm.expected_choice_rewards_exact(m, rm.name, probabilities)
    state = storm.exact_state_rewards(m, rm.name) if rm.state is not None else None
    if state is not None:
        per_choice = [x + state[s] for x, s in zip(per_choice, m.state_of_choice.tolist())]
    return per_choice
