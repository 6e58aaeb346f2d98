"""``stormcf learn LOG --out MODEL.prism``: learn an MDP and the users' strategy from an event log (IOAlergia)."""
from __future__ import annotations

import argparse

from ..errors import LearnError
from .._lazy import LazyChoices
from .common import add_json_argument, add_output_argument, emit


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("learn", help="learn an MDP and the users' strategy from an event log (IOAlergia)")
    p.add_argument("log", metavar="LOG", help="event log: CSV (paired: case,action,observation; activity: "
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
    p.add_argument("--laplace", type=float, default=0.0, metavar="L",
                   help="Laplace smoothing of the strategy: pseudo-count L per enabled action (default 0)")
    p.add_argument("--learner", choices=LazyChoices("stormcf.learn.problem", "LEARNERS"), default="stormcf",
                   metavar="LEARNER",
                   help="stormcf's IOAlergia (default) or AALpy's (the same automaton, far slower)")
    p.add_argument("--prop", "-p", action="append", default=[], metavar="PCTL",
                   help="a property Storm checks under the users' strategy (repeatable)")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..learn import LearnProblem, learn_mdp, read_log
    actions = _names(args.actions) if args.actions is not None else None
    log = read_log(args.log, actions)
    problem = LearnProblem(log, alpha=_alpha(args.alpha), labels=dict(_label(x) for x in args.label),
                           final_only=frozenset(_names(args.final_only)) if args.final_only else frozenset(),
                           rewards=dict(_reward(x) for x in args.reward), laplace=args.laplace,
                           learner=args.learner, model_path=args.out, strategy_path=args.strategy_out,
                           drn_path=args.drn_out, properties=args.prop)
    emit(learn_mdp(problem), args)
    return 0


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
        costs[action.strip()] = value.strip()
    return name.strip(), costs
