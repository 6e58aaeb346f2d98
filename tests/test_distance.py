"""The registry of strategy distances (stormcf.distance, issue 21 item 4): weights as a mapping norm -> weight, the
command line's positional r0,r1,r∞, and a new distance that touches only the registry (its value, its programme
block, its names) flowing through the pipeline, the certificate and the JSON."""
import numpy as np
import pytest
import scipy.sparse as sp

import stormcf
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.distance import NORMS, Norm, NormBlock, Weights, strategy_distance
from stormcf.errors import PropertyError


def test_weights_parse_positional_named_and_mixed():
    assert Weights.parse("1,0,2").as_list() == [1.0, 0.0, 2.0] and Weights.parse("1,0,2").kind == "mixed"
    assert Weights.parse("dinf=1") == Weights.parse("0,0,1") and Weights.parse("0,0,1").kind == "dinf"
    assert Weights.parse({"d0": 2}).text() == "2,0,0" and Weights().text() == "1,1,1"
    for bad in ("1,1", "1,x,1", "0,0,0", "1,-1,0", "d5=1"):
        with pytest.raises(PropertyError):
            Weights.parse(bad)


class SumNorm(Norm):
    """d_Σ = Σ_s Δ_s (the total change, d1 without the average): a new distance, defined only here."""

    key, symbol, weight_name = "dsum", "dΣ", "rΣ"

    def value(self, delta, n_decision):
        return float(delta.sum())

    def encode(self, fb, change, n_decision, lower=0.0, relaxed=False):
        weights = np.asarray(change.matrix.sum(axis=0)).ravel()
        if lower > 0:
            fb.rows(sp.csr_matrix(weights[None, :]), change.cols, lhs=lower)
        return NormBlock(change.cols, weights)

    def implied(self, bounds, n_decision):
        return max(bounds.get(self.key, 0.0), bounds.get("dinf", 0.0), bounds.get("d1", 0.0) * n_decision)


def test_a_new_distance_needs_only_the_registry(monkeypatch, impatient):
    """Registering d_Σ is all it takes: distances, weights (by name), the MIQCQP's objective, the lower bounds
    (d_Σ >= d∞*), the text and the JSON. Its optimum on the loan example is |S|·d1* (0.5553: Rework alone)."""
    monkeypatch.setitem(NORMS, "dsum", SumNorm())
    d = strategy_distance(impatient, impatient)
    assert d.dsum == 0 and "dΣ = 0" in d.text()
    assert Weights.parse("0,0,0,dsum=1").kind == "dsum" and Weights().text() == "1,1,1"
    r = solve_counterfactual(CounterfactualProblem(impatient, 'P<=0.2 [F "rejected"]', weights="dsum=1"),
                             time_limit=60)
    assert r.status == "optimal" and r.verification.holds
    assert r.distance.dsum == pytest.approx(0.5553, abs=2e-4)
    assert r.distance.dsum == pytest.approx(4 * r.distance.d1)
    data = r.to_dict()
    assert data["distance"]["dsum"] == r.distance.dsum and data["distance"]["weights"] == [0, 0, 0, 1]
    assert "(weights 0,0,0,dsum=1)" in r.text() and "dΣ = 0.555" in r.text()
    assert stormcf.strategy_distance(impatient, r.strategy).weighted("dsum=1") == pytest.approx(r.weighted_distance)
