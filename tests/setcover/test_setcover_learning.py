"""Data generation, whole-family labels, augmentation, learned generators and their guarantees."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from setcover_cases import instances

from stormcf.setcover import SetCoverProblem, run_engine
from stormcf.setcover.data import (agent_pool, distinct_agents, expected_pool_size, frequency_filter, generate,
                                   generate_grouped, group_names, paper_instance, sparse_thresholds, split,
                                   LabelledAgents)
from stormcf.setcover.family import label_agents
from stormcf.setcover.generators import Generator, Network, augment, evaluate, guarantee, top_classes, train


@pytest.fixture(scope="module")
def small():
    """A small data set of the paper's distribution (n = 10, A = 24): labelled by one Storm call."""
    return generate(n=10, actions=24, draws=3000, seed=5)


def test_pool_size_matches_the_expected_number_of_distinct_agents():
    """notes §6.5: 100,000 draws at n = 20, p_f = 0.68 give about 74,597 distinct agents (paper: 74,594)."""
    inst = paper_instance(20, actions=5, seed=0)
    expected = expected_pool_size(20, 100_000, 0.68)
    assert expected == pytest.approx(74_597, abs=1)
    pool = agent_pool(inst, 100_000, 0.68, seed=1)
    positives = 0.68 ** 20 * expected                 # the all-ones agent is the only positive one
    assert len(pool) == pytest.approx(expected - positives, rel=3e-3)
    assert not inst.is_positive(pool).any() and len(np.unique(pool, axis=0)) == len(pool)


def test_sparse_classifiers_of_the_paper():
    assert np.flatnonzero(sparse_thresholds(20, "mid5")).tolist() == [7, 8, 9, 10, 11]
    assert np.flatnonzero(sparse_thresholds(20, "last10")).tolist() == list(range(10, 20))


def test_sparse_classifier_data_count_the_agents_it_already_accepts():
    """Table 5 counts, for the sparse classifiers, every distinct agent drawn (notes §3.2): the data set records
    how many were drawn, and the agents it labels are exactly those the classifier rejects."""
    data = generate(n=10, actions=24, draws=3000, thresholds="first5", seed=5)
    drawn = distinct_agents(10, 3000, 0.68, seed=6)
    accepted = int(np.all(drawn[:, :5] == 1, axis=1).sum())
    assert data.info["distinct"] == len(drawn) and data.info["agents"] == len(drawn) - accepted
    assert 0 < accepted <= 2 ** 5 and not np.all(data.X[:, :5] == 1, axis=1).any()


def test_probabilistic_groups_label_at_the_papers_size():
    """Table 4's probabilistic groups (5 catalogues of 100 actions: 500 in the instance) at the paper's 100,000
    draws: each group's family MDP holds only its own actions, so its tables fit (500 columns wide they passed the
    state limit); sampled agents' sets equal branch and bound's over their group's actions."""
    data = generate_grouped("probabilistic", 20, 100, draws=100_000, seed=0)
    inst, names = data.instance, group_names(data.instance)
    assert inst.n_actions == 500 and len(data) == data.info["kept"] > 74_000
    for k in np.random.default_rng(0).choice(len(data), 30, replace=False):
        group = names[data.groups[k]]
        assert data.actions[k] == run_engine(SetCoverProblem(inst, data.X[k], group), "bnb").actions
        assert inst.available(group)[list(data.actions[k])].all()


def test_paper_cost_model_lower_bound(small):
    """notes §6.3 (2): with c = D·w, OPT(x) >= Σ_{j ∈ M(x)} w_j, so OPT >= the cheapest way to pay each feature once."""
    inst = small.instance
    w = np.linalg.lstsq(inst.effects.astype(float), inst.costs, rcond=None)[0]
    missing = (small.X < inst.thresholds).astype(float)
    assert np.all(small.cost >= missing @ w - 1e-8)


def test_family_labels_equal_per_agent_engines(small):
    inst = small.instance
    X = agent_pool(inst, 400, 0.68, seed=9)
    family = label_agents(inst, X, "storm")
    dp = label_agents(inst, X, "dp")
    milp = label_agents(inst, X[:60], "milp")
    assert family.states > 0 and np.allclose(family.values, dp.values, rtol=1e-9)
    assert family.actions == dp.actions and family.unique == dp.unique
    assert np.allclose(family.values[:60], milp.values, rtol=1e-8) and family.actions[:60] == milp.actions


