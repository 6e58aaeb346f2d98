"""Learning MDPs and the users' strategy from event logs (seed 000's pipeline, §5 and Appendix A.1).

    log = read_log("loan.csv")                                   # paired or activity form, CSV or XES
    result = learn_mdp(LearnProblem(log, alpha=0.05, labels={"negative": ["rejected"]},
                                    model_path="learned.prism", strategy_path="sigma.json"))
    result.model, result.strategy                                # Storm's model of the written file, σ on it

See :mod:`.log` (input forms), :mod:`.alergia` (IOAlergia), :mod:`.names` (identifiers), :mod:`.prism` (output).
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["LearnError", "LogError"], "..errors"),
    **dict.fromkeys(["Automaton", "Traces", "aalpy_ioalergia", "ioalergia"], ".alergia"),
    **dict.fromkeys(["EventLog", "read_log"], ".log"),
    **dict.fromkeys(["identifiers", "sanitise"], ".names"),
    **dict.fromkeys(["LearnProblem"], ".problem"),
    **dict.fromkeys(["LearnResult"], ".result"),
    **dict.fromkeys(["sample_log"], ".sample"),
    **dict.fromkeys(["learn_mdp", "learned_strategy"], ".solve"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Automaton", "EventLog", "LearnError", "LearnProblem", "LearnResult", "LogError", "Traces",
           "aalpy_ioalergia", "identifiers", "ioalergia", "learn_mdp", "learned_strategy", "read_log", "sample_log",
           "sanitise"]
