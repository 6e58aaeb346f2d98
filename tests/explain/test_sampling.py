"""Algorithm 1 and the explanation summary: O5 (k = 0 returns τ, at most k changes, the sample mean converges to h),
the explanation distributions of O6 and O7."""
import numpy as np
import pytest

from stormcf.explain import k_change_dp, summarize

from .conftest import problem, sample


def _policy(path, reward, K, **kw):
    return k_change_dp(problem(path, reward, K, **kw))


def _outcome_frequencies(paths):
    values, counts = np.unique(paths.outcomes, return_counts=True)
    return dict(zip(values.tolist(), (counts / paths.n).tolist()))


def _close(freq, expected, n):
    """Observed frequencies within 4.5 binomial standard errors of the expected probabilities."""
    return all(abs(freq.get(x, 0.0) - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-12 for x, p in expected.items())


def test_o6_treat_explanations(treat):
    policy = _policy(treat, "health", 2)
    n = 20000
    one = sample(policy, 1, n, seed=1)                      # k = 1: always [coin, drug, coin]
    summary = summarize(one, seed=1)
    assert [e.actions for e in summary.explanations] == [("coin", "drug", "coin")]
    assert summary.explanations[0].changes == ((1, "coin", "drug"),) and summary.explanations[0].frequency == 1.0
    assert summary.change_frequency == (0.0, 1.0, 0.0) and summary.observed_frequency == 0.0
    assert _close(_outcome_frequencies(one), {4.0: 0.6, 3.0: 0.4}, n)
    two = sample(policy, 2, n, seed=2)                      # k = 2: always [drug, drug, coin]
    assert [e.actions for e in summarize(two).explanations] == [("drug", "drug", "coin")]
    assert _close(_outcome_frequencies(two), {3.0: 0.16, 4.0: 0.48, 5.0: 0.36}, n)


def test_o7_explanations(adaptive):
    policy = _policy(adaptive, "r", 2)
    n = 20000
    summary = summarize(sample(policy, 2, n, seed=0))
    got = {e.actions: e.frequency for e in summary.explanations}
    expected = {("a0", "a0", "a0"): 5 / 9, ("a0", "a1", "a1"): 32 / 81, ("a0", "a1", "a0"): 4 / 81}
    assert set(got) == set(expected)
    assert _close(got, expected, n)
    assert all(e.changes[0] == (0, "a1", "a0") for e in summary.explanations)   # π* starts by changing to a0
    means = {e.actions: e.mean_outcome for e in summary.explanations}
    assert means[("a0", "a1", "a1")] == 8.0 and means[("a0", "a1", "a0")] == 7.0


@pytest.mark.parametrize("k", [0, 1, 3])
def test_o5_sampling_identities(adaptive, k):
    policy = _policy(adaptive, "r", 3)
    paths = sample(policy, k, 5000, seed=k)
    assert paths.change.sum(axis=1).max() <= k                    # every τ' has at most k changes
    summary = summarize(paths)
    assert summary.mean_outcome == pytest.approx(policy.value(k), abs=4.5 * summary.standard_error + 1e-12)
    if k == 0:                                                    # k = 0 returns exactly τ
        assert np.all(paths.states == adaptive.states) and np.all(paths.choices == adaptive.choices)
        assert summary.explanations == () and summary.observed_frequency == 1.0


def test_sampling_is_seeded(adaptive):
    policy = _policy(adaptive, "r", 2)
    a, b = sample(policy, 2, 100, seed=7), sample(policy, 2, 100, seed=7)
    assert np.array_equal(a.states, b.states) and np.array_equal(a.choices, b.choices)
