"""Round trips: logs sampled from known MDPs under known strategies, learned back; the learned model's values under
the learned strategy converge to the true ones, and the learned strategy to the generating one."""
import math

import numpy as np
import pytest

import stormcf
from stormcf.learn import LearnProblem, learn_mdp, sample_log

from process_models import process_mdp


def round_trip(model, sigma, cases, seed, true_prop, learned_prop):
    """|learned value − true value| and the learned strategy's largest error (over learned decision states whose
    observation is a state of the true model, weighted by nothing: every learned state must be close)."""
    truth = stormcf.check_strategy(sigma, true_prop).value
    log = sample_log(model, sigma, cases, seed=seed)
    result = learn_mdp(LearnProblem(log))
    learned = stormcf.check_strategy(result.strategy, learned_prop(result)).value
    return truth, learned, result


def strategy_errors(model, sigma, result):
    """For every learned decision state: (visits n(s), max_a |σ̂(s)(a) − σ(s_true)(a)|), where s_true is the true
    state named like the learned state's observation."""
    state_of = {model.state_name(s): s for s in range(model.n_states)}
    lm, learned = result.model, result.strategy
    outputs = result.problem.outputs
    support = np.bincount(result.automaton.source, weights=result.automaton.count, minlength=result.automaton.n_states)
    out = []
    for s in np.flatnonzero(lm.decision_states):
        observation, _ = outputs[int(lm.valuations["o"][s])]
        true_state = state_of[observation]
        true = sigma.distribution(true_state)
        learned_id = {result.problem.action_ids[a]: a for a in result.problem.log.actions}
        err = max(abs(p - true[learned_id[a]]) for a, p in learned.distribution(int(s)).items())
        out.append((support[int(lm.valuations["s"][s])], err))
    return out


def test_loan_converges(loan_labels, impatient_labels):
    deltas = {}
    for cases in (500, 5000, 20000):
        truth, learned, result = round_trip(loan_labels, impatient_labels, cases, 1, 'P=? [F "rejected"]',
                                            lambda r: 'P=? [F "rejected"]')
        assert truth == pytest.approx(0.411)
        deltas[cases] = abs(learned - truth)
        se = math.sqrt(truth * (1 - truth) / cases)
        assert deltas[cases] <= 4 * se
        for visits, err in strategy_errors(loan_labels, impatient_labels, result):
            assert err <= 4 * math.sqrt(0.25 / visits)
    assert deltas[5000] < 0.03 and deltas[20000] < 0.01


def test_loan_strategy_error_shrinks(loan_labels, impatient_labels):
    worst = []
    for cases in (300, 30000):
        _, _, result = round_trip(loan_labels, impatient_labels, cases, 2, 'P=? [F "rejected"]',
                                  lambda r: 'P=? [F "rejected"]')
        worst.append(max(err for _, err in strategy_errors(loan_labels, impatient_labels, result)))
    assert worst[1] < worst[0] and worst[1] < 0.02


def test_gridworld_converges():
    grid = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.9").with_naming("x{x}y{y}")
    sigma = stormcf.Strategy.random(grid, seed=5)
    for cases, tolerance in ((1000, 0.06), (10000, 0.02)):
        truth, learned, result = round_trip(grid, sigma, cases, 3, 'P=? [F "goal"]', lambda r: 'P=? [F "x3y3"]')
        assert abs(learned - truth) <= tolerance
        assert 0.05 < truth < 0.95
    errors = strategy_errors(grid, sigma, result)
    assert all(err <= 4 * math.sqrt(0.25 / visits) + 1e-9 for visits, err in errors)


def test_process_model_converges():
    model = process_mdp(60, seed=4).with_naming("labels")
    sigma = stormcf.Strategy.random(model, seed=6)
    deltas = []
    for cases in (1000, 10000):
        truth, learned, result = round_trip(model, sigma, cases, 7, 'P=? [F "negative"]',
                                            lambda r: 'P=? [F "negative"]')
        deltas.append(abs(learned - truth))
        assert deltas[-1] <= 4 * math.sqrt(truth * (1 - truth) / cases)
    assert deltas[1] < 0.015
    assert all(err <= 4 * math.sqrt(0.25 / v) + 1e-9 for v, err in strategy_errors(model, sigma, result))
