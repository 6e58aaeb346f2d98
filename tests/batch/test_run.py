"""stormcf.batch: reading items, input order, per-item errors, one model build per batch, results equal to the
single runs of the same inputs."""
import json

import pytest

import stormcf
from stormcf.analysis import Analysis
from stormcf.batch import Item, ModelFile, read_jsonl, run_batch, shared
from stormcf.counterfactual.task import strategy_items
from stormcf.errors import ModelError, PathError
from stormcf.explain import ExplanationProblem, explain_path
from stormcf.explain.task import PathExplanation
from stormcf.icfmdp import ICFMDPProblem, solve_icfmdp
from stormcf.icfmdp.task import IntervalCounterfactualMDP
from stormcf.modelcheck import check_properties
from stormcf.modelcheck.task import PropertyCheck
from stormcf.report import to_json_data, without_times

from .conftest import LOAN, SEPSIS


def test_read_jsonl_keeps_line_numbers_and_bad_lines(sepsis_paths):
    items = read_jsonl(str(sepsis_paths), PathError)
    assert [item.index for item in items] == list(range(8))
    assert items[6].where == f"{sepsis_paths}:7" and items[6].data == {"steps": []} and items[6].error is None
    assert items[7].where == f"{sepsis_paths}:9" and items[7].data is None          # the blank line 8 is skipped
    assert items[7].error.startswith(f"{sepsis_paths}:9: not valid JSON")
    assert items[0].id == "p0" and items[7].id is None


def test_read_jsonl_refuses_missing_and_empty_files(tmp_path):
    with pytest.raises(PathError, match="missing.jsonl: file not found"):
        read_jsonl(str(tmp_path / "missing.jsonl"), PathError)
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(PathError, match="empty.jsonl: no items"):
        read_jsonl(str(tmp_path / "empty.jsonl"), PathError)


def test_icfmdp_batch_equals_single_runs_and_bad_items_do_not_stop_it(sepsis, sepsis_paths):
    items = read_jsonl(str(sepsis_paths), PathError)
    outcomes = list(run_batch(ModelFile(SEPSIS), IntervalCounterfactualMDP(reward="r"), items, workers=1))
    assert [o.index for o in outcomes] == list(range(8))
    assert [o.status for o in outcomes] == ["ok"] * 6 + ["error"] * 2
    for item, outcome in zip(items[:6], outcomes):
        path = stormcf.ObservedPath.from_dict(sepsis, item.content, item.where)
        single = to_json_data(solve_icfmdp(ICFMDPProblem(path, "r")).to_dict())
        document = dict(outcome.document)
        assert document.pop("batch") == {"index": item.index, "input": item.where, "id": item.id}
        assert without_times(document) == without_times(single)
        assert document["worst_case_value"] == document["checks"][0]["value"]        # Storm's number
    bad, not_json = outcomes[6].document, outcomes[7].document
    assert bad["error"]["type"] == "PathError" and bad["error"]["internal"] is False
    assert bad["error"]["message"].startswith(f"{sepsis_paths}:7: expected an object")
    assert not_json["error"]["type"] == "InputError" and "not valid JSON" in not_json["error"]["message"]
    assert bad["model"]["source"] == "sepsis.prism" and bad["checks"] == [] and bad["command"] == "icfmdp"


def test_explain_batch_equals_single_runs(sepsis, sepsis_paths):
    items = read_jsonl(str(sepsis_paths), PathError)[:3]
    task = PathExplanation(explanations=100, reward_model="r", k=2)
    for item, outcome in zip(items, run_batch(ModelFile(SEPSIS), task, items)):
        path = stormcf.ObservedPath.from_dict(sepsis, item.content, item.where)
        single = to_json_data(explain_path(ExplanationProblem(path, "r", k=2), explanations=100).to_dict())
        assert without_times({k: v for k, v in outcome.document.items() if k != "batch"}) == without_times(single)


