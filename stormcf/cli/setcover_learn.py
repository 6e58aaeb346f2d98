"""``stormcf setcover-learn DATA.npz --out GEN.npz``: train a learned CFE generator on a labelled data set (weights as
.npz; the held-out agents beside it)."""
from __future__ import annotations

import argparse

from .._lazy import LazyChoices
from .common import (Deprecated, add_input_argument, add_json_argument, add_output_argument, non_negative_int,
                     positive_int, run_single, share)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setcover-learn", help="train a learned CFE generator (mc, na, fa, seq2seq, knn) on a labelled "
                                              "data set (mc/na/fa/seq2seq need the extra stormcf[learn]: PyTorch)")
    add_input_argument(p, "data", metavar="DATA.npz", help="labelled data set from setcover-data")
    p.add_argument("--generator", choices=LazyChoices("stormcf.setcover.generators", "GENERATORS"), default="mc",
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
    p.set_defaults(run=run, analysis="stormcf.setcover.task:GeneratorTraining")


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


def held_out_path(out: str) -> str:
    """Where setcover-learn writes the held-out agents: ``GEN.test.npz`` beside ``GEN.npz``."""
    return str(out).removesuffix(".npz") + ".test.npz"


def run(args: argparse.Namespace) -> int:
    from ..setcover.data import LabelledAgents
    from ..setcover.task import GeneratorTraining
    analysis = GeneratorTraining(generator=args.generator, hidden=args.hidden, epochs=args.epochs,
                                 patience=args.patience, batch_size=args.batch_size, learning_rate=args.learning_rate,
                                 dropout=args.dropout, l2=args.l2, p_w=args.p_w, alpha=args.alpha,
                                 decoder=args.decoder, ensemble=args.ensemble, k=args.k,
                                 min_frequency=args.min_frequency, augment=args.augment, test=args.test,
                                 seed=args.seed)
    return run_single(args, analysis, LabelledAgents.load(args.data), None, str(args.data),
                      save=lambda result: result.save(args.out, held_out_path(args.out)))
