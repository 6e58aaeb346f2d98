"""Seed 000's running example (Fig. 1, Examples 1-3) and the issue's reproduction numbers, on the shipped loan model."""
from fractions import Fraction

import numpy as np
import pytest

import stormcf
from stormcf import Strategy, check_strategy
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual, to_dot
from stormcf.errors import PropertyError, StrategyError

BAD = 'P<=0.2 [F "rejected"]'


def reach_oracle(model, probs):
    """P(F rejected) from s0 by plain numpy on the loan model (acyclic apart from absorbing states)."""
    S = np.zeros((model.n_states, model.n_choices))
    S[model.state_of_choice, np.arange(model.n_choices)] = probs
    P = S @ model.transitions.toarray()
    target = model.label("rejected").astype(float)
    p = target.copy()
    for _ in range(20):
        p = np.where(target > 0, 1.0, P @ p)
    return p[model.initial_state]


def rework(model):
    return model.state_index({"s": 5})


@pytest.mark.parametrize("solver", ["auto", "gurobi", "scip"])
def test_mixed_counterfactual_changes_only_rework(loan, impatient, solver):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD), solver=solver)
    assert r.status == "optimal"
    assert [c["state"] for c in r.changes()] == [{"s": 5}]
    quit_ = r.strategy.probabilities[loan.choice_of(rework(loan), "Quit")]
    assert quit_ == pytest.approx(0.1447, abs=2e-4)
    assert r.distance.d0 == 1 and r.distance.dinf == pytest.approx(0.5553, abs=2e-4)
    assert r.distance.d1 == pytest.approx(0.5553 / 4, abs=1e-4)
    assert r.verification.holds and r.probability <= 0.2
    assert r.probability == pytest.approx(reach_oracle(loan, r.strategy.probabilities), abs=1e-9)
    assert r.initial.value == pytest.approx(0.411, abs=1e-12)


def test_fig1c_strategy_is_valid_but_rounded(loan, impatient):
    """Fig. 1c's Quit 0.14 / Submit 0.86 gives 0.1982 (the paper's 0.198) and d = 1.70: valid, slightly farther."""
    p = np.array(impatient.probabilities)
    p[loan.choice_of(rework(loan), "Quit")], p[loan.choice_of(rework(loan), "Submit")] = 0.14, 0.86
    fig1c = Strategy(loan, p)
    assert check_strategy(fig1c, BAD).value == pytest.approx(0.1982, abs=1e-12)
    d = stormcf.strategy_distance(impatient, fig1c)
    assert (d.d0, d.d1, d.dinf) == (1, pytest.approx(0.14), pytest.approx(0.56))
    optimum = solve_counterfactual(CounterfactualProblem(impatient, BAD))
    assert optimum.weighted_distance < d.weighted() - 5e-3


def test_mixed_optimum_matches_brute_force(loan, impatient):
    """Any change of two states costs d >= 2 > 1.7, so the optimum changes one state; grid every single state."""
    best = np.inf
    for s in np.flatnonzero(loan.decision_states):
        rows = list(loan.choices(int(s)))
        assert len(rows) == 2
        for q in np.linspace(0, 1, 10_001):
            p = np.array(impatient.probabilities)
            p[rows[0]], p[rows[1]] = q, 1 - q
            delta = abs(q - impatient.probabilities[rows[0]])
            if delta > 0 and reach_oracle(loan, p) <= 0.2:
                best = min(best, 1 + delta / 4 + delta)
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD))
    assert r.weighted_distance == pytest.approx(best, abs=2e-4)
    assert r.weighted_distance <= best + 1e-6


def test_example3_optimal_dinf_is_051(loan, impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="0,0,1"))
    assert r.status == "optimal" and r.solver.startswith("d∞ bisection")
    assert r.distance.dinf == pytest.approx(0.5094, abs=1e-3)
    assert r.distance_lower_bound == pytest.approx(r.distance.dinf, abs=1e-6)
    assert r.verification.holds
    no = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="0,0,1", epsilon=0.5))
    assert no.status == "infeasible" and no.strategy is None
    yes = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="0,0,1", epsilon=0.52))
    assert yes.status == "feasible" and yes.distance.dinf <= 0.52 and yes.verification.holds


@pytest.mark.parametrize("solver", ["gurobi", "scip"])
def test_dinf_bisection_equals_miqcqp_on_loan(impatient, solver):
    exact = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="0,0,1"))
    miqcqp = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="0,0,1"), solver=solver)
    assert miqcqp.solver.startswith("MIQCQP")
    assert miqcqp.distance.dinf == pytest.approx(exact.distance.dinf, abs=1e-5)


@pytest.mark.parametrize("solver", ["auto", "highs", "gurobi", "scip"])
def test_d0_only(impatient, solver):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="1,0,0"), solver=solver)
    assert r.status == "optimal" and r.distance.d0 == 1 and r.verification.holds
    assert r.lower_bounds["d0"]["value"] == 1 and r.gap == 0


def test_infeasible_is_decided_by_storm_pmin(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, 'P<=0.01 [F "rejected"]'))
    assert r.status == "infeasible" and r.solver == "storm" and r.strategy is None
    assert r.optimal_probability == pytest.approx(0.02, abs=1e-9)
    assert "Pmin = 0.02" in r.solver_reason and "0.02" in r.explanation()


