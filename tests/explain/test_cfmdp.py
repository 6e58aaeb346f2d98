"""The counterfactual MDP M_τ: oracles O1-O3, O6/O7 rows, O11 (Monte Carlo vs exact) and the authors' reference
instance (their Monte Carlo rows ref_P_cf)."""
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import stormcf
from stormcf.explain import counterfactual_mdp

from .conftest import load_synthetic, problem, synthetic_path


def dense_rows(cf, t):
    """P_τ,t as {(state value, action): row over state values}."""
    m = cf.model
    P = cf.transitions(t)
    s_of = m.valuations["s"]
    out = {}
    for row in cf.steps[t].choices:
        vec = np.zeros(m.n_states)
        vec[s_of[P[row].indices]] = P[row].data
        out[int(s_of[m.state_of_choice[row]]), m.action(int(row))] = vec
    return out


def test_o6_rows_of_treat(treat):
    cf = counterfactual_mdp(problem(treat, "health", 1))
    for t, states in ((0, [0]), (1, [0, 1])):              # s = 1 only after a drug at t = 0
        rows = dense_rows(cf, t)
        assert sorted({s for s, _ in rows}) == states
        for s in states:                                     # O1: binary Gumbel-max, P(k) = min(1, q_k / p_k)
            np.testing.assert_allclose(rows[s, "coin"], [1, 0], atol=1e-15)
            np.testing.assert_allclose(rows[s, "drug"], [0.4, 0.6], atol=1e-15)
    last = cf.transitions(2)                                 # no final state: the last step is the nominal P
    assert (abs(last - treat.model.transitions.multiply(last != 0))).max() == 0


def test_o7_rows(adaptive):
    cf = counterfactual_mdp(problem(adaptive, "r", 2))
    expected = {(0, "a0"): (Fraction(5, 9), Fraction(4, 9)), (1, "a0"): (Fraction(1, 9), Fraction(8, 9)),
                (1, "a1"): (Fraction(1, 9), Fraction(8, 9)), (0, "a1"): (1, 0)}
    for t in (0, 1):
        rows = dense_rows(cf, t)
        for key, value in expected.items():
            if key in rows:
                np.testing.assert_allclose(rows[key], [float(v) for v in value], atol=1e-15)
    assert set(rows) == set(expected)


def test_o2_three_states(tmp_path):
    """p = (1/3, 1/3, 1/3) observed 0 -> 0; q = (0.1, 0.6, 0.3) gives (0.3, 0.55, 0.15)."""
    P = np.zeros((2, 3, 3))
    P[0] = [1 / 3, 1 / 3, 1 / 3]
    P[1] = [0.1, 0.6, 0.3]
    model = load_synthetic(tmp_path, P)
    path = synthetic_path(model, [0, 0], [0, 1])
    rows = dense_rows(counterfactual_mdp(problem(path, "r", 1)), 0)
    np.testing.assert_allclose(rows[0, "a1"], [0.3, 0.55, 0.15], atol=1e-14)
    np.testing.assert_allclose(rows[0, "a0"], [1, 0, 0], atol=0)


@pytest.fixture(scope="module")
def reference(reference_instances, tmp_path_factory):
    data = np.load(reference_instances / "tsirtsis_synth_alpha0.4_ps1_id0.npz")
    P = data["P"].transpose(1, 0, 2)                         # P[a, s, s']
    model = load_synthetic(tmp_path_factory.mktemp("ref"), P, initial=int(data["s0"]))
    return data, synthetic_path(model, data["states"], data["actions"])


def test_storm_builds_the_reference_mdp(reference):
    data, path = reference
    m = path.model
    s_of = m.valuations["s"]
    built = np.zeros((10, 20, 20))
    for row in range(m.n_choices):
        r = m.transitions[row]
        built[int(m.action(row)[1:]), s_of[m.state_of_choice[row]], s_of[r.indices]] = r.data
    np.testing.assert_allclose(built, data["P"].transpose(1, 0, 2), rtol=0, atol=1e-15)
    assert path.outcome(m.step_rewards("r")) == data["observed_outcome"] == 256.0


def _rows_array(cf, T):
    """P_τ,t as an array (T-1, s, a, s') over state values and action numbers, and the mask of computed rows."""
    out = np.zeros((T - 1, 20, 10, 20))
    mask = np.zeros((T - 1, 20, 10, 1), dtype=bool)
    for t in range(T - 1):
        for (s, a), row in dense_rows(cf, t).items():
            out[t, s, int(a[1:])] = row
            mask[t, s, int(a[1:])] = True
    return out, mask


