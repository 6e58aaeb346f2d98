"""Bounds read exactly and decided three-valued, the same in ``check``, ``strategy``, batches and the JSON (issue 37):
a bound written as an expression (``1/5``) is the fraction Storm reads, and a value exactly at the bound is never
called a violation."""
import json
from pathlib import Path

import jsonschema
import pytest

import stormcf
import stormcf.report
import stormcf.verify

LOAN, IMPATIENT = str(stormcf.example_path("loan.prism")), str(stormcf.example_path("loan.impatient.json"))
SCHEMA = stormcf.report.schema_path()
#: the deterministic loan strategy with P(F "rejected") = 1/50 exactly (Storm's float value: 0.020000000000000004)
ONE_IN_FIFTY = {"states": [{"state": {"s": 0}, "actions": {"Consult": 1}},
                           {"state": {"s": 3}, "actions": {"Consult": 1}},
                           {"state": {"s": 4}, "actions": {"Apply": 1}},
                           {"state": {"s": 5}, "actions": {"Submit": 1}}], "default": "error"}
#: bounds written as expressions and the same bounds as decimals
EXPRESSIONS = [('P<=1/5 [F "rejected"]', 'P<=0.2 [F "rejected"]'),
               ('R{"steps"}<=9/4 [F "granted" | "rejected"]', 'R{"steps"}<=2.25 [F "granted" | "rejected"]'),
               ('P>=(1+2)/5 [F "granted"]', 'P>=0.6 [F "granted"]')]


@pytest.fixture
def fifty(tmp_path):
    path = tmp_path / "fifty.json"
    path.write_text(json.dumps(ONE_IN_FIFTY))
    return str(path)


def document(cli, *argv):
    code, out, err = cli(*argv, "--json", "-")
    return code, json.loads(out), err


@pytest.mark.parametrize("written, decimal", EXPRESSIONS)
def test_check_reads_an_expression_as_its_decimal(cli, written, decimal):
    _, a, _ = document(cli, "check", LOAN, "-s", IMPATIENT, "-p", written)
    _, b, _ = document(cli, "check", LOAN, "-s", IMPATIENT, "-p", decimal)
    ra, rb = a["results"][0], b["results"][0]
    assert (ra["value"], ra["holds"], a["status"]) == (rb["value"], rb["holds"], b["status"])


@pytest.mark.parametrize("written, decimal", EXPRESSIONS)
def test_strategy_reads_an_expression_as_its_decimal(cli, written, decimal):
    """The same counterfactual (d∞ alone, fast) for the bound as written and as a decimal."""
    _, a, _ = document(cli, "strategy", LOAN, "-s", IMPATIENT, "-p", written, "-w", "0,0,1")
    _, b, _ = document(cli, "strategy", LOAN, "-s", IMPATIENT, "-p", decimal, "-w", "0,0,1")
    assert a["status"] == b["status"] == "optimal"
    assert a["bounds"][0]["bound"] == b["bounds"][0]["bound"] and a["distance"] == b["distance"]


def test_check_at_the_bound_holds_exactly_and_below_it_is_violated(cli, fifty):
    code, out, _ = cli("check", LOAN, "-s", fifty, "-p", 'P<=0.02 [F "rejected"]', "--fail-if-violated")
    assert code == 0 and '= 1/50 (= 0.02)  [holds]' in out and "re-check" in out
    code, out, _ = cli("check", LOAN, "-s", fifty, "-p", 'P<=0.02 [F "rejected"]', "--exact", "--fail-if-violated")
    assert code == 0 and '[holds]' in out
    code, out, _ = cli("check", LOAN, "-s", fifty, "-p", 'P<0.02 [F "rejected"]', "--fail-if-violated")
    assert code == 3 and '= 1/50 (= 0.02)  [does not hold]' in out


