"""``stormcf setcover`` on hostile instances and agents: values within 64-bit arithmetic, multicover thresholds an
agent can be explained within, state spaces the engines can hold."""
import json

import numpy as np
import pytest

from . import setcover_files as files
from .hostile import Case, write


def solve(instance_of, agent="0,0,0", *args):
    return lambda d: ["setcover", instance_of(d), "--agent", agent, *args]


def instance(**changes):
    return lambda d: files.instance_file(d, **changes)


def actions(*effects_and_costs):
    return [{"name": f"a{i}", "effect": e, "cost": c} for i, (e, c) in enumerate(effects_and_costs)]


def many_actions(folder, n=20, count=10_000):
    """n features, ``count`` random actions: the projected MDP's state-action pairs pass the limit at once."""
    rng = np.random.default_rng(0)
    effects = (rng.random((count, n)) < 0.5).astype(int)
    data = {"features": [f"f{j}" for j in range(n)], "thresholds": [1] * n,
            "actions": [{"name": f"a{i}", "effect": effects[i].tolist(), "cost": float(1 + i % 7)}
                        for i in range(count)]}
    return write(folder, "many.json", json.dumps(data))


CASES = [
    Case("the valid instance", solve(instance()), 0, "Optimal counterfactual explanation (cost 2.5): a3"),
    Case("a threshold of 2^62", solve(instance(thresholds=[2 ** 62, 1, 1])), 2,
         "thresholds[0]: expected an integer in [0, 2^31 - 1]"),
    Case("a threshold of 2^63", solve(instance(thresholds=[2 ** 63, 1, 1])), 2, "out of range (64-bit integers)"),
    Case("a multicover threshold of 10^6", solve(instance(thresholds=[10 ** 6, 1, 1])), 2,
         "the agent misses 1,000,002 units"),
    Case("a multicover threshold of 10^6 (dp)", solve(instance(thresholds=[10 ** 6, 1, 1]), "0,0,0",
                                                      "--method", "dp"), 2, "stormcf explains at most 10,000"),
    Case("a multicover threshold of 5,000", solve(instance(thresholds=[5000, 1, 1]), "0,0,0", "--method", "milp"),
         0, "status: optimal"),
    Case("an effect of -1", solve(instance(actions=actions(([-1, 0, 0], 1.0)))), 2,
         "effect[0]: expected an integer in [0, 2^31 - 1], got -1"),
    Case("an effect of 2^40", solve(instance(actions=actions(([2 ** 40, 0, 0], 1.0)))), 2,
         "expected an integer in [0, 2^31 - 1]"),
    Case("an effect of 2^63 - 1 (x + e overflowed int64)", solve(instance(actions=actions(([2 ** 63 - 1, 1, 1], 1.0))),
                                                                "1,0,0"), 2, "expected an integer in [0, 2^31 - 1]"),
    Case("a cost of NaN", solve(lambda d: write(d, "nan.json", json.dumps(files.INSTANCE).replace("2.5", "NaN"))),
         2, "NaN is not a JSON number"),
    Case("a cost of 1e999", solve(lambda d: write(d, "inf.json", json.dumps(files.INSTANCE).replace("2.5", "1e999"))),
         2, "cost must be a finite number >= 0"),
    Case("a negative cost", solve(instance(actions=actions(([1, 1, 1], -1.0)))), 2, "cost must be a finite number"),
    Case("a duplicate action name", solve(instance(actions=actions(([1, 0, 0], 1.0)) * 2)), 2,
         "action name 'a0' is given twice"),
    Case("an unknown group", solve(instance(), "0,0,0", "--group", "g"), 2, "unknown group 'g'"),
    Case("an agent of 2 features", solve(instance(), "0,0"), 2, "expected 3 entries"),
    Case("an agent of -1", solve(instance(), "0,-1,0"), 2, "expected an integer in [0, 2^31 - 1], got -1"),
    Case("an agent that starts with -1 (was: expected one argument)", solve(instance(), "-1,0,0"), 2,
         "--agent[0]: expected an integer in [0, 2^31 - 1], got -1"),
    Case("an agent of text", solve(instance(), "a,b,c"), 2, "expected 3 comma-separated integers"),
    Case("10,000 actions (dp): the state-action pairs pass the limit at once",
         solve(many_actions, ",".join(["0"] * 20), "--method", "dp"), 2,
         "reachable states (10000 actions: at most 50,000,000 state-action pairs)"),
    Case("not JSON", solve(lambda d: write(d, "x.json", "{")), 2, "not valid JSON"),
    Case("--json onto the instance", lambda d: ["setcover", files.instance_file(d), "--agent", "0,0,0", "--json",
                                                d / "inst.json"], 2, "is also the input INSTANCE"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_setcover(case, hostile):
    hostile(case)