def test_family_labels_with_integer_costs_detect_ties():
    inst = paper_instance(8, actions=16, costs="int0", seed=2)
    X = agent_pool(inst, 300, 0.5, seed=3)
    family = label_agents(inst, X, "storm")
    for k in range(0, len(X), 7):
        truth = run_engine(SetCoverProblem(inst, X[k]), "bruteforce")
        assert family.actions[k] == truth.actions and family.unique[k] == truth.unique
        assert family.values[k] == pytest.approx(truth.value, rel=1e-9)


def test_labels_drop_exactly_the_agents_brute_force_finds_tied():
    """With integer costs many optima are tied (here about a quarter of the agents); ``label`` counts and drops
    exactly those brute force finds tied, and keeps the others with brute force's canonical set."""
    from stormcf.setcover.data import label
    inst = paper_instance(8, actions=16, costs="int1", seed=2)
    X = agent_pool(inst, 300, 0.5, seed=3)
    truth = [run_engine(SetCoverProblem(inst, x), "bruteforce") for x in X]
    tied = [s.unique is False for s in truth]
    assert 0.05 * len(X) < sum(tied) < len(X)
    family = label_agents(inst, X, "storm")
    assert all(type(u) is bool for u in family.unique)
    data = label(inst, X, max_size=len(inst.effects))
    assert data.info["tied"] == sum(tied) and data.info["kept"] == len(X) - sum(tied) == len(data)
    assert data.actions == [s.actions for s, t in zip(truth, tied) if not t]
    kept = label(inst, X, max_size=len(inst.effects), drop_ties=False)
    assert kept.info["tied"] == sum(tied) and len(kept) == len(X)


def test_labelled_data_round_trip_and_filters(small, tmp_path):
    small.save(tmp_path / "d.npz")
    back = LabelledAgents.load(tmp_path / "d.npz")
    assert back.actions == small.actions and np.array_equal(back.X, small.X) and back.info == small.info
    assert all(1 <= len(a) <= 3 for a in back.actions)
    info = small.info                 # 3 tied: action 23's effects are those of actions 3 and 7, at the same cost
    assert info["tied"] == 3 and info["kept"] == len(small) == (info["agents"] - info["tied"] - info["too_large"]
                                                                 - info["infeasible"])
    kept = frequency_filter(small, 10)
    counts = {a: kept.actions.count(a) for a in set(kept.actions)}
    assert min(counts.values()) > 10
    train_set, test_set = split(small)
    assert len(train_set) + len(test_set) == len(small) and len(test_set) == round(0.2 * len(small))


@given(instances(zero_costs=False, max_actions=7), st.integers(0, 1000))
def test_augmentation_preserves_the_unique_optimum(case, seed):
    """Algorithm 1's lemma (notes §2.4): every augment of (x, I) has I as its unique optimum."""
    inst, x = case
    truth = run_engine(SetCoverProblem(inst, x), "bruteforce") if not inst.is_positive(x) else None
    if truth is None or not truth.feasible or not truth.unique:
        return
    data = LabelledAgents(inst, np.array([x]), [truth.actions], np.array([truth.value]))
    more = augment(data, target=50, seed=seed)
    assert len(more) <= 50
    for aug in more.X[1:]:
        assert np.all(aug <= x)
        other = run_engine(SetCoverProblem(inst, aug), "bruteforce")
        assert other.actions == truth.actions and other.unique


def test_augmentation_raises_rare_cfes_to_the_target(small):
    """A CFE seen fewer than ``target`` times gets new agents until it is seen ``target`` times (never more), even
    when one agent alone has it (here one agent whose CFE over-covers 6 features: 63 worse-off agents), unless its
    agents have too few features to lower (a single agent over-covering k features has 2^k - 1). CFEs seen often
    enough are untouched, and the new agents are distinct, new and labelled with the unique optimum."""
    from collections import Counter
    from stormcf.setcover import SetCoverInstance
    effects = np.array([[1] * 8, [1, 1, 0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0, 0, 0]])
    inst = SetCoverInstance.from_arrays([1] * 8, effects, [1.0, 5.0, 5.0])
    X = np.array([[0, 0, 1, 1, 1, 1, 1, 1],      # CFE {a0}: over-covers the 6 features it has
                  [1, 1, 0, 1, 1, 1, 1, 1],      # CFE {a0}: over-covers 7
                  [0, 1, 1, 1, 1, 1, 1, 1]])     # CFE {a0}: over-covers 7
    truth = [run_engine(SetCoverProblem(inst, x), "bruteforce") for x in X]
    one = LabelledAgents(inst, X[:1], [truth[0].actions], np.array([truth[0].value]))
    more = augment(one, target=20, seed=1)
    assert len(more) == 20 and more.info["augmented"] == 19
    assert len({x.tobytes() for x in more.X.astype(np.int64)}) == 20 and all(a == (0,) for a in more.actions)
    for x in more.X[1:]:
        assert np.all(x <= X[0]) and run_engine(SetCoverProblem(inst, x), "bruteforce").actions == (0,)
    assert len(augment(one, target=200, seed=1)) == 64           # all 2^6 - 1 worse-off agents, then no more
    both = LabelledAgents(inst, X, [t.actions for t in truth], np.array([t.value for t in truth]))
    assert augment(both, target=3) is both                       # seen 3 times: untouched
    train_set, _ = split(small, seed=0)
    before, after = Counter(train_set.actions), Counter(augment(train_set, 20, seed=3).actions)
    assert all(after[c] == before[c] if before[c] >= 20 else before[c] <= after[c] <= 20 for c in before)


