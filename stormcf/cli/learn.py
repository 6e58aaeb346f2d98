"""``stormcf learn LOG --out MODEL.prism``: learn an MDP and the users' strategy from an event log (IOAlergia)."""
from __future__ import annotations

import argparse

from ..errors import LearnError
from .._lazy import LazyChoices
from .common import add_input_argument, add_json_argument, add_output_argument, non_negative_float, run_single


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("learn", help="learn an MDP and the users' strategy from an event log (IOAlergia)")
    add_input_argument(p, "log", metavar="LOG", help="event log: CSV (paired: case,action,observation; activity: "
                       "case,activity[,timestamp]) or XES (needs pm4py: pip install stormcf[xes])")
    add_output_argument(p, "--out", "-o", required=True, metavar="MODEL.prism",
                        help="where the learned PRISM model goes")
    add_output_argument(p, "--strategy-out", metavar="SIGMA.json", help="where the users' strategy goes")
    add_output_argument(p, "--drn-out", metavar="MODEL.drn", help="also write the model in Storm's DRN format")
    p.add_argument("--actions", metavar="A,B", help="activity form: the activities that are actions")
    p.add_argument("--alpha", default="0.05", metavar="A",
                   help="IOAlergia's compatibility parameter in (0, 2] (AALpy's eps; default 0.05) or 'auto'")
    p.add_argument("--label", action="append", default=[], metavar="NAME=OBS1,OBS2",
                   help="a label for a group of observations (repeatable)")
    p.add_argument("--final-only", metavar="NAME,...", help="these labels hold only at the last event of a case")
    p.add_argument("--reward", action="append", default=[], metavar="NAME=ACTION:VALUE,...",
                   help="a reward model with a cost per action (repeatable); \"steps\" is always written")
    p.add_argument("--laplace", type=non_negative_float, default=0.0, metavar="L",
                   help="Laplace smoothing of the strategy: pseudo-count L per enabled action (default 0)")
    p.add_argument("--learner", choices=LazyChoices("stormcf.learn.problem", "LEARNERS"), default="stormcf",
                   metavar="LEARNER",
                   help="stormcf's IOAlergia (default) or AALpy's (the same automaton, far slower)")
    p.add_argument("--prop", "-p", action="append", default=[], metavar="PCTL",
                   help="a property Storm checks under the users' strategy (repeatable)")
    add_json_argument(p)
    p.set_defaults(run=run, analysis="stormcf.learn.task:ModelLearning")


def run(args: argparse.Namespace) -> int:
    from ..learn.task import LogFile, ModelLearning
    actions = _names(args.actions) if args.actions is not None else None
    analysis = ModelLearning(alpha=_alpha(args.alpha), labels=_unique("--label", map(_label, args.label)),
                             final_only=frozenset(_names(args.final_only)) if args.final_only else frozenset(),
                             rewards=_unique("--reward", map(_reward, args.reward)), laplace=args.laplace,
                             learner=args.learner, model_path=args.out, strategy_path=args.strategy_out,
                             drn_path=args.drn_out, properties=tuple(args.prop))
    return run_single(args, analysis, LogFile(args.log, actions).load(), None, args.log)


def _unique(flag: str, pairs) -> dict:
    """The (name, value) pairs of a repeatable option as a dictionary; a name given twice is refused."""
    out: dict = {}
    for name, value in pairs:
        if name in out:
            raise LearnError(f"{flag} {name} is given twice")
        out[name] = value
    return out


def _names(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",")]
    if not all(names):
        raise LearnError(f"empty name in the list '{text}'")
    return names


def _alpha(text: str) -> float | str:
    if text.strip() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise LearnError(f"--alpha: '{text}' is neither a number nor 'auto'") from None


def _label(text: str) -> tuple[str, list[str]]:
    name, sep, members = text.partition("=")
    if not sep or not name.strip() or not members.strip():
        raise LearnError(f"--label: expected NAME=OBS1,OBS2, got '{text}'")
    return name.strip(), _names(members)


def _reward(text: str) -> tuple[str, dict[str, str]]:
    name, sep, entries = text.partition("=")
    if not sep or not name.strip() or not entries.strip():
        raise LearnError(f"--reward: expected NAME=ACTION:VALUE,..., got '{text}'")
    costs = {}
    for entry in entries.split(","):
        action, colon, value = entry.rpartition(":")
        if not colon or not action.strip():
            raise LearnError(f"--reward {name.strip()}: expected ACTION:VALUE, got '{entry}'")
        if action.strip() in costs:
            raise LearnError(f"--reward {name.strip()}: the action '{action.strip()}' is given twice")
        costs[action.strip()] = value.strip()
    return name.strip(), costs