def test_trivial_returns_sigma(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, 'P<=0.5 [F "rejected"]'))
    assert r.status == "trivial" and r.strategy is impatient and r.distance.d0 == 0
    assert "nothing to change" in r.explanation()


def test_lower_bound_on_good_outcome_is_the_complement(impatient):
    good = solve_counterfactual(CounterfactualProblem(impatient, 'P>=0.8 [F "granted"]'))
    bad = solve_counterfactual(CounterfactualProblem(impatient, BAD))
    assert good.status == "optimal" and good.verification.holds and good.probability >= 0.8
    assert good.weighted_distance == pytest.approx(bad.weighted_distance, abs=1e-6)


def test_strict_bound(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, 'P<0.2 [F "rejected"]'))
    assert r.verification.holds and r.probability < 0.2
    assert any("strict" in n for n in r.notes)


def test_controllability(loan, impatient):
    only_error = solve_counterfactual(CounterfactualProblem(impatient, BAD, controllable_states='"Error"'))
    assert only_error.status == "infeasible"          # Rework keeps Quit 0.7: at least 0.361 + 0.05·V(Error)
    assert only_error.optimal_probability == pytest.approx(0.475 * 0.76 + 0.05 * 0.8 + 0.05 * 0.2 * 1, abs=1e-9)
    actions = solve_counterfactual(CounterfactualProblem(impatient, BAD, controllable_actions=["Quit", "Submit"]))
    assert [c["state"] for c in actions.changes()] == [{"s": 5}]
    expr = solve_counterfactual(CounterfactualProblem(impatient, BAD, weights="0,0,1", controllable_states="Rework"))
    changed = np.abs(expr.strategy.probabilities - impatient.probabilities) > 1e-12
    assert set(loan.state_of_choice[changed]) == {rework(loan)}
    with pytest.raises(StrategyError, match="unknown action 'Nope'"):
        CounterfactualProblem(impatient, BAD, controllable_actions=["Nope"])


def test_problem_validation(impatient):
    with pytest.raises(PropertyError, match="outside"):
        CounterfactualProblem(impatient, 'P<=1.5 [F "rejected"]')
    with pytest.raises(PropertyError, match="no bound"):
        CounterfactualProblem(impatient, 'P=? [F "rejected"]')
    with pytest.raises(PropertyError, match="needs a strategy that counts steps"):
        CounterfactualProblem(impatient, 'P<=0.2 [F<=3 "rejected"]')
    with pytest.raises(PropertyError, match="must be on F φ or ψ U φ"):
        CounterfactualProblem(impatient, 'P>=0.2 [G "rejected"]')
    with pytest.raises(PropertyError, match="weights"):
        CounterfactualProblem(impatient, BAD, weights="1,1")
    with pytest.raises(PropertyError, match="epsilon"):
        CounterfactualProblem(impatient, BAD, epsilon=-1)


def test_exact_check(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD), exact=True)
    assert r.exact is not None and r.exact.holds and r.exact.exact <= Fraction(1, 5)


def test_json_and_dot(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD))
    data = r.to_dict()
    for key in ("status", "probability", "initial_probability", "bound", "distance", "changes", "solver", "time_s",
                "gap"):
        assert key in data
    assert set(data["distance"]) >= {"d0", "d1", "dinf", "weighted"}
    assert data["changes"][0]["actions"]["Quit"]["from"] == 0.7
    assert data["sizes"]["encoded"]["variables"] < data["sizes"]["paper"]["variables"]
    dot = to_dot(r)
    assert dot.startswith("digraph") and "<b>s=5</b>" in dot and "color=blue" in dot


def test_diverse_counterfactuals(impatient):
    """Three distinct, valid counterfactuals, each changing a state-action pair the earlier ones left unchanged."""
    from stormcf.counterfactual import diverse_counterfactuals
    r = diverse_counterfactuals(CounterfactualProblem(impatient, BAD), 3, solver="scip")
    assert len(r.diverse) == 2 and r.novelty == 1.0
    found = [r, *r.diverse]
    for k, other in enumerate(found):
        assert other.verification.holds and other.probability <= 0.2
        assert other.novelty > 0
        for earlier in found[:k]:
            assert not other.strategy.allclose(earlier.strategy, atol=1e-4)
    # the second changes s0 and Consultation (Rework is taken): no earlier counterfactual changed them
    assert {c["name"] for c in r.diverse[0].changes()} == {"s=0", "s=4"}
    assert [d["status"] for d in r.to_dict()["diverse"]] == ["optimal", "feasible", "feasible"]


def test_diverse_says_why_it_stops(impatient):
    """Only Error's pairs are left after three counterfactuals; a fourth would need a fifth decision state."""
    from stormcf.counterfactual import diverse_counterfactuals
    r = diverse_counterfactuals(CounterfactualProblem(impatient, BAD), 6, solver="gurobi")
    assert 1 + len(r.diverse) < 6
    assert any(n.startswith(f"only {1 + len(r.diverse)} of 6 diverse counterfactuals: ") for n in r.notes)
