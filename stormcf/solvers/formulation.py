"""A solver-independent mathematical programme: what the encodings produce and every back end reads.

    min   cᵀx + Σ_k c_k x_i(k) x_j(k) + offset
    s.t.  lhs <= A x <= rhs                                        (linear rows; ±inf for one-sided rows)
          lhs_q <= a_qᵀx + Σ_k w_k x_i(k) x_j(k) <= rhs_q          (quadratic rows: bilinear Bellman terms)
          lb <= x <= ub,  x_i integer for the integer variables (binary ones: bounds [0, 1])

Rows are added in vectorised blocks from coordinate triplets, so building a programme for 10^5 states needs no
Python loop over transitions. Every programme stormcf solves is one: LPs and MILPs (set cover, the interval
counterfactual bounds, the recourse achievable-set test, the d0 MILP) and the bilinear MIQCQP of counterfactual
strategies; :func:`stormcf.solvers.solve` solves it with the solver chosen by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

INF = np.inf
#: relative optimality gap the back ends stop at by default: half of the 1e-4 (Gurobi's default, which the paper
#: used) at which the counterfactual certificate calls a strategy optimal, because a solver measures its gap from its
#: own incumbent, which Storm may reject (then the certified incumbent is a repaired, slightly farther strategy)
MIP_GAP = 5e-5


@dataclass(frozen=True, eq=False)
class QuadraticRow:
    """``lhs <= Σ lin_val·x[lin_idx] + Σ q_val·x[q_i]·x[q_j] <= rhs``."""

    lin_idx: np.ndarray
    lin_val: np.ndarray
    q_i: np.ndarray
    q_j: np.ndarray
    q_val: np.ndarray
    lhs: float
    rhs: float


@dataclass(frozen=True, eq=False)
class Formulation:
    """An LP, MILP or MIQCQP ready for a back end (see the module docstring)."""

    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray
    A: sp.csr_matrix
    lhs: np.ndarray
    rhs: np.ndarray
    quadratic: tuple[QuadraticRow, ...]
    c: np.ndarray
    offset: float = 0.0
    objective_quadratic: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    start: np.ndarray | None = None
    objective_cutoff: float | None = None          # only solutions with objective <= this are wanted (ε)
    tolerance: float = 1e-6                        # primal feasibility tolerance for the solvers
    gap: float = MIP_GAP                           # relative optimality gap at which a solve counts as optimal

    @property
    def n_vars(self) -> int:
        return self.lb.size

    @property
    def is_linear(self) -> bool:
        return not self.quadratic and self.objective_quadratic is None

    def sizes(self) -> dict[str, int]:
        """Variables, binaries, linear and quadratic constraints, bilinear terms (what licences count)."""
        binaries = self.integer & (self.lb >= 0) & (self.ub <= 1)
        return {"variables": self.n_vars, "binaries": int(binaries.sum()),
                "linear_constraints": self.A.shape[0], "quadratic_constraints": len(self.quadratic),
                "bilinear_terms": int(sum(q.q_val.size for q in self.quadratic)),
                "constraints": self.A.shape[0] + len(self.quadratic)}

    def relaxation(self) -> "Formulation":
        """The same programme with every integer variable continuous within its bounds (its optimum is a valid
        bound)."""
        return replace(self, integer=np.zeros_like(self.integer))

    def objective_value(self, x: np.ndarray) -> float:
        value = float(self.c @ x) + self.offset
        if self.objective_quadratic is not None:
            i, j, w = self.objective_quadratic
            value += float(np.sum(w * x[i] * x[j]))
        return value


@dataclass(eq=False)
class FormulationBuilder:
    """Collects variable blocks and row blocks, then freezes them into a :class:`Formulation`."""

    _lb: list = field(default_factory=list)
    _ub: list = field(default_factory=list)
    _integer: list = field(default_factory=list)
    _rows: list = field(default_factory=list)      # (row, col, val) triplet blocks with global row numbers
    _lhs: list = field(default_factory=list)
    _rhs: list = field(default_factory=list)
    _quadratic: list = field(default_factory=list)
    n_vars: int = 0
    n_rows: int = 0

    def variables(self, k: int, lb=0.0, ub=1.0, integer: bool = False) -> np.ndarray:
        """Add ``k`` variables (binary ones: ``integer`` with the default bounds [0, 1]); returns their indices."""
        self._lb.append(np.broadcast_to(np.asarray(lb, dtype=float), (k,)).copy())
        self._ub.append(np.broadcast_to(np.asarray(ub, dtype=float), (k,)).copy())
        self._integer.append(np.full(k, integer))
        idx = np.arange(self.n_vars, self.n_vars + k)
        self.n_vars += k
        return idx

    def rows(self, matrix: sp.spmatrix, cols: np.ndarray, lhs=-INF, rhs=INF) -> None:
        """Add the rows ``lhs <= matrix @ x[cols] <= rhs`` (``matrix`` has one column per entry of ``cols``)."""
        coo = sp.coo_matrix(matrix)
        r = coo.shape[0]
        if r == 0:
            return
        self._rows.append((coo.row + self.n_rows, np.asarray(cols)[coo.col], coo.data))
        self._lhs.append(np.broadcast_to(np.asarray(lhs, dtype=float), (r,)).copy())
        self._rhs.append(np.broadcast_to(np.asarray(rhs, dtype=float), (r,)).copy())
        self.n_rows += r

    def quadratic(self, row: QuadraticRow) -> None:
        self._quadratic.append(row)

    def set_upper(self, idx, value) -> None:
        ub = np.concatenate(self._ub)
        ub[idx] = value
        self._ub = [ub]

    def build(self, c: np.ndarray, offset: float = 0.0, start: np.ndarray | None = None,
              objective_quadratic=None, objective_cutoff: float | None = None, tolerance: float = 1e-6,
              gap: float = MIP_GAP) -> Formulation:
        n = self.n_vars
        if self._rows:
            rows, cols, vals = (np.concatenate(p) for p in zip(*self._rows))
        else:
            rows = cols = np.zeros(0, dtype=np.int64)
            vals = np.zeros(0)
        A = sp.csr_matrix((vals, (rows, cols)), shape=(self.n_rows, n))
        A.sum_duplicates()
        cat = lambda parts, dtype=float: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa
        return Formulation(lb=cat(self._lb), ub=cat(self._ub), integer=cat(self._integer, bool), A=A,
                           lhs=cat(self._lhs), rhs=cat(self._rhs), quadratic=tuple(self._quadratic),
                           c=np.asarray(c, dtype=float), offset=offset, objective_quadratic=objective_quadratic,
                           start=start, objective_cutoff=objective_cutoff, tolerance=tolerance, gap=gap)
