"""``stormcf setcover-learn`` on hostile data sets and options (the data set file is validated at the boundary:
every array's shape, type and range, and the labels against the agents and the instance)."""
import numpy as np
import pytest

from . import setcover_files as files
from .hostile import Case, write


def learn(data, *args):
    return ["setcover-learn", data, "--generator", "knn", "--neighbours", "1", "--out", "g.npz", *args]


def arrays(**changes):
    return lambda d: learn(files.data_file(d, **changes))


X = files.data_arrays()["X"]
ACTIONS = files.data_arrays()["actions"]
COST = files.data_arrays()["cost"]
#: the labels with a third column, agent 3's (0, 1) written as (0, -1, 1)
HOLE = np.hstack([ACTIONS, np.full((len(ACTIONS), 1), -1, dtype=ACTIONS.dtype)])
HOLE[3] = [0, -1, 1]

CASES = [
    Case("a valid data set", arrays(), 0, "knn generator trained on 6 agents"),
    Case("not an npz", lambda d: learn(write(d, "x.npz", "hello")), 2, "not a labelled set-cover data set"),
    Case("truncated", lambda d: learn(files.truncated(d)), 2, "not a labelled set-cover data set"),
    Case("an array missing", lambda d: learn(files.data_file(d, drop=("info",))), 2, "the array 'info' is missing"),
    Case("a pickle inside", lambda d: learn(files.pickled(d)), 2, "holds Python objects"),
    Case("a header claiming 10^13 entries", lambda d: learn(files.giant_header(d)), 2, "would need about"),
    Case("features of -1", arrays(X=np.where(X == 0, -1, X)), 2, "X[0, 0] = -1; expected an integer in [0,"),
    Case("float features", arrays(X=X.astype(float)), 2, "'X' must be a matrix of integers"),
    Case("agents with 2 features", arrays(X=X[:, :2]), 2, "agents (X) have 2 features, the instance 3"),
    Case("a label naming action 500 of 4", arrays(actions=np.where(ACTIONS == 0, 500, ACTIONS)), 2,
         "(the instance has 4 actions)"),
    Case("a label naming action -5", arrays(actions=np.where(ACTIONS == 0, -5, ACTIONS)), 2,
         "expected an integer in [-1, 3]"),
    Case("an empty label", arrays(actions=np.full_like(ACTIONS, -1)), 2, "actions[0] is empty"),
    Case("a label after the padding", arrays(actions=HOLE), 2, "actions[3]: an action after the padding"),
    Case("a repeated action", arrays(actions=np.where(ACTIONS == -1, ACTIONS[:, :1], ACTIONS)), 2,
         "not in ascending order (or repeated)"),
    Case("a NaN cost", arrays(cost=np.where(COST == 1.0, np.nan, COST)), 2, "cost[0] = nan; costs must be finite"),
    Case("a cost the label does not have", arrays(cost=COST * 0.98), 2, "but its label's actions cost"),
    Case("labels that contradict the agents", arrays(X=X[::-1].copy()), 2, "does not turn agent X[0] positive"),
    Case("a positive agent", arrays(X=np.vstack([X[:-1], [[1, 1, 1]]]).astype(np.int8)), 2, "already positive"),
    Case("fewer costs than agents", arrays(cost=COST[:3]), 2, "they must match"),
    Case("no agents", arrays(X=X[:0], actions=ACTIONS[:0], cost=COST[:0]), 2, "has no agents"),
    Case("an instance that is not JSON", arrays(instance=np.array("{not json")), 2, "'instance' is not valid JSON"),
    Case("an instance with a threshold of -1",
         arrays(instance=np.array('{"features": ["f0"], "thresholds": [-1], "actions": []}')), 2,
         "thresholds[0]: expected an integer in [0, 2^31 - 1]"),
    Case("info that is not an object", arrays(info=np.array("[1, 2]")), 2, "'info' must be a JSON object"),
    Case("--test 1", lambda d: learn(files.data_file(d), "--test", "1"), 2, "expected a share in (0, 1)"),
    Case("--test 1.5", lambda d: learn(files.data_file(d), "--test", "1.5"), 2, "expected a share in (0, 1)"),
    Case("--test nan", lambda d: learn(files.data_file(d), "--test", "nan"), 2, "expected a share in (0, 1)"),
    Case("--test 0.01 holds out nothing", lambda d: learn(files.data_file(d), "--test", "0.01"), 2,
         "leaves no agent held out"),
    Case("--min-frequency leaving nothing", lambda d: learn(files.data_file(d), "--min-frequency", "1000000"), 2,
         "the frequency filter leaves no agent"),
    Case("--hidden 0", lambda d: ["setcover-learn", files.data_file(d), "--out", "g.npz", "--hidden", "0"], 2,
         "layer widths must be integers >= 1"),
    Case("--hidden abc", lambda d: ["setcover-learn", files.data_file(d), "--out", "g.npz", "--hidden", "abc"], 2,
         "expected layer widths like 256,256"),
    Case("--hidden 10^9", lambda d: ["setcover-learn", files.data_file(d), "--out", "g.npz", "--hidden",
                                     "1000000000"], 2, "would need about"),
    Case("--neighbours 0", lambda d: learn(files.data_file(d), "--neighbours", "0"), 2, "expected a positive integer"),
    Case("--neighbours beyond the training agents", lambda d: learn(files.data_file(d), "--neighbours", "100"), 2,
         "only 6 training agents"),
    Case("--out onto the data set", lambda d: learn(files.data_file(d, "g.npz")), 2,
         "--out g.npz: is also the input DATA.npz"),
    Case("GEN.test.npz onto the data set", lambda d: learn(files.data_file(d, "g.test.npz")), 2,
         "(and g.test.npz beside it): is also the input DATA.npz"),
    Case("GEN.test.npz in a read-only place", lambda d: _read_only_test_output(d), 2, "g.test.npz beside it"),
]


def _read_only_test_output(folder):
    (folder / "g.test.npz").mkdir()                      # a directory where the held-out agents would go
    return learn(files.data_file(folder))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_setcover_learn(case, hostile):
    hostile(case)


def test_a_refused_second_output_leaves_the_first_alone(tmp_path, cli):
    """The generator is not written when its held-out agents cannot be (both are checked before any work)."""
    (tmp_path / "g.test.npz").mkdir()
    code, _, err = cli(*learn(files.data_file(tmp_path), "--out", tmp_path / "g.npz"))
    assert code == 2 and not (tmp_path / "g.npz").exists()
