"""The paper's two data sets, classifiers, instances, actions and relation graph (notes §3.1-3.4).

Data (shipped in ``stormcf/recourse/data``, UCI, CC BY 4.0; see its README.txt for the attribution):

- **Adult** (Becker & Kohavi 1996): adult.data and adult.test concatenated, rows with '?' dropped (45,222 rows),
  ``fnlwgt`` and the nominal Education dropped; 12 features (5 numeric); accept = income >50K (label 1). The test
  file's labels end with '.', which is removed (so its >50K rows count as high income: 24.8 % positives). With
  ``authors_labels=True`` the labels are read as the authors' preprocessing read them: their code compares with
  '>50K', so every '>50K.' row of the test file is low income (16.6 % positives); for replication only.
- **German credit** (Hofmann 1994): 1,000 rows, 20 features (7 numeric, 13 categorical with the codebook's
  categories A11..A202); accept = good credit (label 1).

Classifier (notes §3.2): the synth authors' architecture as a scikit-learn ``MLPClassifier`` (ReLU, Adam, learning
rate 1e-4, batches of 100; Adult 2 x 50 units for 100 epochs, German 2 x 40 units for 1000 epochs) on the
standardized numeric features (training-split mean and standard deviation) and one-hot categorical features, trained
on a 70 % training split drawn with the seed. scikit-learn has no dropout (the authors used 0.7); L2 regularisation
``alpha`` keeps its default 1e-4. The trained network's parameters are kept as a :class:`NetworkClassifier`
(numpy arrays with a numpy ``predict``, also right after training) and cached in ``$STORMCF_CACHE`` (default
``~/.cache/stormcf``) as an ``.npz`` of arrays with JSON metadata (never a pickle: reading it cannot run code), under
a SHA-256 key of the data, the split, the settings, the seed and the scikit-learn and numpy versions; a cache file
whose key, layout or shapes do not fit is ignored and the network trained again, and a cache that cannot be written
(read-only, full) is skipped: the classifier is trained again next time.

Instances (notes §3.1): rows of the training split whose true label and predicted label are both "reject", in the
order of a seeded random permutation (seed 1); instance I is the I-th of them.

Actions (notes §3.3): the synth action-cost model with tweaking values as deltas in the feature's own units: a delta
v lies in [-m, m] with m = max |x - mean| over all rows (the authors' ±max|z| in z-space, times the standard
deviation), so x' = x + v. Efforts, conditions and side effects are the authors' (AdjustLoanPeriod keeps their
quirks: the period grows by old_period·new_credit/old_credit and its effort is the squared relative change of the
z-scored credit amount). Relation graph: Adult only (notes §3.4).
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import OutputError
from ..interrupt import until_request
from ..report import write_npz
from ..run import Run
from .problem import (OBJECTIVES, Action, Feature, RecourseError, RecourseProblem, RelationGraph, Rounding, Rows,
                      ValueDomain, add)

DATASETS = ("adult", "german")

_ADULT_COLUMNS = ("Age", "Workclass", "fnlwgt", "Education", "Education num", "Marital Status", "Occupation",
                  "Relationship", "Race", "Sex", "Capital Gain", "Capital Loss", "Hours/Week", "Native country",
                  "Income")
_ADULT_FEATURES = ("Age", "Workclass", "Education num", "Marital Status", "Occupation", "Relationship", "Race",
                   "Sex", "Capital Gain", "Capital Loss", "Hours/Week", "Native country")
_ADULT_NUMERIC = {"Age", "Education num", "Capital Gain", "Capital Loss", "Hours/Week"}

#: German credit: (feature, categories) in the file's column order; None marks a numeric feature
_GERMAN = (("checking_account", ("A11", "A12", "A13", "A14")), ("loan_duration", None),
           ("credit_history", ("A30", "A31", "A32", "A33", "A34")),
           ("purpose", ("A40", "A41", "A42", "A43", "A44", "A45", "A46", "A47", "A48", "A49", "A410")),
           ("credit_amount", None), ("saving_account", ("A61", "A62", "A63", "A64", "A65")),
           ("present_employment", ("A71", "A72", "A73", "A74", "A75")), ("installment_rate", None),
           ("personal_status", ("A91", "A92", "A93", "A94", "A95")),
           ("other_debtors_guarantors", ("A101", "A102", "A103")), ("present_residence_since", None),
           ("property", ("A121", "A122", "A123", "A124")), ("age_in_years", None),
           ("other_installment_plans", ("A141", "A142", "A143")), ("housing", ("A151", "A152", "A153")),
           ("existing_credit", None), ("job", ("A171", "A172", "A173", "A174")), ("liable_persons", None),
           ("telephone", ("A191", "A192")), ("foreign_worker", ("A201", "A202")))

#: the classifier of each data set (notes §3.2)
NETWORKS = {"adult": {"hidden_layer_sizes": (50, 50), "max_iter": 100},
            "german": {"hidden_layer_sizes": (40, 40), "max_iter": 1000, "alpha": 1.0}}
TRAIN_FRACTION = 0.7


@dataclass(frozen=True, eq=False)
class Dataset:
    """A data set as states: ``X`` (rows x features, categories as indices), labels ``y`` (1 = accept), the
    training rows, and the training split's mean and standard deviation of every feature (0/1 for categorical)."""

    name: str
    features: tuple[Feature, ...]
    X: np.ndarray
    y: np.ndarray
    train: np.ndarray
    mean: np.ndarray
    std: np.ndarray

    @property
    def index(self) -> dict[str, int]:
        return {f.name: j for j, f in enumerate(self.features)}

    def column(self, name: str) -> np.ndarray:
        return self.X[:, self.index[name]]

    def delta_range(self, name: str) -> float:
        """m = max |x - mean| over all rows: the tweaking deltas of an action on this feature lie in [-m, m]."""
        j = self.index[name]
        return float(np.max(np.abs(self.X[:, j] - self.mean[j])))

    def row(self, i: int) -> dict[str, Any]:
        """Row i by feature name (categories by name)."""
        return {f.name: (f.categories[int(v)] if f.is_categorical else float(v))
                for f, v in zip(self.features, self.X[i])}


