"""Closed-form counterfactual bounds: the authors' outputs bit for bit, the exact LP, validity, nesting."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings

import stormcf
from stormcf.counterfactual_mdp import gumbel
from stormcf.counterfactual_mdp import gumbel_cfmdp
from stormcf.icfmdp import ASSUMPTIONS, interval_cfmdp, lp_step_bounds, pair_bounds, path_from_arrays
from stormcf.paths import ObservedPath
from stormcf.solvers import available

from helpers import REFERENCE_FILES, random_mdps, reference_model


@pytest.mark.parametrize("name", REFERENCE_FILES)
def test_reference_bounds_bit_identical(reference_instances, name):
    """ref_lb/ref_ub of the authors' implementation (all transitions, all steps) are reproduced exactly."""
    d, model, path = reference_model(reference_instances, name)
    ic = interval_cfmdp(path, layers="all", summation="authors")
    lower, upper = ic.aligned()
    assert np.array_equal(lower, d["ref_lb"]) and np.array_equal(upper, d["ref_ub"])
    assert ic.validity_violations() == []


@pytest.mark.parametrize("name", ["lally_sepsis_sampled_seed0.npz", "lally_gridworld_0.4_repo_suboptimal.npz"])
def test_default_summation_and_layers_agree_with_the_reference_to_rounding(reference_instances, name):
    """The default path (ascending sums in H, only the pairs the start reaches) gives the same bounds up to the
    rounding of the sums (the reference's order is kept for bit-identical comparisons only)."""
    d, model, path = reference_model(reference_instances, name)
    lower, upper = interval_cfmdp(path).aligned()
    known = ~np.isnan(lower)
    assert known.any(axis=1).all()
    assert np.abs(lower[known] - d["ref_lb"][known]).max() < 1e-12
    assert np.abs(upper[known] - d["ref_ub"][known]).max() < 1e-12


@given(random_mdps())
@settings(max_examples=30)
def test_closed_forms_equal_the_lp(case):
    """Every transition, every step, every assumption set: the closed forms are the LP optimum."""
    model, path = case
    for assumptions in ASSUMPTIONS:
        lower, upper = interval_cfmdp(path, assumptions, layers="all").aligned()
        for t in range(path.T):
            lo, hi = lp_step_bounds(model.transitions, int(path.choices[t]), int(path.next_states[t]), assumptions)
            np.testing.assert_allclose(lower[t], lo, atol=1e-9, rtol=0)
            np.testing.assert_allclose(upper[t], hi, atol=1e-9, rtol=0)


@pytest.mark.parametrize("solver", [
    pytest.param(name, marks=pytest.mark.skipif(not available(name), reason=f"{name} is not installed"))
    for name in ("highs", "scip", "gurobi")])
@given(random_mdps())
@settings(max_examples=4)
def test_the_lp_on_every_solver_is_the_closed_form(solver, case):
    """``--solver``: each installed solver's LP optimum is the closed form, every transition and step."""
    model, path = case
    lower, upper = interval_cfmdp(path, "cs+m", layers="all").aligned()
    for t in range(path.T):
        lo, hi = lp_step_bounds(model.transitions, int(path.choices[t]), int(path.next_states[t]), solver=solver)
        np.testing.assert_allclose(lower[t], lo, atol=1e-8, rtol=0)
        np.testing.assert_allclose(upper[t], hi, atol=1e-8, rtol=0)


def test_lp_mode_equals_closed_forms_on_gridworld(reference_instances):
    d, model, path = reference_model(reference_instances, "lally_gridworld_0.4_repo_suboptimal.npz")
    short = path_from_arrays(model, d["obs_states"][:3], d["obs_actions"][:3], d["obs_next_states"][:3])
    (c_lo, c_hi), (l_lo, l_hi) = interval_cfmdp(short).aligned(), interval_cfmdp(short, bounds="lp").aligned()
    assert np.array_equal(np.isnan(c_lo), np.isnan(l_lo))
    known = ~np.isnan(c_lo)
    assert np.abs(c_lo - l_lo)[known].max() < 1e-9 and np.abs(c_hi - l_hi)[known].max() < 1e-9


def test_lp_mode_refuses_large_instances(reference_instances):
    _, _, path = reference_model(reference_instances, "lally_sepsis_sampled_seed0.npz")
    with pytest.raises(stormcf.SolverError, match="LPs"):
        interval_cfmdp(path, bounds="lp")


@given(random_mdps(max_states=5, max_actions=3, max_steps=4))
def test_validity_and_nesting(case):
    """Σ LB <= 1 <= Σ UB per (t, s, a), LB <= UB, [1, 1] for the observed transition; more assumptions give
    nested (narrower) intervals: none ⊇ cs ⊇ cs+m."""
    _, path = case
    ics = {a: interval_cfmdp(path, a, layers="all") for a in ASSUMPTIONS}
    for ic in ics.values():
        assert ic.validity_violations() == []
    bounds = {a: ic.aligned() for a, ic in ics.items()}
    for wide, narrow in (("none", "cs"), ("cs", "cs+m")):
        assert np.all(bounds[wide][0] <= bounds[narrow][0] + 1e-12)
        assert np.all(bounds[wide][1] >= bounds[narrow][1] - 1e-12)


