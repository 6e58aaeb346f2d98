"""The explicit model: immutability, state lookup, naming, labels."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf


def test_loan_structure(loan):
    assert (loan.n_states, loan.n_choices, loan.n_transitions) == (9, 13, 17)
    assert loan.decision_states.sum() == 4
    rework = loan.state_index({"s": 5})
    assert sorted(loan.enabled_actions(rework)) == ["Quit", "Submit"]
    assert loan.action(loan.choice_of(rework, "Quit")) == "Quit"
    np.testing.assert_array_equal(loan.state_of_choice[loan.row_groups[:-1]], np.arange(loan.n_states))


def test_arrays_are_read_only(loan):
    with pytest.raises(ValueError):
        loan.transitions.data[0] = 0.5
    with pytest.raises(ValueError):
        loan.labels["granted"][0] = True
    with pytest.raises(TypeError):
        loan.labels["x"] = np.zeros(9, bool)


def test_state_lookup_errors(loan):
    with pytest.raises(stormcf.StateError, match="unknown variable 'q'"):
        loan.state_index({"q": 1})
    with pytest.raises(stormcf.StateError, match="no reachable state s=42"):
        loan.state_index({"s": 42})
    with pytest.raises(stormcf.StateError, match="is an integer"):
        loan.state_index({"s": "3"})
    with pytest.raises(stormcf.StateError, match="not enabled"):
        loan.choice_of(0, "Quit")


def test_partial_valuation_lookup(tmp_path):
    f = tmp_path / "g.prism"
    f.write_text("mdp\nmodule m\n x : [0..2] init 0;\n b : bool init false;\n"
                 " [go] x<2 -> (x'=x+1);\n [t] true -> (b'=!b);\nendmodule\n")
    m = stormcf.load_model(f)
    s = m.state_index({"x": 1, "b": True})
    assert m.valuation(s) == {"x": 1, "b": True} or m.valuation(s) == {"b": True, "x": 1}
    assert m.valuation_text(s) in ("x=1 & b", "b & x=1")
    with pytest.raises(stormcf.StateError, match="matches 2 states"):
        m.state_index({"x": 1})
    with pytest.raises(stormcf.StateError, match="is Boolean"):
        m.state_index({"x": 1, "b": 1})


def test_state_naming(loan):
    rework = loan.state_index({"s": 5})
    assert loan.state_name(rework) == "s=5"
    assert loan.with_naming("labels").state_name(rework) == "Rework"
    assert loan.with_naming("index").state_name(rework) == f"state {rework}"
    assert loan.with_naming("q{s}").state_name(rework) == "q5"
    with pytest.raises(stormcf.ModelError, match="does not fit"):
        loan.with_naming("{nope}").state_name(rework)
    with pytest.raises(stormcf.ModelError, match="unknown state naming"):
        loan.with_naming("fancy")


def test_labels_and_rewards(loan):
    assert loan.label("rejected").sum() == 1
    assert loan.label("init")[loan.initial_state]
    with pytest.raises(stormcf.PropertyError, match='unknown label "nope"'):
        loan.label("nope")
    assert loan.reward_model().name == "steps"
    with pytest.raises(stormcf.PropertyError, match='unknown reward model "cost"'):
        loan.reward_model("cost")


def test_bad_arrays_are_rejected():
    P = np.array([[0.5, 0.5], [0.0, 1.0]])
    ok = stormcf.ExplicitModel(P, [0, 1, 2], [0, 0], [""], {}, {}, {}, 0)
    assert ok.n_states == 2
    with pytest.raises(stormcf.ModelError, match="row groups"):
        stormcf.ExplicitModel(P, [0, 2, 2], [0, 0], [""], {}, {}, {}, 0)
    with pytest.raises(stormcf.ModelError, match="sum to 0.9"):
        stormcf.ExplicitModel(np.array([[0.5, 0.4], [0.0, 1.0]]), [0, 1, 2], [0, 0], [""], {}, {}, {}, 0)


def _grid(P, actions=("go", "stay", "a"), **kw):
    """Two states; state 0 has the choices go, stay (rows 0, 1), state 1 one choice a (row 2)."""
    return stormcf.ExplicitModel(np.array(P, dtype=float), [0, 2, 3], [0, 1, 2], list(actions), {},
                                 {"x": np.array([0, 1])}, {}, 0, **kw)


@pytest.mark.parametrize("P,needle", [
    ([[np.nan, 1.0], [0.0, 1.0], [0.0, 1.0]], "action 'go' in state x=0 has probability nan to go to state 0"),
    ([[-0.5, 1.5], [0.0, 1.0], [0.0, 1.0]], "action 'go' in state x=0 has probability -0.5 to go to state 0"),
    ([[0.0, 1.0], [0.0, 1.0], [0.0, 1.25]], "action 'a' in state x=1 has probability 1.25 to go to state 1"),
    ([[0.0, 1.0], [0.3, 0.3], [0.0, 1.0]], "the probabilities of action 'stay' in state x=0 sum to 0.6, not 1"),
    ([[0.0, 1.0], [0.0, 1.0], [np.inf, 0.0]], "action 'a' in state x=1 has probability inf"),
])
def test_arrays_with_bad_probabilities_name_the_state_and_action(P, needle):
    with pytest.raises(stormcf.ModelError) as err:
        _grid(P)
    assert needle in str(err.value)


@pytest.mark.parametrize("change,needle", [
    (dict(row_groups=[0, 2]), "row groups do not match"),
    (dict(row_groups=[0, 3, 3]), "row groups do not match"),
    (dict(choice_actions=[0, 1]), "need one action per choice (3)"),
    (dict(choice_actions=[0, 1, 5]), "must index the 3 action names"),
    (dict(labels={"goal": np.array([True])}), "label 'goal' has 1 entries, expected 2"),
    (dict(valuations={"x": np.array([0, 1, 2])}), "variable 'x' has 3 values, expected 2"),
    (dict(rewards={"r": stormcf.RewardModel("r", choice=[1.0, 2.0])}), 'reward model "r" has 2 choice rewards'),
    (dict(rewards={"r": stormcf.RewardModel("r", transition=[1.0])}), 'reward model "r" has 1 transition rewards'),
    (dict(initial_state=2), "initial state 2 out of range"),
])
def test_arrays_with_inconsistent_shapes_are_rejected(change, needle):
    fields = dict(transitions=np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]), row_groups=[0, 2, 3],
                  choice_actions=[0, 1, 2], action_names=["go", "stay", "a"], labels={},
                  valuations={"x": np.array([0, 1])}, rewards={}, initial_state=0)
    fields.update(change)
    with pytest.raises(stormcf.ModelError) as err:
        stormcf.ExplicitModel(**fields)
    assert needle in str(err.value)


def test_same_named_choices_get_distinct_stable_names():
    """QVBS eajs (N=2): PRISM synchronisation gives every decision state four 'tick' choices."""
    from pathlib import Path
    eajs = stormcf.load_model(Path(__file__).parent / "data" / "qvbs" / "eajs.2.prism", constants="energy_capacity=100")
    assert eajs.shared_action_states.sum() == eajs.decision_states.sum() == 1817
    s = int(np.flatnonzero(eajs.decision_states)[0])
    assert eajs.enabled_actions(s) == ["tick#0", "tick#1", "tick#2", "tick#3"]
    rows = list(eajs.choices(s))
    assert [eajs.choice_of(s, f"tick#{k}") for k in range(4)] == rows          # Storm's order within the state
    assert {eajs.action(r) for r in rows} == {"tick"}
    with pytest.raises(stormcf.StateError, match="has 4 choices of action 'tick': name them 'tick#0', 'tick#1'"):
        eajs.choice_of(s, "tick")
    single = int(np.flatnonzero(~eajs.decision_states)[0])
    assert "#" not in eajs.enabled_actions(single)[0]                          # a unique name stays as it is
    again = stormcf.load_model(Path(__file__).parent / "data" / "qvbs" / "eajs.2.prism", constants="energy_capacity=100")
    assert again.choice_names == eajs.choice_names                              # stable across builds
    assert eajs.summary()["shared_action_states"] == 1817


def _brute_force_names(counts, actions, action_names):
    """Choice names by their definition: the action name, ``a#k`` for the k-th of several ``a`` choices of a state."""
    names, row = [], 0
    for c in counts:
        mine = actions[row:row + c]
        for k, a in enumerate(mine):
            shared = mine.count(a) > 1
            names.append(action_names[a] + (f"#{mine[:k].count(a)}" if shared else ""))
        row += c
    return names


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=6).flatmap(
    lambda counts: st.tuples(st.just(counts), st.lists(st.integers(0, 2), min_size=sum(counts), max_size=sum(counts)),
                             st.lists(st.tuples(st.integers(0, len(counts) - 1),
                                                st.sampled_from(["a", "b", "", "a#0", "a#1", "b#2", "a#01", "z"])),
                                      max_size=12))))