def _data_file(name: str) -> bytes:
    with resources.files("stormcf.recourse").joinpath("data").joinpath(name).open("rb") as f:
        return gzip.decompress(f.read())


def load_dataset(name: str, seed: int = 1, authors_labels: bool = False) -> Dataset:
    """Adult or German credit, preprocessed as the paper (module docs); the training split is drawn with ``seed``.
    ``authors_labels``: Adult's test rows labelled as the authors' code labelled them (all low income; module docs);
    German is unaffected. Read once per process (``load_dataset("adult")`` and ``load_dataset("adult", 1)`` are
    one data set). A Ctrl-C while it is read ends the reading at once (there is no answer yet)."""
    with until_request():
        return _load_dataset(name, seed, authors_labels)


@lru_cache(maxsize=None)
def _load_dataset(name: str, seed: int, authors_labels: bool) -> Dataset:
    if name not in DATASETS:
        raise RecourseError(f"unknown data set {name!r}: use {' or '.join(DATASETS)}")
    features, X, y = _adult(authors_labels) if name == "adult" else _german()
    train = np.sort(np.random.default_rng(seed).permutation(len(X))[:int(TRAIN_FRACTION * len(X))])
    numeric = np.array([not f.is_categorical for f in features])
    mean = np.where(numeric, X[train].mean(axis=0), 0.0)
    std = np.where(numeric, X[train].std(axis=0), 1.0)
    return Dataset(name, tuple(features), X, y, train, mean, std)


def _adult(authors_labels: bool = False) -> tuple[list[Feature], np.ndarray, np.ndarray]:
    rows = []
    for file, skip in (("adult.data.gz", 0), ("adult.test.gz", 1)):
        lines = _data_file(file).decode().splitlines()[skip:]
        rows += [[c.strip() for c in r] for r in csv.reader(lines) if len(r) == len(_ADULT_COLUMNS)]
    rows = [r for r in rows if "?" not in r]
    columns = {name: [r[k] for r in rows] for k, name in enumerate(_ADULT_COLUMNS)}
    domains = _adult_domains()
    features, data = [], []
    for name in _ADULT_FEATURES:
        if name in _ADULT_NUMERIC:
            values = np.array(columns[name], dtype=float)
            features.append(Feature.numeric(name, float(values.min()), float(values.max())))
        else:
            present = set(columns[name])
            categories = [c for c in domains[name] if c in present]
            features.append(Feature.categorical(name, categories))
            lookup = {c: k for k, c in enumerate(categories)}
            values = np.array([lookup[c] for c in columns[name]], dtype=float)
        data.append(values)
    read = (lambda label: label) if authors_labels else (lambda label: label.rstrip("."))
    y = np.array([read(label) == ">50K" for label in columns["Income"]], dtype=np.int64)
    return features, np.column_stack(data), y


