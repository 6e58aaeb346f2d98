"""Gumbel-max counterfactual probabilities: the oracles O1-O4 and O11 of the seed-001 notes, quadrature, rejection
sampling, and the authors' Monte Carlo estimates on their reference instance."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import stormcf
from stormcf.counterfactual_mdp import gumbel

def rows(*qs):
    return sp.csr_matrix(np.array(qs, dtype=float))


def test_o1_binary():
    p = np.array([0.5, 0.5])
    got = gumbel.exact_rows(p, 0, rows([0.2, 0.8], [0.8, 0.2])).toarray()
    np.testing.assert_allclose(got, [[0.4, 0.6], [1.0, 0.0]], atol=1e-15)


def test_o2_three_states():
    p = np.full(3, 1 / 3)
    got = gumbel.exact_rows(p, 0, rows([0.1, 0.6, 0.3])).toarray()
    np.testing.assert_allclose(got, [[0.3, 0.55, 0.15]], atol=1e-14)


@st.composite
def observation_and_rows(draw):
    n = draw(st.integers(2, 6))
    def dist(min_support=1):
        support = draw(st.lists(st.integers(0, n - 1), min_size=min_support, max_size=n, unique=True))
        w = np.zeros(n)
        w[support] = [draw(st.integers(1, 9)) for _ in support]
        return w / w.sum()
    p = dist()
    k = draw(st.sampled_from(list(np.flatnonzero(p))))
    return p, int(k), np.array([dist() for _ in range(draw(st.integers(1, 4)))])


def _quadrature(p, k, q, x):
    """The defining integral by adaptive quadrature (independent of the piecewise evaluation)."""
    if x == k:
        return 0.0 if q[k] == 0 else 1.0 / sum(max(p[j], p[k] * q[j] / q[k]) for j in range(len(p)))
    lo, hi = p[x], (p[k] * q[x] / q[k] if q[k] > 0 else np.inf)
    if hi <= lo:
        return 0.0
    D = lambda w: p[k] + w + sum(max(p[j], w * q[j] / q[x]) for j in range(len(p)) if j not in (k, x))  # noqa
    breaks = sorted({p[j] * q[x] / q[j] for j in range(len(p)) if q[j] > 0 and j not in (k, x)} | {lo})
    edges = [w for w in breaks if lo <= w < hi] + [hi]
    return sum(integrate.quad(lambda w: 1 / D(w) ** 2, a, b, epsabs=1e-13, epsrel=1e-12)[0]
               for a, b in zip(edges, edges[1:]))


@given(observation_and_rows())
def test_exact_equals_quadrature_and_is_a_distribution(case):
    p, k, Q = case
    got = gumbel.exact_rows(p, k, sp.csr_matrix(Q)).toarray()
    for i, q in enumerate(Q):
        for x in np.flatnonzero(q):
            assert got[i, x] == pytest.approx(_quadrature(p, k, q, x), abs=1e-9)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(got[Q == 0] == 0)                                           # support within supp q
    for i, q in enumerate(Q):                                                 # counterfactual stability (O3)
        if q[k] > 0:
            stable = (q > 0) & (np.arange(len(p)) != k) & (q / q[k] <= p / p[k])
            assert np.all(got[i, stable] == 0)


@given(observation_and_rows())
def test_structural_identities(case):
    p, k, Q = case
    same = gumbel.exact_rows(p, k, sp.csr_matrix(p)).toarray()[0]
    np.testing.assert_allclose(same, np.eye(len(p))[k], atol=1e-12)          # q == p gives the point mass on k
    disjoint = (p == 0)
    if disjoint.any():
        q = disjoint / disjoint.sum()
        np.testing.assert_allclose(gumbel.exact_rows(p, k, sp.csr_matrix(q)).toarray()[0], q, atol=1e-12)


@settings(max_examples=10)
@given(observation_and_rows())
def test_exact_equals_rejection_sampling(case):
    """Independent of the derivation: sample U from the prior, keep the draws that reproduce the observation."""
    p, k, Q = case
    rng = np.random.default_rng(0)
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p), np.log(Q)
    U = rng.gumbel(size=(200_000, len(p)))
    kept = U[np.argmax(log_p + U, axis=1) == k]
    exact = gumbel.exact_rows(p, k, sp.csr_matrix(Q)).toarray()
    for i in range(len(Q)):
        freq = np.bincount(np.argmax(log_q[i] + kept, axis=1), minlength=len(p)) / len(kept)
        sigma = np.sqrt(exact[i] * (1 - exact[i]) / len(kept))
        assert np.all(np.abs(freq - exact[i]) <= 5 * sigma + 1e-9)


def test_o4_posterior_sampler():
    p = np.array([0.1, 0.0, 0.3, 0.6])
    rng = np.random.default_rng(1)
    U = gumbel.posterior_noise(p, 2, 20_000, rng)
    with np.errstate(divide="ignore"):
        scores = np.log(p) + U
    assert np.all(np.argmax(scores, axis=1) == 2)
    assert stats.kstest(np.log(p[2]) + U[:, 2], stats.gumbel_r.cdf).pvalue > 1e-3
    prior = rng.gumbel(size=(150_000, 4))
    with np.errstate(divide="ignore"):
        accepted = prior[np.argmax(np.log(p) + prior, axis=1) == 2]
    for j in range(4):
        assert stats.ks_2samp(U[:, j], accepted[:, j]).pvalue > 1e-3


def test_o11_monte_carlo_within_error_of_exact():
    rng = np.random.default_rng(5)
    p = np.array([0.2, 0.0, 0.3, 0.5])
    Q = rows([0.1, 0.2, 0.3, 0.4], [0, 0.5, 0, 0.5], [0.25, 0.25, 0.25, 0.25], [0.2, 0.0, 0.3, 0.5])
    d = 4000
    mc = gumbel.mc_rows(p, 2, Q, d, rng).toarray()
    exact = gumbel.exact_rows(p, 2, Q).toarray()
    assert np.all(np.abs(mc - exact) <= 4 * np.sqrt(exact * (1 - exact) / d) + 1e-12)
    np.testing.assert_array_equal(mc[3], [0, 0, 1, 0])                        # the observed row: exactly δ_k
    np.testing.assert_allclose(mc * d, np.round(mc * d), atol=1e-9)           # multiples of 1/d
    np.testing.assert_allclose(mc.sum(axis=1), 1.0)


def test_counterfactual_transitions_on_treat_model():
    """O6: after observing (ill, coin) -> ill, coin would again give ill; the drug gives healthy w.p. 0.6."""
    m = stormcf.load_model(stormcf.example_path("treat.prism"))
    ill = m.state_index({"s": 0})
    coin = m.choice_of(ill, "coin")
    cf = gumbel.counterfactual_transitions(m, coin, ill).toarray()
    healthy = m.state_index({"s": 1})
    for s in (ill, healthy):
        np.testing.assert_allclose(cf[m.choice_of(s, "coin"), [ill, healthy]], [1.0, 0.0])
        np.testing.assert_allclose(cf[m.choice_of(s, "drug"), [ill, healthy]], [0.4, 0.6])
    mc = gumbel.counterfactual_transitions(m, coin, ill, estimator="mc", samples=2000, seed=[0, 1])
    assert abs(mc[m.choice_of(ill, "drug"), healthy] - 0.6) < 4 * np.sqrt(0.24 / 2000)
    with pytest.raises(stormcf.PathError, match="probability 0"):
        gumbel.exact_rows(np.array([1.0, 0.0]), 1, rows([0.5, 0.5]))


def test_exact_rows_match_the_authors_monte_carlo(reference_instances):
    """The authors' d=1000 estimates lie within Monte Carlo error of the exact rows (their noise is shared within a
    step, so the test looks at the whole instance: tail fractions as for independent binomials, and the largest
    deviation 0.045 the notes report), and every exact zero (counterfactual stability) is a zero of theirs."""
    ref = np.load(reference_instances / "tsirtsis_synth_alpha0.4_ps1_id0.npz")
    P, states = ref["P"], ref["states"]
    n, m = P.shape[0], P.shape[1]
    Q = sp.csr_matrix(P.reshape(n * m, n))                                    # row = (s, a)
    z, worst = [], 0.0
    for t in range(len(states) - 1):
        exact = gumbel.exact_rows(P[states[t], ref["actions"][t]], int(states[t + 1]), Q).toarray().reshape(n, m, n)
        theirs = ref["ref_P_cf"][t]
        assert np.all(theirs[exact == 0] == 0) and np.all(theirs[exact == 1] == 1)
        positive = (exact > 0) & (exact < 1)
        z.append(np.abs(theirs - exact)[positive] / np.sqrt(exact * (1 - exact) / 1000)[positive])
        worst = max(worst, float(np.abs(theirs - exact).max()))
    z = np.concatenate(z)
    assert np.mean(z > 3) < 0.0027 * 1.5 and np.mean(z > 4) < 1e-3
    assert worst < 0.05


def test_exact_rows_of_mixed_lengths_equal_row_by_row():
    """Rows of 1 to 40 successors (several length buckets in one call) give what each row gives alone."""
    rng = np.random.default_rng(7)
    n = 60
    p = rng.dirichlet(np.ones(n)) * (rng.random(n) < 0.5)
    p[3] += 0.2
    p /= p.sum()
    rows = []
    for length in [1, 2, 3, 5, 8, 13, 21, 34, 40, 4, 9, 17]:
        q = np.zeros(n)
        support = rng.choice(n, length, replace=False)
        q[support] = rng.dirichlet(np.ones(length))
        rows.append(q)
    Q = sp.csr_matrix(np.array(rows))
    together = gumbel.exact_rows(p, 3, Q).toarray()
    alone = np.vstack([gumbel.exact_rows(p, 3, Q[i]).toarray() for i in range(Q.shape[0])])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-15)
    np.testing.assert_allclose(together.sum(axis=1), 1.0, atol=1e-12)


def test_length_buckets_partition_the_rows():
    from stormcf.counterfactual_mdp.model import length_buckets
    lengths = np.array([1, 2, 3, 4, 5, 8, 9, 16, 17, 0, 33, 2])
    buckets = length_buckets(lengths)
    positions = np.concatenate(buckets)
    assert sorted(positions.tolist()) == [i for i in range(lengths.size) if lengths[i] > 0]
    for bucket in buckets:
        top = lengths[bucket].max()
        assert lengths[bucket].min() > 2 ** int(np.ceil(np.log2(top))) // 2
