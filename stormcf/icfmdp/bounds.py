"""Closed-form counterfactual transition-probability bounds (Lally, Kazemi, Paoletti; Theorems 4.1-4.3).

One observation ``(s_t, a_t) -> s_{t+1}`` with ``q = P(s_{t+1} | s_t, a_t) > 0`` bounds the counterfactual probability
``P_t(s' | s, a)`` of every transition of the model. Notation (per pair (s, a) and successor s'):
``p(x) = P(x | s, a)``, ``o(x) = P(x | s_t, a_t)``, ``O = supp o``, ``C = supp p``.

- **Case A** (s, a) = (s_t, a_t): ``[1, 1]`` at s_{t+1}, ``[0, 0]`` elsewhere.
- **Case B** O ∩ C = ∅:  ``UB = min(p(s'), q) / q``,  ``LB = max(0, (p(s') - (1 - q)) / q)``.
- **Case C** O ∩ C ≠ ∅, with counterfactual stability (CS) and monotonicity (M):
    - CS forbids s' ≠ s_{t+1} with o(s') > 0 iff ``p(s_{t+1}) / q >= p(s') / o(s')``: ``[0, 0]``;
    - s' ≠ s_{t+1}, allowed: ``UB = min(1 - p(s_{t+1}), p(s'))`` if s' ∈ O, else ``min(1 - p(s_{t+1}), p(s') / q)``;
      ``LB = max(0, H(s'))``;
    - s' = s_{t+1}: ``UB = 1 if q <= p(s') else p(s') / q``;  ``LB = max(p(s'), H(s'))``;
    - ``H(s') = (p(s') - (1 - q - Σ_{x ∈ C, x ≠ s'} (p(x) - UB(x) q))) / q``.

Assumption sets: ``cs+m`` (above), ``cs`` (Case C: forbidden -> 0, otherwise Case B's UB and ``LB = max(0, H)`` with
those UBs), ``none`` (Case B's formulas for every pair but (s_t, a_t): the Li-Pearl bounds). Every bound is clipped to
[0, 1], and a lower bound above its upper bound by rounding is set to the upper bound.

Everything is vectorised over the transitions of the choices a step needs: one pass of numpy operations per
observation. The only non-elementwise part, the sum over ``C \\ {s'}`` in H, is a left-to-right fold over each row's
successors, computed for all rows with the same support size at once, in ascending successor order; with
``summation="authors"`` in the order the authors' per-transition implementation adds them up (the iteration order of
a Python set of states), so that the results are bit-identical to theirs (a per-row loop, kept off the default path).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import OptionError, PathError

#: the assumption sets of the paper's Table 3
ASSUMPTIONS = ("cs+m", "cs", "none")
#: orders of the sums in H: ascending successors, or the authors' (bit-identical to their implementation)
SUMMATIONS = ("ascending", "authors")


def check_assumptions(assumptions: str) -> str:
    if assumptions not in ASSUMPTIONS:
        raise OptionError(f"unknown assumption set {assumptions!r}: use one of {', '.join(ASSUMPTIONS)}")
    return assumptions


class SparseRows:
    """The per-entry index arrays of a CSR matrix (the rows a step needs, columns = model states)."""

    def __init__(self, P: sp.csr_matrix, summation: str = "ascending") -> None:
        if summation not in SUMMATIONS:
            raise OptionError(f"unknown summation order {summation!r}: use one of {', '.join(SUMMATIONS)}")
        self.P = P
        self.p = P.data
        self.cols = P.indices
        self.indptr = P.indptr
        self.n_rows, self.n_cols = P.shape
        sizes = np.diff(P.indptr)
        self.entry_rows = np.repeat(np.arange(self.n_rows), sizes)
        # rows grouped by support size m: (m, rows, entry indices rows x m in summation order) for the folds in H
        self.groups = []
        for m in np.unique(sizes[sizes > 0]):
            rows = np.flatnonzero(sizes == m)
            E = P.indptr[rows][:, None] + np.arange(m)
            self.groups.append((int(m), rows, _authors_order(P, E, int(m)) if summation == "authors" else E))

    def column_per_entry(self, col: int) -> np.ndarray:
        """P[row, col] of each entry's row (0 where the row has no entry in ``col``)."""
        at = self.cols == col
        per_row = np.zeros(self.n_rows)
        per_row[self.entry_rows[at]] = self.p[at]
        return per_row[self.entry_rows]

    def fold_without_self(self, d: np.ndarray, entries_mask: np.ndarray) -> np.ndarray:
        """For every entry e in ``entries_mask`` (and the other entries of its row): Σ_{x in row(e), x ≠ e} d(x),
        summed left to right in ascending column order starting from 0 (other entries: 0)."""
        out = np.zeros_like(d)
        rows_mask = np.zeros(self.n_rows, dtype=bool)
        rows_mask[self.entry_rows[entries_mask]] = True
        for m, rows, entries in self.groups:
            sel = rows_mask[rows]
            if not sel.any():
                continue
            E = entries[sel]                        # (r, m)
            D = d[E]
            acc = np.zeros(E.shape)
            eye = np.eye(m, dtype=bool)
            for j in range(m):
                acc += np.where(eye[j], 0.0, D[:, j][:, None])
            out[E] = acc
        return out


