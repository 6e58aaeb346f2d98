"""``stormcf strategy``: the paper's output, JSON/DOT files, and one line with exit code 2 for bad input."""
import json

import pytest

import stormcf
from stormcf.cli import main

LOAN = str(stormcf.example_path("loan.prism"))
GRID = str(stormcf.example_path("grid.prism"))
IMPATIENT = str(stormcf.example_path("loan.impatient.json"))
BAD = 'P<=0.2 [F "rejected"]'


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_strategy_prints_the_paper_explanation(capsys, tmp_path):
    out_json, out_dot = tmp_path / "cf.json", tmp_path / "cf.dot"
    code, out, err = run(capsys, "strategy", LOAN, "--strategy", IMPATIENT, "--prop", BAD, "--state-names", "labels",
                         "--json", str(out_json), "--dot", str(out_dot))
    assert code == 0 and err == ""
    assert out.startswith("loan.prism: MDP with 9 states, 13 choices, 17 transitions (4 decision states)\n"
                          "State 'rejected' is reached with probability 0.411.\n"
                          "You can reach it with probability 0.2 as follows:\n"
                          "  In state 'Rework':\n"
                          "    increase probability of action 'Submit' to 0.8553\n"
                          "    decrease probability of action 'Quit' to 0.1447\n")
    assert "status: optimal" in out
    data = json.loads(out_json.read_text())
    assert data["status"] == "optimal" and data["changes"][0]["state"] == {"s": 5}
    assert data["distance"]["d0"] == 1 and data["bound"] == 0.2 and data["initial_probability"] == 0.411
    assert "<b>Rework</b>" in out_dot.read_text() and f"drawing written to {out_dot}" in out
    assert stormcf.Strategy.from_dict(stormcf.load_model(LOAN), data["strategy"])   # reusable with `check`


def test_strategy_json_to_stdout_and_exact(capsys):
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", BAD, "--weights", "0,0,1", "--exact",
                       "--json", "-")
    data = json.loads(out)
    assert code == 0 and data["status"] == "optimal" and abs(data["distance"]["dinf"] - 0.5094) < 1e-3
    assert data["exact"]["holds"] is True


def test_strategy_infeasible_epsilon_and_expression(capsys):
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.01 [F "rejected"]')
    assert code == 0 and "status: infeasible\n" in out and "achieves is 0.02 (Storm)" in out
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.01 [F "rejected"]', "-v")
    assert code == 0 and "method: storm: Pmin = 0.02" in out         # how it was decided: with -v only
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", BAD, "-w", "0,0,1", "--epsilon", "0.5")
    assert code == 0 and "status: infeasible" in out
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", "P<=0.2 [F s=8]",
                       "--controllable-states", "s=5 | s=3")
    assert code == 0 and "In state 's=5'" in out and "In state 's=3'" not in out


def test_strategy_diverse(capsys):
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", BAD, "--diverse", "2", "--solver", "scip")
    assert code == 0 and "-- diverse counterfactual 2 (novel state-action pairs:" in out


