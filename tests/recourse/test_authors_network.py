"""scripts/reproduce.py reads the seed-002 authors' networks (Keras layouts: every feature at its ``idx``, categories
one-hot in their own order, two logits) into stormcf's NetworkClassifier. Checked on a synthetic German network and
spec against a forward pass written in the authors' layout (no h5py, no checkout of their repository)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import reproduce  # noqa: E402

from stormcf.recourse.datasets import load_dataset  # noqa: E402


def _german_spec(rng: np.random.Generator) -> list[dict]:
    """A german.features.json in the authors' shape: numeric features with a mean and std, categorical ones with
    their codes (the A-code without the A) in a shuffled order, each at its offset ``idx`` of the input row."""
    dataset = load_dataset("german")
    spec, idx = [], 0
    for j, feature in enumerate(dataset.features):
        if feature.is_categorical:
            values = [int(c[1:]) for c in rng.permutation(list(feature.categories))]
            spec.append({"type": "nominal", "name": feature.name, "values": values, "idx": idx})
            idx += len(values)
        else:
            column = dataset.X[:, j]
            spec.append({"type": "numeric", "name": feature.name, "idx": idx,
                         "mean": float(column.mean() * rng.uniform(0.8, 1.2)),
                         "std": float(column.std() * rng.uniform(0.8, 1.2))})
            idx += 1
    return spec


def _their_logits(X: np.ndarray, spec: list[dict], W: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
    """The authors' forward pass: their encoding of stormcf rows (categories as indices), ReLU layers, two logits."""
    features = load_dataset("german").features
    Z = np.zeros((len(X), sum(len(f.get("values", [0])) for f in spec)))
    for j, (feature, f) in enumerate(zip(features, spec)):
        if feature.is_categorical:
            for row, k in enumerate(X[:, j].astype(int)):
                Z[row, f["idx"] + f["values"].index(int(feature.categories[k][1:]))] = 1.0
        else:
            Z[:, f["idx"]] = (X[:, j] - f["mean"]) / f["std"]
    a = Z
    for k, (w, c) in enumerate(zip(W, b)):
        a = a @ w + c
        if k < len(W) - 1:
            a = np.maximum(a, 0.0)
    return a


@pytest.mark.parametrize("accept", [0, 1])
def test_a_network_in_the_authors_layout_predicts_as_their_forward_pass(tmp_path, accept):
    rng = np.random.default_rng(accept)
    spec = _german_spec(rng)
    folder = reproduce.authors_folder(tmp_path, "german")
    folder.mkdir(parents=True)
    (folder / "german.features.json").write_text(json.dumps(spec))
    width = sum(len(f.get("values", [0])) for f in spec)
    assert width == 63
    W = [rng.normal(size=(width, 8)), rng.normal(size=(8, 8)), rng.normal(size=(8, 2))]
    b = [rng.normal(size=8), rng.normal(size=8), rng.normal(size=2)]
    dataset = load_dataset("german")
    X = dataset.X[:200]
    margin = np.diff(_their_logits(X, spec, W, b), axis=1)[:, 0] * (1 if accept else -1)
    b[-1][accept] -= np.median(margin)                  # about half of the rows accepted
    by_name = {f["name"]: f for f in spec}
    network = reproduce.network_from_layers(W, b, by_name, reproduce.their_categories(tmp_path, "german"), dataset,
                                            accept)
    theirs = softmax(_their_logits(X, spec, W, b), axis=1)[:, accept]
    assert np.allclose(network.predict_proba(X), theirs, atol=1e-12)
    assert np.array_equal(network.predict(X), (theirs > 0.5).astype(int))
    assert 0 < network.predict(X).sum() < len(X)          # both classes occur: the sign of the logit matters


def test_synth_results_outside_the_authors_bounds_are_dropped():
    x0 = {"age_in_years": 30.0, "credit_amount": 1000.0, "loan_duration": 12.0}
    assert reproduce.synth_kept("german", x0, {**x0, "credit_amount": 100000.4})     # rounded, as theirs
    assert not reproduce.synth_kept("german", x0, {**x0, "credit_amount": 100000.6})
    assert not reproduce.synth_kept("german", x0, {**x0, "age_in_years": 29.4})      # younger than the instance
    assert not reproduce.synth_kept("german", x0, {**x0, "loan_duration": -1.0})
    assert reproduce.synth_kept("german", x0, {**x0, "age_in_years": 29.6})
