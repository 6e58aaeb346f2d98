"""Adult and German credit as the paper preprocesses them, their classifiers, actions and relation graph, and the
whole pipeline end to end on a few instances (small GA settings)."""
import io
import json
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from stormcf.recourse import BRKGASettings, Plans, Rows, brute_force, solve_recourse
from stormcf.recourse import datasets
from stormcf.recourse.datasets import (NetworkClassifier, _pipeline, adult_graph, dataset_problem, load_dataset,
                                       rejected_instances, train_classifier)
from stormcf.recourse.exact import optimum, plan_mdp
from stormcf.recourse.objectives import apply_action
from stormcf.recourse.problem import RecourseError

SMALL = BRKGASettings(n_offspring=150, n_mutants=50, generations=25, seed=1)


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult")


@pytest.fixture(scope="module")
def german():
    return load_dataset("german")


def test_adult_preprocessing(adult):
    assert adult.X.shape == (45222, 12)
    assert int(adult.y.sum()) == 11208                                 # >50K, after dropping rows with '?'
    numeric = [f.name for f in adult.features if not f.is_categorical]
    assert numeric == ["Age", "Education num", "Capital Gain", "Capital Loss", "Hours/Week"]
    assert 5 + sum(len(f.categories) for f in adult.features) == 87   # the classifier's input width
    assert len(adult.train) == int(0.7 * 45222)


def test_adult_with_the_authors_labels(adult):
    """Their preprocessing compares adult.test's '>50K.' with '>50K': all 3,700 high incomes of the test file (after
    dropping '?') become low income, 7,508 positives of 45,222 (16.6 %) instead of 11,208 (24.8 %)."""
    authors = load_dataset("adult", authors_labels=True)
    assert np.array_equal(authors.X, adult.X) and np.array_equal(authors.train, adult.train)
    assert int(authors.y.sum()) == 7508 and int(adult.y.sum()) - int(authors.y.sum()) == 3700
    assert np.all(authors.y <= adult.y)
    assert np.array_equal(load_dataset("german", authors_labels=True).y, load_dataset("german").y)

def test_german_preprocessing(german):
    assert german.X.shape == (1000, 20) and int(german.y.sum()) == 700
    assert sum(not f.is_categorical for f in german.features) == 7
    assert 7 + sum(len(f.categories) for f in german.features) == 63


def test_classifiers_and_instances(adult, german):
    for data, accuracy in ((adult, 0.83), (german, 0.7)):
        model = train_classifier(data)
        test = np.setdiff1d(np.arange(len(data.X)), data.train)
        assert (model.predict(data.X[test]) == data.y[test]).mean() > accuracy
        rows = rejected_instances(data, model)
        assert np.isin(rows, data.train).all()
        assert np.all(data.y[rows] == 0) and np.all(model.predict(data.X[rows]) == 0)
        assert np.array_equal(rows, rejected_instances(data, model))


def test_classifier_training_is_deterministic(german):
    cached = train_classifier(german)
    fresh = train_classifier(german, cache=False)
    assert all(np.array_equal(a, b) for a, b in zip(cached.weights, fresh.weights))