@given(random_mdps(max_states=5, max_actions=3, max_steps=3))
def test_exact_gumbel_max_lies_inside_the_cs_bounds(case):
    """Gumbel-max satisfies counterfactual stability (not monotonicity): its exact probabilities are inside the
    CS-only bounds (spec §7)."""
    model, path = case
    lower, upper = interval_cfmdp(path, "cs", layers="all").aligned()
    g, _ = gumbel_cfmdp(path, layers="all").aligned()
    assert np.all(g >= lower - 1e-9) and np.all(g <= upper + 1e-9)


def test_monotonicity_excludes_gumbel_max_in_the_paper_example():
    """Appendix A: Gumbel-max makes a state that was possible but not observed (2) more likely than nominal
    (o = (0.3, 0.6, 0.1) observed 1; p = (0.3, 0.1, 0.6): Gumbel-max gives 2/3 > 0.6); monotonicity caps its
    upper bound at the nominal 0.6, CS alone allows 1."""
    o, p = np.array([0.3, 0.6, 0.1]), np.array([0.3, 0.1, 0.6])
    g = gumbel.exact_rows(o, 1, sp.csr_matrix(p)).toarray().ravel()
    np.testing.assert_allclose(g, [1 / 6, 1 / 6, 2 / 3], atol=1e-12)
    ub_csm, ub_cs = pair_bounds(o, 1, p, "cs+m")[1][2], pair_bounds(o, 1, p, "cs")[1][2]
    assert abs(ub_csm - 0.6) < 1e-9 and ub_csm < g[2] and abs(ub_cs - 1.0) < 1e-9


def test_cs_ties_through_prism_are_exact(reference_instances):
    """Regression: the CS condition p(s_{t+1})/q >= p(s')/o(s') is discontinuous at ties. The authors compute
    (1 - 0.4)/3 = 0.19999999999999998 in floating point, which breaks ties such as 0.5 >= 0.5 (their ref_ub = 0.2);
    Storm evaluates the PRISM constant expression exactly (0.2), so the tie holds and CS forbids the transition
    (UB = 0), which is also what the LP says on those inputs. Everywhere else the PRISM model reproduces the
    authors' bounds to 1e-15."""
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.4")
    d = np.load(reference_instances / "lally_gridworld_0.4_sampled_seed0.npz")
    path, j = _prism_path_and_alignment(model, d)
    lower, upper = interval_cfmdp(path, layers="all").aligned()
    differs = np.abs(upper - d["ref_ub"][:, j]) > 1e-12
    assert differs.any()
    P = model.transitions
    for t, e in zip(*np.nonzero(differs)):
        assert upper[t, e] == 0
        lo, hi = lp_step_bounds(P, int(path.choices[t]), int(path.next_states[t]))
        assert hi[e] == 0 and lo[e] == 0
    assert np.abs(lower - d["ref_lb"][:, j])[~differs].max() < 1e-15
    assert np.abs(upper - d["ref_ub"][:, j])[~differs].max() < 1e-15


def _prism_path_and_alignment(model, d):
    """The reference path on the PRISM gridworld, and for every PRISM transition its index in trans_idx."""
    names = ["up", "right", "down", "left"]
    index = 4 * model.valuations["y"] + model.valuations["x"]
    inverse = np.argsort(index)
    states = inverse[d["obs_states"]]
    choices = [model.choice_of(int(s), names[a]) for s, a in zip(states, d["obs_actions"])]
    path = ObservedPath(model, states, np.array(choices), int(inverse[d["obs_next_states"][-1]]))
    P = model.transitions
    rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    key = {tuple(k): j for j, k in enumerate(d["trans_idx"].tolist())}
    j = np.array([key[(int(index[model.state_of_choice[r]]), names.index(model.action(r)), int(index[c]))]
                  for r, c in zip(rows, P.indices)])
    return path, j


def test_prism_gridworld_reproduces_the_reference_bounds(reference_instances):
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.9")
    for kind in ("sampled_seed0", "repo_suboptimal"):
        d = np.load(reference_instances / f"lally_gridworld_0.9_{kind}.npz")
        path, j = _prism_path_and_alignment(model, d)
        lower, upper = interval_cfmdp(path, layers="all").aligned()
        assert np.abs(lower - d["ref_lb"][:, j]).max() < 1e-15
        assert np.abs(upper - d["ref_ub"][:, j]).max() < 1e-15


def test_path_without_final_state_has_a_nominal_last_step():
    model = stormcf.load_model(stormcf.example_path("gridworld.prism"), constants="p=0.9")
    data = stormcf.ObservedPath.load(model, stormcf.example_path("gridworld.catastrophic.json")).to_dict()
    del data["final_state"]
    lower, upper = interval_cfmdp(stormcf.ObservedPath.from_dict(model, data), layers="all").aligned()
    assert np.array_equal(lower[-1], model.transitions.data) and np.array_equal(upper[-1], model.transitions.data)