def test_an_undecided_bound_in_text_json_and_exit_code(cli, fifty, monkeypatch):
    """Without the exact re-check, Storm's float value cannot decide P<=0.02: never "does not hold"; holds: null with
    a reason in the JSON (valid under the schema), status undecided, --fail-if-violated exits with 6 (3 wins)."""
    monkeypatch.setattr(stormcf.verify, "EXACT_RECHECK_STATES", 0)
    code, out, _ = cli("check", LOAN, "-s", fifty, "-p", 'P<=0.02 [F "rejected"]', "--fail-if-violated")
    assert code == 6 and "[undecided at relative precision 1e-10" in out and "does not hold" not in out
    code, data, _ = document(cli, "check", LOAN, "-s", fifty, "-p", 'P<=0.02 [F "rejected"]', "-p",
                             'P<=1/5 [F "rejected"]')
    assert code == 0 and data["status"] == "undecided"
    first, second = data["results"]
    assert first["holds"] is None and "the bound 1/50 lies within" in first["undecided"] and second["holds"] is True
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert not list(validator.iter_errors(data))
    code, _, _ = cli("check", LOAN, "-s", fifty, "-p", 'P<=0.02 [F "rejected"]', "-p", 'P<=0.01 [F "rejected"]',
                     "--fail-if-violated")
    assert code == 3


def test_filters_over_truth_values_decide_a_bound_at_the_value_exactly(cli, fifty, monkeypatch):
    """filter(forall, P<=0.02 [...], s=0) was Storm's floating-point comparison ("does not hold"); it is re-checked
    exactly on a small model, and undecided (holds: null) without that."""
    forall = 'filter(forall, P<=0.02 [F "rejected"], s=0)'
    code, out, _ = cli("check", LOAN, "-s", fifty, "-p", forall, "-p", 'filter(count, P<0.02 [F "rejected"], s<=1)')
    assert f"{forall} = 1  [holds]" in out and "s<=1) = 0\n" in out
    values = 'filter(values, P<=0.02 [F "rejected"], s<=1)'
    code, out, _ = cli("check", LOAN, "-s", fifty, "-p", values)
    assert "s<=1) = {s=0: true, s=1: false}" in out
    monkeypatch.setattr(stormcf.verify, "EXACT_RECHECK_STATES", 0)
    code, data, _ = document(cli, "check", LOAN, "-s", fifty, "-p", forall, "-p", values)
    assert data["status"] == "undecided" and data["results"][0]["holds"] is None
    assert "in 1 of the filter's states" in data["results"][0]["undecided"]
    assert data["results"][1]["values"] == [None, False] and data["results"][1]["undecided"]


def test_a_batch_decides_as_the_single_run(cli, fifty, tmp_path):
    lines = tmp_path / "s.jsonl"
    lines.write_text(json.dumps(ONE_IN_FIFTY) + "\n" + Path(IMPATIENT).read_text().replace("\n", "") + "\n")
    code, out, _ = cli("check", LOAN, "--strategies", lines, "-p", 'P<=0.02 [F "rejected"]', "-p",
                       'P<=1/5 [F "rejected"]', "--fail-if-violated")
    assert code == 3 and "0.02 (holds)" in out and "0.411 (violated)" in out


def test_strategy_at_the_optimum_is_feasible_and_below_it_infeasible(cli):
    """Pmin over the actionable strategies is exactly 1/50: P<=0.02 is met (also with --exact), P<0.02 is infeasible
    by the exact optimum, not by comparing floats (d∞ alone: fast; the default weights are in the fuzz table)."""
    for extra in ([], ["--exact"]):
        code, data, _ = document(cli, "strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.02 [F "rejected"]', "-w",
                                 "0,0,1", *extra)
        assert code == 0 and data["status"] == "optimal", data["notes"]
        assert data["bounds"][0]["holds"] is True and data["bounds"][0]["verification"]["exact"] == "1/50"
    code, out, _ = cli("strategy", LOAN, "-s", IMPATIENT, "-p", 'P<0.02 [F "rejected"]', "-w", "0,0,1")
    assert code == 0 and "status: infeasible" in out and "achieves is exactly 1/50 (Storm, exact arithmetic)" in out


@pytest.mark.parametrize("command", ["check", "strategy"])
def test_a_probability_bound_outside_0_1_is_refused_everywhere(cli, command):
    code, out, err = cli(command, LOAN, "-s", IMPATIENT, "-p", 'P<=1.5 [F "rejected"]')
    assert code == 2 and not out and "the probability bound 3/2 is outside [0, 1]" in err


def test_two_properties_with_one_name_are_refused(cli, tmp_path):
    props = tmp_path / "p.props"
    props.write_text('"a": P=? [F "granted"];\n')
    code, out, err = cli("check", LOAN, "-s", IMPATIENT, "-p", '"a": P=? [F "rejected"]', "--props", props)
    assert code == 2 and not out and err.count("\n") == 1 and 'the property name "a" is given twice' in err
