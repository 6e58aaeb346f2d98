"""The network generators (PyTorch, stormcf[learn]): tiny deterministic training runs, numpy inference equal to
PyTorch's, the generator file (round trip, refusal of bad and hostile files), time limit and Ctrl-C keep the best
epoch, and inference without PyTorch."""
import json
import os
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from stormcf import interrupt
from stormcf.run import Run
from stormcf.errors import TimeLimitReached
from stormcf.setcover.data import LabelledAgents, generate, generate_grouped, split
from stormcf.setcover.generators import Generator, GeneratorError, TrainingSettings, evaluate, exact_match, train

torch = pytest.importorskip("torch")

TINY = TrainingSettings(hidden=(24,), epochs=4, batch_size=64, patience=4, decoder=16, threads=1)


@pytest.fixture(scope="module")
def tiny():
    """n = 8, A = 12: a few hundred labelled agents (one Storm call)."""
    return split(generate(n=8, actions=12, draws=800, seed=3), seed=0)


class CallClock:
    """A deadline clock that advances one second per reading; the training loop reads it once per batch, so the
    tests count batches and epochs, not wall time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def batches_per_epoch(data, settings):
    train_rows = len(data) - max(1, round(len(data) * settings.validation))
    return -(-train_rows // settings.batch_size)


@pytest.mark.parametrize("kind", ["mc", "na", "fa", "seq2seq"])
def test_training_is_deterministic_and_the_file_round_trips(kind, tiny, tmp_path):
    train_set, test_set = tiny
    first = train(kind, train_set, TINY)
    again = train(kind, train_set, TINY)
    other = train(kind, train_set, replace(TINY, seed=1))
    assert first.info["epochs"] >= 1 and 1 <= first.info["best_epoch"] <= first.info["epochs"]
    assert len(first.info["history"]) == first.info["epochs"]
    for a, b in zip(first.network.weights, again.network.weights):
        assert np.array_equal(a, b)                                        # same seed: identical weights
    assert not np.array_equal(first.network.weights[0], other.network.weights[0])
    first.save(tmp_path / "g.npz")
    back = Generator.load(tmp_path / "g.npz")
    inst = test_set.instance
    assert back.predict(test_set.X, inst) == first.predict(test_set.X, inst)
    assert back.info["settings"]["hidden"] == [24]
    metrics = evaluate(back, test_set, top_k=2, certify="lp")
    assert metrics["guaranteed_valid_rate"] == 1.0 and 0.0 <= metrics["exact_match"] <= 1.0
    assert set(metrics["exact_match_by_size"]) <= {1, 2, 3}


def test_numpy_inference_equals_pytorch(tiny):
    """Batch normalisation folded into the dense layers: the saved network gives PyTorch's outputs."""
    from stormcf.setcover.training import DenseNet, EncoderDecoder
    train_set, _ = tiny
    X = torch.from_numpy(train_set.X.astype(np.float32))
    torch.manual_seed(0)
    net = DenseNet(8, (16, 12), 5, 0.2)
    with torch.no_grad():
        for norm in net.norm:                      # non-trivial running statistics and affine parameters
            norm.running_mean.uniform_(-1, 1)
            norm.running_var.uniform_(0.5, 2)
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    net.eval()
    with torch.no_grad():
        expected = torch.softmax(net(X), dim=1).numpy()
    assert np.allclose(net.export("softmax").scores(train_set.X), expected, atol=1e-5)
    seq = EncoderDecoder(8, (16,), 6, 0.0).eval()
    with torch.no_grad():
        h = torch.tanh(seq.encoder(X))
        u = torch.zeros((len(X), 9))
        u[:, 8] = 1
        h1 = seq.cell(u, h)
        step = seq.head(h1).numpy()
    encoder, decoder = seq.export()
    assert np.allclose(encoder.scores(train_set.X), h.numpy(), atol=1e-5)
    h0 = encoder.scores(train_set.X)
    assert np.allclose(decoder._cell(np.eye(9, dtype=np.float32)[[8] * len(X)], h0) @ decoder.head_w +
                       decoder.head_b, step, atol=1e-5)