def _adult_domains() -> dict[str, list[str]]:
    """The categories of Adult's nominal columns in the order of adult.names."""
    text = resources.files("stormcf.recourse").joinpath("data").joinpath("adult.names").read_text()
    names = {"workclass": "Workclass", "marital-status": "Marital Status", "occupation": "Occupation",
             "relationship": "Relationship", "race": "Race", "sex": "Sex", "native-country": "Native country"}
    domains = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in names:
            domains[names[key]] = [c.strip().rstrip(".") for c in rest.split(",")]
    return domains


def _german() -> tuple[list[Feature], np.ndarray, np.ndarray]:
    rows = [line.split() for line in _data_file("german.data.gz").decode().splitlines() if line.strip()]
    features, data = [], []
    for k, (name, categories) in enumerate(_GERMAN):
        raw = [r[k] for r in rows]
        if categories is None:
            values = np.array(raw, dtype=float)
            features.append(Feature.numeric(name, float(values.min()), float(values.max())))
        else:
            features.append(Feature.categorical(name, categories))
            values = np.array([categories.index(c) for c in raw], dtype=float)
        data.append(values)
    y = np.array([r[20] == "1" for r in rows], dtype=np.int64)
    return features, np.column_stack(data), y


# ================================================================================================ classifier
def _pipeline(dataset: Dataset, seed: int):
    from sklearn.compose import ColumnTransformer
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = [j for j, f in enumerate(dataset.features) if not f.is_categorical]
    categorical = [j for j, f in enumerate(dataset.features) if f.is_categorical]
    categories = [list(np.arange(len(dataset.features[j].categories), dtype=float)) for j in categorical]
    encode = ColumnTransformer([("numeric", StandardScaler(), numeric),
                                ("categorical", OneHotEncoder(categories=categories, handle_unknown="ignore"),
                                 categorical)])
    network = MLPClassifier(activation="relu", solver="adam", learning_rate_init=1e-4, batch_size=100,
                            random_state=seed, **NETWORKS[dataset.name])
    return Pipeline([("encode", encode), ("network", network)])


@dataclass(frozen=True, eq=False, repr=False)
class NetworkClassifier:
    """The trained network as plain arrays, with a numpy ``predict``: the numeric columns standardised
    ((x - mean) / scale), the categorical ones one-hot over their categories 0..k-1 (an unknown value: all zeros),
    ReLU hidden layers and a logistic output unit; the prediction is ``classes[1]`` where the output exceeds 1/2
    (scikit-learn's rule for a binary MLPClassifier). Arrays cannot run code when read back, unlike a pickle."""

    numeric: np.ndarray                 # column indices of the numeric features
    mean: np.ndarray
    scale: np.ndarray
    categorical: np.ndarray             # column indices of the categorical features
    sizes: np.ndarray                   # their numbers of categories
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    classes: np.ndarray

    @classmethod
    def from_pipeline(cls, pipeline: Any, dataset: Dataset) -> "NetworkClassifier":
        """The fitted parameters of :func:`_pipeline`'s scikit-learn pipeline."""
        scaler = pipeline.named_steps["encode"].named_transformers_["numeric"]
        network = pipeline.named_steps["network"]
        assert network.activation == "relu" and network.out_activation_ == "logistic"
        columns = _columns(dataset)
        return cls(columns["numeric"], np.asarray(scaler.mean_, dtype=float), np.asarray(scaler.scale_, dtype=float),
                   columns["categorical"], columns["sizes"], tuple(np.asarray(w, dtype=float) for w in network.coefs_),
                   tuple(np.asarray(b, dtype=float) for b in network.intercepts_), np.asarray(network.classes_))

    def encode(self, X: np.ndarray) -> np.ndarray:
        """The network's input: standardised numeric columns, then one-hot categorical ones."""
        X = np.asarray(X, dtype=float)
        numeric = (X[:, self.numeric] - self.mean) / self.scale
        onehot = [X[:, [j]] == np.arange(k, dtype=float)
                  for j, k in zip(self.categorical.tolist(), self.sizes.tolist())]
        return np.hstack([numeric, *onehot]).astype(float)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """The output unit's value (the probability of ``classes[1]``) for every row of ``X``."""
        from scipy.special import expit
        a = self.encode(X)
        for W, b in zip(self.weights[:-1], self.biases[:-1]):
            a = np.maximum(a @ W + b, 0.0)
        return expit(a @ self.weights[-1] + self.biases[-1])[:, 0]

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.classes[(self.predict_proba(X) > 0.5).astype(np.int64)]

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"numeric": self.numeric, "mean": self.mean, "scale": self.scale, "categorical": self.categorical,
               "sizes": self.sizes, "classes": self.classes}
        for k, (W, b) in enumerate(zip(self.weights, self.biases)):
            out[f"weight{k}"], out[f"bias{k}"] = W, b
        return out

    @classmethod
    def from_arrays(cls, arrays: Any, layers: int, dataset: Dataset) -> "NetworkClassifier":
        """Arrays read back, checked against ``dataset`` (columns, categories) and each other (layer shapes);
        raises ValueError if anything does not fit."""
        fields = {k: np.asarray(arrays[k]) for k in ("numeric", "mean", "scale", "categorical", "sizes", "classes")}
        weights = tuple(np.asarray(arrays[f"weight{k}"]) for k in range(layers))
        biases = tuple(np.asarray(arrays[f"bias{k}"]) for k in range(layers))
        expected = _columns(dataset)
        if not (np.array_equal(fields["numeric"], expected["numeric"])
                and np.array_equal(fields["categorical"], expected["categorical"])
                and np.array_equal(fields["sizes"], expected["sizes"])
                and fields["mean"].shape == fields["scale"].shape == expected["numeric"].shape
                and fields["classes"].shape == (2,)):
            raise ValueError("columns or categories differ from the data set's")
        width = len(expected["numeric"]) + int(expected["sizes"].sum())
        for W, b in zip(weights, biases):
            if W.dtype != float or b.dtype != float or W.ndim != 2 or W.shape != (width, b.shape[0]):
                raise ValueError("layer shapes do not chain")
            width = b.shape[0]
        if width != 1 or not all(np.isfinite(x).all() for x in (*weights, *biases, fields["mean"], fields["scale"])):
            raise ValueError("not one finite logistic output")
        return cls(weights=weights, biases=biases, **fields)