def _set_table_size(m: int) -> int:
    """Slots of a CPython set after inserting m distinct keys one by one (setobject.c: start with 8 slots; when
    fill * 5 >= mask * 3, resize to the smallest power of two above 4 * used)."""
    mask, fill = 7, 0
    for used in range(1, m + 1):
        fill += 1
        if fill * 5 >= mask * 3:
            size = 8
            while size <= used * 4:
                size <<= 1
            mask, fill = size - 1, used
    return mask + 1


def _authors_order(P: sp.csr_matrix, E: np.ndarray, m: int) -> np.ndarray:
    """Entry indices ``E`` (rows x m) of rows with m successors, reordered as the reference implementation sums
    them: the iteration order of a Python set of the successor states (ascending unless a state index reaches the
    set's table size). Bit-identical results need the same order of floating-point additions."""
    E = E.copy()
    cols = P.indices[E]
    wrap = np.flatnonzero(cols[:, -1] >= _set_table_size(m))
    for i in wrap:
        order = list(set(cols[i].tolist()))
        E[i] = E[i, 0] + np.searchsorted(cols[i], order)
    return E


def step_bounds(rows: SparseRows, o: np.ndarray, observed_row: int, observed_next: int,
                assumptions: str = "cs+m") -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of every transition of ``rows`` (aligned with ``rows.P.data``) given one observation:
    the choice (s_t, a_t), whose distribution over the states is ``o`` and which is row ``observed_row`` of ``rows``
    (-1 if absent), led to state ``observed_next`` = s_{t+1}."""
    check_assumptions(assumptions)
    p, cols, er = rows.p, rows.cols, rows.entry_rows
    q = o[observed_next]
    if not q > 0:
        raise PathError(f"the observed successor {observed_next} has probability 0 under the observed choice")
    # Case B for everything first (also the Li-Pearl bounds of "none")
    ub = np.minimum(p, q) / q
    lb = np.where(p > 1 - q, (p - (1 - q)) / q, 0.0)
    case_a = er == observed_row
    if assumptions != "none":
        o_e = o[cols]
        in_o = o_e > 0
        overlap = np.bincount(er, weights=in_o, minlength=rows.n_rows) > 0
        case_c = overlap[er] & ~case_a
        if case_c.any():
            lb, ub = _case_c(rows, p, o_e, in_o, q, observed_next, case_c, lb, ub, assumptions)
    is_next = cols == observed_next
    ub = np.where(case_a, is_next.astype(float), ub)
    lb = np.where(case_a, is_next.astype(float), lb)
    ub = np.clip(ub, 0.0, 1.0)
    lb = np.minimum(np.clip(lb, 0.0, 1.0), ub)
    return lb, ub


def _case_c(rows: SparseRows, p, o_e, in_o, q, k, case_c, lb, ub, assumptions):
    """Bounds of the pairs whose support overlaps the observed one (Theorem 4.3), written into ``lb``/``ub``."""
    is_k = rows.cols == k
    pk = rows.column_per_entry(k)                  # p(s_{t+1}) of each entry's pair
    with np.errstate(divide="ignore", invalid="ignore"):
        forbidden = case_c & ~is_k & in_o & ((pk / q) >= (p / np.where(in_o, o_e, 1.0)))
    if assumptions == "cs+m":
        ub_c = np.where(is_k, np.where(q <= p, 1.0, p / q),
                        np.where(in_o, np.minimum(1 - pk, p), np.minimum(1 - pk, p / q)))
    else:
        ub_c = ub.copy()
    ub_c = np.where(forbidden, 0.0, ub_c)
    S = rows.fold_without_self(p - ub_c * q, case_c)
    H = (p - ((1 - q) - S)) / q
    if assumptions == "cs+m":
        lb_c = np.where(is_k, np.maximum(p, H), np.maximum(0.0, H))
    else:
        lb_c = np.maximum(0.0, H)
    lb_c = np.where(forbidden, 0.0, lb_c)
    return np.where(case_c, lb_c, lb), np.where(case_c, ub_c, ub)
