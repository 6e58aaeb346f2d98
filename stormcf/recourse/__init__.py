"""Sequential recourse with consequence-aware costs (seed 002, Naumann & Ntoutsi): ordered action plans from a
rejected instance to an accepted one, found by a multi-objective BRKGA, with Storm's least cost where the model is
discrete and a Storm re-check of every reported plan.

- :mod:`.problem`: the Python front (features, actions, relation graph, classifier); :mod:`.prism`: the PRISM front;
- :mod:`.decoder` (random keys -> plans), :mod:`.objectives` (cost, Gower, frequencies), :mod:`.brkga` (the GA),
  :mod:`.bruteforce` (every ordered subset, for small problems and tests);
- :mod:`.exact`: the plan MDP, Storm's least cost and achievable set, the plan re-checks;
- :mod:`.solve` (:func:`solve_recourse`), :mod:`.result` (:class:`RecourseResult`), :mod:`.trace`, :mod:`.plots`;
- :mod:`.datasets`: Adult and German credit with the paper's classifiers, actions and relation graph.
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["RecourseError"], "..errors"),
    **dict.fromkeys(["BRKGASettings", "brkga"], ".brkga"),
    **dict.fromkeys(["brute_force"], ".bruteforce"),
    **dict.fromkeys(["Evaluation", "Plans", "decode"], ".decoder"),
    **dict.fromkeys(["PrismRecourse"], ".prism"),
    **dict.fromkeys(["AUTHORS_ROUNDING", "OBJECTIVES", "Action", "Feature", "RecourseProblem", "RelationGraph",
        "Rounding", "Rows", "ValueDomain", "add", "set_to"], ".problem"),
    **dict.fromkeys(["RecoursePlan", "RecourseResult"], ".result"),
    **dict.fromkeys(["solve_recourse"], ".solve"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["AUTHORS_ROUNDING", "OBJECTIVES", "Action", "BRKGASettings", "Evaluation", "Feature", "Plans",
           "PrismRecourse", "RecourseError", "RecoursePlan", "RecourseProblem", "RecourseResult", "RelationGraph",
           "Rounding", "Rows", "ValueDomain", "add", "brkga", "brute_force", "decode", "set_to", "solve_recourse"]
