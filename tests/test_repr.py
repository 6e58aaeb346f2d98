"""Short, readable reprs of the objects a Python user handles: models, reward models, strategies, paths, properties,
Storm checks, counterfactual MDPs, policies and results (one line each, no arrays)."""
import stormcf
from stormcf.explain import ExplanationProblem, explain_path


def test_reprs_are_one_short_line_in_the_models_words(loan, impatient):
    treat = stormcf.load_model(stormcf.example_path("treat.prism"))
    path = stormcf.ObservedPath.load(treat, stormcf.example_path("treat.path.json"))
    result = explain_path(ExplanationProblem(path, "health", k=1), explanations=0)
    expected = {
        loan: "<ExplicitModel loan.prism: MDP, 9 states, 13 choices, 17 transitions>",
        loan.reward_model("steps"): '<RewardModel "steps": state rewards>',
        impatient: "<Strategy on loan.prism: randomized in 2 of 4 decision states>",
        stormcf.Strategy.uniform(treat).replace_states(treat.decision_states, stormcf.Strategy.deterministic(
            treat, treat.row_groups[:-1])): "<Strategy on treat.prism: deterministic>",
        path: "<ObservedPath on treat.prism, 3 steps: (s=0, coin), (s=0, coin), (s=0, coin)>",
        stormcf.parse_property(loan, 'P<=0.2 [F "rejected"]'): '<Property P<=1/5 [F "rejected"]>',
        stormcf.check_strategy(impatient, 'P=? [F "rejected"]', exact=True):
            '<Check P=? [F "rejected"] = 411/1000 (= 0.411)>',
        result.checks[0]: '<Check R{"r"}=? [C<=3] = 3.6, agrees>',
        result.cfmdp: "<CounterfactualMDP of a 3-step path on treat.prism: point rows (gumbel-max, exact), "
                      "5 (t, s) pairs, 10 rows>",
        result.policy: '<Policy maximizes "health" over 3 steps of treat.prism, budgets 0..1>',
        result: "<ExplanationResult explain-path: ok on treat.prism (2 states), 1 Storm check>",
    }
    for obj, text in expected.items():
        assert repr(obj) == text


def test_every_result_class_keeps_the_short_repr():
    """@dataclass would give each result a repr of all its fields; Report keeps its own on every subclass."""
    from stormcf.report import Report

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    import stormcf.cli  # noqa: F401  (imports every command's result class)
    import stormcf.inputs  # noqa: F401
    import stormcf.modelcheck  # noqa: F401
    found = list(subclasses(Report))
    assert len(found) >= 8
    for cls in found:
        assert cls.__repr__ is Report.__repr__, cls
