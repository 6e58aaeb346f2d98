"""Sequential recourse with consequence-aware costs (seed 002)."""
from .brkga import BRKGASettings, brkga
from .bruteforce import brute_force
from .decoder import Evaluation, Plans, decode
from .problem import (AUTHORS_ROUNDING, OBJECTIVES, Action, Feature, RecourseError, RecourseProblem, RelationGraph,
                      Rounding, Rows, ValueDomain, add, set_to)
from .prism import PrismRecourse
from .result import RecoursePlan, RecourseResult
from .solve import solve_recourse