def test_exported_weights_are_copies():
    """The best epoch's generator must not change when training goes on (a view of the parameters would)."""
    from stormcf.setcover.training import DenseNet, EncoderDecoder
    net = DenseNet(8, (16,), 5, 0.0).eval()
    seq = EncoderDecoder(8, (16,), 6, 0.0).eval()
    dense, (encoder, decoder) = net.export("softmax"), seq.export()
    before = [a.copy() for a in dense.weights + dense.biases + encoder.weights + encoder.biases] + \
        [getattr(decoder, name).copy() for name in decoder.NAMES]
    with torch.no_grad():
        for p in list(net.parameters()) + list(seq.parameters()):
            p.add_(1.0)
    after = list(dense.weights + dense.biases + encoder.weights + encoder.biases) + \
        [getattr(decoder, name) for name in decoder.NAMES]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))


def test_the_saved_generator_is_the_best_epoch(tiny):
    """The generator returned is the best epoch's: its exact match on the watched agents is the one recorded for
    that epoch, also when later epochs changed the weights (early stopping after a worse epoch)."""
    train_set, test_set = tiny
    gen = train("na", train_set, replace(TINY, epochs=8, patience=8), watch=test_set)
    point = gen.info["history"][gen.info["best_epoch"] - 1]
    assert exact_match(gen, test_set)["exact_match"] == point["watch_exact_match"]


def test_early_stopping_waits_for_the_end_of_the_warm_up(tiny):
    """Patience counts from the end of the learning rate's warm-up at the earliest: with patience 1 and a rate too
    high to learn (the validation score does not improve after epoch 1), training goes on through the warm-up
    (the first 30% of 20 epochs: epochs 1-6, whose last step is before 30%) and stops one epoch after it."""
    train_set, _ = tiny
    gen = train("na", train_set, replace(TINY, epochs=20, patience=1, learning_rate=50.0))
    scores = [p["validation_exact_match"] for p in gen.info["history"]]
    assert max(scores[1:6]) <= scores[0]            # no better epoch in the warm-up: the old rule stopped at 2
    assert gen.info["stopped"] == "early stopping" and gen.info["epochs"] == max(gen.info["best_epoch"], 6) + 1


def test_mc_learns_the_map_better_than_the_hamming_baseline():
    """A small version of Table 2 (n = 12, A = 20, about 4,000 agents; seconds): MC learns the map well and beats
    the Hamming baseline; its top-3 candidates filtered by validity and cost are optimal more often."""
    data = generate(n=12, actions=20, draws=20_000, p_f=0.5, seed=11)
    train_set, test_set = split(data, seed=0)
    mc = train("mc", train_set, TrainingSettings(hidden=(128,), epochs=25, batch_size=256, patience=25, threads=1))
    top1, top3 = evaluate(mc, test_set, top_k=1), evaluate(mc, test_set, top_k=3)
    knn = exact_match(train("knn", train_set), test_set)
    assert top1["exact_match"] > 0.85 and top1["exact_match"] > knn["exact_match"] + 0.1
    assert top3["guaranteed_optimal_rate"] >= top1["guaranteed_optimal_rate"] >= top1["exact_match"]