def test_choices_are_named_from_their_state_alone(case):
    """Naming one choice, a state's choices or a few (state, name) pairs looks at those states only, and agrees with
    the definition and with naming every choice at once."""
    counts, actions, queries = case
    n, action_names = len(counts), ["a", "b", ""]
    P = sp.csr_matrix(np.eye(n)[np.repeat(np.arange(n), counts)])
    build = lambda: stormcf.ExplicitModel(P, np.r_[0, np.cumsum(counts)], actions, action_names, {}, {}, {}, 0)  # noqa
    expected = _brute_force_names(counts, actions, action_names)
    one = build()
    assert [one.choice_name(r) for r in range(len(actions))] == expected and "choice_names" not in one.__dict__
    assert build().choice_names == tuple(expected)
    assert [x for s in range(n) for x in one.enabled_actions(s)] == expected
    starts = np.r_[0, np.cumsum(counts)]
    truth = [next((r for r in range(starts[s], starts[s + 1]) if expected[r] == name), -1) for s, name in queries]
    got = one.choices_named(np.array([s for s, _ in queries], dtype=np.int64), [name for _, name in queries])
    assert got.tolist() == truth
    assert one.shared_action_states.tolist() == [any("#" in x for x in expected[starts[s]:starts[s + 1]])
                                                 for s in range(n)]