def _columns(dataset: Dataset) -> dict[str, np.ndarray]:
    """The network's view of the columns: the numeric ones, the categorical ones and their numbers of categories."""
    categorical = [j for j, f in enumerate(dataset.features) if f.is_categorical]
    return {"numeric": np.array([j for j, f in enumerate(dataset.features) if not f.is_categorical], dtype=np.int64),
            "categorical": np.array(categorical, dtype=np.int64),
            "sizes": np.array([len(dataset.features[j].categories) for j in categorical], dtype=np.int64)}


def _cache_key(dataset: Dataset, seed: int) -> str:
    """What the trained parameters depend on: the data, the split, the network settings, the seed and the versions
    of scikit-learn and numpy that trained it (SHA-256)."""
    import sklearn
    key = hashlib.sha256()
    key.update(dataset.X.tobytes())
    key.update(dataset.y.tobytes())
    key.update(dataset.train.tobytes())
    key.update(repr((NETWORKS[dataset.name], seed, sklearn.__version__, np.__version__)).encode())
    return key.hexdigest()


def _cache_file(dataset: Dataset, key: str) -> Path:
    root = Path(os.environ.get("STORMCF_CACHE", Path.home() / ".cache" / "stormcf"))
    return root / "recourse" / f"{dataset.name}-{key[:16]}.npz"


#: version of the cache files' layout
_CACHE_FORMAT = 1


def _read_cached(file: Path, key: str, dataset: Dataset) -> NetworkClassifier | None:
    """The classifier of a cache file (arrays only: ``allow_pickle=False``), or None when the file is missing or is
    not exactly what :func:`train_classifier` writes for ``key`` (then the network is trained again)."""
    try:
        with np.load(file, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("format") != _CACHE_FORMAT or meta.get("key") != key:
                return None
            return NetworkClassifier.from_arrays(data, int(meta["layers"]), dataset)
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError, zipfile.BadZipFile):
        return None


def train_classifier(dataset: Dataset, seed: int = 1, cache: bool = True) -> NetworkClassifier:
    """The paper's network (module docs), trained with scikit-learn on the training split with ``seed``
    (deterministic for a seed and scikit-learn version), as a :class:`NetworkClassifier`; from the cache when it
    holds the parameters trained on the same data and settings (arrays and JSON, checked when read)."""
    key = _cache_key(dataset, seed)
    file = _cache_file(dataset, key)
    if cache:
        cached = _read_cached(file, key, dataset)
        if cached is not None:
            return cached
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    model = _pipeline(dataset, seed)
    training = Run.current().activity(f"training the {dataset.name} classifier (about a minute)")
    with warnings.catch_warnings(), training, until_request():    # no answer yet, no safe point in scikit-learn
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(dataset.X[dataset.train], dataset.y[dataset.train])
    classifier = NetworkClassifier.from_pipeline(model, dataset)
    if cache:
        meta = {"format": _CACHE_FORMAT, "key": key, "dataset": dataset.name, "seed": seed,
                "layers": len(classifier.weights)}
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            write_npz(file, meta=json.dumps(meta), **classifier.arrays())
        except (OSError, OutputError):       # a read-only or full cache only costs the next run the training
            pass
    return classifier


