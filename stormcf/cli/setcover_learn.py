"""``stormcf setcover-data`` (generate and label a data set as the paper) and ``stormcf setcover-learn`` (train a
learned CFE generator on one; weights as .npz)."""
from __future__ import annotations

import argparse
from dataclasses import replace

from .._lazy import LazyChoices
from ..errors import OptionError
from .common import (Deprecated, add_input_argument, add_json_argument, add_output_argument, emit, non_negative_int,
                     positive_int)


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("setcover-data", help="generate the paper's random instance and agents, label them with "
                                             "their optimal CFE (one Storm call for the whole family)")
    add_output_argument(d, "out", metavar="OUT.npz", help="labelled data set (agents, CFEs, costs, the instance)")
    d.add_argument("--features", "-n", type=positive_int, default=20, help="n (default 20)")
    d.add_argument("--num-actions", "-A", dest="actions", type=positive_int, default=100, help="A (default 100)")
    d.add_argument("--actions", dest="actions", type=positive_int, action=Deprecated,
                   new="--num-actions A (--actions names the actions of an activity log in learn)")
    d.add_argument("--draws", type=positive_int, default=100_000,
                   help="agents drawn before de-duplication (default 100000)")
    d.add_argument("--p-f", type=probability, default=0.68, help="feature probability in [0, 1] (default 0.68)")
    d.add_argument("--p-a", type=probability, default=0.5, help="effect probability in [0, 1] (default 0.5)")
    d.add_argument("--costs", choices=LazyChoices("stormcf.setcover.data", "COST_MODES"), default="real",
                   metavar="COSTS", help="coordinate costs: %(choices)s (default real: U(0, n))")
    d.add_argument("--classifier", choices=LazyChoices("stormcf.setcover.data", "THRESHOLDS"), default="ones",
                   metavar="THRESHOLDS", help="thresholds: %(choices)s (default ones)")
    d.add_argument("--groups", choices=LazyChoices("stormcf.setcover.data", "GROUPINGS"), default=None,
                   metavar="GROUPING",
                   help="Table 4's grouped data: manual (each of 5 groups may take a random half of the actions) or "
                        "probabilistic (5 groups with their own actions, p_a = 0.4 .. 0.8; --p-a is then unused)")
    d.add_argument("--method", choices=LazyChoices("stormcf.setcover.family", "FAMILY_METHODS", ("milp",)),
                   default="storm", metavar="ENGINE", help="labelling engine: %(choices)s (default storm)")
    d.add_argument("--max-size", type=positive_int, default=3, help="drop CFEs with more actions (default 3)")
    d.add_argument("--seed", type=non_negative_int, default=0)
    add_output_argument(d, "--instance-out", metavar="INSTANCE.json", default=None, help="also write the instance")
    add_json_argument(d)
    d.set_defaults(run=run_data)

    p = sub.add_parser("setcover-learn", help="train a learned CFE generator (mc, na, fa, seq2seq, knn) on a labelled "
                                              "data set (mc/na/fa/seq2seq need the extra stormcf[learn]: PyTorch)")
    add_input_argument(p, "data", metavar="DATA.npz", help="labelled data set from setcover-data")
    p.add_argument("--generator", choices=LazyChoices("stormcf.setcover.learn", "GENERATORS"), default="mc",
                   metavar="GENERATOR",
                   help="mc (default), na, fa, seq2seq (full action, encoder-decoder), knn (Hamming)")
    add_output_argument(p, "--out", required=True, metavar="GEN.npz", companions=lambda out: [held_out_path(out)],
                        help="the trained generator (weights, classes); the held-out agents go beside it")
    p.add_argument("--hidden", type=widths, default=None, metavar="2000,2000",
                   help="hidden layer widths (default: mc and seq2seq 2 x 2000 as the paper, na and fa 3 x 1024)")
    p.add_argument("--epochs", type=positive_int, default=None,
                   help="epochs at most (default: mc 20, na and fa 90, seq2seq 60; one learning-rate cycle over "
                        "them or --time-limit, whichever ends first; early stopping)")
    p.add_argument("--patience", type=positive_int, default=None,
                   help="stop after this many epochs without a better validation exact match (default 20)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="agents per step (default: mc 2000, the others 512)")
    p.add_argument("--learning-rate", type=float, default=None,
                   help="peak learning rate of Adam (default: mc 3e-3, na and fa 2e-3, seq2seq 1e-2)")
    p.add_argument("--dropout", type=float, default=None, help="dropout rate (default: mc 0.1, the others 0.05)")
    p.add_argument("--l2", type=float, default=None, help="l2 regularisation (weight decay, default 1e-5)")
    p.add_argument("--p-w", type=float, default=None, help="na/fa/seq2seq loss: weight of the BCE (default 0.1)")
    p.add_argument("--l1-weight", dest="alpha", type=float, default=None, metavar="W",
                   help="na/fa/seq2seq loss: weight α of the L1 term (default: na, fa 0.05; seq2seq 0.1)")
    p.add_argument("--alpha", dest="alpha", type=float, action=Deprecated,
                   new="--l1-weight W (--alpha is IOAlergia's parameter in learn)")
    p.add_argument("--decoder", type=positive_int, default=None, help="seq2seq: GRU state size (default 512)")
    p.add_argument("--ensemble", type=positive_int, default=None, metavar="M",
                   help="mc/na/fa: train the networks of the seeds SEED .. SEED+M-1 (each with its own validation "
                        "split and an equal share of --time-limit) and average their output probabilities; not "
                        "the paper's (default 1)")
    p.add_argument("--neighbours", dest="k", type=positive_int, default=None,
                   help="neighbours k of knn (default: the paper's 5/10/15)")
    p.add_argument("--k", dest="k", type=positive_int, action=Deprecated,
                   new="--neighbours K (--k is the change budget in explain-path)")
    p.add_argument("--min-frequency", type=non_negative_int, default=0,
                   help="keep CFEs seen more than this (>10, >40 sets)")
    p.add_argument("--augment", type=non_negative_int, default=0, metavar="TARGET",
                   help="Algorithm 1: augment CFEs seen fewer than TARGET times in the training split")
    p.add_argument("--test", type=share, default=0.2,
                   help="held-out share in (0, 1), saved beside the generator (default 0.2)")
    p.add_argument("--seed", type=non_negative_int, default=0)
    add_json_argument(p)
    p.set_defaults(run=run_learn, stoppable=True)          # Ctrl-C: the best epoch so far


def widths(text: str) -> tuple[int, ...]:
    """``--hidden 256,256``: one or more layer widths >= 1."""
    parts = [part.strip() for part in text.split(",")]
    try:
        values = tuple(int(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected layer widths like 256,256, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"layer widths must be integers >= 1, got {text!r}")
    return values


def share(text: str) -> float:
    """A fraction strictly between 0 and 1."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1), got {text!r}")
    return value


def probability(text: str) -> float:
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1], got {text!r}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def held_out_path(out: str) -> str:
    """Where setcover-learn writes the held-out agents: ``GEN.test.npz`` beside ``GEN.npz``."""
    return str(out).removesuffix(".npz") + ".test.npz"


def run_data(args: argparse.Namespace) -> int:
    from ..report import Summary
    from ..setcover.data import generate, generate_grouped
    if args.groups:
        data = generate_grouped(args.groups, args.features, args.actions, args.p_f, args.draws, args.costs,
                                args.classifier, args.method, args.max_size, args.seed)
    else:
        data = generate(args.features, args.actions, args.p_f, args.p_a, args.draws, args.costs, args.classifier,
                        args.method, args.max_size, args.seed)
    data.save(args.out)
    if args.instance_out:
        data.instance.save(args.instance_out)
    line = (f"{args.out}: {len(data)} agents labelled by {args.method} ({data.info['agents']} negative agents, "
            f"{data.info['tied']} tied and {data.info['too_large']} with > {args.max_size} actions dropped); "
            f"CFE sizes {data.sizes()}; family MDP {data.info['family_states']} states")
    lines = [line] + [f"  group {name}: {part['kept']} of {part['agents']} agents kept ({part['infeasible']} without a "
                      f"cover, {part['tied']} tied, {part['too_large']} with > {args.max_size} actions)"
                      for name, part in data.info.get("per_group", {}).items()]
    emit(Summary("setcover-data", {**data.info, "cfe_sizes": data.sizes(), "out": str(args.out)}, lines), args)
    return 0


def run_learn(args: argparse.Namespace) -> int:
    from ..limits import require_memory
    from ..report import Summary
    from ..setcover.data import LabelledAgents, frequency_filter, split
    from ..setcover.learn import ENSEMBLE_KINDS, NETWORKS, augment, exact_match, train
    deadline = args.context
    kind = args.generator
    settings = training_settings(args) if kind in NETWORKS else None
    if args.ensemble not in (None, 1) and kind not in ENSEMBLE_KINDS:
        raise OptionError(f"--ensemble {args.ensemble}: an ensemble is for {', '.join(ENSEMBLE_KINDS)}, not {kind}")
    data = LabelledAgents.load(args.data)
    if args.min_frequency:
        data = frequency_filter(data, args.min_frequency)
    train_set, test_set = split(data, args.test, args.seed)
    if args.augment:
        train_set = augment(train_set, args.augment, seed=args.seed)
    if kind == "knn" and args.k is not None and args.k > len(train_set):
        raise OptionError(f"--neighbours {args.k}: only {len(train_set)} training agents to take neighbours from")
    if settings is not None:
        layers = [data.instance.n_features, *settings.hidden, max(data.instance.n_actions, len(set(train_set.actions)))]
        weights = sum(a * b for a, b in zip(layers, layers[1:]))
        # the weights, their gradients and Adam's two moments, and the activations of a batch
        # and the trained networks of an ensemble (float32)
        require_memory(8.0 * (4 * weights + settings.batch_size * sum(layers)) + 4.0 * weights * settings.ensemble,
                       f"a network of {weights:,} weights (--hidden)")
    # training stops at 95% of the time left, so that evaluating and saving the best epoch fit in the limit
    generator = train(kind, train_set, settings, k=args.k, run=deadline.sub(fraction=0.95))
    generator.info.update(data=str(args.data), min_frequency=args.min_frequency, augment=args.augment)
    held_out = exact_match(generator, test_set) if len(test_set) else None
    generator.info["test_exact_match"] = held_out["exact_match"] if held_out else None
    generator.save(args.out)
    test_path = held_out_path(args.out)
    test_set.save(test_path)
    info = generator.info
    trained = training_line(info) if kind in NETWORKS else f"k = {generator.k}"
    lines = [f"{args.out}: {kind} generator trained on {info['train_agents']} agents, {trained}, "
             f"{info['seconds']:.1f} s",
             f"exact match on the {len(test_set)} held-out agents: " +
             (f"{held_out['exact_match']:.4f} ± {held_out['ci95']:.4f}" if held_out else "-") +
             f" (they are in {test_path})"]
    notes = []
    if info.get("stopped") == "time limit":
        notes.append(f"the time limit ({args.time_limit:g} s) ended training after {info['epochs']} epochs: "
                     f"{kept_networks(info, settings)}")
    elif info.get("stopped") == "interrupted":
        notes.append(f"interrupted after {info['epochs']} epochs: {kept_networks(info, settings)}")
    lines += [f"note: {note}" for note in notes]
    status = "interrupted" if info.get("stopped") == "interrupted" else "ok"
    emit(Summary("setcover-learn", {**info, "generator": kind, "test": test_path}, lines, notes=tuple(notes),
                 status=status), args)
    return 0


def kept_networks(info: dict, settings) -> str:
    """What a network generator stopped early keeps: its best epoch, or an ensemble's networks trained so far."""
    from ..setcover.learn import best_epochs
    if "members" not in info:
        return f"the generator is the best epoch so far ({best_epochs(info)})"
    return (f"the generator averages the {len(info['members'])} of {settings.ensemble} networks trained so far "
            f"(best epochs {best_epochs(info)})")


def training_line(info: dict) -> str:
    """How a network generator was trained, for the summary: its epochs, best epoch(s), validation score, stop."""
    from ..setcover.learn import best_epochs
    if "members" not in info:
        return (f"{info['epochs']} epochs (best epoch {info['best_epoch']}, validation exact match "
                f"{info['validation_exact_match']:.4f}; stopped: {info['stopped']})")
    scores = ", ".join(f"{m['validation_exact_match']:.4f}" for m in info["members"])
    return (f"an ensemble of {len(info['members'])} networks, {info['epochs']} epochs (best epochs "
            f"{best_epochs(info)}; validation exact match of each on its own split "
            f"{scores}; stopped: {info['stopped']})")


def training_settings(args: argparse.Namespace):
    """The generator's defaults with the options given (a :class:`~stormcf.setcover.learn.TrainingSettings`)."""
    from ..setcover.learn import DEFAULT_SETTINGS, GeneratorError
    chosen = {"epochs": args.epochs, "patience": args.patience, "batch_size": args.batch_size,
              "learning_rate": args.learning_rate, "dropout": args.dropout, "l2": args.l2, "p_w": args.p_w,
              "alpha": args.alpha, "decoder": args.decoder, "seed": args.seed, "ensemble": args.ensemble}
    if args.hidden is not None:
        chosen["hidden"] = args.hidden
    settings = replace(DEFAULT_SETTINGS[args.generator], **{k: v for k, v in chosen.items() if v is not None})
    try:
        settings.check()
    except GeneratorError as err:
        raise OptionError(f"setcover-learn: {err}") from None
    return settings