@pytest.mark.parametrize("argv, message", [
    (["-p", 'P<=1.5 [F "rejected"]'], "outside [0, 1]"),
    (["-p", 'P=? [F "rejected"]'], "has no bound"),
    (["-p", 'P<=0.2 [F "nope"]'], 'unknown label "nope"'),
    (["-p", BAD, "--controllable-actions", "Fly"], "unknown action 'Fly'"),
    (["-p", BAD, "--weights", "1,x,1"], "weights"),
    (["-p", BAD, "--epsilon", "-1"], "epsilon"),
    (["-p", BAD, "--solver", "highs"], "HiGHS solves only the linear special cases"),
    (["-p", BAD, "--time-limit", "0"], "time limit"),
    (["-p", BAD, "--controllable-states", "s=="], "cannot parse"),
    (["-p", 'P<=0.2 [F<=3 "rejected"]'], "needs a strategy that counts steps (memory)"),
    (["-p", BAD, "--require", BAD], "is given twice"),
    (["-p", BAD, "--dot-states", "3"], "--dot-states applies to the drawing: give --dot OUT"),
    ([], "give the bound to meet with --prop"),
    (["--require", BAD, "--require", 'R{"steps"}<=3 [F "granted"|"rejected"]', "--solver", "highs"],
     "several bounds need"),
])
def test_strategy_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, "strategy", LOAN, "-s", IMPATIENT, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_several_bounds_with_require(capsys):
    """--require adds bounds that must hold too; without --prop, the required bounds alone are the question."""
    steps = 'R{"steps"}<=2.75 [F "granted" | "rejected"]'
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "-p", steps, "--require", 'P<=0.35 [F "rejected"]',
                       "--json", "-")
    data = json.loads(out)
    assert code == 0 and data["status"] == "optimal" and [b["holds"] for b in data["bounds"]] == [True, True]
    assert data["bounds"][0]["kind"] == "reward" and abs(data["value"] - 2.70375) < 1e-9
    assert data["probability"] is None and abs(data["bounds"][1]["value"] - 0.35) < 1e-8
    assert len([c for c in data["checks"] if c["subject"].startswith("DTMC")]) >= 4   # σ and σ*, both bounds
    code, out, _ = run(capsys, "strategy", LOAN, "-s", IMPATIENT, "--require", 'P<=0.35 [F "rejected"]', "--require",
                       steps)
    assert code == 0 and "You can meet P<=7/20 [F \"rejected\"] and R{\"steps\"}<=11/4" in out


def test_unsound_lower_bound_is_rejected(capsys, tmp_path):
    strategy = tmp_path / "uniform.json"
    strategy.write_text('{"states": [], "default": "uniform"}')
    code, out, err = run(capsys, "strategy", GRID, "-c", "N=3", "-s", str(strategy), "-p", 'P>=0.9 [F "goal"]')
    assert code == 2 and "end components" in err and err.count("\n") == 1


def test_demo_shows_the_counterfactual(capsys):
    code, out, _ = run(capsys, "demo")
    assert code == 0 and "decrease probability of action 'Quit' to 0.1447" in out and "d∞ = 0.509" in out


@pytest.mark.slow                            # 30-80 s of CPU: not in the fast tier (make test-fast)
def test_gurobi_licence_limit_is_named_and_auto_falls_back_to_scip(capsys, tmp_path):
    from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
    model = stormcf.load_model(GRID, constants="N=8")
    problem = CounterfactualProblem(stormcf.Strategy.uniform(model), 'P<=0.5 [F "trap"]')
    r = solve_counterfactual(problem, time_limit=30)
    assert "on SCIP because the instance" in r.solver_reason and "size-limited Gurobi licence" in r.solver_reason
    assert r.status in ("optimal", "suboptimal") and r.verification.holds
    if r.status == "suboptimal":
        assert r.gap is not None and 0 <= r.distance_lower_bound <= r.weighted_distance
    strategy = tmp_path / "uniform.json"
    strategy.write_text('{"states": [], "default": "uniform"}')
    code, out, err = run(capsys, "strategy", GRID, "-c", "N=8", "-s", str(strategy), "-p", 'P<=0.5 [F "trap"]',
                         "--solver", "gurobi", "--time-limit", "4")
    assert code == 2 and "size-limited Gurobi licence" in err and err.count("\n") == 1


def test_changed_states_list_every_action_with_a_probability(capsys, tmp_path):
    """d∞ on FrozenLake from the uniform strategy keeps one action of a changed state at 0.25: it is listed too, so
    that the probabilities shown for σ* add up to 1 in every changed state."""
    lake = str(stormcf.example_path("frozenlake4.prism"))
    assert run(capsys, "strategy-file", lake, "--uniform", "--out", str(tmp_path / "u.json"))[0] == 0
    code, out, _ = run(capsys, "strategy", lake, "-s", str(tmp_path / "u.json"), "-p", 'P<=0.8 [F "hole"]',
                       "-w", "0,0,1")
    blocks = out.split("  In state ")[1:]
    assert code == 0 and len(blocks) == 11 and "keep probability of action" in out
    for block in blocks:
        moves = [line for line in block.splitlines()[1:] if line.startswith("    ")]
        assert len(moves) == 4 and sum(float(m.split()[-1]) for m in moves) == pytest.approx(1, abs=2e-4)
