"""Properties as Storm's command line answers them: filters (``filter(max, φ, states)``), bounds on MDPs without
``min``/``max`` (decided for every scheduler by one optimum), names of properties, and bounds printed as written."""
import json

import numpy as np
import pytest

import stormcf
from stormcf import storm
from stormcf.errors import PropertyError
from stormcf.modelcheck import check_properties, read_properties
from stormcf.verify import StateValues

INNER = 'Pmin=? [F "rejected"]'


def storm_values(model, text, exact=False):
    """Storm's value of ``text`` in every state of the model (no filter)."""
    prop = storm.parse_property(model, text)
    result = storm.check_exact(model, prop) if exact else storm.check(model, prop)
    return result.exact if exact else result.values


def states_of(model, formula):
    """Storm's truth value of a state formula in every state."""
    return storm.check(model, storm.parse_property(model, formula)).holds


@pytest.mark.parametrize("states", ["true", "s<3", '!"rejected"'])
@pytest.mark.parametrize("kind", ["max", "min", "sum", "avg"])
def test_numeric_filters_are_storms_aggregates_of_its_values(loan, kind, states):
    """filter(kind, φ, states) = the aggregate of Storm's values of φ over the states where ``states`` holds (Storm
    sums in state order, as Python's sum does), in floating point and exactly."""
    values, mask = storm_values(loan, INNER), states_of(loan, states)
    exact = [v for v, m in zip(storm_values(loan, INNER, exact=True), mask) if m]
    expected = {"max": max, "min": min, "sum": sum, "avg": lambda v: sum(v) / len(v)}[kind]
    check = check_properties(loan, [f"filter({kind}, {INNER}, {states})"]).results[0]
    assert check.value == expected(list(values[mask]))
    assert check.details["filter"] == kind and check.details["state_count"] == int(mask.sum())
    exact_check = check_properties(loan, [f"filter({kind}, {INNER}, {states})"], exact=True).results[0]
    assert exact_check.exact == expected(exact)


def test_the_maximum_over_all_states_is_not_the_initial_value(loan, cli):
    """The issue's example: Storm's answer is 1 (the state "rejected"); the initial state's 0.02 is another
    property."""
    code, out, _ = cli("check", stormcf.example_path("loan.prism"), "-p", f"filter(max, {INNER}, true)")
    assert code == 0 and f"filter(max, {INNER}, true) = 1\n" in out
    assert storm_values(loan, INNER)[loan.initial_state] == pytest.approx(0.02)


@pytest.mark.parametrize("bound", ["P>=0.5", "P>0.01", "P<0.1"])
def test_count_forall_exists_are_storms_over_the_truth_values(loan, bound):
    prop = f'{bound} [F "rejected"]'
    parsed = storm.parse_property(loan, prop)
    truth = np.array([parsed.satisfied_by(v) for v in storm.check(loan, parsed).values])   # no value near a bound
    mask = states_of(loan, "s<8")
    results = check_properties(loan, [f"filter({k}, {prop}, s<8)" for k in ("count", "forall", "exists")]).results
    assert results[0].value == int(truth[mask].sum())
    assert results[1].holds is bool(truth[mask].all()) and results[2].holds is bool(truth[mask].any())


def test_values_over_a_set_of_states(loan):
    values = storm_values(loan, INNER)
    mask = states_of(loan, "s>5")
    result = check_properties(loan, [f"filter(values, {INNER}, s>5)"]).results[0]
    assert isinstance(result, StateValues)
    assert result.states == tuple(loan.state_name(int(s)) for s in np.flatnonzero(mask))
    assert result.values == tuple(values[mask])
    truth = check_properties(loan, ['filter(values, P>0.1 [F "rejected"], s>5)'], exact=True).results[0]
    assert truth.truth and truth.values == tuple(float(v > 0.1) for v in values[mask])
    # the default filter is the value at the initial state
    assert check_properties(loan, [f'filter(values, {INNER}, "init")']).results[0].value == pytest.approx(0.02)