def _binomial_pvalues(estimate, exact, d=1000):
    """Two-sided binomial p-values of d·estimate counts under the exact probabilities (entries strictly inside 0..1)."""
    inner = (exact > 0) & (exact < 1)
    x, p = np.round(estimate[inner] * d), exact[inner]
    return np.minimum(1.0, 2 * np.minimum(stats.binom.cdf(x, d, p), stats.binom.sf(x - 1, d, p)))


def _consistent(estimate, exact):
    """Counts consistent with binomial(d, exact) draws over the whole instance: few small p-values, none tiny."""
    pv = _binomial_pvalues(estimate, exact)
    return np.mean(pv < 0.0027) < 0.0027 * 1.5 and pv.min() > 1e-7


def test_reference_rows_exact_and_mc_against_the_authors(reference):
    """M_τ's exact rows against the authors' d = 1000 estimates ref_P_cf on every computed row (as binomial
    estimates: tail fractions of the z-scores, the largest deviation 0.045 the notes report, exact zeros and ones
    reproduced), and our own Monte Carlo rows against the exact ones the same way (O11)."""
    data, path = reference
    E, mask = _rows_array(counterfactual_mdp(problem(path, "r", 0)), 20)
    assert mask.sum() >= 10 * (1 + 18 * 15)                  # most (t, s) pairs are reachable for α = 0.4
    ref = np.where(mask, data["ref_P_cf"][:19], 0.0)
    assert np.all(ref[E == 0] == 0) and np.all(ref[E == 1] == 1)
    assert _consistent(ref, E) and np.abs(ref - E).max() < 0.05
    mc, same = _rows_array(counterfactual_mdp(problem(path, "r", 0, estimator="mc", samples=1000, seed=3)), 20)
    assert np.array_equal(mask, same)
    assert np.all(mc[E == 0] == 0) and np.all(mc[E == 1] == 1)
    assert _consistent(mc, E)
    assert np.allclose(mc * 1000, np.round(mc * 1000), atol=1e-9)    # O3: multiples of 1/d


def test_structural_identities(reference):
    """O3 on every row of M_τ: rows sum to 1, support within supp P, the observed pair is the point mass, and
    S_{t+1} is exactly the support of the rows of S_t."""
    _, path = reference
    for estimator in ("exact", "mc"):
        cf = counterfactual_mdp(problem(path, "r", 0, estimator=estimator, samples=200))
        m = path.model
        for t in range(path.T - 1):
            P = cf.transitions(t)
            step = cf.steps[t]
            np.testing.assert_allclose(P[step.choices].sum(axis=1).A1, 1.0, atol=1e-12)
            support = P.copy()
            support.data[:] = 1.0
            assert (support - support.multiply(m.transitions != 0)).nnz == 0
            row = P[path.choices[t]].toarray().ravel()
            assert row[path.states[t + 1]] == 1.0 and row.sum() == 1.0
            assert np.array_equal(np.unique(P[step.choices].indices), cf.steps[t + 1].states)


def test_equal_rows_give_point_masses(treat):
    """q == p (treat.prism's 'coin' rows are the same in both states): exactly the point mass, no rounding dust."""
    cf = counterfactual_mdp(problem(treat, "health", 0))
    P = cf.transitions(0)
    coin = [r for r in cf.steps[0].choices if treat.model.action(int(r)) == "coin"]
    assert all(P[r].nnz == 1 and P[r].data[0] == 1.0 for r in coin)


def test_only_reachable_pairs(tmp_path):
    """A chain 0 -> 1 -> 2 -> ... : M_τ holds only the (t, s) pairs reachable from s_0."""
    P = np.zeros((2, 6, 6))
    for s in range(6):
        P[0, s, min(s + 1, 5)] = 1.0
        P[1, s, s] = 1.0
    model = load_synthetic(tmp_path, P)
    path = synthetic_path(model, [0, 1, 2], [0, 0, 0])
    cf = counterfactual_mdp(problem(path, "r", 2))
    s_of = model.valuations["s"]
    assert [sorted(s_of[step.states].tolist()) for step in cf.steps] == [[0], [0, 1], [0, 1, 2]]
    assert stormcf.ObservedPath is type(path)
