"""The exact optimum of one bound over the actionable strategies, for when Storm's floating-point optimum is within its
precision of the bound (the bound is exactly the optimum, say) and cannot tell whether some strategy meets it.

M_C (:class:`~stormcf.counterfactual.analysis.ActionableMDP`) is rebuilt in rational arithmetic: each of its rows is
Σ_r w(r)·P(r, ·) over the original choices r of its state, with w(r) = σ(r) on the uncontrollable choices and the
controllable mass Σ σ on the choice the row puts it on, σ read as decimals (:func:`~stormcf.verify.exact_strategy`)
and P the model's exact probabilities; rewards mix the same way. Storm computes the optimum on it exactly. This is
done on small models only (:data:`~stormcf.verify.EXACT_RECHECK_STATES` states; Python loops over the transitions).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from .. import storm
from ..model import ExplicitModel
from ..verify import EXACT_RECHECK_STATES, exact_strategy, exact_within_limit
from .analysis import COMPLEMENT, DIRECT, ActionableMDP, BoundAnalysis
from .bounds import PROBABILITY
from .problem import CounterfactualProblem


def exact_optimum(problem: CounterfactualProblem, actionable: ActionableMDP,
                  analysis: BoundAnalysis) -> Fraction | float | None:
    """The bound's optimum over the actionable strategies (Pmin, Pmax, Rmin or Rmax, as
    :attr:`BoundAnalysis.optimum`) in exact arithmetic; None on models of more than
    :data:`~stormcf.verify.EXACT_RECHECK_STATES` states, or when Storm does not answer in time
    (:func:`~stormcf.verify.exact_within_limit`)."""
    if problem.model.n_states > EXACT_RECHECK_STATES:
        return None
    return exact_within_limit(lambda: _exact_optimum(problem, actionable, analysis))[0]


def _exact_optimum(problem: CounterfactualProblem, actionable: ActionableMDP,
                   analysis: BoundAnalysis) -> Fraction | float:
    m = problem.model
    sets, bound = analysis.sets, analysis.bound
    weights = _row_weights(problem, actionable)
    probabilities = storm.exact_transition_values(m)
    absorbing = (~bound.constraint & ~bound.target) if bound.kind == PROBABILITY else np.zeros(m.n_states, bool)
    P, values = _mixed_rows(m, actionable.model.state_of_choice, weights, probabilities, absorbing)
    mc = actionable.model
    if bound.kind == PROBABILITY:
        value = storm.exact_optimum(P, mc.row_groups, values, sets.one, mc.initial_state, "min")
        return 1 - value if analysis.transform == COMPLEMENT else value
    per_choice = _step_rewards(m, bound.reward_model, probabilities)
    rewards = [sum((w * per_choice[r] for r, w in row.items()), Fraction(0)) for row in weights]
    direction = "min" if analysis.transform == DIRECT else "max"
    return storm.exact_optimum(P, mc.row_groups, values, bound.target, mc.initial_state, direction, rewards)


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


def _mixed_rows(m: ExplicitModel, state_of_row: np.ndarray, weights: list[dict[int, Fraction]], probabilities,
                absorbing: np.ndarray) -> tuple[sp.csr_matrix, list[Fraction]]:
    """The rows Σ_r w(r)·P(r, ·) (a self-loop in ``absorbing`` states) as CSR with their exact values."""
    P = m.transitions
    indptr, indices, values = [0], [], []
    for s, row in zip(state_of_row.tolist(), weights):
        mixed: dict[int, Fraction] = {s: Fraction(1)} if absorbing[s] else {}
        if not absorbing[s]:
            for r, w in row.items():
                for k in range(P.indptr[r], P.indptr[r + 1]):
                    t = int(P.indices[k])
                    mixed[t] = mixed.get(t, Fraction(0)) + w * probabilities[k]
        columns = sorted(t for t, x in mixed.items() if x)
        indices += columns
        values += [mixed[t] for t in columns]
        indptr.append(len(indices))
    matrix = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(weights), m.n_states))
    return matrix, values


def _step_rewards(m: ExplicitModel, name: str | None, probabilities) -> list[Fraction]:
    """What one step from each choice earns, exactly (:func:`~stormcf.counterfactual.bounds.step_rewards`)."""
    rm = m.reward_model(name)
    per_choice = storm.expected_choice_rewards_exact(m, rm.name, probabilities)
    state = storm.exact_state_rewards(m, rm.name) if rm.state is not None else None
    if state is not None:
        per_choice = [x + state[s] for x, s in zip(per_choice, m.state_of_choice.tolist())]
    return per_choice
