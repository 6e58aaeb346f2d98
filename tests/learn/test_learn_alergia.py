"""IOAlergia: stormcf's implementation against AALpy's own (identical automata) and against hand-worked logs."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from stormcf.learn import EventLog, LearnError, aalpy_ioalergia, ioalergia, sample_log
from stormcf.learn.alergia import Traces, resolve_alpha


def traces_of(log: EventLog) -> Traces:
    return Traces(int(log.initial[0]), log.offsets, log.step_actions, log.step_observations, len(log.actions),
                  len(log.observations))


def two_histories(n: int) -> EventLog:
    """n cases s -a-> x -b-> y and n cases s -c-> x -b-> z: the two x differ in what b does next."""
    return EventLog.from_cases([("s", [("a", "x"), ("b", "y")])] * n + [("s", [("c", "x"), ("b", "z")])] * n)


def edges(a):
    return list(zip(a.source.tolist(), a.action.tolist(), a.target.tolist(), a.count.tolist()))


def test_hoeffding_keeps_histories_apart_when_the_log_says_so():
    # n = 100: bound (√(1/100) + √(1/100))·√(½ ln 40) = 0.27 < 1 = |P(y|x_a,b) − P(y|x_c,b)|: two states x
    log = two_histories(100)
    a = ioalergia(traces_of(log), 0.05)
    obs = log.observations                                  # ('s', 'x', 'y', 'z'); actions ('a', 'b', 'c')
    assert [obs[o] for o in a.outputs] == ["s", "x", "x", "y", "z"]
    assert edges(a) == [(0, 0, 1, 100), (0, 2, 2, 100), (1, 1, 3, 100), (2, 1, 4, 100)]


def test_few_cases_cannot_tell_histories_apart():
    # n = 1: the bound is 2·√(½ ln 40) = 2.7 >= 1, no test can fail: one state x with b -> y or z, 1/2 each
    log = two_histories(1)
    a = ioalergia(traces_of(log), 0.05)
    assert [log.observations[o] for o in a.outputs] == ["s", "x", "y", "z"]
    assert edges(a) == [(0, 0, 1, 1), (0, 2, 1, 1), (1, 1, 2, 1), (1, 1, 3, 1)]


def test_the_threshold_is_the_hoeffding_bound():
    """With n cases per history the states split exactly when (2/√n)·√(½ ln(2/α)) < 1."""
    for n in (2, 3, 5, 8, 13):
        for alpha in (0.01, 0.05, 0.3, 1.0, 2.0):
            split = 2 / math.sqrt(n) * math.sqrt(0.5 * math.log(2 / alpha)) < 1
            assert ioalergia(traces_of(two_histories(n)), alpha).n_states == (5 if split else 4)


def test_alpha_auto_and_range():
    log = two_histories(3)
    assert resolve_alpha("auto", log.n_steps) == 10 / log.n_steps
    for bad in (0, -1, 2.5, "x", True):
        with pytest.raises(LearnError, match="alpha must lie in"):
            ioalergia(traces_of(log), bad)


def test_same_as_aalpy_on_loan(loan_labels, impatient_labels):
    log = sample_log(loan_labels, impatient_labels, 2000, seed=3)
    for alpha in (0.05, 0.9):
        mine, theirs = ioalergia(traces_of(log), alpha), aalpy_ioalergia(traces_of(log), alpha)
        assert mine.same_as(theirs)


@st.composite
def random_logs(draw):
    n_inputs, n_outputs = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    step = st.tuples(st.integers(0, n_inputs - 1), st.integers(0, n_outputs - 1))
    shapes = draw(st.lists(st.lists(step, max_size=6), min_size=1, max_size=12))
    repeats = draw(st.lists(st.integers(1, 40), min_size=len(shapes), max_size=len(shapes)))
    cases = [("o0", [(f"a{i}", f"o{o}") for i, o in case]) for case, r in zip(shapes, repeats) for _ in range(r)]
    order = np.random.default_rng(draw(st.integers(0, 1000))).permutation(len(cases))
    return EventLog.from_cases([cases[k] for k in order])


@given(random_logs(), st.sampled_from([0.001, 0.05, 0.5, 2.0]))
def test_same_as_aalpy_on_random_logs(log, alpha):
    t = traces_of(log)
    mine, theirs = ioalergia(t, alpha), aalpy_ioalergia(t, alpha)
    assert mine.same_as(theirs)
    # merging moves counts, it never loses or invents any: the edges carry every step of the log
    assert mine.count.sum() == log.n_steps
