"""Learning MDPs and the users' strategy from event logs (seed 000's pipeline, §5 and Appendix A.1).

    log = read_log("loan.csv")                                   # paired or activity form, CSV or XES
    result = learn_mdp(LearnProblem(log, alpha=0.05, labels={"negative": ["rejected"]},
                                    model_path="learned.prism", strategy_path="sigma.json"))
    result.model, result.strategy                                # Storm's model of the written file, σ on it

See :mod:`.log` (input forms), :mod:`.alergia` (IOAlergia), :mod:`.names` (identifiers), :mod:`.prism` (output).
"""
from ..errors import LearnError, LogError
from .alergia import Automaton, Traces, aalpy_ioalergia, ioalergia
from .log import EventLog, read_log
from .names import identifiers, sanitise
from .problem import LearnProblem
from .result import LearnResult
from .sample import sample_log
from .solve import learn_mdp, learned_strategy

__all__ = ["Automaton", "EventLog", "LearnError", "LearnProblem", "LearnResult", "LogError", "Traces",
           "aalpy_ioalergia", "identifiers", "ioalergia", "learn_mdp", "learned_strategy", "read_log", "sample_log",
           "sanitise"]
