"""Model checking (stormcf.storm.check, stormcf check): what Storm answers is answered, the rest refused in one
line: reward-bounded reachability (QVBS firewire), long-run averages, steady state, conditional probabilities,
quantiles, multi-objective queries."""
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import stormcf
from stormcf import storm
from stormcf.cli import main

QVBS = Path(__file__).resolve().parents[1] / "data" / "qvbs"
DEADLINE = 'Pmin=? [F{"time"}<=200 ((s1=8) & (s2=7)) | ((s1=7) & (s2=8))]'

CYCLE = """mdp
module m
  s : [0..2] init 0;
  [a] s=0 -> 0.5 : (s'=1) + 0.5 : (s'=2);
  [b] s=0 -> 0.9 : (s'=1) + 0.1 : (s'=0);
  [c] s=1 -> (s'=2);
  [d] s=2 -> 0.5 : (s'=0) + 0.5 : (s'=2);
endmodule
label "two" = s=2;
rewards "r"
  [a] true : 1;
  [c] true : 2;
  s=2 : 1;
endrewards
"""


@pytest.fixture(scope="module")
def firewire():
    return stormcf.load_model(QVBS / "firewire.false.prism", constants="delay=3,deadline=200")


@pytest.fixture
def cycle(tmp_path):
    f = tmp_path / "cycle.nm"
    f.write_text(CYCLE)
    return stormcf.load_model(f)


def test_reward_bounded_reachability_of_qvbs_firewire(firewire, capsys):
    """QVBS reference (Storm/exact, mcsta): deadline = 1/2 for delay=3, deadline=200."""
    check = stormcf.check_model(firewire, DEADLINE)
    assert check.value == pytest.approx(0.5, abs=1e-9)
    assert stormcf.check_model(firewire, DEADLINE, exact=True).exact == Fraction(1, 2)
    assert stormcf.parse_property(firewire, DEADLINE).initial_state_only
    assert main(["check", str(QVBS / "firewire.false.prism"), "-c", "delay=3,deadline=200", "--prop", DEADLINE]) == 0
    assert "= 0.5" in capsys.readouterr().out
    bounded = stormcf.check_model(firewire, DEADLINE.replace("Pmin=?", "Pmin>=0.4"))
    assert bounded.holds is True and bounded.value == pytest.approx(0.5, abs=1e-9)


def test_reward_bounds_on_induced_dtmcs(firewire):
    """A deterministic strategy's DTMC carries the rewards of the actions taken: the bound is checked; a strategy that
    mixes actions with different rewards is refused (the DTMC would only know their average)."""
    target = "((s1=8) & (s2=7)) | ((s1=7) & (s2=8))"
    _, sigma = stormcf.optimal_strategy(firewire, f"Pmin=? [F {target}]")
    bounded = stormcf.check_strategy(sigma, f'P=? [F{{"time"}}<=200 {target}]')
    assert 0.5 - 1e-9 <= bounded.value <= 1                      # no strategy beats Storm's optimum of 1/2
    with pytest.raises(stormcf.PropertyError, match='mixes choices with different "time" rewards'):
        stormcf.check_strategy(stormcf.Strategy.uniform(firewire), f'P=? [F{{"time"}}<=200 {target}]')


def _stationary(P: np.ndarray) -> np.ndarray:
    """The stationary distribution of an irreducible DTMC (numpy, independent of Storm)."""
    n = P.shape[0]
    A = np.vstack([P.T - np.eye(n), np.ones(n)])
    return np.linalg.lstsq(A, np.r_[np.zeros(n), 1.0], rcond=None)[0]


def _induced(m: stormcf.ExplicitModel, p_a: float) -> tuple[np.ndarray, np.ndarray]:
    s0 = m.state_index({"s": 0})
    sigma = np.ones(m.n_choices)
    sigma[m.choice_of(s0, "a")], sigma[m.choice_of(s0, "b")] = p_a, 1 - p_a
    strategy = stormcf.Strategy(m, sigma)
    P = stormcf.induced_dtmc(strategy).toarray()
    r = np.bincount(m.state_of_choice, weights=sigma * m.expected_choice_rewards("r"), minlength=m.n_states)
    return P, r + m.rewards["r"].state, strategy


