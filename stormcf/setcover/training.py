"""Training the network generators with PyTorch (the optional extra ``stormcf[learn]``; notes §2).

The networks are the paper's (§4.3): dense layers Linear → batch normalisation → ReLU → dropout, ℓ2 regularisation
(Adam's weight decay), Adam, early stopping with the best weights restored. Losses:

- ``mc``: cross-entropy over the K training CFEs, ``L_MC = −(1/m) Σ_i Σ_k I_i^(k) log Î_i^(k)``;
- ``na`` (targets {0,1}^A), ``fa`` (targets {0,1}^{3n}, padded effect vectors):
  ``L^w = p_w · (1/m) Σ_i mean_a BCE(Î_i^(a), I_i^(a)) + α · (1/m) Σ_i mean_a |Î_i^(a) − I_i^(a)|`` with Î = σ(z);
- ``seq2seq``: the same per decoder step (teacher forcing: the true previous effect vector is the next input),
  plus the BCE of the "last action" bit weighted by p_w.

Where the paper is silent or does not fit a CPU budget ([R]): the learning rate follows one cycle (cosine warm-up
from lr/25 to lr over the first 30%, then cosine decay to 0) over the ``epochs`` given, which reaches in tens of
epochs what constant-rate Adam reaches in the paper's thousands; with a time limit the cycle runs over the epochs
or the time, whichever ends first (:class:`OneCycle`), so that a run cut by the limit still ends annealed. Early
stopping watches the validation exact match (the paper's metric) measured with the numpy inference a saved
generator uses, so the epoch kept is the best one as it will be used; its patience counts from the end of the
warm-up at the earliest (while the rate rises the validation score may fall for many epochs, and a stop there
would miss the annealing, where these networks gain most: measured, NA stopped at epoch 39 of 200 at 0.50).

Runs are seeded and deterministic on the CPU (``torch.use_deterministic_algorithms``, a fixed number of threads):
the same seed, data and settings give identical weights, except with a time limit, where the schedule depends on
the clock.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import replace
from typing import Iterator, cast

import numpy as np
import torch
from torch import nn

from .. import interrupt
from ..deadline import Deadline
from ..errors import TimeLimitReached
from ..interrupt import Interrupted
from ..run import Run
from .data import LabelledAgents
from .generators import FA_SLOTS, Decoder, Ensemble, Generator, GeneratorError, Network, TrainingSettings, fa_targets


class DenseNet(nn.Module):
    """Hidden layers Linear → BatchNorm1d → ReLU → Dropout, then a Linear output layer (logits)."""

    def __init__(self, inputs: int, hidden: tuple[int, ...], outputs: int, dropout: float) -> None:
        super().__init__()
        widths = (inputs,) + tuple(hidden)
        self.linear = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.norm = nn.ModuleList(nn.BatchNorm1d(b) for b in widths[1:])
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(widths[-1], outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for linear, norm in zip(self.linear, self.norm):
            x = self.dropout(torch.relu(norm(linear(x))))
        return self.out(x)

    def export(self, output: str) -> Network:
        """The numpy network: each batch normalisation (in evaluation mode) folded into its Linear layer,
        ``γ (W x + b − μ) / sqrt(σ² + ε) + β = (s W) x + s (b − μ) + β`` with ``s = γ / sqrt(σ² + ε)``."""
        weights, biases = [], []
        with torch.no_grad():
            for linear, norm in zip(self.linear, self.norm):
                assert isinstance(linear, nn.Linear) and isinstance(norm, nn.BatchNorm1d)  # as built in __init__
                mean, var = norm.running_mean, norm.running_var
                assert mean is not None and var is not None  # BatchNorm1d tracks them by default
                s = norm.weight / torch.sqrt(var + norm.eps)
                weights.append((linear.weight * s[:, None]).T)
                biases.append((linear.bias - mean) * s + norm.bias)
            weights.append(self.out.weight.T)
            biases.append(self.out.bias)
            return Network(tuple(_numpy(w) for w in weights), tuple(_numpy(b) for b in biases), output)


class EncoderDecoder(nn.Module):
    """seq2seq: a dense encoder whose tanh outputs start a GRU decoder; per step n effect logits and one "last
    action" logit (:class:`~stormcf.setcover.generators.Decoder` is its numpy twin)."""

    def __init__(self, n: int, hidden: tuple[int, ...], state: int, dropout: float) -> None:
        super().__init__()
        self.n = n
        self.encoder = DenseNet(n, hidden, state, dropout)
        self.cell = nn.GRUCell(n + 1, state)
        self.head = nn.Linear(state, n + 1)

    def forward(self, x: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: ``inputs`` (B, steps, n + 1) → logits (B, steps, n + 1)."""
        h = torch.tanh(self.encoder(x))
        out = []
        for step in range(inputs.shape[1]):
            h = self.cell(inputs[:, step], h)
            out.append(self.head(h))
        return torch.stack(out, dim=1)

    def export(self) -> tuple[Network, Decoder]:
        with torch.no_grad():
            decoder = Decoder(_numpy(self.cell.weight_ih), _numpy(self.cell.weight_hh), _numpy(self.cell.bias_ih),
                              _numpy(self.cell.bias_hh), _numpy(self.head.weight.T), _numpy(self.head.bias))
        return self.encoder.export("tanh"), decoder


class OneCycle:
    """The learning rate at a point of training: ``progress`` = the larger of the share of steps done and, with a
    time limit, the share of the time used (the budget is what the deadline had left when training started);
    ``lr(p) = lr_max · (1/25 + (1 − 1/25) · (1 − cos(π p / 0.3)) / 2)`` for p < 0.3, then
    ``lr_max · (1 + cos(π (p − 0.3) / 0.7)) / 2``."""

    WARM = 0.3

    def __init__(self, optimiser: torch.optim.Optimizer, peak: float, steps: int, deadline: Deadline) -> None:
        self.optimiser, self.peak, self.steps, self.deadline = optimiser, peak, steps, deadline
        self.budget = deadline.remaining() if deadline.limited else None
        self.start, self.done, self.last = deadline.elapsed(), 0, 0.0

    def progress(self) -> float:
        p = self.done / self.steps
        if self.budget:
            p = max(p, (self.deadline.elapsed() - self.start) / self.budget)
        return min(p, 1.0)

    def step(self) -> None:
        """Set the rate of the next step (``self.last``: the progress it was set for)."""
        p = self.last = self.progress()
        if p < self.WARM:
            lr = self.peak * (1 / 25 + (1 - 1 / 25) * (1 - math.cos(math.pi * p / self.WARM)) / 2)
        else:
            lr = self.peak * (1 + math.cos(math.pi * (p - self.WARM) / (1 - self.WARM))) / 2
        for group in self.optimiser.param_groups:
            group["lr"] = lr
        self.done += 1


def _numpy(t: torch.Tensor) -> np.ndarray:
    """A float32 copy (``.numpy()`` alone shares the parameter's memory, which training goes on changing)."""
    return np.array(t.detach().cpu().numpy(), dtype=np.float32, order="C", copy=True)


# ==================================================================================================== targets
class Task:
    """What one generator learns: its network, targets, loss and the generator made of the network."""

    def __init__(self, kind: str, data: LabelledAgents, settings: TrainingSettings) -> None:
        inst = data.instance
        self.kind, self.settings, self.instance = kind, settings, inst
        n, A = inst.n_features, inst.n_actions
        self.classes = sorted(set(data.actions)) if kind == "mc" else []
        if kind == "mc":
            index = {c: i for i, c in enumerate(self.classes)}
            self.targets = torch.tensor([index[a] for a in data.actions], dtype=torch.long)
            self.model: DenseNet | EncoderDecoder = DenseNet(n, settings.hidden, len(self.classes), settings.dropout)
        elif kind == "na":
            y = np.zeros((len(data), A), dtype=np.float32)
            for r, a in enumerate(data.actions):
                y[r, list(a)] = 1.0
            self.targets = torch.from_numpy(y)
            self.model = DenseNet(n, settings.hidden, A, settings.dropout)
        elif kind == "fa":
            self.targets = torch.from_numpy(fa_targets(inst, data.actions).astype(np.float32))
            self.model = DenseNet(n, settings.hidden, FA_SLOTS * n, settings.dropout)
        else:
            self.targets = torch.from_numpy(sequence_targets(inst, data.actions))
            self.model = EncoderDecoder(n, settings.hidden, settings.decoder, settings.dropout)

    def loss(self, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        y = self.targets[rows]
        s = self.settings
        if self.kind == "mc":
            return nn.functional.cross_entropy(self.model(x), y)
        if self.kind in ("na", "fa"):
            return weighted_loss(self.model(x), y, s.p_w, s.alpha).mean()
        n = self.instance.n_features
        steps = FA_SLOTS
        inputs = torch.zeros((len(y), steps, n + 1))
        inputs[:, 0, n] = 1.0
        inputs[:, 1:, :n] = y[:, :-1, :n]
        z = self.model(x, inputs)
        mask = y[:, :, n + 1]                                  # 1 on the steps of the CFE
        per_step = weighted_loss(z[..., :n], y[..., :n], s.p_w, s.alpha)
        per_step = per_step + s.p_w * nn.functional.binary_cross_entropy_with_logits(z[..., n], y[..., n],
                                                                                     reduction="none")
        return (per_step * mask).sum() / mask.sum()

    def generator(self) -> Generator:
        inst = self.instance
        gen = Generator(self.kind, inst.n_features, inst.n_actions, list(self.classes))
        if isinstance(self.model, EncoderDecoder):       # seq2seq
            gen.network, gen.decoder = self.model.export()
        else:
            gen.network = self.model.export("softmax" if self.kind == "mc" else "sigmoid")
        return gen


def weighted_loss(z: torch.Tensor, y: torch.Tensor, p_w: float, alpha: float) -> torch.Tensor:
    """``p_w · BCE + α · L1`` per agent (or per decoder step), both terms averaged over the outputs (the paper's
    L_NA^w; it leaves the L1 term's reduction over the outputs open, [R]: the mean, as Keras's BCE, so that
    neither term swamps the other's gradient)."""
    bce = nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none").mean(dim=-1)
    return p_w * bce + alpha * (torch.sigmoid(z) - y).abs().mean(dim=-1)


def sequence_targets(instance, actions: list[tuple[int, ...]]) -> np.ndarray:
    """(m, 3, n + 2): per step the effect vector, the "last action" bit and whether the step is part of the CFE."""
    n = instance.n_features
    y = np.zeros((len(actions), FA_SLOTS, n + 2), dtype=np.float32)
    for r, a in enumerate(actions):
        a = a[:FA_SLOTS]
        for step, i in enumerate(a):
            y[r, step, :n] = instance.effects[i] >= 1
            y[r, step, n + 1] = 1.0
        y[r, len(a) - 1, n] = 1.0
    return y


# ==================================================================================================== training
@contextlib.contextmanager
def deterministic(settings: TrainingSettings) -> Iterator[torch.Generator]:
    """Seeded, deterministic algorithms and a fixed number of threads while training (restored afterwards)."""
    threads, was_deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(settings.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(settings.seed)
    try:
        yield torch.Generator().manual_seed(settings.seed)
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(was_deterministic)


def fit(kind: str, data: LabelledAgents, settings: TrainingSettings, deadline: Run,
        watch: LabelledAgents | None = None) -> Generator:
    """Train a network generator (see the module docstring); ``info`` records the epochs, the best epoch, why
    training stopped (``early stopping``, ``epochs``, ``time limit``, ``interrupted``) and the learning curve.

    An ensemble (``settings.ensemble`` = M > 1) trains its networks one after the other: network j is the single
    network of the seed ``seed + j`` (its own validation split: together they learn from every training agent),
    trained with an equal share of the time left (``1 / (M − j)`` of it). A time limit or a Ctrl-C keeps the
    networks finished so far and the current one's best epoch. ``info["members"]`` has each network's facts, with
    its validation exact match; the ensemble has no held-out validation agents of its own (None)."""
    if settings.ensemble == 1:
        return _fit_network(kind, data, settings, deadline, watch)
    start = time.perf_counter()
    members: list[Generator] = []
    for j in range(settings.ensemble):
        member = replace(settings, seed=settings.seed + j, ensemble=1)
        try:
            members.append(_fit_network(kind, data, member, deadline.sub(fraction=1 / (settings.ensemble - j)),
                                        watch, f" ({j + 1}/{settings.ensemble})"))
        except (TimeLimitReached, Interrupted):
            if not members:
                raise
            break
        if deadline.expired:
            break
    return _ensemble(members, settings, time.perf_counter() - start, deadline.interrupted)


def _ensemble(members: list[Generator], settings: TrainingSettings, seconds: float, interrupted: bool) -> Generator:
    """The generator averaging ``members``; why it stopped: the first time limit or interrupt among them, one if
    fewer networks than asked were trained, else the last network's reason."""
    gen = members[0]
    networks = tuple(cast(Network, m.network) for m in members)  # each member: one network of _fit_network
    gen.network = Ensemble(networks) if len(members) > 1 else gen.network
    reasons = [m.info["stopped"] for m in members]
    cut = "interrupted" if interrupted else "time limit"
    stopped = next((r for r in reasons if r in ("interrupted", "time limit")),
                   cut if len(members) < settings.ensemble else reasons[-1])
    facts = [{key: m.info[key] for key in ("epochs", "best_epoch", "validation_exact_match", "stopped", "seconds")}
             for m in members]
    gen.info.update(epochs=sum(f["epochs"] for f in facts), best_epoch=[f["best_epoch"] for f in facts],
                    validation_exact_match=None, stopped=stopped, seconds=seconds, members=facts,
                    settings=_settings_dict(settings),
                    history=[dict(point, member=j) for j, m in enumerate(members) for point in m.info["history"]])
    return gen


def _fit_network(kind: str, data: LabelledAgents, settings: TrainingSettings, deadline: Run,
                 watch: LabelledAgents | None, label: str = "") -> Generator:
    """One network (see :func:`fit`)."""
    start = time.perf_counter()
    if deadline.interrupted:                     # before the optimiser imports torch._dynamo (a CPU second or two)
        raise interrupt.stopped()
    train_rows, val_rows = validation_split(len(data), settings)
    validation = data.subset(val_rows)
    with deterministic(settings) as rng:
        task = Task(kind, data, settings)
        X = torch.from_numpy(data.X.astype(np.float32))
        batches = _batches(len(train_rows), settings.batch_size)
        optimiser = torch.optim.Adam(task.model.parameters(), lr=settings.learning_rate, weight_decay=settings.l2)
        schedule = OneCycle(optimiser, settings.learning_rate, settings.epochs * len(batches), deadline)
        train_index = torch.from_numpy(train_rows)
        best, best_epoch, best_score, history, stopped, warm_end = None, 0, -1.0, [], "epochs", 0
        with deadline.progress(total=settings.epochs, desc=f"training {kind}{label}", unit="epoch") as bar:
            for epoch in range(1, settings.epochs + 1):
                task.model.train()
                order = train_index[torch.randperm(len(train_index), generator=rng)]
                total = 0.0
                for lo, hi in batches:
                    rows = order[lo:hi]
                    schedule.step()
                    loss = task.loss(X[rows], rows)
                    if not deadline.interrupted:    # each half of a step is up to a CPU second (2 x 2000 units)
                        optimiser.zero_grad()
                        loss.backward()
                    if deadline.expired:            # one reading of the clock per batch; this step is dropped
                        stopped = "interrupted" if deadline.interrupted else "time limit"
                        break
                    optimiser.step()
                    total += loss.item() * (hi - lo)
                if stopped != "epochs":
                    break
                task.model.eval()
                gen = task.generator()
                score = float(gen.exact_matches(validation.X, validation.actions, data.instance).mean())
                point = {"epoch": epoch, "seconds": round(time.perf_counter() - start, 3),
                         "loss": total / len(train_rows), "validation_exact_match": score}
                if watch is not None:
                    point["watch_exact_match"] = float(gen.exact_matches(watch.X, watch.actions,
                                                                         watch.instance).mean())
                history.append(point)
                if score > best_score:
                    best, best_epoch, best_score = gen, epoch, score
                bar.update(1)
                bar.set_postfix(loss=f"{point['loss']:.4f}", validation=f"{score:.4f}")
                _say(deadline, kind + label, point, settings.epochs, best_epoch)
                if schedule.last < OneCycle.WARM:
                    warm_end = epoch
                elif epoch - max(best_epoch, warm_end) >= settings.patience:
                    stopped = "early stopping"
                    break
    if best is None:
        if stopped == "interrupted":
            raise interrupt.stopped()
        raise TimeLimitReached(f"{deadline.limit} was reached before the first epoch of the {kind} generator "
                               f"finished; nothing was saved")
    best.info.update(epochs=len(history), best_epoch=best_epoch, validation_exact_match=best_score,
                     stopped=stopped, seconds=time.perf_counter() - start, train_agents=len(train_rows),
                     validation_agents=len(val_rows), classes=len(task.classes) or None,
                     settings=_settings_dict(settings), torch=torch.__version__, history=history)
    return best


def validation_split(m: int, settings: TrainingSettings) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation rows (seeded; at least one of each)."""
    if m < 2:
        raise GeneratorError(f"training a network needs at least 2 agents (one for validation), got {m}")
    order = np.random.default_rng(settings.seed).permutation(m)
    cut = min(m - 1, max(1, int(round(m * settings.validation))))
    return np.sort(order[cut:]), np.sort(order[:cut])


def _batches(m: int, size: int) -> list[tuple[int, int]]:
    """Batch bounds; a last batch of one agent joins the one before (batch normalisation needs two)."""
    bounds = [(lo, min(lo + size, m)) for lo in range(0, m, size)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] == 1:
        bounds[-2:] = [(bounds[-2][0], m)]
    if bounds[-1][1] - bounds[-1][0] < 2:
        raise GeneratorError("training a network needs at least 2 training agents per batch")
    return bounds


def _settings_dict(settings: TrainingSettings) -> dict:
    out = dict(vars(settings))
    out["hidden"] = list(settings.hidden)
    return out


def _say(run: Run, kind: str, point: dict, epochs: int, best: int) -> None:
    """With -v and no terminal for the progress bar: one line per epoch on stderr."""
    if run.solver_logs and run.reporter.lines:
        run.reporter.say(f"training {kind}: epoch {point['epoch']}/{epochs}, loss {point['loss']:.4f}, validation "
                         f"exact match {point['validation_exact_match']:.4f} (best epoch {best}), "
                         f"{point['seconds']:.1f} s")
