"""Multi-objective queries (stormcf.storm.multiobjective) on stormpy's multiobjective1.nm, against a hand
derivation and against Storm's own achievability answers."""
import numpy as np
import pytest

import stormcf
from stormcf import storm

PARETO = 'multi(Pmax=? [F s=1], R{"rew"}min=? [C<=3])'


@pytest.fixture(scope="module")
def mo1():
    return stormcf.load_model(storm.stormpy_example("mdp", "multiobjective1.nm"))


def _first_steps_then_b(m: stormcf.ExplicitModel, k: int) -> tuple[float, float]:
    """(P(F s=1), expected reward of the first 3 steps) of the scheduler that plays C for k steps, then B, computed
    on the explicit model by forward propagation (s=1 has the single action D, reward 4)."""
    s0 = m.state_index({"s": 0})
    rows = {a: m.choice_of(s0, a) for a in ("B", "C")}
    reward = np.asarray(m.expected_choice_rewards("rew"))
    dist = np.zeros(m.n_states)
    dist[s0] = 1.0
    total = 0.0
    for t in range(3):
        rows_t = np.array([m.row_groups[s] for s in range(m.n_states)])
        rows_t[s0] = rows["C"] if t < k else rows["B"]
        total += float(dist @ reward[rows_t])
        dist = dist @ m.transitions[rows_t].toarray()
    # after the reward horizon, B reaches s=1 almost surely from s=0; s=2 never does
    reach_s1 = 0.2 ** k                       # C keeps s=0 with 0.2 per step; every other branch of C goes to s=2
    return reach_s1, total


def test_pareto_front_matches_hand_derivation(mo1):
    points, result = storm.pareto_points(mo1, PARETO)
    expected = np.array([_first_steps_then_b(mo1, k) for k in (2, 1, 0)])     # (0.04, 0), (0.2, 0.56), (1, 3.64)
    np.testing.assert_allclose(points, expected, atol=1e-6)
    assert result.kind == "pareto" and result.directions == ("max", "min") and result.approximate
    assert result.objectives == ('Pmax=? [F (s = 1)]', 'R{"rew"}min=? [C<=3]')
    # the over-approximation lies within the precision of the achievable points
    assert result.over_approximation.shape[1] == 2
    np.testing.assert_allclose(result.over_approximation, points, atol=1e-5)


def test_pareto_points_are_achievable_and_not_improvable(mo1):
    points, result = storm.pareto_points(mo1, PARETO)
    for p, r in points:
        ok = storm.check_multiobjective(mo1, f'multi(P>={p - 1e-4} [F s=1], R{{"rew"}}<={r + 1e-4} [C<=3])')
        assert ok.kind == "achievability" and ok.holds
        better = storm.check_multiobjective(mo1, f'multi(P>={min(p + 1e-3, 1)} [F s=1], R{{"rew"}}<={r - 1e-3} '
                                                 f'[C<=3])')          # a probability bound above 1 is refused
        assert not better.holds


def test_extreme_points_equal_single_objective_optima(mo1):
    points, _ = storm.pareto_points(mo1, PARETO)
    pmax = stormcf.check_model(mo1, "Pmax=? [F s=1]").value
    rmin = stormcf.check_model(mo1, 'R{"rew"}min=? [C<=3]').value
    assert points[:, 0].max() == pytest.approx(pmax, abs=1e-6)
    assert points[:, 1].min() == pytest.approx(rmin, abs=1e-6)


def test_three_objectives_are_mutually_non_dominated(mo1):
    points, result = storm.pareto_points(
        mo1, 'multi(Pmax=? [F s=1], R{"rew"}max=? [C<=3], Pmax=? [F<=2 s=2])')
    assert points.shape[1] == 3 and len(points) >= 3
    for i, p in enumerate(points):
        others = np.delete(points, i, axis=0)
        assert not np.any(np.all(others >= p - 1e-9, axis=1) & np.any(others > p + 1e-6, axis=1))


def test_numerical_query(mo1):
    r = storm.check_multiobjective(mo1, 'multi(Pmax=? [F s=2], R{"rew"}<=12 [F s=1])')
    assert r.kind == "numerical" and r.value == pytest.approx(1.0, abs=2e-6)
    assert r.to_dict()["approximate"] is True


def test_multi_objective_queries_leave_the_storm_model_alone(mo1):
    before = set(storm.storm_model_of(mo1).labeling.get_labels())
    storm.pareto_points(mo1, PARETO)
    assert set(storm.storm_model_of(mo1).labeling.get_labels()) == before


@pytest.mark.parametrize("text,needle", [
    ('Pmax=? [F s=1]', "not a multi-objective query"),
    ('multi(Pmax=? [F s=1], R{"rew"}<=3 [C<=3])', "a Pareto front needs two or more"),
])
def test_pareto_points_refuses_other_queries(mo1, text, needle):
    with pytest.raises(stormcf.PropertyError, match=needle):
        storm.pareto_points(mo1, text)


def test_multi_on_a_dtmc_is_refused():
    die = stormcf.load_model(storm.stormpy_example("dtmc", "die.pm"))
    with pytest.raises(stormcf.PropertyError, match="on MDPs, not on a DTMC"):
        storm.check_multiobjective(die, 'multi(P>=0.1 [F s=7], P>=0.1 [F s=3])')


def test_numerical_query_whose_bounds_cannot_hold(mo1):
    """Storm answers a numerical query whose bounds no scheduler meets with a truth value (false), not a number:
    R{"rew"}<=1 [F s=2] forbids A (reward 10) and D, so s=1 is never reached with 0.99."""
    r = storm.check_multiobjective(mo1, 'multi(Pmax=? [F s=2], R{"rew"}<=1 [F s=2], P>=0.99 [F s=1])')
    assert r.kind == "numerical" and r.value is None and r.holds is False
    assert "no scheduler meets its bounds" in str(r) and r.to_dict()["value"] is None