@pytest.mark.parametrize("kind", ["mc", "na", "fa"])
def test_an_ensemble_averages_the_networks_of_consecutive_seeds(kind, tiny, tmp_path):
    """Network j of an ensemble is the single network of the seed ``seed + j``; the ensemble's probabilities are
    their mean, its decoding that of the mean (na/fa: σ > 1/2), and the file round-trips."""
    train_set, test_set = tiny
    ensemble = train(kind, train_set, replace(TINY, ensemble=3, seed=4))
    members = ensemble.network.members
    assert len(members) == 3 and len(ensemble.info["members"]) == 3
    for j, member in enumerate(members):
        single = train(kind, train_set, replace(TINY, seed=4 + j))
        assert all(np.array_equal(a, b) for a, b in zip(member.weights, single.network.weights))
        assert ensemble.info["members"][j]["validation_exact_match"] == single.info["validation_exact_match"]
    mean = sum(member.scores(test_set.X) for member in members) / 3
    assert np.allclose(ensemble.network.scores(test_set.X), mean, atol=1e-6)
    inst = test_set.instance
    if kind == "mc":
        expected = [[ensemble.classes[c]] for c in mean.argmax(axis=1)]
        assert ensemble.predict(test_set.X, inst) == expected
    elif kind == "na":
        decided = np.abs(mean - 0.5).min(axis=1) > 1e-5          # rows with no output at the threshold
        chosen = [tuple(np.flatnonzero(row > 0.5)) or (int(row.argmax()),) for row in mean]
        got = ensemble.predict(test_set.X, inst)
        assert all(g == [c] for g, c, d in zip(got, chosen, decided) if d) and decided.mean() > 0.9
    else:
        bits = (mean > 0.5).reshape(len(mean), -1, inst.n_features)
        got = ensemble.effect_vectors(test_set.X)
        assert all(np.array_equal(g, b[b.any(axis=1)]) for g, b in zip(got, bits))
    assert ensemble.info["epochs"] == sum(m["epochs"] for m in ensemble.info["members"])
    assert ensemble.info["validation_exact_match"] is None and ensemble.info["best_epoch"] == [
        m["best_epoch"] for m in ensemble.info["members"]]
    ensemble.save(tmp_path / "e.npz")
    back = Generator.load(tmp_path / "e.npz")
    assert len(back.network.members) == 3 and back.predict(test_set.X, inst) == ensemble.predict(test_set.X, inst)


def test_an_ensemble_shares_the_time_limit_and_keeps_the_networks_trained(tiny):
    """Each network gets an equal share of the time left. Clock readings (see the test below): the deadline, the
    share, the schedule's two, then two per batch; a budget of 6 P + 5 readings (P batches per epoch) ends the
    first network's share 3 P readings into it, half-way through its second epoch, and the second network's share
    likewise: two networks of one epoch each, both cut by the time limit. A Ctrl-C in the second network's first
    epoch keeps the first network alone."""
    train_set, _ = tiny
    settings = replace(TINY, epochs=4, patience=4, batch_size=16, ensemble=2)
    per_epoch = batches_per_epoch(train_set, settings)
    assert per_epoch >= 6                       # slack for the readings between and around the two networks
    gen = train("mc", train_set, settings, run=Run(6 * per_epoch + 5, clock=CallClock()))
    assert [(m["epochs"], m["stopped"]) for m in gen.info["members"]] == [(1, "time limit")] * 2
    assert gen.info["stopped"] == "time limit" and len(gen.network.members) == 2

    class Interrupting(CallClock):
        def __call__(self):
            now = super().__call__()
            if now >= 4 * per_epoch + 8:        # unlimited: one reading per batch, 4 P batches in network 1
                interrupt.request()
            return now

    try:
        gen = train("mc", train_set, settings, run=Run(None, clock=Interrupting()))
    finally:
        interrupt.clear()
    assert [(m["epochs"], m["stopped"]) for m in gen.info["members"]] == [(4, "epochs")]
    assert gen.info["stopped"] == "interrupted" and gen.network.members == (gen.network,)
    with pytest.raises(GeneratorError, match="not seq2seq"):
        train("seq2seq", train_set, settings)


def test_time_limit_keeps_the_best_epoch(tiny):
    """A deadline that expires in the third epoch: two epochs done, the best of them kept, ``stopped`` says why.
    The clock is read once when the deadline is made, twice by the schedule when training starts, then twice per
    batch (the schedule's progress, the deadline check): with s = 4 P + 4 seconds (P batches per epoch) the check
    of batch 2 P + 1, the first of epoch 3, finds it expired."""
    train_set, _ = tiny
    per_epoch = batches_per_epoch(train_set, TINY)
    deadline = Run(4 * per_epoch + 4, clock=CallClock())
    gen = train("mc", train_set, replace(TINY, epochs=10, patience=10), run=deadline)
    assert gen.info["stopped"] == "time limit" and gen.info["epochs"] == 2 and gen.info["best_epoch"] in (1, 2)
    with pytest.raises(TimeLimitReached, match="before the first epoch"):
        train("mc", train_set, TINY, run=Run(1.5, clock=CallClock()))


