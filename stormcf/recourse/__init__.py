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
from ..errors import RecourseError
from .brkga import BRKGASettings, brkga
from .bruteforce import brute_force
from .decoder import Evaluation, Plans, decode
from .prism import PrismRecourse
from .problem import (AUTHORS_ROUNDING, OBJECTIVES, Action, Feature, RecourseProblem, RelationGraph, Rounding, Rows,
                      ValueDomain, add, set_to)
from .result import RecoursePlan, RecourseResult
from .solve import solve_recourse

__all__ = ["AUTHORS_ROUNDING", "OBJECTIVES", "Action", "BRKGASettings", "Evaluation", "Feature", "Plans",
           "PrismRecourse", "RecourseError", "RecoursePlan", "RecourseProblem", "RecourseResult", "RelationGraph",
           "Rounding", "Rows", "ValueDomain", "add", "brkga", "brute_force", "decode", "set_to", "solve_recourse"]