def test_the_numpy_classifier_is_the_trained_scikit_learn_network(german):
    """The arrays stormcf keeps predict exactly what the fitted scikit-learn pipeline predicts."""
    pipeline = _pipeline(german, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipeline.fit(german.X[german.train], german.y[german.train])
    network = NetworkClassifier.from_pipeline(pipeline, german)
    rows = np.random.default_rng(0).integers(0, len(german.X), 3000)
    X = german.X[rows] + np.where(np.arange(german.X.shape[1]) == 1, 1.0, 0.0)   # also states not in the data
    assert np.allclose(network.predict_proba(X), pipeline.predict_proba(X)[:, 1], rtol=0, atol=1e-12)
    assert np.array_equal(network.predict(X), pipeline.predict(X))


MARKER = "stormcf-pickle-ran"


class Planted:
    """An object whose unpickling creates a marker file: what a planted cache file would run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_cache_files_are_arrays_checked_when_read_and_never_run_code(german, tmp_path, monkeypatch):
    """The issue's attack: a pickle planted where the classifier is cached ran code. The cache is now an npz of
    arrays read with allow_pickle=False; a file that is not what train_classifier wrote is ignored (trained again)."""
    monkeypatch.setenv("STORMCF_CACHE", str(tmp_path))
    key = datasets._cache_key(german, 1)
    file = datasets._cache_file(german, key)
    file.parent.mkdir(parents=True)
    marker = tmp_path / MARKER
    file.write_bytes(pickle.dumps(Planted(str(marker))))                     # a pickle under the npz's name
    trained = train_classifier(german)                                       # ignored: trained again
    assert not marker.exists()
    written = dict(np.load(file, allow_pickle=False))
    assert json.loads(str(written["meta"]))["key"] == key
    assert np.array_equal(datasets._read_cached(file, key, german).predict(german.X), trained.predict(german.X))
    planted = {"object array": dict(written, weight0=np.array([Planted(str(marker))], dtype=object)),
               "other key": dict(written, meta=json.dumps({"format": 1, "key": "0" * 64, "layers": 3})),
               "layer shapes": dict(written, weight1=written["weight1"][:-1]),
               "columns": dict(written, sizes=written["sizes"] + 1)}
    for name, arrays in planted.items():
        file.write_bytes(_npz(**arrays))
        assert datasets._read_cached(file, key, german) is None, name
    assert not marker.exists()


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


#: the one use of pickle: a forked child's answer, through a pipe from stormcf's own child process (never a file)
PIPE_ONLY = ("stormcf/storm/isolate.py",)


def test_nothing_stormcf_reads_is_unpickled():
    """Audit: no pickle, joblib.load, torch.load or np.load without allow_pickle=False in stormcf/ and scripts/."""
    root = Path(datasets.__file__).resolve().parents[2]
    for file in [*(root / "stormcf").rglob("*.py"), *(root / "scripts").rglob("*.py")]:
        text = file.read_text()
        if file.relative_to(root).as_posix() in PIPE_ONLY:
            assert "open(" not in text and "read_bytes" not in text, file   # it reads no file
            continue
        assert not re.search(r"^\s*(import|from) (pickle|dill|shelve|marshal)\b", text, re.M), file
        assert not re.search(r"(joblib|torch|pickle)\.loads?\(", text), file
        for call in re.findall(r"np\.load\([^)]*\)", text):
            assert "allow_pickle=False" in call, (file, call)


def test_adult_actions_follow_synth(adult):
    problem = dataset_problem("adult", 0)
    index = problem.index
    x = np.repeat(problem.state0[None], 2, axis=0)
    x[:, index["Education num"]] = 10
    x[:, index["Age"]] = 30
    out = apply_action(problem, 0, x, np.array([2.0, -1.0]))                  # addEdu
    assert out.after[0, index["Education num"]] == 12 and out.after[0, index["Age"]] == 34
    assert out.valid.tolist() == [True, False] and out.effort[0] == 2.0
    assert out.discount[0] == pytest.approx(adult_graph().edges[("Hours/Week", "Education num")](
        Rows(x[:1], index))[0])
    x[:, index["Capital Loss"]] = [0, 100]
    out = apply_action(problem, 4, x, np.array([10000.0, 10000.0]))           # chCapGain needs loss < 1
    assert out.valid.tolist() == [True, False] and out.effort[0] == pytest.approx(1.0)
    occupation = problem.features[index["Occupation"]]
    out = apply_action(problem, 3, x, np.zeros(2))                            # enlist
    assert occupation.text(out.after[0, index["Occupation"]]) == "Armed-Forces" and out.effort[0] == 5


def test_adult_relation_graph_values():
    graph = adult_graph()
    index = {"Education num": 0, "Hours/Week": 1}
    x = Rows(np.array([[16, 75], [10, 78], [0, 79], [13, 80], [9, 19], [9, 25], [9, 40], [9, 41]], dtype=float),
             index)
    assert graph.edges[("Education num", "Capital Gain")](x)[:2].tolist() == [0.5, 0.6875]
    assert graph.edges[("Hours/Week", "Capital Gain")](x)[:4] == pytest.approx([0.993, 0.865, 0.632, 0.0], abs=1e-3)
    assert graph.edges[("Hours/Week", "Education num")](x)[4:].tolist() == [0.5, 0.6, 0.7, 1.0]


def test_german_adjust_loan_period_keeps_the_authors_quirks(german):
    problem = dataset_problem("german", 0)
    index = problem.index
    x = problem.state0[None].copy()
    x[0, index["credit_amount"]], x[0, index["loan_duration"]] = 2000.0, 12.0
    out = apply_action(problem, 4, x, np.array([1000.0]))
    assert out.after[0, index["credit_amount"]] == 3000.0
    assert out.after[0, index["loan_duration"]] == pytest.approx(12 + 12 * 3000 / 2000)     # added, not set
    j = index["credit_amount"]
    z = (np.array([2000.0, 3000.0]) - german.mean[j]) / german.std[j]
    assert out.effort[0] == pytest.approx(((z[1] - z[0]) / z[0]) ** 2)


@pytest.mark.parametrize("name,instance", [("adult", 0), ("adult", 7), ("german", 0), ("german", 5)])
def test_pipeline_end_to_end(name, instance):
    for discounted in ((True, False) if name == "adult" else (True,)):
        result = solve_recourse(dataset_problem(name, instance, discounted=discounted), SMALL)
        assert result.status == "feasible" and result.front
        assert all(c.agrees for c in result.checks)
        problem = dataset_problem(name, instance, discounted=discounted)
        costs = [plan.cost for plan in result.front]
        assert costs == sorted(costs)
        for plan in result.front:
            assert plan.p_accept == 1.0 and len(plan.states) == len(plan.actions) + 1
            assert problem.accepts(np.array([[_code(problem, f, v) for f, v in plan.states[-1].items()]]))[0]


def _code(problem, name, value):
    feature = problem.features[problem.index[name]]
    return feature.code(value) if feature.is_categorical else value


def test_grid_optimum_equals_brute_force_on_adult():
    problem = dataset_problem("adult", 0).with_grid(2)
    bf = brute_force(problem)
    answer = optimum(plan_mdp(problem))
    assert answer.value == pytest.approx(bf.evaluation.cost[bf.evaluation.feasible].min(), rel=1e-9)
    plan = problem.evaluate(Plans.from_steps([answer.plan], len(problem.actions)))
    assert plan.feasible[0]
    result = solve_recourse(problem, SMALL)
    assert result.optimal_cost == pytest.approx(answer.value) and result.front[0].cost == pytest.approx(answer.value)
    assert result.status in ("optimal", "suboptimal")


def test_unknown_dataset_and_instance():
    with pytest.raises(RecourseError, match="unknown data set"):
        load_dataset("iris")
    with pytest.raises(RecourseError, match="instance must lie in"):
        dataset_problem("german", 10_000)