@given(instances(max_actions=7), st.lists(st.lists(st.integers(0, 6), max_size=4), max_size=3))
def test_repair_is_always_valid(case, candidates):
    """notes §6.3 (8): with repair the answer is valid whenever a cover exists, and never below the optimum."""
    inst, x = case
    p = SetCoverProblem(inst, x)
    candidates = [tuple(i for i in c if i < inst.n_actions) for c in candidates]
    truth = run_engine(p, "bruteforce")
    g = guarantee(p, candidates, certify="dp")
    if not truth.feasible:
        assert math.isinf(g.cost)
        return
    assert inst.is_valid(x, g.actions) and g.cost >= truth.value - 1e-9 and g.bound == pytest.approx(truth.value)
    assert g.gap >= 0 and g.cost == pytest.approx(inst.cost(g.actions))


def test_knn_save_load_and_guarantees(small, tmp_path):
    """The Hamming baseline (no PyTorch): file round trip, and the guarantees make every answer valid."""
    train_set, test_set = split(small, seed=1)
    gen = train("knn", train_set)
    assert gen.k == 5 and len(gen.classes) == len(set(train_set.actions))
    gen.save(tmp_path / "g.npz")
    back = Generator.load(tmp_path / "g.npz")
    assert back.predict(test_set.X, small.instance, top_k=3) == gen.predict(test_set.X, small.instance, top_k=3)
    metrics = evaluate(back, test_set, top_k=3, certify="lp")
    assert metrics["guaranteed_valid_rate"] == 1.0 and metrics["guaranteed_cost_ratio_mean"] >= 1.0 - 1e-12
    assert metrics["certified_gap_max"] >= 0.0
    assert metrics["guaranteed_optimal_rate"] >= metrics["exact_match"] - 1e-12


def test_knn_votes_by_hand(small):
    """k = 3 on agents whose nearest neighbours are known: the majority CFE of the 3 nearest training agents."""
    inst = small.instance
    X = np.array([[0] * 10, [1] * 9 + [0], [1] * 8 + [0, 0], [0, 1] * 5, [1, 0] * 5])
    data = LabelledAgents(inst, X, [(0,), (1,), (1,), (2,), (3,)], np.ones(5))
    gen = train("knn", data, k=3)
    x = np.array([[1] * 7 + [0, 0, 0]])            # distances 7, 2, 1, 6, 4: nearest three have (1,), (1,), (3,)
    assert gen.predict(x)[0] == [(1,)]


def test_named_action_confidence_by_hand(small):
    """Fig. 7a's confidence of a hand-set named-action network (no PyTorch): the lowest sigmoid output among the
    predicted actions, the argmax's own where no output passes 1/2, split by exact match in setcover-evaluate."""
    inst = small.instance
    weights = np.zeros((10, 24), dtype=np.float32)
    weights[0, 0], weights[1, 1] = 3.0, 1.5                  # feature 0 raises action 0's logit, feature 1 action 1's
    biases = np.full(24, -3.0, dtype=np.float32)
    biases[:2] = -1.0
    gen = Generator("na", 10, 24, network=Network((weights,), (biases,), "sigmoid"))
    X = np.zeros((4, 10), dtype=np.int8)
    X[0, 0] = X[1, 0] = X[1, 1] = X[3, 0] = 1                 # logits (2, -1), (2, 0.5), (-1, -1), (2, -1)
    sigma = [1 / (1 + math.exp(-z)) for z in (2.0, 0.5, -1.0)]
    assert gen.action_sets(X) == [(0,), (0, 1), (0,), (0,)]
    assert gen.action_confidence(X) == pytest.approx([sigma[0], sigma[1], sigma[2], sigma[0]], abs=1e-6)
    test = LabelledAgents(inst, X, [(0,), (0, 1), (5,), (1,)], np.ones(4))     # right, right, wrong, wrong
    metrics = evaluate(gen, test)
    assert metrics["exact_match"] == 0.5
    assert metrics["confidence_right"]["min"] == pytest.approx(sigma[1], abs=1e-6)
    assert metrics["confidence_right"]["50%"] == pytest.approx((sigma[0] + sigma[1]) / 2, abs=1e-6)
    assert metrics["confidence_wrong"]["min"] == pytest.approx(sigma[2], abs=1e-6)
    assert "confidence_right" not in evaluate(train("knn", test, k=1), test)


