"""``--solver``: one option, with the same choices and words, in every command that solves programmes; refused
where the command would solve none; the choice reaches the solve (the LP bounds name their solver)."""
import json

import pytest

import stormcf
from stormcf.cli import build_parser

#: every command that solves mathematical programmes
COMMANDS = ("strategy", "setcover", "setcover-data", "setcover-evaluate", "icfmdp", "recourse")
GRID = stormcf.example_path("gridworld.prism")
TREAT = stormcf.example_path("treat.prism")


def solver_option(command: str):
    parser = build_parser()._subparsers._group_actions[0].choices[command]
    return next(action for action in parser._actions if "--solver" in action.option_strings)


def test_every_command_that_solves_programmes_has_the_same_solver_option():
    options = [solver_option(command) for command in COMMANDS]
    assert all(list(option.choices) == ["auto", "highs", "scip", "gurobi"] for option in options)
    assert all(option.default == "auto" for option in options)
    assert all(option.help.startswith("the solver of ") for option in options)
    assert len({option.help[option.help.index("%(choices)s"):] for option in options}) == 1


@pytest.mark.parametrize("argv,where", [
    (["setcover", stormcf.example_path("setcover.paper.json"), "--agent", "0,0,0,0,1"], "--method milp and greedy"),
    (["setcover-evaluate", "gen.npz", "data.npz"], "--certify lp and milp"),
    (["setcover-data", "{tmp}/d.npz"], "--method milp"),
    (["icfmdp", GRID, "-c", "p=0.9", "--path", stormcf.example_path("gridworld.catastrophic.json")], "--bounds lp"),
    (["recourse", stormcf.example_path("person.prism"), "-c", "p=1", "--target", "accept", "--cost", "cost"],
     "--storm-front"),
])
def test_a_solver_the_command_would_not_use_is_refused(cli, tmp_path, argv, where):
    argv = [str(a).format(tmp=tmp_path) for a in argv]
    code, out, err = cli(*argv, "--solver", "scip")
    assert code == 2 and out == "" and err.strip() == f"stormcf: error: --solver scip applies to {where} only"


@pytest.mark.parametrize("solver", ["auto", "highs", "scip", "gurobi"])
def test_the_icfmdp_lp_bounds_name_their_solver(cli, solver):
    if solver == "gurobi" and not stormcf.solvers.available("gurobi"):
        pytest.skip("gurobipy is not installed")
    code, out, _ = cli("icfmdp", TREAT, "--path", stormcf.example_path("treat.path.json"), "--reward", "health",
                       "--bounds", "lp", "--solver", solver, "--json", "-")
    data = json.loads(out)
    assert code == 0 and data["icfmdp"]["method"] == f"cs+m, LPs ({'highs' if solver == 'auto' else solver})"
    assert data["worst_case_value"] == pytest.approx(4.2, abs=1e-9)      # h(s0, T=3) of oracle O6, any budget