def test_filters_under_a_strategy_are_taken_on_its_dtmc(loan, impatient):
    dtmc_values = stormcf.check_strategy(impatient, 'P=? [F "rejected"]')
    result = check_properties(loan, ['filter(max, P=? [F "rejected"], s<5)'], impatient).results[0]
    assert result.value >= dtmc_values.value and result.subject == "DTMC induced by the strategy"


@pytest.mark.parametrize("prop, needle", [
    (f"filter(argmax, {INNER}, true)", "does not output states"),
    ('filter(max, P>0.1 [F "rejected"], true)', "has truth values"),
    (f"filter(count, {INNER}, true)", "not truth values"),
    (f"filter(min, {INNER}, false)", "no state satisfies false"),
    (f"filter(print, {INNER}, true)", "expecting <filter type>"),    # PRISM's print: not in Storm's syntax
])
def test_what_storm_does_not_answer_is_refused(loan, prop, needle):
    with pytest.raises(PropertyError, match=needle):
        check_properties(loan, [prop])


def test_analyses_refuse_filters_instead_of_answering_another_property(loan, impatient):
    with pytest.raises(PropertyError, match="only 'stormcf check' answers filters"):
        stormcf.CounterfactualProblem(impatient, 'filter(max, P<=0.2 [F "rejected"], true)')


# ================================================================================================ bounds on MDPs
@pytest.mark.parametrize("bound, optimum", [
    ('P>=1 [F "granted" | "rejected"]', 'Pmin=? [F "granted" | "rejected"]'),
    ('P<=0.2 [F "rejected"]', 'Pmax=? [F "rejected"]'), ('P>0.01 [F "rejected"]', 'Pmin=? [F "rejected"]'),
    ('R{"steps"}<=3 [F "granted" | "rejected"]', 'R{"steps"}max=? [F "granted" | "rejected"]')])
def test_bounds_on_mdps_hold_for_every_scheduler_as_storm_decides_them(loan, bound, optimum):
    """P>=b means Pmin>=b and P<=b means Pmax<=b (Storm's semantics); the value reported is that optimum's."""
    prop = storm.parse_property(loan, bound)
    for exact in (False, True):
        value = stormcf.check_model(loan, optimum, exact=exact)
        check = stormcf.check_model(loan, bound, exact=exact)
        assert check.details == {"optimum": optimum.split("=")[0][-3:]} and check.value == value.value
        assert check.holds is prop.satisfied_by(value.exact if exact else value.value)


def test_a_bound_on_an_mdp_says_which_optimum_decided_it(cli):
    code, out, _ = cli("check", stormcf.example_path("loan.prism"), "-p", 'P>=1 [F "granted" | "rejected"]',
                       "-p", 'P<=0.2 [F "rejected"]')
    assert code == 0
    assert 'P>=1 [F "granted" | "rejected"]: Pmin = 1  [holds for every scheduler]' in out
    assert 'P<=0.2 [F "rejected"]: Pmax = 1  [does not hold for every scheduler]' in out


# ============================================================================================ names, bounds as written
def test_props_files_keep_names_and_bounds_print_as_written(loan, tmp_path, cli):
    props = tmp_path / "loan.props"
    props.write_text('// Storm\'s format\n"low": Pmin<=0.2 [F "rejected"];\nPmax=? [F "granted"]\n')
    assert read_properties(props) == ['"low": Pmin<=0.2 [F "rejected"]', 'Pmax=? [F "granted"]']
    code, out, _ = cli("check", stormcf.example_path("loan.prism"), "--props", props, "--json", tmp_path / "o.json")
    assert code == 0 and '"low": Pmin<=0.2 [F "rejected"] = 0.02  [holds]' in out and "1/5" not in out
    low, unnamed = json.loads((tmp_path / "o.json").read_text())["results"]
    assert (low["name"], low["property"], low["details"]["written"]) == ("low", 'Pmin<=1/5 [F "rejected"]',
                                                                         'Pmin<=0.2 [F "rejected"]')
    assert unnamed["name"] == "" and unnamed["details"]["written"] == 'Pmax=? [F "granted"]'