@given(st.integers(1, 40), st.integers(1, 60), st.integers(1, 70), st.sampled_from([3, 1000, None]),
       st.integers(0, 2**32 - 1))
def test_top_classes_equal_the_stable_full_sort(rows, classes, k, levels, seed):
    """argpartition + a sort of k: the same classes in the same order as the stable argsort, ties included (few
    score levels make many ties, also at the k-th place)."""
    rng = np.random.default_rng(seed)
    scores = rng.random((rows, classes)).astype(np.float32)
    if levels is not None:
        scores = np.floor(scores * levels) / levels
    expected = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(top_classes(scores, k), expected)


# ==================================================================================================== the analyses
def test_the_pipeline_analyses_give_reports_whose_files_are_saved_on_request(tmp_path):
    """setcover-data, -learn and -evaluate through their analyses (as the command line runs them): Reports whose
    documents are valid under the schema before and after their files are saved."""
    import json
    import jsonschema

    from stormcf.report import schema_path, to_json_data
    from stormcf.setcover.task import DataSetGeneration, GeneratorEvaluation, GeneratorTraining
    schema = json.loads(schema_path().read_text())
    made = DataSetGeneration(n=8, actions=12, draws=500)(None, None, None)
    assert made.to_dict()["facts"]["out"] is None and made.text().startswith("the data set: 157 agents")
    made.save(tmp_path / "d.npz")
    assert made.to_dict()["facts"]["out"] == str(tmp_path / "d.npz") and len(LabelledAgents.load(made.out)) == 157
    trained = GeneratorTraining(generator="knn", k=1)(made.data, None, "d.npz")
    assert trained.status == "ok" and trained.generator.info["data"] == "d.npz" and "(not saved)" in trained.text()
    trained.save(tmp_path / "g.npz", tmp_path / "t.npz")
    assert LabelledAgents.load(trained.test_out).X.tolist() == trained.held_out.X.tolist()
    evaluated = GeneratorEvaluation(top_k=2)(Generator.load(trained.out), trained.held_out, None)
    assert evaluated.metrics["guaranteed_valid_rate"] == 1.0 and evaluated.metrics["top_k"] == 2
    for result in (made, trained, evaluated):
        jsonschema.validate(to_json_data(result.to_dict()), schema)


def test_the_pipeline_analyses_stop_with_their_run(small):
    """A run past its limit ends labelling, augmentation and the evaluation at their first check, naming the
    phase; a stopped run ends them with Interrupted (setcover-learn has no epoch to keep before training)."""
    from stormcf.errors import TimeLimitReached
    from stormcf.interrupt import Interrupted
    from stormcf.run import Run
    from stormcf.setcover.task import DataSetGeneration, GeneratorEvaluation, GeneratorTraining

    def spent(seconds: float = 1.0) -> Run:
        return Run(seconds, elapsed=seconds)                  # its time ran out before it started
    with pytest.raises(TimeLimitReached, match="the time limit of 1 s was reached during the search of reachable"):
        DataSetGeneration(n=8, actions=12, draws=500)(None, None, None, spent())
    with pytest.raises(TimeLimitReached, match="during the augmentation"):
        GeneratorTraining(generator="knn", augment=50)(small, None, None, spent())
    stopped = Run()
    stopped.stop()
    with pytest.raises(Interrupted):
        GeneratorTraining(generator="knn", augment=50)(small, None, None, stopped)
    generator = train("knn", small)
    with pytest.raises(TimeLimitReached, match="during the predictions"):
        GeneratorEvaluation()(generator, small, None, spent())
