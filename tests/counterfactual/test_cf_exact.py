"""Issue 37: the verdicts of counterfactual strategies against an exact oracle (exact_oracle.py: fractions, brute
force over deterministic strategies, no stormcf, no Storm): targets that are not absorbing, strict bounds and bounds
equal to the optimum (decided in exact arithmetic), reward bounds with and without zero-reward end components, bounds
that cannot hold together, and the stage a status line names."""
import tempfile
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import stormcf
import stormcf.verify
from stormcf import Strategy
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.counterfactual.preanalysis import preanalyse
from stormcf.errors import PropertyError

from exact_oracle import INF, Oracle, strategy_of
from random_models import random_mdps

#: the issue's MDP: the goal s=1 is left for s=3, where go0 ends up anyway
LEAVING = """mdp
module m
  s : [0..3] init 0;
  [go0] s=0 -> 0.2:(s'=2) + 0.4:(s'=1) + 0.4:(s'=3);
  [go1] s=0 -> 1:(s'=1);
  [] s=1 -> 1:(s'=3);
  [] s=2 -> 1:(s'=2);
  [] s=3 -> 1:(s'=3);
endmodule
label "goal" = s=1 | s=2;
label "a" = s=0;
"""
#: Pmin(F "goal") = 1/3·0.327 + ... = 327/2000 exactly (a cycle: floating point does not hit it)
EXACT_PMIN = """mdp
module m
  s : [0..3] init 0;
  [a] s=0 -> 1/3:(s'=0) + 1/3:(s'=3) + 1/3:(s'=2);
  [b] s=0 -> 1/2:(s'=1) + 1/2:(s'=2);
  [c] s=3 -> 327/1000:(s'=1) + 673/1000:(s'=2);
  [d] s=3 -> 1:(s'=1);
  [] s=1 -> 1:(s'=1);
  [] s=2 -> 1:(s'=2);
endmodule
label "goal" = s=1;
"""
#: acyclic; the action z earns nothing and goes straight to the goal: no strategy loops
STRAIGHT = """mdp
module m
  s : [0..2] init 0;
  [a] s=0 -> 1/2:(s'=1) + 1/2:(s'=2);
  [b] s=0 -> 1:(s'=2);
  [z] s=1 -> 1:(s'=2);
  [y] s=1 -> 1:(s'=2);
  [] s=2 -> 1:(s'=2);
endmodule
label "goal" = s=2;
rewards "r"
  [a] true : 1;
  [b] true : 3;
  [y] true : 2;
endrewards
"""
#: the goal is a trap: finitely many expected steps (also in Storm's multi-objective sense: s=2 counts steps forever)
#: mean reaching the trap surely
TRAPPED = """mdp
module m
  s : [0..2] init 0;
  [a] s=0 -> 1:(s'=1);
  [b] s=0 -> 1:(s'=2);
  [] s=1 -> 1:(s'=1);
  [c] s=2 -> 1:(s'=2);
endmodule
label "goal" = s=1;
label "trap" = s=1;
rewards "steps"
  [a] true : 1;
  [b] true : 1;
  [c] true : 1;
endrewards
"""


def load(tmp_path, text, name="m.prism"):
    path = tmp_path / name
    path.write_text(text)
    return stormcf.load_model(path)


def uniform(model):
    return Strategy.uniform(model)


# ================================================================================================ the cases
@pytest.mark.parametrize("prop", ['P>=0.9 [F "goal"]', 'P>=0.746 ["a" U "goal"]'])
def test_lower_bound_with_a_target_that_is_left(tmp_path, prop):
    """σ = go0 reaches the goal with 0.6; go1 surely (Storm's Pmax = 1): the target is left for s=3, which used to
    count as "never reached" (Pmax = 0.2, infeasible)."""
    model = load(tmp_path, LEAVING)
    sigma = Strategy.from_dict(model, {"states": [{"state": {"s": 0}, "actions": {"go0": 1.0}}],
                                       "default": "uniform"})
    r = solve_counterfactual(CounterfactualProblem(sigma, prop, weights="0,0,1"), time_limit=60)
    assert r.optimal_probability == pytest.approx(1.0, abs=1e-12)
    assert r.status == "optimal" and r.verification.holds
    assert r.distance.dinf == pytest.approx(float(r.problem.bound - Fraction(6, 10)) / 0.4, rel=1e-6)  # 0.6 + 0.4δ


