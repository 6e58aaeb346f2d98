"""Sanitising event names into PRISM identifiers, and Storm parsing every one of them."""
import pytest

from stormcf.learn import LearnProblem, identifiers, learn_mdp, read_log, sanitise
from stormcf.learn.names import RESERVED, is_identifier


@pytest.mark.parametrize("name, ident", [
    ("A_Create Application", "A_Create_Application"),
    ('said "no"', "said__no_"),
    ("2nd offer", "_2nd_offer"),
    ("Überprüfung", "Uberprufung"),
    ("café crème", "cafe_creme"),
    ("日本", "__"),
    ("", "_"),
    ("true", "true_"),
    ("module", "module_"),
    ("init", "init_"),
    ("deadlock", "deadlock_"),
    ("Rejected", "Rejected"),
    ("x-y", "x_y"),
])
def test_sanitise(name, ident):
    assert sanitise(name) == ident
    assert is_identifier(ident)


def test_every_keyword_becomes_an_identifier():
    for word in RESERVED:
        assert not is_identifier(word) and is_identifier(sanitise(word))


def test_collisions_are_disambiguated_in_order():
    ids = identifiers(["a b", "a-b", "a_b", "a.b"])
    assert ids == {"a b": "a_b", "a-b": "a_b_2", "a_b": "a_b_3", "a.b": "a_b_4"}
    assert len(set(ids.values())) == 4


def test_a_suffix_never_takes_another_names_identifier():
    ids = identifiers(["x y", "x-y", "x_y_2"])
    assert ids["x_y_2"] == "x_y_2" and ids["x-y"] == "x_y_3" and len(set(ids.values())) == 3


def test_taken_identifiers_are_avoided():
    assert identifiers(["start"], taken={"start"}) == {"start": "start_2"}


def test_storm_parses_the_sanitised_names(data):
    """A log whose names need every rule: Storm builds the learned model and checks properties on its labels."""
    log = read_log(data / "names.csv")
    result = learn_mdp(LearnProblem(log, labels={"bad": ["init", "deadlock"]}, rewards={"cost": {"true": 2}}))
    ids = result.problem.observation_ids
    assert ids == {"2nd offer": "_2nd_offer", "deadlock": "deadlock_", "init": "init_", 'said "no"': "said__no_",
                   "said 'no'": "said__no__2", "Überprüfung": "Uberprufung"}
    actions = result.problem.action_ids
    assert actions == {"A_Create Application": "A_Create_Application", "A_Create-Application": "A_Create_Application_2",
                       "module": "module_", "true": "true_"}
    m = result.model
    assert set(ids.values()) <= set(m.labels)
    assert set(actions.values()) <= set(m.action_names)
    # each case takes its own path: 1/3 of the cases reach "init", 1/3 "deadlock"
    assert [c.value for c in result.checks] == pytest.approx([2 / 3])
    assert stormcf_check(result, 'P=? [F "said__no__2"]') == pytest.approx(1 / 3)
    assert stormcf_check(result, 'R{"cost"}=? [C<=5]') == pytest.approx(2 * 2 / 3)


def stormcf_check(result, prop):
    from stormcf import check_strategy
    return check_strategy(result.strategy, prop).value
