"""``repair`` against oracles: the closed form of the one-coin Knuth-Yao die (P(one) = p^2/(p+1)), and grids over
Storm's solution functions (BRP, crowds, herman) and over Storm's values (the coin MDP) on stormpy's shipped
parametric examples; answers within 1e-4 of the oracle's distance, status optimal where the proof applies, every
grid valuation closer than the proven bound infeasible, and an infeasible region proven so."""
from fractions import Fraction
from pathlib import Path

import pytest

from stormcf.repair import RepairProblem, load_parametric, solve_repair
from stormcf.storm import stormpy_example

from repair_oracles import decimal_function, grid_optimum, infeasible_closer_than, knuth_yao_threshold

DATA = Path(__file__).resolve().parents[1] / "data" / "repair"
AGREE = 1e-4


def brp():
    return load_parametric(stormpy_example("pdtmc", "brp16_2.pm"), "TOMsg=0,TOAck=0")


def box(problem):
    return [float(x) for x in problem.box.lo], [float(x) for x in problem.box.hi]


def require_matches_grid(result, feasible, points: int = 21, keep: int = 4):
    """The answer is as close as the grid's best feasible point (within AGREE), is feasible by the oracle, and no
    grid point closer than the proven lower bound is."""
    p = result.problem
    x0, (lo, hi) = [float(x) for x in p.point], box(p)
    oracle = grid_optimum(feasible, x0, lo, hi, p.norm, points, keep, resolution=AGREE / 4)
    assert oracle is not None
    assert abs(result.distance - oracle[0]) <= AGREE, (result.distance, oracle)
    assert feasible([float(x) for x in result.answer.point])
    if result.lower_bound is not None:
        assert infeasible_closer_than(feasible, x0, lo, hi, p.norm, result.lower_bound - 1e-9)


@pytest.mark.parametrize("bound, nominal", [("P>=0.2", "0.5"), ("P>=0.3", "0.25"), ("P<=0.1", "0.6")])
def test_the_knuth_yao_die_meets_its_closed_form(bound, nominal):
    model = load_parametric(DATA / "knuth_yao.pm")
    result = solve_repair(RepairProblem(model, [f'{bound} [F "one"]'], f"p={nominal}"), time_limit=60)
    assert result.status == "optimal"
    threshold = knuth_yao_threshold(Fraction(bound[3:]))
    assert abs(float(result.answer.point[0]) - threshold) <= AGREE
    assert abs(result.distance - abs(threshold - float(nominal))) <= AGREE
    assert all(c.holds and c.exact is not None for c in result.answer_checks)       # Storm, exactly
    assert result.sensitivities[0].solution_function == "((p)^2)/(p+1)"


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_brp_meets_a_grid_over_its_solution_function(norm):
    result = solve_repair(RepairProblem(brp(), ["P<=0.01 [F s=5]"], "pL=0.8,pK=0.9", norm=norm), time_limit=120)
    assert result.status == "optimal"
    f = decimal_function(result.sensitivities[0].solution_function, ["pL", "pK"])
    require_matches_grid(result, lambda x: f({"pL": x[0], "pK": x[1]}) <= 0.01)


def test_crowds_meets_a_grid_over_its_solution_function():
    model = load_parametric(stormpy_example("pdtmc", "crowds3_5.pm"))
    result = solve_repair(RepairProblem(model, ['P<=0.1 [F "observe0Greater1"]'], "PF=0.8,badC=0.1", norm="l1"),
                          time_limit=120)
    assert result.status == "optimal"
    f = decimal_function(result.sensitivities[0].solution_function, ["PF", "badC"])
    require_matches_grid(result, lambda x: f({"PF": x[0], "badC": x[1]}) <= 0.1)


