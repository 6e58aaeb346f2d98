"""The diversity term of seed 000 (Section 4, "Diverse Counterfactual Strategies", after Mothilal et al. 2020).

The n-th counterfactual minimises d(σ, σ') - λ·det(K) where K is the matrix of inverse pairwise distances of the
counterfactuals σ_1..σ_{n-1} found so far and σ' itself:

    K_ij = 1 / (1 + ||Δ(σ_i, σ_j)||_1)        (a small perturbation η is added to the diagonal)

With K_prev the (constant) matrix of the earlier counterfactuals and k_j = 1/(1 + D_j), D_j = ||Δ(σ_j, σ')||_1,
the Schur complement gives

    det(K) = det(K_prev) · (1 + η - kᵀ K_prev⁻¹ k),

so -λ·det(K) = -λ·det(K_prev)·(1 + η) + λ·det(K_prev)·kᵀ K_prev⁻¹ k: a convex quadratic in k. The encoding adds

    w_jr = |x_r - σ_j(r)|      exactly, with a binary b_jr (w <= x - σ_j + 2(1 - b), w <= σ_j - x + 2b),
    D_j = ½ Σ_r w_jr,           k_j·(1 + D_j) = 1   (bilinear),

over the controllable rows (the only rows where counterfactuals differ). So that every diverse counterfactual is
distinct and novel, it must lower the probability of some state-action pair that no earlier counterfactual changed
by at least η = :data:`NOVEL_CHANGE`: a binary c_r per such pair, x_r <= σ(r) - η when c_r = 1 (as
x_r + (1 - σ(r) + η)·c_r <= 1), Σ c_r >= 1.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .preanalysis import Encoding, Region
from ..solvers.formulation import FormulationBuilder, QuadraticRow

#: the least drop of a novel state-action pair's probability that makes a diverse counterfactual novel
NOVEL_CHANGE = 1e-3


def l1_distance(a: np.ndarray, b: np.ndarray) -> float:
    """||Δ(σ_a, σ_b)||_1 = Σ_s TV(σ_a(s), σ_b(s)) for two policies over the same rows."""
    return 0.5 * float(np.abs(a - b).sum())


class DiversityTerm:
    """-λ·det(K) for the next counterfactual after ``previous`` (strategies: the probability of every choice),
    over the strategy rows of ``region``."""

    def __init__(self, previous: list[np.ndarray], region: Region, weight: float = 2.0,
                 perturbation: float = 1e-4) -> None:
        self.previous = [np.asarray(p)[region.rows] for p in previous]
        self.previous_strategy = np.asarray(previous[-1])
        self.weight, self.perturbation = weight, perturbation
        self._w: list[np.ndarray] = []           # per previous counterfactual: its variables (set by add)
        self._b: list[np.ndarray] = []
        self._d: list[int] = []
        self._k: list[int] = []

    def kernel(self) -> np.ndarray:
        """K_prev of the earlier counterfactuals."""
        n = len(self.previous)
        K = np.array([[1.0 / (1.0 + l1_distance(self.previous[i], self.previous[j])) for j in range(n)]
                      for i in range(n)])
        return K + self.perturbation * np.eye(n)

    def add(self, fb: FormulationBuilder, enc: Encoding | Region, x: np.ndarray):
        """Add the variables and constraints; returns (objective quadratic triplets, objective offset)."""
        F = np.flatnonzero(enc.free)
        n = len(self.previous)
        eye = sp.identity(F.size, format="csr")
        self._w, self._b, self._d, self._k = [], [], [], []
        for prev in self.previous:
            s = prev[F]
            w = fb.variables(F.size)
            b = fb.variables(F.size, integer=True)
            fb.rows(sp.hstack([eye, -eye]), np.concatenate([w, x]), lhs=-s)                 # w >= x - σ_j
            fb.rows(sp.hstack([eye, eye]), np.concatenate([w, x]), lhs=s)                   # w >= σ_j - x
            fb.rows(sp.hstack([eye, -eye, 2 * eye]), np.concatenate([w, x, b]), rhs=2 - s)   # w <= x - σ_j + 2(1-b)
            fb.rows(sp.hstack([eye, eye, -2 * eye]), np.concatenate([w, x, b]), rhs=s)      # w <= σ_j - x + 2b
            d = fb.variables(1, lb=0.0, ub=float(F.size))[0]
            fb.rows(sp.csr_matrix(np.r_[np.full(F.size, 0.5), -1.0][None, :]), np.r_[w, d], lhs=0.0, rhs=0.0)
            k = fb.variables(1, lb=0.0, ub=1.0)[0]
            fb.quadratic(QuadraticRow(np.array([k]), np.array([1.0]), np.array([k]), np.array([d]),
                                      np.array([1.0]), 1.0, 1.0))                          # k (1 + D) = 1
            self._w.append(w)
            self._b.append(b)
            self._d.append(d)
            self._k.append(k)
        self._novel(fb, enc, x, F)
        K = self.kernel()
        det = float(np.linalg.det(K))
        A = self.weight * det * np.linalg.inv(K)
        ii, jj = np.meshgrid(np.array(self._k), np.array(self._k), indexing="ij")
        offset = -self.weight * det * (1.0 + self.perturbation)
        return (ii.ravel(), jj.ravel(), A.ravel()), offset if n else 0.0

    def _novel(self, fb: FormulationBuilder, enc: Encoding | Region, x: np.ndarray, F: np.ndarray) -> None:
        """Some row no earlier counterfactual changed loses at least η of probability."""
        sigma = enc.sigma[F]
        unchanged = np.all([np.abs(prev[F] - sigma) <= 1e-9 for prev in self.previous], axis=0)
        rows = np.flatnonzero(unchanged & (sigma >= NOVEL_CHANGE))
        c = fb.variables(rows.size, integer=True)
        eye = sp.identity(rows.size, format="csr")
        fb.rows(sp.hstack([eye, sp.diags(1.0 - sigma[rows] + NOVEL_CHANGE)]), np.concatenate([x[rows], c]), rhs=1.0)
        fb.rows(sp.csr_matrix(np.ones((1, rows.size))), c, lhs=1.0)

    def fill_start(self, x0: np.ndarray, enc: Encoding | Region, probs: np.ndarray) -> None:
        """Start values of the diversity variables for the policy ``probs``."""
        F = np.flatnonzero(enc.free)
        for prev, w, b, d, k in zip(self.previous, self._w, self._b, self._d, self._k):
            diff = probs[F] - prev[F]
            x0[w] = np.abs(diff)
            x0[b] = diff >= 0
            x0[d] = 0.5 * np.abs(diff).sum()
            x0[k] = 1.0 / (1.0 + x0[d])