def test_ctrl_c_keeps_the_best_epoch_or_saves_nothing(tiny):
    train_set, _ = tiny
    per_epoch = batches_per_epoch(train_set, TINY)

    class Interrupting(CallClock):
        def __init__(self, at):
            super().__init__()
            self.at = at

        def __call__(self):
            now = super().__call__()
            if now >= self.at:
                interrupt.request()
            return now

    # unlimited deadline: read once when made, once by the schedule, then once per batch; the read that asks to
    # stop is seen by the next batch's check
    try:
        gen = train("na", train_set, replace(TINY, epochs=10),
                    run=Run(None, clock=Interrupting(per_epoch + 2)))
        assert gen.info["stopped"] == "interrupted" and gen.info["epochs"] == 1
        interrupt.clear()
        with pytest.raises(KeyboardInterrupt):
            train("na", train_set, TINY, run=Run(None, clock=Interrupting(2)))
    finally:
        interrupt.clear()


def test_cli_time_limit_before_the_first_epoch_writes_nothing(tiny, tmp_path, cli):
    train_set, _ = tiny
    train_set.save(tmp_path / "d.npz")
    code, _, err = cli("setcover-learn", tmp_path / "d.npz", "--out", tmp_path / "g.npz", "--hidden", "8",
                       "--time-limit", "1e-6")
    assert code == 5 and "before the first epoch" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "g.npz").exists()
    code, out, err = cli("setcover-learn", tmp_path / "d.npz", "--out", tmp_path / "g.npz", "--hidden", "8",
                         "--epochs", "2", "--batch-size", "64", "--json", "-", "-v")
    facts = json.loads(out)["facts"]
    assert code == 0 and facts["epochs"] == 2 and facts["stopped"] == "epochs" and facts["test_exact_match"] >= 0
    assert err.count("stormcf: training mc: epoch") == 2             # -v without a terminal: one line per epoch


def test_cli_ensemble(tiny, tmp_path, cli):
    train_set, _ = tiny
    train_set.save(tmp_path / "d.npz")
    code, out, err = cli("setcover-learn", tmp_path / "d.npz", "--out", tmp_path / "g.npz", "--hidden", "8",
                         "--epochs", "2", "--batch-size", "64", "--ensemble", "2", "--json", "-", "-v")
    facts = json.loads(out)["facts"]
    assert code == 0 and facts["epochs"] == 4 and len(facts["members"]) == 2 and facts["settings"]["ensemble"] == 2
    assert "training mc (2/2): epoch 2/2" in err
    assert len(Generator.load(tmp_path / "g.npz").network.members) == 2
    code, out, err = cli("setcover-learn", tmp_path / "d.npz", "--out", tmp_path / "s.npz", "--generator",
                         "seq2seq", "--ensemble", "2")
    assert code == 2 and "--ensemble 2" in err and "seq2seq" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s.npz").exists()


# ==================================================================================================== bad files
@pytest.fixture(scope="module")
def saved(tiny, tmp_path_factory):
    """A saved mc and knn generator: name -> (path, arrays)."""
    train_set, _ = tiny
    folder = tmp_path_factory.mktemp("generators")
    out = {}
    for kind in ("mc", "knn"):
        path = folder / f"{kind}.npz"
        train(kind, train_set, TINY).save(path)
        with np.load(path) as data:
            out[kind] = (path, {k: data[k] for k in data.files})
    return out


def rewrite(arrays, path, **changes):
    data = dict(arrays)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    np.savez(path, **data)
    return path


