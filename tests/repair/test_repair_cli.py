"""``stormcf repair`` on the command line: the explanation and the JSON of an answer, a trivial valuation, a batch of
nominal valuations, a strategy on an MDP, the plots, and the Python API's stop request (the best answer Storm
confirmed, status interrupted)."""
import json
import threading
from pathlib import Path

import stormcf
from stormcf.repair import RepairProblem, load_parametric, solve_repair
from stormcf.run import Run
from stormcf.storm import stormpy_example

DIE = str(stormcf.example_path("die.pm"))
KNUTH_YAO = str(Path(__file__).resolve().parents[1] / "data" / "repair" / "knuth_yao.pm")
BOUNDS = ["-p", 'P<=0.25 [F "five"]', "-p", 'P>=0.1 [F "two"]']


def test_the_answer_says_what_to_change_and_storm_checks_it(cli, tmp_path):
    code, out, err = cli("repair", DIE, *BOUNDS, "--nominal", "p=0.3,q=0.6", "--json", tmp_path / "r.json")
    assert code == 0, err
    assert "p: 0.3 -> 0.4 (+0.1)" in out and "q: 0.6 -> 0.5 (-0.1)" in out
    assert 'P>=1/10 [F "two"] = 1/10' in out and "status: optimal" in out
    assert "most sensitive at the nominal valuation" in out and "solution function: " in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["status"] == "optimal" and doc["valuation_exact"] == {"p": "2/5", "q": "1/2"}
    assert doc["distance_exact"] == "1/10" and doc["gap"] <= doc["tolerance"]
    assert [c["name"] for c in doc["checks"]] == ["nominal", "nominal", "answer", "answer"]
    assert all(c["holds"] for c in doc["checks"][2:]) and doc["engine"]["proves"]
    assert [r["holds"] for r in doc["results"]] == [True, True]


def test_a_nominal_valuation_that_meets_the_bounds_is_trivial(cli):
    code, out, _ = cli("repair", DIE, "-p", 'P>=0.1 [F "one"]', "--nominal", "p=0.5,q=0.5", "--json", "-")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "trivial" and doc["distance"] == 0 and doc["search"] is None


def test_a_batch_of_nominal_valuations(cli, tmp_path):
    items = tmp_path / "nominal.jsonl"
    items.write_text('{"nominal": {"p": 0.3, "q": 0.6}, "id": "biased"}\n{"nominal": {"p": 0.5, "q": 0.5}}\n'
                     '{"nominal": {"p": 0.3}}\n')
    code, out, _ = cli("repair", DIE, *BOUNDS, "--instances", items, "--json", "-")
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 4                                   # the third line misses q
    assert [d["status"] for d in docs] == ["optimal", "trivial", "error"]
    assert docs[0]["batch"]["id"] == "biased" and "gives no value to q" in docs[2]["error"]["message"]


def test_a_strategy_on_an_mdp_asks_the_bounds_of_the_dtmc_it_induces(cli, tmp_path):
    coin = str(stormpy_example("pmdp", "coin2_2.pm"))
    strategy = tmp_path / "uniform.json"
    strategy.write_text('{"states": [], "default": "uniform"}')
    code, out, err = cli("repair", coin, "-p", 'P>=0.6 [F "finished" & "all_coins_equal_1"]', "--nominal",
                         "p1=0.5,p2=0.5", "-s", strategy, "--tolerance", "1e-3", "--json", "-")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "optimal", err
    assert doc["strategy"] == str(strategy)
    assert {c["subject"] for c in doc["checks"]} == {"DTMC induced by the strategy"}
    assert all(c["holds"] for c in doc["checks"] if c["name"] == "answer")


def test_plots_of_one_and_two_parameters(cli, tmp_path):
    code, out, _ = cli("repair", KNUTH_YAO, "-p", 'P>=0.2 [F "one"]', "--nominal", "p=0.5", "--plot",
                       tmp_path / "one.png")
    assert code == 0 and (tmp_path / "one.png").read_bytes()[:4] == b"\x89PNG"
    code, _, _ = cli("repair", DIE, *BOUNDS, "--nominal", "p=0.3,q=0.6", "--plot", tmp_path / "two.svg")
    assert code == 0 and b"<svg" in (tmp_path / "two.svg").read_bytes()[:500]


def test_the_python_api_stops_with_the_best_confirmed_answer():
    """A stop request (another thread's, as a button would make it) ends the search at its next box: the best answer
    so far, checked by Storm, with status interrupted."""
    brp = load_parametric(stormpy_example("pdtmc", "brp16_2.pm"), "TOMsg=0,TOAck=0")
    problem = RepairProblem(brp, ["P<=0.01 [F s=5]"], "pL=0.8,pK=0.9", norm="l1")
    run = Run(120)
    timer = threading.Timer(2.0, run.stop)
    timer.start()
    try:
        result = solve_repair(problem, tolerance=1e-12, run=run)
    finally:
        timer.cancel()
    assert result.status == "interrupted" and result.outcome.stopped == "user"
    assert all(c.holds for c in result.answer_checks) and result.lower_bound <= result.distance