def rejected_instances(dataset: Dataset, classifier, seed: int = 1) -> np.ndarray:
    """Row indices of the training rows with true and predicted label "reject", in a seeded random order."""
    rows = dataset.train
    candidates = rows[(dataset.y[rows] == 0) & (np.asarray(classifier.predict(dataset.X[rows])) == 0)]
    return candidates[np.random.default_rng(seed).permutation(len(candidates))]


# ================================================================================================ actions
def _delta(dataset: Dataset, feature: str) -> ValueDomain:
    m = dataset.delta_range(feature)
    return ValueDomain.interval(-m, m)


def _absolute_change(feature: str, scale: float = 1.0):
    return lambda x, y, v: np.abs(y[feature] - x[feature]) / scale


def _relative_change(feature: str):
    return lambda x, y, v: ((y[feature] - x[feature]) / x[feature]) ** 2


def _between(feature: str, lower: float, upper: float):
    return lambda x, y, v: (y[feature] > lower) & (y[feature] < upper)


def _increases_below(feature: str, upper: float):
    return lambda x, y, v: (y[feature] > x[feature]) & (y[feature] < upper)


def _set_category(feature: Feature, category: str) -> tuple[ValueDomain, Any, Any]:
    code = feature.code(category)
    return ValueDomain.fixed(code, category), (lambda x, v: {feature.name: code}), (lambda x: x[feature.name] != code)


def _constant(effort: float):
    return lambda x, y, v: np.full(len(x), effort)


def adult_actions(dataset: Dataset) -> list[Action]:
    """The six Adult actions of synth (notes §3.3), in the authors' order."""
    occupation = dataset.features[dataset.index["Occupation"]]
    enlist_domain, enlist, not_enlisted = _set_category(occupation, "Armed-Forces")
    return [
        Action("addEdu", _delta(dataset, "Education num"),
               lambda x, v: {"Education num": x["Education num"] + v, "Age": x["Age"] + 2 * v},
               _absolute_change("Education num"),
               post=lambda x, y, v: _increases_below("Age", 120)(x, y, v) & _increases_below("Education num", 16.5)(
                   x, y, v), feature="Education num"),
        Action("chCapLoss", _delta(dataset, "Capital Loss"), add("Capital Loss"),
               _absolute_change("Capital Loss", 1000), pre=lambda x: x["Capital Gain"] < 1,
               post=_between("Capital Loss", 1, 5000), feature="Capital Loss"),
        Action("chWorkHrs", _delta(dataset, "Hours/Week"), add("Hours/Week"), _absolute_change("Hours/Week", 10),
               post=_between("Hours/Week", 0, 90), feature="Hours/Week"),
        Action("enlist", enlist_domain, enlist, _constant(5.0), pre=not_enlisted, feature="Occupation"),
        Action("chCapGain", _delta(dataset, "Capital Gain"), add("Capital Gain"),
               _absolute_change("Capital Gain", 10000), pre=lambda x: x["Capital Loss"] < 1,
               post=_between("Capital Gain", 0, 100000), feature="Capital Gain"),
        Action("waitYears", _delta(dataset, "Age"), add("Age"), _absolute_change("Age"),
               post=_increases_below("Age", 120), feature="Age"),
    ]


def adult_graph() -> RelationGraph:
    """The Adult relation graph of the authors' code (notes §3.4), with e = int(Education num), h = Hours/Week."""
    def education(x: Rows) -> np.ndarray:
        return 1 - np.floor(x["Education num"]) / 32

    def hours_to_gain(x: Rows) -> np.ndarray:
        return 1 - np.interp(np.exp(np.minimum(x["Hours/Week"], 700)), [1.0, np.exp(80.0)], [0.0, 1.0])

    def hours_to_education(x: Rows) -> np.ndarray:
        h = x["Hours/Week"]
        return np.select([h < 20, h < 30, h <= 40], [0.5, 0.6, 0.7], 1.0)

    return RelationGraph({("Education num", "Capital Gain"): education, ("Hours/Week", "Capital Gain"): hours_to_gain,
                          ("Education num", "Occupation"): education, ("Education num", "Workclass"): education,
                          ("Hours/Week", "Education num"): hours_to_education})