def meta_with(arrays, **changes):
    meta = json.loads(str(arrays["meta"]))
    meta.update(changes)
    return np.array(json.dumps(meta))


@pytest.mark.parametrize("case, field", [
    ("missing weights", "w1"), ("wrong shape", "w0"), ("NaN weights", "b0"), ("class out of range", "classes"),
    ("unknown kind", "kind"), ("integer weights", "w0"), ("meta not JSON", "meta"), ("missing meta", "meta"),
    ("pickled object array", "meta"), ("k = 0", "k"), ("knn labels out of range", "train_y"),
    ("members = 0", "members"), ("a member missing", "m1_w0"),
])
def test_bad_generator_files_are_refused_naming_the_field(case, field, saved, tmp_path):
    path, mc = saved["mc"]
    _, knn = saved["knn"]
    bad = tmp_path / "bad.npz"
    w0 = mc["w0"]
    make = {
        "missing weights": lambda: rewrite(mc, bad, w1=None),
        "wrong shape": lambda: rewrite(mc, bad, w0=w0[:-1]),
        "NaN weights": lambda: rewrite(mc, bad, b0=np.full_like(mc["b0"], np.nan)),
        "class out of range": lambda: rewrite(mc, bad, meta=meta_with(mc, classes=[[0, 99]] + json.loads(
            str(mc["meta"]))["classes"][1:])),
        "unknown kind": lambda: rewrite(mc, bad, meta=meta_with(mc, kind="rnn")),
        "integer weights": lambda: rewrite(mc, bad, w0=w0.astype(np.int64)),
        "meta not JSON": lambda: rewrite(mc, bad, meta=np.array("{not json")),
        "missing meta": lambda: rewrite(mc, bad, meta=None),
        "pickled object array": lambda: rewrite(mc, bad, meta=np.array([{"kind": "mc"}], dtype=object)),
        "k = 0": lambda: rewrite(knn, bad, meta=meta_with(knn, k=0)),
        "knn labels out of range": lambda: rewrite(knn, bad, train_y=knn["train_y"] + 10_000),
        "members = 0": lambda: rewrite(mc, bad, meta=meta_with(mc, members=0)),
        "a member missing": lambda: rewrite(mc, bad, meta=meta_with(mc, members=2)),
    }
    make[case]()
    with pytest.raises(GeneratorError) as err:
        Generator.load(bad)
    message = str(err.value)
    assert str(bad) in message and "\n" not in message
    assert f"'{field}'" in message or (case == "pickled object array" and "not a generator file" in message)


def test_not_an_npz_and_truncated_files_are_refused(saved, tmp_path, cli, tiny):
    path, _ = saved["mc"]
    text = tmp_path / "text.npz"
    text.write_text("print('hello')\n")
    truncated = tmp_path / "cut.npz"
    truncated.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    for bad in (text, truncated, single):
        with pytest.raises(GeneratorError, match="not a generator file"):
            Generator.load(bad)
    _, test_set = tiny
    test_set.save(tmp_path / "t.npz")
    code, out, err = cli("setcover-evaluate", truncated, tmp_path / "t.npz")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "cut.npz" in err


def test_a_zip_with_a_pickle_inside_is_not_unpickled(saved, tmp_path):
    """An .npz whose member is a pickle (``np.save(allow_pickle=True)`` of an object): refused, never run."""
    _, mc = saved["mc"]
    bad = tmp_path / "evil.npz"
    rewrite(mc, bad, w0=np.array([Path("x")], dtype=object))
    with zipfile.ZipFile(bad) as z:
        assert "w0.npy" in z.namelist()
    with pytest.raises(GeneratorError, match="not a generator file"):
        Generator.load(bad)


