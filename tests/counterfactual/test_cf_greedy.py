"""The d0 heuristics on process models (scripts/process_mdp.py): LP rounding gives switched sets Storm accepts,
never below the d0 MILP's proven optimum and close to it (on the 10^5-state model it finds 3,267 where the greedy
heuristic stops at 3,309; the optimum is 3,261)."""
import numpy as np
import pytest

import stormcf
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.counterfactual.preanalysis import preanalyse
from stormcf.counterfactual.greedy import rounded_d0
from stormcf.counterfactual.programs import d0_program
from stormcf.counterfactual.robust import changes
from stormcf.solvers import backend

from process_models import process_mdp

BOUND = 'P<=0.4 [F "negative"]'


@pytest.mark.parametrize("n_states, seed", [(4000, 1), (4000, 2), (2000, 3)])
def test_lp_rounding_on_process_models(n_states, seed):
    model = process_mdp(n_states, seed)
    sigma = stormcf.Strategy.random(model, 0)
    problem = CounterfactualProblem(sigma, BOUND, weights="1,0,0")
    enc = preanalyse(problem).encoding
    program = d0_program(enc, 0.4)
    relaxed = backend("highs").solve(program.formulation.relaxation(), 60)
    rounded = rounded_d0(enc, program.switch_share(enc, relaxed.x), 0.4)
    probs = np.array(sigma.probabilities)
    probs[enc.rows] = rounded.policy
    assert stormcf.check_strategy(stormcf.Strategy(model, probs), 'P=? [F "negative"]').value <= 0.4
    size = int((changes(enc, rounded.policy) > 0).sum())
    exact = solve_counterfactual(problem, time_limit=120)
    assert exact.status == "optimal" and exact.distance_lower_bound <= size <= 1.05 * exact.distance.d0 + 1
    assert np.ceil(relaxed.bound - 1e-6) <= exact.distance.d0

