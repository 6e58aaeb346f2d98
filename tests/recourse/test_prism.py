"""The PRISM front: oracle O6 (notes §6.2), Storm's least cost = the brute-force minimum on random PRISM models,
open-loop plans vs Storm's closed-loop strategies, action families, and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf
from stormcf.recourse import BRKGASettings, Plans, PrismRecourse, brute_force, solve_recourse
from stormcf.recourse.exact import optimum
from stormcf.recourse.prism import action_families
from stormcf.recourse.problem import RecourseError

PERSON = stormcf.example_path("person.prism")
SMALL = BRKGASettings(n_offspring=100, n_mutants=50, generations=30)


def person(p: str) -> PrismRecourse:
    model = stormcf.load_model(PERSON, constants=f"p={p}")
    return PrismRecourse(model, "accept", "cost", "effort", threshold=float(p))


def orders(problem: PrismRecourse, sequences):
    index = {name: i for i, name in enumerate(problem.action_names)}
    return Plans.from_steps([[(index[a], 0.0) for a in seq] for seq in sequences], len(index))


SIX = [("getDegree", "moveUS", "changeJob"), ("getDegree", "changeJob", "moveUS"), ("moveUS", "getDegree", "changeJob"),
       ("changeJob", "getDegree", "moveUS"), ("moveUS", "changeJob", "getDegree"), ("changeJob", "moveUS", "getDegree")]


def test_o6_deterministic_open_loop_costs_equal_o1():
    problem = person("1")
    evaluation = problem.evaluate(orders(problem, SIX))
    assert evaluation.cost.tolist() == [22.5, 25.0, 25.0, 27.5, 27.5, 30.0]
    assert evaluation.p_accept.tolist() == [1.0] * 6


def test_o6_storm_least_cost_is_the_paper_order():
    problem = person("1")
    answer = optimum(problem.recourse_mdp())
    assert answer.value == pytest.approx(22.5, abs=1e-9)
    assert [problem.action_names[i] for i, _ in answer.plan] == ["getDegree", "moveUS", "changeJob"]
    result = solve_recourse(problem, SMALL)
    assert result.status == "optimal" and result.gap == pytest.approx(0.0, abs=1e-9)
    assert result.front[0].actions == ["getDegree", "moveUS", "changeJob"]
    assert result.front[0].found_by == "GA and Storm"


def test_o6_stochastic_plans_vs_closed_loop_strategy():
    problem = person("0.8")
    evaluation = problem.evaluate(orders(problem, SIX))
    assert evaluation.cost == pytest.approx([23.0, 25.5, 25.5, 27.5, 27.5, 30.0])
    assert evaluation.p_accept == pytest.approx([0.8] * 6)
    closed_loop = stormcf.check_model(problem.model, 'R{"cost"}min=? [F "accept"]')
    assert closed_loop.value == pytest.approx(23.125, rel=1e-9)     # retrying the degree: 2.5/0.8 + 15 + 5
    result = solve_recourse(problem, SMALL)
    assert result.status == "feasible" and result.optimal_cost is None
    assert result.front[0].cost == pytest.approx(23.0) and result.front[0].p_accept == pytest.approx(0.8)


def test_o6_plans_need_the_threshold():
    problem = PrismRecourse(person("0.8").model, "accept", "cost", "effort", threshold=0.9)
    assert not problem.evaluate(orders(problem, SIX)).feasible.any()
    result = solve_recourse(problem, SMALL)
    assert result.status == "timeout" and result.front == []


def test_once_only_lower_bound_on_stochastic_model_with_sure_acceptance(tmp_path):
    """θ = 1 on a model where retries are distinct actions: the closed-loop bound is below every plan."""
    file = tmp_path / "retry.prism"
    file.write_text("""mdp
