"""Extraction (stormcf.storm.extract): Storm's bulk UMB export against the entry-by-entry loop through stormpy."""
import numpy as np
import pytest

import stormcf
from stormcf import storm
from stormcf.storm import stormpy_example

SHIPPED = [
    (stormpy_example("mdp", "die_selection.nm"), None),
    (stormpy_example("mdp", "coin2.nm"), "K=2"),
    (stormpy_example("mdp", "firewire.nm"), "delay=3,fast=0.5"),
    (stormpy_example("mdp", "maze_2.nm"), None),
    (stormpy_example("mdp", "slipgrid.nm"), None),
    (stormpy_example("mdp", "two_dice.nm"), None),
    (stormpy_example("dtmc", "die.jani"), None),
    (stormcf.example_path("loan.prism"), None),
]


def _same_model(a: stormcf.ExplicitModel, b: stormcf.ExplicitModel) -> None:
    assert a.n_states == b.n_states and a.n_choices == b.n_choices
    np.testing.assert_array_equal(a.row_groups, b.row_groups)
    np.testing.assert_array_equal(a.transitions.indptr, b.transitions.indptr)
    np.testing.assert_array_equal(a.transitions.indices, b.transitions.indices)
    np.testing.assert_array_equal(a.transitions.data, b.transitions.data)       # bit-identical doubles
    assert [a.action(r) for r in range(a.n_choices)] == [b.action(r) for r in range(b.n_choices)]
    assert a.labels.keys() == b.labels.keys()
    for k in a.labels:
        np.testing.assert_array_equal(a.labels[k], b.labels[k])
    assert a.rewards.keys() == b.rewards.keys()
    for k in a.rewards:
        for part in ("state", "choice", "transition"):
            x, y = getattr(a.rewards[k], part), getattr(b.rewards[k], part)
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_array_equal(x, y)
    assert a.initial_state == b.initial_state


@pytest.mark.parametrize("path,constants", SHIPPED, ids=lambda x: str(x).split("/")[-1] if x else "")
def test_umb_extraction_equals_entry_loop(path, constants):
    fast = stormcf.load_model(path, constants=constants)
    slow = stormcf.load_model(path, constants=constants, extraction="iteration")
    _same_model(fast, slow)
    assert fast.n_transitions == storm.storm_model_of(fast).nr_transitions
    rows = fast.transitions.sum(axis=1).A1
    np.testing.assert_allclose(rows, 1.0, atol=1e-12)


def test_umb_extraction_with_booleans_rewards_and_an_expression_property(tmp_path):
    prism = tmp_path / "m.prism"
    prism.write_text("""mdp
module m
  x : [0..3] init 0;
  b : bool init false;
  [go]   x<3 -> 0.3 : (x'=x+1) + 0.7 : (x'=x);
  [flip] true -> 0.5 : (b'=!b) + 0.5 : true;
endmodule
rewards "t"
  [go] x=1 : 2;
  x>0 : 1;
endrewards
""")
    fast = stormcf.load_model(prism)
    slow = stormcf.load_model(prism, extraction="iteration")
    _same_model(fast, slow)
    assert set(fast.labels) == {"deadlock"} and fast.valuations["b"].dtype == bool
    p = stormcf.parse_property(fast, 'Pmax=? [F x/2>=1 & !b]')
    np.testing.assert_array_equal(p.target, (fast.valuations["x"] >= 2) & ~fast.valuations["b"])
    assert list(p.labels) == ["(((x / 2) >= 1) & !(b))"]
    assert set(fast.labels) == {"deadlock"}                      # the model itself does not change
    assert fast.rewards["t"].state is not None and fast.rewards["t"].choice is not None
