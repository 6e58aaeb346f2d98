"""PRISM transition rewards (stormcf.storm.rewards): read, evaluated per transition, lifted for Storm, never dropped."""
from fractions import Fraction

import numpy as np
import pytest

import stormcf
from stormcf.cli import main

ISSUE_MODEL = """mdp
module m
  s : [0..2] init 0;
  [a] s=0 -> 0.7 : (s'=1) + 0.3 : (s'=2);
  [b] s=0 -> 1 : (s'=2);
  [done] s>0 -> true;
endmodule
label "end" = s>0;
rewards "r"
  [a] s=0 -> s=1 : 5;
  [b] true : 1;
endrewards
"""

MIXED_MODEL = """mdp
const int R = 5;
formula low = s<1;
module m
  s : [0..2] init 0;
  b : bool init false;
  [a] s=0 -> 0.7 : (s'=1) + 0.3 : (s'=2);
  [b] s=0 -> 1 : (s'=2);
  [] s>0 & !b -> 0.5 : (b'=true) + 0.5 : true;
  [] s>0 & b -> true;
endmodule
label "end" = b;
rewards "r"
  [a] low -> s=1 : R;
  [] true -> b : (s=1 ? 2 : 3) * R;
  [b] true : 1;
  s=1 : 0.5;
endrewards
"""


@pytest.fixture
def issue_model(tmp_path):
    f = tmp_path / "tr.nm"
    f.write_text(ISSUE_MODEL)
    return stormcf.load_model(f)


def _path_enumeration(m: stormcf.ExplicitModel, name: str) -> dict[str, float]:
    """E[reward of the step from s=0] for each action of s=0, by enumerating its transitions with their own reward
    r(s, a, s') (plus the choice and state rewards), without the lifted per-choice vector."""
    rm = m.rewards[name]
    s0 = m.state_index({"s": 0} if "b" not in m.valuations else {"s": 0, "b": False})
    out = {}
    for row in m.choices(s0):
        lo, hi = m.transitions.indptr[row], m.transitions.indptr[row + 1]
        value = sum(m.transitions.data[k] * rm.transition[k] for k in range(lo, hi))
        value += rm.choice[row] if rm.choice is not None else 0.0
        value += rm.state[s0] if rm.state is not None else 0.0
        out[m.action(row)] = value
    return out


def test_issue_example_gives_3_5(issue_model, tmp_path, capsys):
    m = issue_model
    rm = m.reward_model()
    s0, s1 = m.state_index({"s": 0}), m.state_index({"s": 1})
    a = m.choice_of(s0, "a")
    k = m.transitions.indptr[a] + list(m.transitions[a].indices).index(s1)
    expected = np.zeros(m.n_transitions)
    expected[k] = 5.0
    np.testing.assert_array_equal(rm.transition, expected)          # exactly the one transition s=0 -a-> s=1
    by_action = _path_enumeration(m, "r")
    assert by_action == pytest.approx({"a": 3.5, "b": 1.0, })
    check = stormcf.check_model(m, 'Rmax=? [F "end"]')
    assert check.value == pytest.approx(max(by_action.values()), rel=1e-9) == pytest.approx(3.5)
    assert stormcf.check_model(m, 'Rmax=? [F "end"]', exact=True).exact == Fraction(7, 2)
    assert stormcf.check_model(m, 'Rmin=? [F "end"]', exact=True).exact == Fraction(1)
    assert stormcf.check_model(m, 'Rmax=? [C<=1]').value == pytest.approx(3.5)
    assert main(["check", str(tmp_path / "tr.nm"), "--prop", 'Rmax=? [F "end"]']) == 0
    assert 'Rmax=? [F "end"] = 3.5' in capsys.readouterr().out


def test_strategies_earn_transition_rewards(issue_model):
    m = issue_model
    s0 = m.state_index({"s": 0})
    p = np.ones(m.n_choices)
    p[m.choice_of(s0, "a")] = p[m.choice_of(s0, "b")] = 0.5
    sigma = stormcf.Strategy(m, p)
    assert stormcf.check_strategy(sigma, 'R=? [F "end"]').value == pytest.approx(0.5 * 3.5 + 0.5 * 1)
    assert stormcf.check_strategy(sigma, 'R=? [F "end"]', exact=True).exact == Fraction(9, 4)


def test_unlabelled_commands_formulas_constants_and_state_rewards(tmp_path):
    f = tmp_path / "mixed.nm"
    f.write_text(MIXED_MODEL)
    m = stormcf.load_model(f)
    rm = m.rewards["r"]
    assert rm.state is not None and rm.choice is not None and rm.has_transition_rewards
    P = m.transitions
    rows = np.repeat(np.arange(m.n_choices), np.diff(P.indptr))
    src = m.state_of_choice[rows]
    s_src, s_tgt = m.valuations["s"][src], m.valuations["s"][P.indices]
    b_tgt = m.valuations["b"][P.indices]
    action = np.array([m.action(r) for r in rows])
    # [a] s<1 -> s=1 : 5   and   [] true -> b : (s=1 ? 2 : 3) * 5 (unlabelled commands, named m_cmd_2 / m_cmd_3)
    expected = np.where((action == "a") & (s_src < 1) & (s_tgt == 1), 5.0, 0.0)
    expected += np.where(np.char.startswith(action.astype(str), "m_cmd_") & b_tgt, np.where(s_src == 1, 10.0, 15.0), 0)
    np.testing.assert_array_equal(rm.transition, expected)
    # Storm's value on the lifted model equals the expectation computed from the explicit rewards by value iteration
    r = m.expected_choice_rewards("r") + rm.state[m.state_of_choice]
    end = m.label("end")
    v = np.zeros(m.n_states)
    for _ in range(2000):
        q = r + P @ v
        v = np.where(end, 0.0, np.maximum.reduceat(q, m.row_groups[:-1]))
    assert stormcf.check_model(m, 'R{"r"}max=? [F "end"]').value == pytest.approx(v[m.initial_state], rel=1e-9)


def test_info_shows_transition_rewards(issue_model, tmp_path, capsys):
    assert issue_model.summary()["reward_models"] == {"r": ["choice", "transition"]}
    assert main(["info", str(tmp_path / "tr.nm")]) == 0
    assert 'reward models: "r" (choice, transition rewards)' in capsys.readouterr().out


@pytest.mark.parametrize("text", ['Pmax=? [F{"r"}<=2 "end"]', 'Rmax=? [C{"r"}<=2]',
                                  'multi(Pmax=? [F{"r"}<=2 "end"], Rmax=? [F "end"])'])
def test_reward_bounds_over_transition_rewards_are_refused(issue_model, tmp_path, capsys, text):
    with pytest.raises(stormcf.PropertyError, match='reward model "r" has transition rewards'):
        if text.startswith("multi"):
            stormcf.storm.check_multiobjective(issue_model, text)
        else:
            stormcf.check_model(issue_model, text)
    assert main(["check", str(tmp_path / "tr.nm"), "--prop", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "transition rewards" in err