def test_strict_bound_at_the_exact_optimum_is_infeasible(tmp_path):
    """Pmin = 327/2000 exactly: no strategy meets P<0.1635, also with --exact; P<=0.1635 is met exactly (Storm's
    exact scheduler), and the answer's exact value is the bound."""
    model = load(tmp_path, EXACT_PMIN)
    for exact in (False, True):
        r = solve_counterfactual(CounterfactualProblem(uniform(model), 'P<0.1635 [F "goal"]'), exact=exact,
                                 time_limit=60)
        assert r.status == "infeasible" and r.strategy is None and "327/2000" in r.solver_reason
    r = solve_counterfactual(CounterfactualProblem(uniform(model), 'P<=0.1635 [F "goal"]'), exact=True,
                             time_limit=60)
    assert r.status in ("optimal", "suboptimal") and r.exact.exact == Fraction(327, 2000)
    assert r.optimal_probability == pytest.approx(0.1635, rel=1e-9)


def test_an_undecided_optimum_is_not_infeasible(tmp_path, monkeypatch):
    """Without the exact re-check (stormcf.verify's limits), Storm's float Pmin cannot decide P<0.1635: no claim of
    infeasibility, no strategy accepted at the bound, the notes say why."""
    monkeypatch.setattr(stormcf.verify, "EXACT_RECHECK_STATES", 0)
    model = load(tmp_path, EXACT_PMIN)
    for prop in ('P<0.1635 [F "goal"]', 'P<=0.1635 [F "goal"]'):
        r = solve_counterfactual(CounterfactualProblem(uniform(model), prop, weights="0,0,1"), time_limit=60)
        assert r.status != "infeasible" and r.strategy is None
        assert any("infeasibility is not claimed" in n and "more than 0 states" in n for n in r.notes)


@pytest.mark.parametrize("control", [{"controllable_states": "s=0"}, {"controllable_actions": ["a", "b"]}])
def test_strict_bound_at_the_exact_optimum_with_fixed_states(tmp_path, control):
    """s=3 keeps σ (c and d half each: 0.6635 to the goal), so the actionable MDP mixes its choices: Pmin =
    0.6635 / 2 = 1327/4000 exactly (the exact build of that MDP), which P<0.33175 misses."""
    model = load(tmp_path, EXACT_PMIN)
    r = solve_counterfactual(CounterfactualProblem(uniform(model), 'P<0.33175 [F "goal"]', **control),
                             time_limit=60)
    assert r.status == "infeasible" and "Pmin = 1327/4000" in r.solver_reason
    r = solve_counterfactual(CounterfactualProblem(uniform(model), 'P<=0.33175 [F "goal"]', **control),
                             time_limit=60)
    assert r.status == "optimal" and r.verification.exact == Fraction(1327, 4000)


def test_zero_reward_step_into_the_target_is_no_loop(tmp_path):
    """R<= used to be refused here ("s=1 can loop forever"): z earns nothing but leaves for the goal."""
    model = load(tmp_path, STRAIGHT)
    r = solve_counterfactual(CounterfactualProblem(uniform(model), 'R{"r"}<=1.5 [F "goal"]'), time_limit=60)
    assert r.status == "optimal" and r.verification.holds and r.value <= 1.5


def test_bounds_that_cannot_hold_together(tmp_path):
    """Storm answers the joint query with "false" (no strategy meets P<=0.5 [!goal U trap] with finite steps): an
    internal error before, now infeasible naming why."""
    model = load(tmp_path, TRAPPED)
    problem = CounterfactualProblem(uniform(model), 'R{"steps"}<=5 [F "goal"]',
                                    bounds=['P<=0.5 [!"goal" U "trap"]'])
    r = solve_counterfactual(problem, time_limit=60)
    assert r.status == "infeasible" and r.solver == "storm"
    assert "no strategy (also randomised ones with memory) meets P<=1/2" in r.solver_reason
    assert "with a finite expected \"steps\"" in r.solver_reason


def test_infeasible_epsilon_names_the_stage(loan, impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, 'P<=0.2 [F "rejected"]', epsilon=0), time_limit=60)
    assert r.status == "infeasible" and r.solver
    assert "; :" not in r.status_line() and "d∞ bisection" in "\n".join(r.details())


# ================================================================================================ random MDPs
KINDS = {                                  # the bound's text (%s: comparison and threshold), value kind, direction
    "P<= F": ('P%s [F "goal"]', "reach", False),
    "P>= F": ('P%s [F "goal"]', "reach", True),
    "P<= U": ('P%s [s!=1 U "goal"]', "reach", False),
    "P>= U": ('P%s [s!=1 U "goal"]', "reach", True),
    "R<=": ('R{"r"}%s [F "goal"]', "reward", False),
}


def _threshold(x: Fraction) -> str:
    """An exact threshold as written in a property (Storm reads ``327/2000`` as that fraction)."""
    return f"{x.numerator}/{x.denominator}"