def test_check_batch_under_every_strategy(loan_strategies):
    loan = stormcf.load_model(LOAN)
    items = read_jsonl(str(loan_strategies))
    props = ['P=? [F "rejected"]', 'P<=0.42 [F "rejected"]']
    outcomes = list(run_batch(ModelFile(LOAN), PropertyCheck(properties=props), items))
    assert [o.status for o in outcomes] == ["violated", "holds", "error"]
    impatient = stormcf.Strategy.from_dict(loan, items[1].content)
    single = to_json_data(check_properties(loan, props, impatient, strategy_source=items[1].where).to_dict())
    assert without_times({k: v for k, v in outcomes[1].document.items() if k != "batch"}) == without_times(single)
    assert outcomes[1].document["results"][0]["value"] == pytest.approx(0.411, abs=1e-9)       # seed 000, Fig. 1
    assert "no reachable state s=99" in outcomes[2].document["error"]["message"]


def test_strategy_items_pair_every_strategy_with_every_property():
    strategies = [Item(0, "a:1", {"states": [], "id": "x"}), Item(1, "a:2", error="a:2: not valid JSON")]
    items = strategy_items(strategies, ["P1", "P2"])
    assert [(i.index, i.where, i.data["property"], i.error) for i in items] == [
        (0, "a:1", "P1", None), (1, "a:1", "P2", None), (2, "a:2", "P1", "a:2: not valid JSON"),
        (3, "a:2", "P2", "a:2: not valid JSON")]
    assert items[0].id == "x"


def test_a_bad_model_fails_the_whole_batch(tmp_path):
    items = [Item(0, "x", {"steps": []})]
    with pytest.raises(ModelError, match="nothing.prism: file not found"):
        list(run_batch(ModelFile(str(tmp_path / "nothing.prism")), IntervalCounterfactualMDP(), items))


def test_the_shared_model_is_built_once_per_process():
    source = ModelFile(LOAN)
    first = shared(source)
    assert shared(source) is first and shared(ModelFile(LOAN)) is first
    assert shared(ModelFile(LOAN, naming="index")) is not first


class Broken(Analysis):
    """An analysis with a bug (defined here, it is not registered: no command)."""

    def problem(self, model, data, where):
        return data

    def solve(self, problem, deadline):
        raise ZeroDivisionError("boom")


def test_internal_errors_are_reported_per_item():
    outcome, = run_batch(ModelFile(LOAN), Broken(), [Item(0, "here", {})])
    assert outcome.failed and outcome.document["error"] == {"type": "ZeroDivisionError", "internal": True,
                                                             "message": "internal error: ZeroDivisionError: boom"}
    assert json.loads(json.dumps(outcome.document)) == outcome.document        # plain JSON data


def test_chunks_stream_serial_items_and_balance_parallel_ones():
    from stormcf.batch.run import chunks
    items = [Item(k, f"x:{k}", k) for k in range(10)]
    assert chunks(items, 1, together=False) == [[item] for item in items]          # serial: item by item
    assert chunks(items, 1, together=True) == [items]                             # one certificate for all
    for workers, solve_many, count in ((2, False, 8), (2, True, 4), (4, False, 10), (3, True, 6)):
        parts = chunks(items, workers, solve_many)
        assert len(parts) == count and [item for part in parts for item in part] == items
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert chunks([], 2, together=True) == []


class BrokenTogether(Analysis):
    """An analysis whose ``solve_many`` has a bug, while one item at a time works (not registered)."""

    batched = True

    def problem(self, model, data, where):
        if data == "bad":
            raise stormcf.StateError(f"{where}: bad item")
        return model

    def solve(self, model, deadline):
        return check_properties(model, ['Pmin=? [F "rejected"]'])

    def solve_many(self, problems, deadline):
        raise ZeroDivisionError("boom")


def test_a_chunk_that_fails_as_a_whole_runs_item_by_item():
    """An internal error of solve_many (a bug) costs the chunk's certificate, not its items."""
    items = [Item(0, "a", "good"), Item(1, "b", "bad"), Item(2, "c", error="c: not JSON")]
    outcomes = list(run_batch(ModelFile(LOAN), BrokenTogether(), items))
    assert [o.status for o in outcomes] == ["ok", "error", "error"]
    assert outcomes[1].document["error"] == {"type": "StateError", "message": "b: bad item", "internal": False}