def test_inference_of_a_saved_generator_needs_no_pytorch(saved, tiny, tmp_path):
    path, _ = saved["mc"]
    _, test_set = tiny
    test_set.save(tmp_path / "t.npz")
    code = ("import sys; from stormcf.setcover.generators import Generator, evaluate; "
            "from stormcf.setcover.data import LabelledAgents; "
            f"m = evaluate(Generator.load({str(path)!r}), LabelledAgents.load({str(tmp_path / 't.npz')!r})); "
            "assert 'torch' not in sys.modules, 'torch was imported'; print(m['exact_match'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert 0.0 <= float(done.stdout.strip()) <= 1.0


# ==================================================================================================== groups
def test_grouped_data_sets_of_table_4(tmp_path):
    """manual: 5 groups share one catalogue, each may take part of it; probabilistic: 5 catalogues with p_a = 0.4 ..
    0.8. Every agent's CFE uses only its group's actions and is the optimum over them; exact match per group."""
    from stormcf.setcover import SetCoverProblem, run_engine
    for grouping in ("manual", "probabilistic"):
        data = generate_grouped(grouping, n=8, actions=10, draws=600, seed=4)
        inst = data.instance
        names = list(inst.groups)
        assert names == [f"g{g}" for g in range(5)] and set(np.unique(data.groups)) <= set(range(5))
        for r in range(0, len(data), 23):
            group = names[data.groups[r]]
            assert inst.available(group)[list(data.actions[r])].all()
            truth = run_engine(SetCoverProblem(inst, data.X[r], group), "bruteforce" if inst.n_actions <= 12
                               else "milp")
            assert truth.actions == data.actions[r] and truth.value == pytest.approx(data.cost[r])
        data.save(tmp_path / "g.npz")
        back = LabelledAgents.load(tmp_path / "g.npz")
        assert np.array_equal(back.groups, data.groups)
        train_set, test_set = split(back, seed=0)
        facts = exact_match(train("knn", train_set), test_set)
        assert set(facts["exact_match_by_group"]) == set(names)
    sizes = data.info["per_group"]
    assert inst.n_actions == 50 and sum(v["agents"] for v in sizes.values()) == data.info["agents"]


@pytest.mark.parametrize("argv", [["table2", "--generators", "mc,seq2seq,knn"], ["table3", "--targets", "0,20"],
                                  ["table4", "--generators", "knn"], ["fig6", "--generators", "knn"],
                                  ["table5", "--costs", "int1"]])
def test_experiment_scripts_quick(argv, tmp_path):
    """The learning parts of scripts/setcover_experiments.py in their --quick setting (seconds)."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "setcover_experiments.py"
    done = subprocess.run([sys.executable, str(script), *argv, "--quick", "--plot", str(tmp_path / "p.png")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"table2": "feasible (dearer)", "table3": "    20 ", "table4": "probabilistic groups", "fig6": "per CFE size",
            "table5": "mid5  int1"}[argv[0]] in done.stdout
    assert argv[0] in ("table3", "table4", "table5") or (tmp_path / "p.png").stat().st_size > 0


def test_cli_ctrl_c_saves_the_best_epoch_with_status_interrupted(tiny, tmp_path):
    """A real SIGINT after the first epoch: training stops after the current batch, the best epoch is saved, the
    status is ``interrupted`` and the exit code 0. Nothing is left in $TMPDIR (PyTorch's inductor cache, which
    importing torch._dynamo creates there, goes with the command's own temporary folder)."""
    import signal
    train_set, _ = tiny
    train_set.save(tmp_path / "d.npz")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    argv = [sys.executable, "-m", "stormcf", "setcover-learn", str(tmp_path / "d.npz"),
            "--out", str(tmp_path / "g.npz"), "--hidden", "16", "--epochs", "100000", "--patience", "100000",
            "--batch-size", "64", "-v",
            "--json", str(tmp_path / "r.json")]
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "TMPDIR": str(scratch)})
    for line in proc.stderr:
        if "epoch 1/" in line:
            proc.send_signal(signal.SIGINT)
            break
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["status"] == "interrupted" and result["facts"]["stopped"] == "interrupted"
    assert 1 <= result["facts"]["best_epoch"] <= result["facts"]["epochs"] < 100000
    assert Generator.load(tmp_path / "g.npz").info["stopped"] == "interrupted"
    assert list(scratch.iterdir()) == []