def german_actions(dataset: Dataset) -> list[Action]:
    """The seven German credit actions of synth (notes §3.3), in the authors' order."""
    j = dataset.index["credit_amount"]
    credit_mean, credit_std = dataset.mean[j], dataset.std[j]
    foreign = dataset.features[dataset.index["foreign_worker"]]
    debtors = dataset.features[dataset.index["other_debtors_guarantors"]]
    job = dataset.features[dataset.index["job"]]
    naturalize_domain, naturalize, not_naturalized = _set_category(foreign, "A202")
    guarantor_domain, guarantor, no_guarantor = _set_category(debtors, "A103")
    unskilled_domain, unskilled, _ = _set_category(job, "A172")

    def adjust_period(x: Rows, v: np.ndarray) -> dict[str, np.ndarray]:
        credit, period = x["credit_amount"], x["loan_duration"]
        return {"credit_amount": credit + v, "loan_duration": period + period * (credit + v) / credit}

    def z_relative_change(x: Rows, y: Rows, v: np.ndarray) -> np.ndarray:
        old = (x["credit_amount"] - credit_mean) / credit_std
        new = (y["credit_amount"] - credit_mean) / credit_std
        return ((new - old) / old) ** 2

    return [
        Action("waitYears", _delta(dataset, "age_in_years"), add("age_in_years"), _absolute_change("age_in_years"),
               post=_increases_below("age_in_years", 120), feature="age_in_years"),
        Action("naturalize", naturalize_domain, naturalize, _constant(5.0), pre=not_naturalized,
               feature="foreign_worker"),
        Action("chCreditAm", _delta(dataset, "credit_amount"), add("credit_amount"),
               _relative_change("credit_amount"), pre=lambda x: x["age_in_years"] > 15,
               post=_between("credit_amount", 0, 100000), feature="credit_amount"),
        Action("chLoanPeriod", _delta(dataset, "loan_duration"), add("loan_duration"),
               _relative_change("loan_duration"), post=_between("loan_duration", 0, 120), feature="loan_duration"),
        Action("adjLoanPeriod", _delta(dataset, "credit_amount"), adjust_period, z_relative_change,
               pre=lambda x: x["credit_amount"] > 1000,
               post=lambda x, y, v: _between("loan_duration", 0, 120)(x, y, v) & _between(
                   "credit_amount", 0, 100000)(x, y, v), feature="credit_amount"),
        Action("guarantor", guarantor_domain, guarantor, _constant(5.0), pre=no_guarantor,
               feature="other_debtors_guarantors"),
        Action("unskilledJob", unskilled_domain, unskilled, _constant(5.0),
               pre=lambda x: x["job"] == job.code("A171"), feature="job"),
    ]


def dataset_problem(name: str, instance: int, *, discounted: bool = True, objectives: Sequence[str] = OBJECTIVES,
                    rounding: Rounding = Rounding(), seed: int = 1, classifier: Any = None,
                    authors_labels: bool = False) -> RecourseProblem:
    """The recourse problem of instance ``instance`` of a data set: the paper's actions, the relation graph (Adult)
    and the cached classifier (trained with ``seed`` unless given). ``discounted=False`` is the paper's "scf";
    ``authors_labels`` reads Adult's labels as the authors' code did (:func:`load_dataset`): the classifier is trained
    on them and the instances are chosen by them."""
    dataset = load_dataset(name, seed, authors_labels)
    model = classifier if classifier is not None else train_classifier(dataset, seed)
    candidates = rejected_instances(dataset, model, seed)
    if not 0 <= instance < len(candidates):
        raise RecourseError(f"{name}: instance must lie in 0..{len(candidates) - 1} (the rejected training rows), "
                            f"got {instance}")
    row = int(candidates[instance])
    actions = adult_actions(dataset) if name == "adult" else german_actions(dataset)
    graph = adult_graph() if name == "adult" else None
    ranges = {f.name: f.upper - f.lower for f in dataset.features if f.lower is not None and f.upper is not None}
    return RecourseProblem(dataset.features, dataset.row(row), model, 1, actions, graph, discounted=discounted,
                           objectives=objectives, gower_ranges=ranges, rounding=rounding,
                           name=f"{name} instance {instance} (row {row})")