def test_long_run_averages_on_mdps_and_induced_dtmcs(cycle, tmp_path, capsys):
    two = cycle.label("two")
    values, rewards = {}, {}
    for p_a in (0.0, 1.0, 0.3):
        P, r, strategy = _induced(cycle, p_a)
        pi = _stationary(P)
        values[p_a], rewards[p_a] = pi[two].sum(), pi @ r
        check = stormcf.check_strategy(strategy, 'LRA=? ["two"]')
        assert check.value == pytest.approx(values[p_a], rel=1e-6) and "long-run average solver" in check.method
        assert stormcf.check_strategy(strategy, 'S=? ["two"]').value == pytest.approx(values[p_a], rel=1e-6)
        assert stormcf.check_strategy(strategy, 'R{"r"}=? [LRA]').value == pytest.approx(rewards[p_a], rel=1e-6)
        exact = stormcf.check_strategy(strategy, 'LRA=? ["two"]', exact=True).exact
        assert float(exact) == pytest.approx(values[p_a], rel=1e-12)
    # unichain MDP: deterministic memoryless strategies are optimal for long-run averages
    assert stormcf.check_model(cycle, 'LRAmax=? ["two"]').value == pytest.approx(max(values[0], values[1]), rel=1e-6)
    assert stormcf.check_model(cycle, 'LRAmin=? ["two"]').value == pytest.approx(min(values[0], values[1]), rel=1e-6)
    assert stormcf.check_model(cycle, 'R{"r"}max=? [LRA]').value == pytest.approx(max(rewards[0], rewards[1]),
                                                                                  rel=1e-6)
    assert main(["check", str(tmp_path / "cycle.nm"), "--prop", 'LRAmax=? ["two"]']) == 0
    assert f"LRAmax=? [\"two\"] = {max(values[0], values[1]):.6g}" in capsys.readouterr().out


def test_steady_state_of_a_dtmc_exactly():
    """die.pm: the six outcomes are absorbing, so the long-run probability of d=1 is 1/6."""
    die = stormcf.load_model(storm.stormpy_example("dtmc", "die.pm"))
    assert stormcf.check_model(die, "S=? [s=7 & d=1]", exact=True).exact == Fraction(1, 6)
    with pytest.raises(stormcf.PropertyError, match="minimal or maximal"):
        stormcf.check_model(stormcf.load_model(stormcf.example_path("loan.prism")), 'S=? ["rejected"]')


def test_conditional_probability_at_the_initial_state():
    """P(F d=1 | F s=4) on die.pm equals the probability of d=1 from s=4 (d=1 is absorbing, so it cannot come
    before s=4): computed with numpy on the explicit chain."""
    die = stormcf.load_model(storm.stormpy_example("dtmc", "die.pm"))
    check = stormcf.check_model(die, "P=? [F s=7 & d=1 || F s=4]")
    P = die.transitions.toarray()
    one = (die.valuations["s"] == 7) & (die.valuations["d"] == 1)
    done = die.valuations["s"] == 7                                   # the six absorbing outcomes
    x = np.linalg.solve(np.eye(die.n_states) - np.where(done[:, None], 0, P), one.astype(float))
    assert check.value == pytest.approx(x[die.state_index({"s": 4, "d": 0})], rel=1e-9)


@pytest.mark.parametrize("kind, file, prop", [
    ("mdp", "two_dice.nm", 'Pmax=? [F "seven" || F "done"]'),          # the example: 1.2e-8 off before
    ("mdp", "two_dice.nm", 'Pmin=? [F "eleven" || F d1>3]'),
    ("mdp", "two_dice.nm", 'Pmax=? [F "two" || F s1=7]'),
    ("dtmc", "die.pm", "P=? [F s=7 & d=2 || F s>4]")])
def test_conditional_probabilities_meet_the_precision_the_method_claims(kind, file, prop):
    """Storm's conditional algorithm has its own precision (default 1e-6): the bridge sets it, and the value is
    within the claimed relative precision of Storm's exact value."""
    model = stormcf.load_model(storm.stormpy_example(kind, file))
    check, exact = stormcf.check_model(model, prop), stormcf.check_model(model, prop, exact=True).exact
    assert f"relative precision {float(storm.PRECISION):g}" in check.method and "conditional" in check.method
    assert abs(Fraction(check.value) - exact) <= storm.PRECISION * exact


def test_quantile_at_the_initial_state(firewire):
    """The least time bound with Pmax > 1/2 of electing a leader."""
    q = stormcf.check_model(firewire, 'quantile(min A, Pmax>0.5 [F{"time"}<=A "done"])').value
    assert q == int(q) > 0
    assert stormcf.check_model(firewire, f'Pmax=? [F{{"time"}}<={int(q)} "done"]').value > 0.5
    assert stormcf.check_model(firewire, f'Pmax=? [F{{"time"}}<={int(q) - 1} "done"]').value <= 0.5


