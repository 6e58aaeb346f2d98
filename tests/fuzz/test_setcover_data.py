"""``stormcf setcover-data``: options with a meaningful range are checked, and a data set without agents is
refused instead of written."""
import numpy as np
import pytest

from . import setcover_files as files
from .hostile import Case


def data(*args):
    return ["setcover-data", "d.npz", "-n", "6", "-A", "8", "--draws", "200", *args]


CASES = [
    Case("a small data set", lambda d: data(), 0, "agents labelled by storm"),
    Case("--p-a nan", lambda d: data("--p-a", "nan"), 2, "expected a probability in [0, 1]"),
    Case("--p-f 1.5", lambda d: data("--p-f", "1.5"), 2, "expected a probability in [0, 1]"),
    Case("--p-f -0.1", lambda d: data("--p-f", "-0.1"), 2, "expected a probability in [0, 1]"),
    Case("--p-f inf", lambda d: data("--p-f", "inf"), 2, "expected a probability in [0, 1]"),
    Case("--p-f 1: no negative agent", lambda d: data("--p-f", "1"), 2, "is negative: nothing to label"),
    Case("--p-a 0: nobody has a CFE", lambda d: data("--p-a", "0"), 2, "no agent keeps a label"),
    Case("--classifier first10 on 6 features", lambda d: data("--classifier", "first10"), 2,
         "needs at least 10 features, got 6"),
    Case("--features 0", lambda d: data("-n", "0"), 2, "expected a positive integer"),
    Case("--draws 0", lambda d: data("--draws", "0"), 2, "expected a positive integer"),
    Case("--max-size 0", lambda d: data("--max-size", "0"), 2, "expected a positive integer"),
    Case("10^12 draws", lambda d: data("--draws", str(10 ** 12)), 2, "would need about"),
    Case("-n 1000 (was: the projected state space has inf states)",
         lambda d: ["setcover-data", "d.npz", "-n", "1000", "-A", "8", "--draws", "10"], 2,
         "--features 1000 (-n): the projected state space of"),
    Case("--instance-out onto OUT", lambda d: data("--instance-out", "d.npz"), 2,
         "--instance-out d.npz: is also d.npz"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_setcover_data(case, hostile):
    hostile(case)


def test_the_hand_labels_of_the_tables_are_the_optima():
    """The data set the set-cover tables start from is right: bnb's canonical optimum of every agent."""
    from stormcf.setcover import SetCoverInstance, SetCoverProblem, solve_setcover
    instance = SetCoverInstance.from_dict(files.INSTANCE)
    for agent, cfe, cost in files.AGENTS:
        result = solve_setcover(SetCoverProblem(instance, np.array(agent)), "bnb")
        assert result.actions == cfe and result.cost == pytest.approx(cost) and result.unique
