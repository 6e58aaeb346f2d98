"""``stormcf setcover-data`` (generate and label a data set as the paper) and ``stormcf setcover-learn`` (train a
learned CFE generator on one; weights as .npz)."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from .common import add_json_argument, add_output_argument, emit, non_negative_int, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("setcover-data", help="generate the paper's random instance and agents, label them with "
                                             "their optimal CFE (one Storm call for the whole family)")
    add_output_argument(d, "out", metavar="OUT.npz", help="labelled data set (agents, CFEs, costs, the instance)")
    d.add_argument("--features", "-n", type=positive_int, default=20, help="n (default 20)")
    d.add_argument("--actions", "-A", type=positive_int, default=100, help="A (default 100)")
    d.add_argument("--draws", type=positive_int, default=100_000,
                   help="agents drawn before de-duplication (default 100000)")
    d.add_argument("--p-f", type=float, default=0.68, help="feature probability (default 0.68)")
    d.add_argument("--p-a", type=float, default=0.5, help="effect probability (default 0.5)")
    d.add_argument("--costs", choices=LazyChoices("stormcf.setcover.data", "COST_MODES"), default="real",
                   metavar="COSTS", help="coordinate costs: %(choices)s (default real: U(0, n))")
    d.add_argument("--classifier", choices=LazyChoices("stormcf.setcover.data", "THRESHOLDS"), default="ones",
                   metavar="THRESHOLDS", help="thresholds: %(choices)s (default ones)")
    d.add_argument("--method", choices=LazyChoices("stormcf.setcover.family", "FAMILY_METHODS", ("milp",)),
                   default="storm", metavar="ENGINE", help="labelling engine: %(choices)s (default storm)")
    d.add_argument("--max-size", type=positive_int, default=3, help="drop CFEs with more actions (default 3)")
    d.add_argument("--seed", type=non_negative_int, default=0)
    add_output_argument(d, "--instance-out", metavar="INSTANCE.json", default=None, help="also write the instance")
    add_json_argument(d)
    d.set_defaults(run=run_data)

    p = sub.add_parser("setcover-learn", help="train a learned CFE generator (mc, na, fa, knn) on a labelled data set")
    p.add_argument("data", metavar="DATA.npz", help="labelled data set from setcover-data")
    p.add_argument("--generator", choices=LazyChoices("stormcf.setcover.learn", "GENERATORS"), default="mc",
                   metavar="GENERATOR", help="mc (default), na, fa, knn")
    add_output_argument(p, "--out", required=True, metavar="GEN.npz",
                        help="the trained generator (weights, classes); the held-out agents go beside it")
    p.add_argument("--hidden", default="256,256", help="hidden layer widths (default 256,256)")
    p.add_argument("--max-iter", type=positive_int, default=200, help="epochs at most (default 200; early stopping)")
    p.add_argument("--k", type=positive_int, default=None, help="neighbours of knn (default: the paper's 5/10/15)")
    p.add_argument("--min-frequency", type=non_negative_int, default=0,
                   help="keep CFEs seen more than this (>10, >40 sets)")
    p.add_argument("--augment", type=non_negative_int, default=0, metavar="TARGET",
                   help="Algorithm 1: augment CFEs seen fewer than TARGET times in the training split")
    p.add_argument("--test", type=float, default=0.2, help="held-out share saved beside the generator (default 0.2)")
    p.add_argument("--seed", type=non_negative_int, default=0)
    add_json_argument(p)
    p.set_defaults(run=run_learn)


def run_data(args: argparse.Namespace) -> int:
    from ..report import Summary
    from ..setcover.data import generate
    data = generate(args.features, args.actions, args.p_f, args.p_a, args.draws, args.costs, args.classifier,
                    args.method, args.max_size, args.seed)
    data.save(args.out)
    if args.instance_out:
        data.instance.save(args.instance_out)
    line = (f"{args.out}: {len(data)} agents labelled by {args.method} ({data.info['agents']} negative agents, "
            f"{data.info['tied']} tied and {data.info['too_large']} with > {args.max_size} actions dropped); "
            f"CFE sizes {data.sizes()}; family MDP {data.info['family_states']} states")
    emit(Summary("setcover-data", {**data.info, "cfe_sizes": data.sizes(), "out": str(args.out)}, [line]), args)
    return 0


def run_learn(args: argparse.Namespace) -> int:
    from ..report import Summary
    from ..setcover.data import LabelledAgents, frequency_filter, split
    from ..setcover.learn import augment, train
    data = LabelledAgents.load(args.data)
    if args.min_frequency:
        data = frequency_filter(data, args.min_frequency)
    train_set, test_set = split(data, args.test, args.seed)
    if args.augment:
        train_set = augment(train_set, args.augment, seed=args.seed)
    hidden = tuple(int(h) for h in args.hidden.split(",") if h)
    generator = train(args.generator, train_set, hidden, args.seed, args.max_iter, k=args.k)
    generator.info.update(data=str(args.data), min_frequency=args.min_frequency, augment=args.augment)
    generator.save(args.out)
    test_path = str(args.out).removesuffix(".npz") + ".test.npz"
    test_set.save(test_path)
    line = (f"{args.out}: {args.generator} generator trained on {len(train_set)} agents "
            f"({generator.info.get('epochs', 0)} epochs, {generator.info['seconds']:.1f} s); "
            f"held-out agents in {test_path}")
    emit(Summary("setcover-learn", {**generator.info, "generator": args.generator, "test": test_path}, [line]), args)
    return 0