def _instance(mdp, kind, where, strict):
    """The model, σ, the oracle and the bound: σ mixes the worst deterministic strategy (80%) with the random model's
    own (20%, exact decimals), so that it violates most bounds; the bound sits at the exact optimum, at σ's exact
    value, or half way."""
    text, value_kind, lower = KINDS[kind]
    oracle = Oracle(mdp, constraint=set(range(mdp.n)) - {1} if "U" in kind else None)
    worst = (min if lower else max)(oracle.deterministic(), key=lambda d: oracle.value(value_kind, d))
    sigma = {s: {a: Fraction(4, 5) * worst[s].get(a, 0) + Fraction(1, 5) * p for a, p in acts.items()}
             for s, acts in mdp.strategy.items()}
    mdp = replace(mdp, strategy=sigma)
    best = oracle.optimum(value_kind, "max" if lower else "min")
    own = oracle.value(value_kind, sigma)
    assume(best != INF and own != best)
    gamma = {"optimum": best, "sigma": own, "between": (best + own) / 2}[where]
    assume(gamma != INF)
    with tempfile.TemporaryDirectory() as tmp:
        model = stormcf.load_model(mdp.write(Path(tmp)))
    comparison = (">" if lower else "<") + ("" if strict else "=")
    return (mdp, model, Strategy.from_dict(model, mdp.strategy_json()), oracle,
            text % f"{comparison}{_threshold(Fraction(gamma))}", value_kind, best, own)


def _meets(prop, value) -> bool:
    return prop.satisfied_by(value if value == INF else Fraction(value))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(random_mdps(max_states=5), st.sampled_from(sorted(KINDS)), st.sampled_from(["optimum", "sigma", "between"]),
       st.booleans(), st.sampled_from(["0,0,1", "1,0,0", "1,1,1"]), st.sets(st.integers(0, 4), max_size=3))
def test_random_verdicts_are_exact(mdp, kind, where, strict, weights, free):
    """trivial iff σ meets the bound exactly, infeasible iff the exact optimum does not, Storm's optimum is the
    oracle's, a returned strategy meets the bound in exact arithmetic; refusals only where the oracle finds the end
    components they name (the states of ``free`` earn nothing, so that zero-reward end components occur)."""
    mdp = replace(mdp, reward={s: {a: 0 if s in free else r for a, r in acts.items()} for s, acts in mdp.reward.items()})
    mdp, model, sigma, oracle, prop, value_kind, best, own = _instance(mdp, kind, where, strict)
    try:
        r = solve_counterfactual(CounterfactualProblem(sigma, prop, weights=weights), time_limit=60)
    except PropertyError as err:
        if "without earning" in str(err):
            assert oracle.zero_reward_end_component()
        else:
            assert "loop forever" in str(err) and not oracle.ends_surely()
        return
    bound = r.problem.bounds[0]
    if kind.startswith("P>="):
        assert oracle.ends_surely()
    if kind == "R<=" and r.status not in ("trivial", "infeasible"):
        assert not oracle.zero_reward_end_component()
    assert (r.status == "trivial") == _meets(bound.property, own)
    if r.status != "trivial":
        assert (r.status == "infeasible") == (not _meets(bound.property, best))
        assert r.optimal_probability == pytest.approx(float(best), rel=1e-9, abs=1e-12)
    if r.strategy is not None:
        assert r.status in ("trivial", "optimal", "suboptimal")
        assert _meets(bound.property, oracle.value(value_kind, strategy_of(mdp, model, r.strategy)))
    if weights == "1,0,0" and r.status not in ("trivial", "infeasible"):          # d0: exact, also on the bound
        assert r.status == "optimal"
        assert r.distance.d0 == oracle.least_d0(value_kind, mdp.strategy, lambda v: _meets(bound.property, v))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(random_mdps(max_states=5), st.sets(st.integers(0, 4), min_size=1, max_size=4))
def test_random_reward_bounds_are_refused_exactly_at_zero_reward_end_components(mdp, free):
    """R<= at the exact optimum (feasible, not trivial): Storm's pre-analysis refuses it iff a strategy can stay
    forever, earning nothing, where the target can still be reached surely (the oracle's end components); the
    states of ``free`` earn nothing."""
    mdp = replace(mdp, reward={s: {a: 0 if s in free else r for a, r in acts.items()} for s, acts in mdp.reward.items()})
    mdp, _, sigma, oracle, prop, _, _, _ = _instance(mdp, "R<=", "optimum", False)
    try:
        preanalyse(CounterfactualProblem(sigma, prop))
    except PropertyError as err:
        assert "without earning" in str(err) and oracle.zero_reward_end_component()
        return
    assert not oracle.zero_reward_end_component()
