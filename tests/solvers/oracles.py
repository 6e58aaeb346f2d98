"""Independent oracles of small programmes: the optimum of a bounded LP over its vertices, and of a MILP or MIQCQP by
enumerating its integer points (each fixed point leaving an LP in the continuous variables)."""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from stormcf.solvers import Formulation

TOLERANCE = 1e-9


def _planes(f: Formulation) -> tuple[np.ndarray, np.ndarray]:
    """Every hyperplane bounding the polytope of ``f``'s linear rows and variable bounds: (normals, offsets)."""
    A = f.A.toarray()
    eye = np.eye(f.n_vars)
    normals, offsets = [], []
    for rows, values in ((A, f.lhs), (A, f.rhs), (eye, f.lb), (eye, f.ub)):
        finite = np.isfinite(values)
        normals.append(rows[finite])
        offsets.append(values[finite])
    return np.vstack(normals), np.concatenate(offsets)


def feasible(f: Formulation, x: np.ndarray, tolerance: float = TOLERANCE) -> bool:
    """Whether ``x`` meets every linear row and bound of ``f`` (quadratic rows are not looked at)."""
    Ax = f.A @ x
    return bool(np.all(Ax >= f.lhs - tolerance) and np.all(Ax <= f.rhs + tolerance)
                and np.all(x >= f.lb - tolerance) and np.all(x <= f.ub + tolerance))


def vertex_optimum(f: Formulation) -> float:
    """min cᵀx + offset of a bounded LP (every variable with finite bounds): the least objective over its vertices,
    the feasible points where n linearly independent bounding hyperplanes meet; inf when there is none."""
    normals, offsets = _planes(f)
    best = np.inf
    for active in itertools.combinations(range(len(offsets)), f.n_vars):
        M = normals[list(active)]
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        x = np.linalg.solve(M, offsets[list(active)])
        if feasible(f, x):
            best = min(best, float(f.c @ x) + f.offset)
    return best


def integer_points(f: Formulation):
    """Every assignment of the integer variables within their (finite) bounds: (indices, values) pairs."""
    integer = np.flatnonzero(f.integer)
    ranges = [range(int(np.ceil(f.lb[i])), int(np.floor(f.ub[i])) + 1) for i in integer]
    for values in itertools.product(*ranges):
        yield integer, np.array(values, dtype=float)


def enumerated_optimum(f: Formulation) -> float:
    """The optimum of a MILP or MIQCQP whose bilinear terms each hold an integer variable (a linear objective): for
    every assignment of the integer variables, the quadratic rows become linear and the integer columns constants,
    and :func:`vertex_optimum` solves the LP left in the continuous variables; the least of them (inf when none is
    feasible)."""
    if f.objective_quadratic is not None:
        raise ValueError("the oracle takes linear objectives only")
    free = np.flatnonzero(~f.integer)
    best = np.inf
    for index, values in integer_points(f):
        x = np.zeros(f.n_vars)
        x[index] = values
        rows, lhs, rhs = [f.A.toarray()], [f.lhs], [f.rhs]
        for q in f.quadratic:
            row, constant = np.zeros(f.n_vars), 0.0
            np.add.at(row, q.lin_idx, q.lin_val)
            for i, j, w in zip(q.q_i, q.q_j, q.q_val):
                if not (f.integer[i] or f.integer[j]):
                    raise ValueError("the oracle takes bilinear terms with an integer variable only")
                if f.integer[i] and f.integer[j]:
                    constant += w * x[i] * x[j]
                elif f.integer[i]:
                    row[j] += w * x[i]
                else:
                    row[i] += w * x[j]
            rows.append(row[None, :])
            lhs.append([q.lhs - constant])
            rhs.append([q.rhs - constant])
        A = np.vstack(rows)
        fixed = A @ x                               # the integer columns' part of every row
        rest = Formulation(lb=f.lb[free], ub=f.ub[free], integer=np.zeros(free.size, dtype=bool),
                           A=sp.csr_matrix(A[:, free]), lhs=np.concatenate(lhs) - fixed,
                           rhs=np.concatenate(rhs) - fixed, quadratic=(), c=f.c[free],
                           offset=f.offset + float(f.c @ x))
        best = min(best, vertex_optimum(rest))
    return best