def test_herman_needs_robust_lifting_and_claims_no_proof():
    """herman's transition functions are products of p and 1-p (degree 5): parameter lifting would not be sound,
    Storm's robust lifting bounds the boxes but proves nothing (its value iteration has no error bound)."""
    model = load_parametric(stormpy_example("pdtmc", "herman5.pm"))
    result = solve_repair(RepairProblem(model, ['R{"steps"}<=2.5 [F "stable"]'], "p=0.2", region="0.1<=p<=0.9"),
                          time_limit=120)
    assert result.problem.engine == "robust lifting" and "not multi-affine" in result.problem.engine_reason
    assert result.status == "suboptimal" and result.lower_bound is None
    build = result.problem.search_build          # the oracle: Storm's solution function, given time on a loaded machine
    try:
        solution = build.solution_function(0, {"p": Fraction(1, 2)}, seconds=120)
    finally:
        build.close()
    f = decimal_function(solution.text, ["p"])
    require_matches_grid(result, lambda x: f({"p": x[0]}) <= 2.5, points=201)


def test_the_coin_mdp_meets_a_grid_over_storms_values():
    """A bound without min/max on an MDP holds for every scheduler (Storm's semantics): Pmin >= 0.45."""
    model = load_parametric(stormpy_example("pmdp", "coin2_2.pm"))
    problem = RepairProblem(model, ['P>=0.45 [F "finished" & "all_coins_equal_1"]'], "p1=0.5,p2=0.5")
    result = solve_repair(problem, time_limit=120)
    assert result.status == "optimal"
    values = problem.search_build.values
    try:
        require_matches_grid(result, lambda x: float(values({"p1": Fraction(x[0]), "p2": Fraction(x[1])})[0])
                             >= 0.45, keep=1)
    finally:
        problem.search_build.close()


def test_an_infeasible_region_is_proven_infeasible():
    problem = RepairProblem(brp(), ["P<=0.01 [F s=5]"], "pL=0.8,pK=0.85", region="0.5<=pL<=0.9,0.5<=pK<=0.9")
    result = solve_repair(problem, time_limit=60)
    assert result.status == "infeasible" and result.answer is None and not result.approximate
    assert result.outcome.proven and result.outcome.counts["violated"] >= 1
    assert result.to_dict()["valuation"] is None


def chain(folder: Path, k: int) -> Path:
    """A chain of k steps, step i passed with probability p_i: P(F "goal") = p_0 * ... * p_{k-1}."""
    lines = ["dtmc", *[f"const double p{i};" for i in range(k)], "module chain", f"  s : [0..{k + 1}] init 0;"]
    lines += [f"  [] s={i} -> p{i} : (s'={i + 1}) + (1-p{i}) : (s'={k + 1});" for i in range(k)]
    lines += [f"  [] s>={k} -> true;", "endmodule", f'label "goal" = s={k};']
    path = folder / f"chain{k}.pm"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_twenty_parameters_get_a_local_answer_and_an_honest_status(tmp_path):
    """Π p_i >= 1/2 from p_i = 0.95: the closest valuation sets every p_i to 2^(-1/20), under l∞ and under l1. The
    radius that parameter lifting proves around the nominal valuation is the l∞ optimum (optimal); under l1 it is
    only a bound (suboptimal, with its gap)."""
    model = load_parametric(chain(tmp_path, 20))
    nominal = {f"p{i}": 0.95 for i in range(20)}
    target = 0.5 ** (1 / 20) - 0.95
    linf = solve_repair(RepairProblem(model, ['P>=0.5 [F "goal"]'], nominal), time_limit=120)
    assert linf.status == "optimal" and abs(linf.distance - target) <= AGREE
    l1 = solve_repair(RepairProblem(model, ['P>=0.5 [F "goal"]'], nominal, norm="l1"), time_limit=120)
    assert l1.status == "suboptimal" and abs(l1.distance - 20 * target) <= 20 * AGREE
    assert l1.lower_bound is not None and l1.lower_bound <= 20 * target
    assert all(c.holds for c in l1.answer_checks)
    assert "local search" in l1.to_dict()["search"]["method"]