def test_multi_objective_queries_in_the_cli(tmp_path, capsys):
    mo = str(storm.stormpy_example("mdp", "multiobjective1.nm"))
    text = 'multi(Pmax=? [F s=1], R{"rew"}min=? [C<=3])'
    assert main(["check", mo, "--prop", text, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    result, = data["results"]
    assert data["approximate"] and data["checks"] == []
    assert result["kind"] == "pareto" and len(result["points"]) == 3 and result["approximate"]
    np.testing.assert_allclose(result["points"][-1], [1.0, 3.64], atol=1e-6)
    assert main(["check", mo, "--prop", text]) == 0
    out = capsys.readouterr().out
    assert "3 Pareto-optimal point(s)" in out and "1 | 3.64" in out
    assert main(["check", mo, "--prop", 'multi(P>=0.5 [F s=1], R{"rew"}<=1 [C<=3])']) == 0
    assert "achievable" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["--prop", 'multi(Pmax=? [F s=1], R{"rew"}min=? [C<=3])', "--exact"], "floating point only"),
    (["--prop", '<<p1>> Pmax=? [F s=1]'], "game formulas"),
    (["--prop", 'P=? [F s=1]'], "minimal or maximal"),
    (["--prop", 'quantile(max A, max B, Pmax>0.5 [F{"rew"}<=A,{"rew"}<=B s=2])'], "not a number"),
])
def test_what_storm_cannot_answer_is_refused_in_one_line(argv, needle, capsys):
    assert main(["check", str(storm.stormpy_example("mdp", "multiobjective1.nm"))] + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_multi_with_a_strategy_is_refused(tmp_path, capsys):
    mo = stormcf.load_model(storm.stormpy_example("mdp", "multiobjective1.nm"))
    stormcf.Strategy.uniform(mo).save(tmp_path / "u.json")
    assert main(["check", str(storm.stormpy_example("mdp", "multiobjective1.nm")), "--strategy",
                 str(tmp_path / "u.json"), "--prop", 'multi(Pmax=? [F s=1], R{"rew"}min=? [C<=3])']) == 2
    assert "multi-objective query" in capsys.readouterr().err


def test_stochastic_games_are_refused_in_one_line(capsys):
    assert main(["info", str(storm.stormpy_example("smg", "example_smg.nm"))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not SMG models" in err and "internal error" not in err


@pytest.mark.parametrize("bound, holds", [("<=", True), ("<", False), (">=", True), (">", False)])
def test_exact_bounds_are_decided_by_the_exact_value(bound, holds):
    """With --exact, the bound is decided by Storm's exact value (one rational solve): on the bound itself
    (P = 411/1000 under the impatient strategy) the strict and non-strict comparisons differ, on the initial state
    and on the DTMC the strategy induces."""
    loan = stormcf.load_model(stormcf.example_path("loan.prism"))
    sigma = stormcf.Strategy.load(loan, stormcf.example_path("loan.impatient.json"))
    check = stormcf.check_strategy(sigma, f'P{bound}0.411 [F "rejected"]', exact=True)
    assert check.exact == Fraction(411, 1000) and check.holds is holds
    floating = stormcf.check_strategy(sigma, f'P{bound}0.5 [F "rejected"]')
    assert floating.holds is (bound in ("<=", "<"))


def test_exact_values_with_more_digits_than_python_prints_by_default(tmp_path):
    """P(F s=300) = p^300 with a 16-digit p has about 4,800 digits, beyond Python's default limit on converting
    integers from and to text (4,300): reading Storm's rational and printing the fraction (JSON) used to fail."""
    path = tmp_path / "chain.pm"
    path.write_text("dtmc\nmodule m\n s : [0..301] init 0;\n"
                    " [] s<300 -> 0.1234567890123457:(s'=s+1) + 0.8765432109876543:(s'=301);\n"
                    " [] s>=300 -> (s'=s);\nendmodule\n")
    check = stormcf.check_model(stormcf.load_model(path), "P=? [F s=300]", exact=True)
    assert check.exact == Fraction("0.1234567890123457") ** 300
    assert len(check.to_dict()["exact"]) > 4300


def test_exact_optimum_and_scheduler_of_an_mdp_given_by_arrays(tmp_path):
    """Storm's exact optimum on an MDP built from arrays over rationals, with an exact optimal scheduler: Pmin(F s=1)
    = (1/3)·(327/1000) / (2/3) = 327/2000 (a at s=0, c at s=3, a cycle that floating point does not hit exactly);
    the least cost until s=1 or s=2 is 3/2 (a costs 1 and leaves s=0 with 2/3, b costs 3)."""
    path = tmp_path / "m.nm"
    path.write_text("mdp\nmodule m\n s : [0..3] init 0;\n"
                    " [a] s=0 -> 1/3:(s'=0) + 1/3:(s'=3) + 1/3:(s'=2);\n [b] s=0 -> 1/2:(s'=1) + 1/2:(s'=2);\n"
                    " [c] s=3 -> 327/1000:(s'=1) + 673/1000:(s'=2);\n [d] s=3 -> (s'=1);\n [] s=1 | s=2 -> true;\n"
                    "endmodule\nrewards \"cost\"\n [a] true : 1;\n [b] true : 3;\nendrewards\n")
    model = stormcf.load_model(path)
    s0, s3 = model.state_index({"s": 0}), model.state_index({"s": 3})
    values = storm.exact_transition_values(model)
    exact, rows = storm.exact_optimal_choices(model, values, storm.parse_property(model, "Pmin=? [F s=1]"))
    assert exact[s0] == Fraction(327, 2000) and exact[s3] == Fraction(327, 1000)
    assert rows[s0] == model.choice_of(s0, "a") and rows[s3] == model.choice_of(s3, "c")
    cost = [Fraction(0)] * model.n_choices
    cost[model.choice_of(s0, "a")], cost[model.choice_of(s0, "b")] = Fraction(1), Fraction(3)
    prop = storm.parse_property(model, 'R{"cost"}min=? [F s=1 | s=2]')
    exact, rows = storm.exact_optimal_choices(model, values, prop, {"cost": cost})
    assert exact[s0] == Fraction(3, 2) and rows[s0] == model.choice_of(s0, "a")
