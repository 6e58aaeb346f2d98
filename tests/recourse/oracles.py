"""The oracle problems of the seed-002 notes §6.2 (O1, O2, O4, O5), built with the public Python API."""
from __future__ import annotations

import numpy as np

from stormcf.recourse import (Action, Feature, RecourseProblem, RelationGraph, ValueDomain, add, set_to)

JOB = Feature.categorical("Job", ["Seller", "Developer"])
EDU = Feature.categorical("Edu", ["HS", "BSc"])
LOC = Feature.categorical("Location", ["Germany", "US"])


def figure2(need_location: bool = True, move_effort: float = 15.0, discounted: bool = True,
            graph: bool = True) -> RecourseProblem:
    """O1 (paper Fig. 2) and, with ``need_location=False``, O2."""
    dev, bsc, us = JOB.code("Developer"), EDU.code("BSc"), LOC.code("US")

    def classifier(X):
        ok = (X[:, 0] == dev) & (X[:, 1] == bsc)
        return (ok & (X[:, 2] == us) if need_location else ok).astype(int)

    def constant(b):
        return lambda x, y, v: np.full(len(x), b)

    actions = [Action("chJob", ValueDomain.fixed(dev, "Developer"), set_to("Job"), constant(10.0), feature="Job"),
               Action("getBSc", ValueDomain.fixed(bsc, "BSc"), set_to("Edu"), constant(5.0), feature="Edu"),
               Action("moveUS", ValueDomain.fixed(us, "US"), set_to("Location"), constant(move_effort),
                      feature="Location")]
    edges = {("Location", "Edu"): lambda x: np.where(x["Location"] == us, 1.0, 0.5),
             ("Location", "Job"): lambda x: np.where(x["Location"] == us, 0.5, 1.0),
             ("Edu", "Job"): lambda x: np.where(x["Edu"] == bsc, 0.5, 1.0)}
    return RecourseProblem([JOB, EDU, LOC], {"Job": "Seller", "Edu": "HS", "Location": "Germany"}, classifier, 1,
                           actions, RelationGraph(edges) if graph else None, discounted=discounted)


def numeric2(discounted: bool = True) -> RecourseProblem:
    """O4: numeric values, a side effect, two hours actions, two graph edges."""
    features = [Feature.numeric("age", 0, 62), Feature.numeric("edu", 0, 4), Feature.numeric("hours", 0, 50)]
    actions = [
        Action("addEdu", ValueDomain.finite([2, 3, 4]),
               lambda x, v: {"edu": v, "age": x["age"] + 2 * (v - x["edu"])},
               lambda x, y, v: 3 * (v - x["edu"]), post=lambda x, y, v: v > x["edu"], feature="edu"),
        Action("reduceHours", ValueDomain.finite([10, 20, 30]), set_to("hours"),
               lambda x, y, v: (x["hours"] - v) / 20, post=lambda x, y, v: v < x["hours"], feature="hours"),
        Action("increaseHours", ValueDomain.finite([30, 40, 50, 60]), set_to("hours"),
               lambda x, y, v: (v - x["hours"]) / 10, post=lambda x, y, v: v > x["hours"], feature="hours"),
        Action("waitYears", ValueDomain.finite([1, 2, 3]), add("age"), lambda x, y, v: v, feature="age"),
    ]
    edges = {("hours", "edu"): lambda x: np.where(x["hours"] < 30, 0.5, 1.0),
             ("age", "hours"): lambda x: np.where(x["age"] >= 36, 0.8, 1.0)}
    return RecourseProblem(features, {"age": 30, "edu": 1, "hours": 40},
                           lambda X: (X[:, 1] + X[:, 2] / 20 >= 5.5).astype(int), 1, actions, RelationGraph(edges),
                           discounted=discounted)


def capital() -> RecourseProblem:
    """O5: preconditions and mutual exclusion (the Adult capital gain/loss pattern)."""
    features = [Feature.numeric("gain", 0, 1e5), Feature.numeric("loss", 0, 5000), Feature.numeric("edu", 0, 15)]
    actions = [
        Action("incCapGain", ValueDomain.finite([5000, 10000, 20000]), set_to("gain"),
               lambda x, y, v: (y["gain"] - x["gain"]) / 1e4, pre=lambda x: x["loss"] < 1,
               post=lambda x, y, v: (y["gain"] > 0) & (y["gain"] < 1e5), feature="gain"),
        Action("chCapLoss", ValueDomain.finite([1000, 2000]), set_to("loss"),
               lambda x, y, v: (y["loss"] - x["loss"]) / 1000, pre=lambda x: x["gain"] < 1,
               post=lambda x, y, v: (y["loss"] > 1) & (y["loss"] < 5000), feature="loss"),
        Action("addEdu", ValueDomain.finite([12, 14, 16]), set_to("edu"), lambda x, y, v: y["edu"] - x["edu"],
               post=lambda x, y, v: y["edu"] > x["edu"], feature="edu"),
    ]
    graph = RelationGraph({("edu", "gain"): lambda x: 1 - x["edu"] / 32})

    def classifier(X):
        return (X[:, 0] / 1e4 + (X[:, 2] - 10) / 2 - X[:, 1] / 1000 >= 2).astype(int)

    return RecourseProblem(features, {"gain": 0, "loss": 0, "edu": 10}, classifier, 1, actions, graph)