def test_choice_names_of_unique_actions_are_the_action_names(loan):
    assert loan.choice_names == tuple(loan.action(r) for r in range(loan.n_choices))
    assert loan.shared_action_states.sum() == 0


def test_step_rewards(loan):
    r = loan.step_rewards("steps")
    np.testing.assert_array_equal(r, (loan.valuations["s"] < 7)[loan.state_of_choice].astype(float))
    P = np.array([[0.5, 0.5], [0.0, 1.0]])
    m = stormcf.ExplicitModel(P, [0, 1, 2], [0, 0], [""], {}, {}, {"tr": stormcf.RewardModel("tr", transition=[1, 2, 0])},
                              0)
    with pytest.raises(stormcf.PropertyError, match="transition rewards"):
        m.step_rewards("tr")
    np.testing.assert_allclose(m.expected_choice_rewards("tr"), [1.5, 0.0])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(-9, 9), min_size=n, max_size=n), min_size=1, max_size=24),
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.integers(0, n + 1), min_size=0, max_size=12))))
def test_find_states_is_the_first_state_of_each_valuation(case):
    """The vectorised look-up against brute force: duplicate valuations (the first state wins), values no state has,
    and keys that need re-numbering before they overflow (many variables with many wanted values)."""
    ints, bools, queries = case
    n = len(bools)
    columns = {f"v{i}": np.array(c, dtype=np.int64) for i, c in enumerate(ints)}
    columns["b"] = np.array(bools)
    model = stormcf.ExplicitModel(sp.identity(n, format="csr"), np.arange(n + 1), np.zeros(n, dtype=int), ("",), {},
                                  columns, {}, 0, "dtmc")
    wanted = {v: [c[q] if q < n else c[0] + 1 for q in queries] for v, c in columns.items() if v != "b"}
    wanted["b"] = [bool(columns["b"][min(q, n - 1)]) for q in queries]
    expected = []
    for k in range(len(queries)):
        hits = [s for s in range(n) if all(columns[v][s] == wanted[v][k] for v in columns)]
        expected.append(hits[0] if hits else -1)
    np.testing.assert_array_equal(model.find_states(wanted), expected)