module m
  d : [0..1] init 0;  t1 : bool init false;  t2 : bool init false;
  [try1] d=0 & !t1 -> 0.5:(d'=1)&(t1'=true) + 0.5:(t1'=true);
  [try2] d=0 & !t2 -> 0.5:(d'=1)&(t2'=true) + 0.5:(t2'=true);
  [sure] d=0 -> (d'=1);
endmodule
label "accept" = d=1;
rewards "cost" [try1] true : 1; [try2] true : 2; [sure] true : 4; endrewards
""")
    problem = PrismRecourse(stormcf.load_model(file), "accept", "cost")
    bf = brute_force(problem)
    cheapest = bf.evaluation.cost[bf.evaluation.feasible].min()
    bound = optimum(problem.recourse_mdp()).value
    assert bound == pytest.approx(1 + 0.5 * 2 + 0.25 * 4)          # closed loop: stop as soon as d = 1
    assert cheapest == pytest.approx(4.0) and bound <= cheapest
    result = solve_recourse(problem, SMALL)
    assert result.lower_bound == pytest.approx(bound) and result.front[0].cost == pytest.approx(4.0)


# ------------------------------------------------------------------------------------------------ random models
@st.composite
def prism_models(draw):
    """Deterministic MDPs: three variables in [0..3]; 2-4 actions, each changing one variable (set or add) under a
    random guard, with a discounted cost; a random linear target."""
    n_actions = draw(st.integers(2, 4))
    commands, rewards = [], []
    for a in range(n_actions):
        var = draw(st.sampled_from("xyz"))
        guard_var = draw(st.sampled_from("xyz"))
        guard = f"{guard_var}<{draw(st.integers(1, 3))}" if draw(st.booleans()) else "true"
        if draw(st.booleans()):
            update = f"({var}'={draw(st.integers(0, 3))})"
        else:
            update = f"({var}'=min({var}+{draw(st.integers(1, 2))},3))"
        commands.append(f"  [a{a}] {guard} -> {update};")
        effort = draw(st.integers(1, 9))
        cond_var = draw(st.sampled_from("xyz"))
        discount = draw(st.sampled_from([0.25, 0.5, 1.0]))
        rewards.append(f"  [a{a}] {cond_var}>=2 : {effort * discount};  [a{a}] {cond_var}<2 : {effort};")
    weights = [draw(st.integers(0, 2)) for _ in range(3)]
    threshold = draw(st.integers(1, 6))
    target = f"{weights[0]}*x+{weights[1]}*y+{weights[2]}*z>={threshold}"
    return ("mdp\nmodule m\n  x : [0..3] init 0;  y : [0..3] init 0;  z : [0..3] init 0;\n" + "\n".join(commands)
            + f"\nendmodule\nlabel \"accept\" = {target};\nrewards \"cost\"\n" + "\n".join(rewards) + "\nendrewards\n")


@settings(max_examples=25)
@given(prism_models())
def test_storm_least_cost_equals_brute_force(tmp_path_factory, text):
    file = tmp_path_factory.mktemp("rand") / "m.prism"
    file.write_text(text)
    problem = PrismRecourse(stormcf.load_model(file), "accept", "cost")
    bf = brute_force(problem)
    feasible = bf.evaluation.feasible
    answer = optimum(problem.recourse_mdp())
    if problem.accept[problem.model.initial_state]:
        return
    if not feasible.any():
        assert answer.value == np.inf
        return
    assert answer.value == pytest.approx(bf.evaluation.cost[feasible].min(), rel=1e-9, abs=1e-12)
    storm_plan = problem.evaluate(Plans.from_steps([answer.plan], len(problem.domains)))
    assert storm_plan.feasible[0] and storm_plan.cost[0] == pytest.approx(answer.value, rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------------------------------------ families, errors
def test_action_families_group_labels_and_sort_numbers():
    families = action_families(["", "set__10", "set__2", "go", "mode__fast", "mode__slow"])
    assert [f.name for f in families] == ["set", "go", "mode"]
    assert families[0].domain.values == (2.0, 10.0) and families[0].labels == ("set__2", "set__10")
    assert families[2].domain.labels == ("fast", "slow")
    with pytest.raises(RecourseError, match="both a plain label and a family"):
        action_families(["a", "a__1"])


def test_family_values_in_plans(tmp_path):
    file = tmp_path / "hours.prism"
    file.write_text("""mdp
module m
  h : [0..60] init 40;
  [setHours__20] true -> (h'=20);
  [setHours__50] true -> (h'=50);
endmodule
label "accept" = h>=45;
rewards "cost" [setHours__20] true : 1; [setHours__50] true : h=40 ? 3 : 1; endrewards
""")
    problem = PrismRecourse(stormcf.load_model(file), "accept", "cost")
    assert problem.action_names == ("setHours",) and problem.domains[0].values == (20.0, 50.0)
    result = solve_recourse(problem, SMALL)
    assert result.front[0].actions == ["setHours"] and result.front[0].values == ["50"]
    assert result.optimal_cost == pytest.approx(3.0)


def test_bad_prism_inputs(tmp_path):
    with pytest.raises(RecourseError, match="not a DTMC"):
        PrismRecourse(stormcf.load_model(stormcf.storm.stormpy_example("dtmc", "die.pm")), "done", "coin_flips")
    file = tmp_path / "neg.prism"
    file.write_text("mdp\nmodule m\n x : [0..1] init 0;\n [a] x=0 -> (x'=1);\nendmodule\n"
                    "label \"accept\" = x=1;\nrewards \"cost\" [a] true : -1; endrewards\n")
    with pytest.raises(RecourseError, match="negative"):
        PrismRecourse(stormcf.load_model(file), "accept", "cost")
    with pytest.raises(stormcf.PropertyError, match="unknown label"):
        PrismRecourse(stormcf.load_model(file), "acc", "cost")
    with pytest.raises(RecourseError, match=r"θ must lie in \(0, 1\]"):
        PrismRecourse(person("1").model, "accept", "cost", threshold=0.0)


def test_one_command_per_action_and_state(tmp_path):
    file = tmp_path / "twice.prism"
    file.write_text("mdp\nmodule m\n x : [0..2] init 0;\n [a] x=0 -> (x'=1);\n [a] x=0 -> (x'=2);\nendmodule\n"
                    "label \"accept\" = x=2;\nrewards \"cost\" [a] true : 1; endrewards\n")
    with pytest.raises(RecourseError, match="two choices labelled 'a'"):
        PrismRecourse(stormcf.load_model(file), "accept", "cost")


def test_accepted_initial_state_is_trivial(tmp_path):
    file = tmp_path / "done.prism"
    file.write_text("mdp\nmodule m\n x : [0..1] init 1;\n [a] true -> (x'=0);\nendmodule\n"
                    "label \"accept\" = x=1;\nrewards \"cost\" [a] true : 1; endrewards\n")
    result = solve_recourse(PrismRecourse(stormcf.load_model(file), "accept", "cost"), SMALL)
    assert result.status == "trivial" and result.front == [] and "already accepted" in str(result)


def test_classifier_target_over_valuations():
    model = person("1").model
    problem = PrismRecourse(model, lambda V: (V[:, 0] >= 1) & (V[:, 1] == 1) & (V[:, 2] == 1), "cost",
                            target_class=True)
    assert np.array_equal(problem.accept, model.label("accept"))
