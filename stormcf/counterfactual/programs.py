"""The optimisation programmes over the pruned encoding: the d0 MILP and the MIQCQP of seed 000 (1)-(13).

Both use Bellman *inequalities* p_s >= Σ_a σ'(s)(a)·Q(s, a): every solution is a pre-fixed point of the Bellman
operator of σ', hence above the least fixed point (the true reachability probabilities), so p_s0 <= γ certifies
the strategy; the true values are themselves a solution, so nothing is lost (soundness remark of the spec).

Variables and constraints (k maybe states, C changeable states, F their controllable rows):

MIQCQP (mixed objective d = r0·d0 + r1·d1 + r∞·d∞)
    p_s ∈ [0,1] (s ∈ maybe; p_s0 <= γ)         x_r ∈ [0,1] σ'(r) (r ∈ F)      u_r >= σ(r) - x_r, u_r >= 0
    q_r = Σ_s' δ(r, s') p_s' + b_r (r ∈ F with maybe successors; otherwise Q_r is the constant b_r)
    Σ_{r ∈ F(s)} x_r = Σ_{r ∈ F(s)} σ(r)                        (2)-(4): the controllable mass is kept
    p_s >= Σ_{r ∉ F} σ(r)·Q_r + Σ_{r ∈ F(s)} x_r·q_r             (5)-(8), bilinear for s ∈ C, linear otherwise
    Δ_s = Σ_{r ∈ F(s)} u_r  (the TV distance, as the positive part of σ - σ' since the mass is equal)   (9)
    Δ_s <= i_s, i_s ∈ {0,1}  (if r0 > 0)      Δ_s <= D∞  (if r∞ > 0)                                   (10)-(13)
    min r0·Σ i_s + r1/|S|·Σ_s Δ_s + r∞·D∞
  plus valid cuts from the exact special cases: Σ i_s >= d0*, D∞ >= d∞_lower, Σ Δ_s >= d∞_lower.

d0 MILP (z_r ∈ {0,1}: state s switches its controllable mass m_s to the row r; SW_r(p) = Σ_{r' ∉ F} σ(r')·Q_r' +
m_s·Q_r is the right-hand side of a switched state)
    p_s >= Σ_r σ(r)·Q_r - Σ_{r ∈ F(s)} A_r·z_r      A_r = max over the box [Pmin, Pmax] of σQ_s(p) - SW_r(p)
    p_s >= SW_r(p) - M_r·(1 - z_r)                   M_r = max over the box of SW_r(p) - p_s
    Σ_{r ∈ F(s)} z_r <= 1,        min Σ z_r
  The first row is valid for every choice (unchanged: Σ z = 0; switched to r: p_s >= SW_r >= σQ - A_r) and is much
  tighter than a big-M on "unchanged" (A_r is the largest gain of switching to r, not the range of p_s): on the
  process models of 5.7k-15k states it cuts HiGHS's time to optimality about tenfold. Rows with A_r <= 0 never
  lower p_s (dominated by σ) and get no variable; states left without rows keep σ. For a fixed set of changed
  states a deterministic choice is optimal (min-reachability MDPs have memoryless deterministic optimal strategies;
  here the controllable mass m_s goes to one row).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .analysis import Encoding
from .bellman import evaluate, policy_matrix
from ..solvers.formulation import INF, Formulation, FormulationBuilder, QuadraticRow
from .robust import changes

if TYPE_CHECKING:
    from .diverse import DiversityTerm
    from .problem import CounterfactualProblem


@dataclass(frozen=True, eq=False)
class Program:
    """A formulation plus how to read a policy (probabilities of the encoding's rows) back from a solution."""

    formulation: Formulation
    x_rows: np.ndarray          # variable of each controllable row's probability (-1 where fixed)
    binary_rows: bool           # True: x_rows are binaries z (the d0 MILP), False: probabilities

    def policy(self, enc: Encoding, x: np.ndarray) -> np.ndarray:
        probs = enc.sigma.copy()
        has = self.x_rows >= 0
        if self.binary_rows:
            z = x[self.x_rows[has]] > 0.5
            rows = np.flatnonzero(has)
            switched = np.zeros(enc.n_maybe, dtype=bool)
            switched[enc.row_state[rows[z]]] = True
            mass = enc.free_mass
            probs[enc.free & switched[enc.row_state]] = 0.0
            probs[rows[z]] = mass[enc.row_state[rows[z]]]
            return probs
        probs[has] = np.clip(x[self.x_rows[has]], 0.0, 1.0)
        return snap_unchanged(enc, probs)


def snap_unchanged(enc: Encoding, probs: np.ndarray, tolerance: float = 1e-7) -> np.ndarray:
    """Remove solver noise: states whose distribution moved by less than ``tolerance`` get σ back exactly, other
    probabilities below ``tolerance`` become 0 (a probability of 1e-9 on an action that leaves an end component
    changes the reachability probability completely, while the solver's Bellman rows tolerate it); every state's
    controllable mass is renormalised to σ's."""
    probs = probs.copy()
    delta = changes(enc, probs)
    keep = (delta < tolerance)[enc.row_state]
    probs[keep] = enc.sigma[keep]
    probs[~keep & enc.free & (probs < tolerance)] = 0.0
    mass = enc.free_mass
    current = np.bincount(enc.row_state, weights=np.where(enc.free, probs, 0.0), minlength=enc.n_maybe)
    scale = np.divide(mass, current, out=np.ones_like(mass), where=current > 0)
    probs[enc.free] *= scale[enc.row_state[enc.free]]
    return probs


def tolerance(gamma: float) -> float:
    """The solvers' primal feasibility tolerance for a bound γ: 1e-3·γ between 1e-9 and 1e-6 (their default). A
    tolerance is a relaxation, so solver bounds stay valid; relative to γ it cannot turn p_s0 <= 4e-6 into 5e-6, and
    at 1e-6 SCIP solves the d0 MILP of the 30,000-state process model in seconds, while at 1e-9 it wrongly reports
    it infeasible. Storm checks every solution anyway."""
    return float(min(max(1e-3 * gamma, 1e-9), 1e-6))


def _value_variables(fb: FormulationBuilder, enc: Encoding, gamma: float) -> np.ndarray:
    """p_s ∈ [Pmin(s), Pmax(s)] (valid: the true values of every strategy lie there), p_s0 <= γ."""
    p = fb.variables(enc.n_maybe, lb=enc.low, ub=enc.high)
    fb.set_upper(p[enc.s0], min(gamma, float(enc.high[enc.s0])))
    return p


def _fixed_part(enc: Encoding, weights: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """(W P, W b) for row weights ``weights``: each state's weighted sum of its rows' Q."""
    S = policy_matrix(enc, weights)
    return (S @ enc.P).tocsr(), S @ enc.b


def _bellman_rows(fb: FormulationBuilder, enc: Encoding, p: np.ndarray, states: np.ndarray) -> None:
    """Linear p_s >= Σ_r σ(r)·Q_r for ``states`` (positions)."""
    if states.size == 0:
        return
    SP, Sb = _fixed_part(enc, enc.sigma)
    k = enc.n_maybe
    M = sp.identity(k, format="csr")[states] - SP[states]
    fb.rows(M, p, lhs=Sb[states])


def box_max(C: sp.spmatrix, const: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """max over p ∈ [low, high] of (C p + const), row by row."""
    C = sp.csr_matrix(C)
    positive, negative = C.copy(), C.copy()
    positive.data = np.maximum(positive.data, 0.0)
    negative.data = np.minimum(negative.data, 0.0)
    return positive @ high + negative @ low + const


def _pairs(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (i, j), i != j, of positions with equal ``groups`` (sorted)."""
    bounds = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1], True])
    first, second = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a > 1:
            i, j = np.meshgrid(np.arange(a, b), np.arange(a, b), indexing="ij")
            keep = i != j
            first.append(i[keep])
            second.append(j[keep])
    if not first:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(first), np.concatenate(second)


def d0_program(enc: Encoding, gamma: float, start: np.ndarray | None = None) -> Program:
    """The d0 MILP (module docstring). ``start``: a policy whose changed states switch deterministically."""
    fb = FormulationBuilder()
    k = enc.n_maybe
    p = _value_variables(fb, enc, gamma)
    eye = sp.identity(k, format="csr")
    SP, Sb = _fixed_part(enc, enc.sigma)
    FP, Fb = _fixed_part(enc, np.where(enc.free, 0.0, enc.sigma))
    mass = enc.free_mass
    F = np.flatnonzero(enc.free)
    s_of = enc.row_state[F]
    switched = FP[s_of] + sp.diags(mass[s_of]) @ enc.P[F]                    # SW_r(p) = fixed + m_s·P_r p
    switched_b = Fb[s_of] + mass[s_of] * enc.b[F]
    advantage = box_max(SP[s_of] - switched, Sb[s_of] - switched_b, enc.low, enc.high)
    useful = advantage > 1e-12                                               # rows that can ever lower p_s
    first, second = _pairs(s_of)
    diff = box_max(switched[first] - switched[second], switched_b[first] - switched_b[second], enc.low, enc.high)
    dominated = (diff <= 0) & ((diff < 0) | (first < second))               # SW_first <= SW_second everywhere
    useful[second[dominated]] = False
    # M_r: p_s is at least σQ_s (unchanged) or SW_r' (switched to r'), so SW_r - p_s <= the largest box maximum of
    # SW_r - σQ_s and of SW_r - SW_r'
    big = box_max(switched - SP[s_of], switched_b - Sb[s_of], enc.low, enc.high)
    np.maximum.at(big, first, diff)
    F, s_of, switched, switched_b, advantage, big = (a[useful] for a in (F, s_of, switched, switched_b, advantage,
                                                                          big))
    C = np.unique(s_of)
    pos = -np.ones(k, dtype=np.int64)
    pos[C] = np.arange(C.size)
    z = fb.variables(F.size, binary=True)
    _bellman_rows(fb, enc, p, np.setdiff1d(np.arange(k), C))
    # p_s - σP_s p + Σ_r A_r z_r >= σb_s
    weights = sp.csr_matrix((advantage, (pos[s_of], np.arange(F.size))), shape=(C.size, F.size))
    fb.rows(sp.hstack([eye[C] - SP[C], weights]), np.concatenate([p, z]), lhs=Sb[C])
    # p_s - SW_r p >= SW_b - M_r (1 - z_r)
    big = np.maximum(big, 0.0)
    fb.rows(sp.hstack([eye[s_of] - switched, -sp.diags(big)]), np.concatenate([p, z]), lhs=switched_b - big)
    member = sp.csr_matrix((np.ones(F.size), (pos[s_of], np.arange(F.size))), shape=(C.size, F.size))
    fb.rows(member, z, rhs=1.0)                                              # at most one row per state
    c = np.zeros(fb.n_vars)
    c[z] = 1.0
    x0 = None
    if start is not None:
        x0 = np.zeros(fb.n_vars)
        x0[p] = evaluate(enc, start)
        x0[z] = (changes(enc, start) > 1e-9)[s_of] & (start[F] > 0.5 * mass[s_of])
    x_rows = -np.ones(enc.rows.size, dtype=np.int64)
    x_rows[F] = z
    return Program(fb.build(c, start=x0, tolerance=tolerance(gamma)), x_rows, binary_rows=True)


@dataclass(frozen=True)
class Bounds:
    """Valid lower bounds on any counterfactual's norms (from the exact special cases)."""

    d0: float = 0.0
    dinf: float = 0.0


def miqcqp_program(enc: Encoding, gamma: float, weights: tuple[float, float, float], bounds: Bounds = Bounds(),
                   start: np.ndarray | None = None, epsilon: float | None = None,
                   diversity: "DiversityTerm | None" = None) -> Program:
    """The MIQCQP (1)-(13) with the pruning of :mod:`analysis` (module docstring).

    ``diversity``: the term -λ·det(K) of :mod:`diverse`, which adds its own variables and constraints.
    """
    r0, r1, rinf = weights
    fb = FormulationBuilder()
    k = enc.n_maybe
    p = _value_variables(fb, enc, gamma)
    C = np.flatnonzero(enc.changeable)
    F = np.flatnonzero(enc.free)
    s_of = enc.row_state[F]
    pos = -np.ones(k, dtype=np.int64)
    pos[C] = np.arange(C.size)
    x = fb.variables(F.size)
    u = fb.variables(F.size, ub=enc.sigma[F])
    has_q = np.diff(enc.P.indptr)[F] > 0
    q = fb.variables(int(has_q.sum()))
    i = fb.variables(C.size, binary=True) if r0 > 0 else None
    dinf = fb.variables(1, lb=bounds.dinf)[0] if rinf > 0 else None
    member = sp.csr_matrix((np.ones(F.size), (pos[s_of], np.arange(F.size))), shape=(C.size, F.size))
    mass = enc.free_mass[C]
    fb.rows(member, x, lhs=mass, rhs=mass)                                          # controllable mass kept
    fb.rows(sp.hstack([sp.identity(F.size), sp.identity(F.size)]), np.concatenate([u, x]), lhs=enc.sigma[F])
    if i is not None:                                                               # Δ_s <= i_s
        fb.rows(sp.hstack([member, -sp.identity(C.size)]), np.concatenate([u, i]), rhs=0.0)
        if bounds.d0 > 0:
            fb.rows(sp.csr_matrix(np.ones((1, C.size))), i, lhs=bounds.d0)
    if dinf is not None:                                                            # Δ_s <= D∞
        fb.rows(sp.hstack([member, sp.csr_matrix(-np.ones((C.size, 1)))]), np.concatenate([u, [dinf]]), rhs=0.0)
    if bounds.dinf > 0:
        fb.rows(sp.csr_matrix(np.ones((1, F.size))), u, lhs=bounds.dinf)
    Fq = F[has_q]                                                                   # q_r - P_r p = b_r
    fb.rows(sp.hstack([sp.identity(Fq.size), -enc.P[Fq]]), np.concatenate([q, p]), lhs=enc.b[Fq], rhs=enc.b[Fq])
    _bellman_rows(fb, enc, p, np.flatnonzero(~enc.changeable))
    _bilinear_bellman(fb, enc, p, x, q, F, has_q)
    objective_quadratic, offset = diversity.add(fb, enc, x) if diversity is not None else (None, 0.0)
    c = np.zeros(fb.n_vars)
    if i is not None:
        c[i] = r0
    c[u] = r1 / enc.n_decision
    if dinf is not None:
        c[dinf] = rinf
    x0 = None
    if start is not None:
        x0 = _miqcqp_start(enc, fb.n_vars, start, p, x, u, q, i, dinf, F, has_q, C)
        if diversity is not None:
            diversity.fill_start(x0, enc, start)
    x_rows = -np.ones(enc.rows.size, dtype=np.int64)
    x_rows[F] = x
    formulation = fb.build(c, offset=offset, start=x0, objective_quadratic=objective_quadratic,
                           objective_cutoff=epsilon, tolerance=tolerance(gamma))
    return Program(formulation, x_rows, binary_rows=False)


def _bilinear_bellman(fb: FormulationBuilder, enc: Encoding, p, x, q, F, has_q) -> None:
    """p_s - fixed·p - Σ_{r ∈ F(s)} x_r q_r - Σ_{r ∈ F(s), Q const} b_r x_r >= fixed b, one row per changeable state."""
    FP, Fb = _fixed_part(enc, np.where(enc.free, 0.0, enc.sigma))
    q_of = -np.ones(enc.rows.size, dtype=np.int64)
    q_of[F[has_q]] = q
    x_of = -np.ones(enc.rows.size, dtype=np.int64)
    x_of[F] = x
    groups = enc.row_groups()
    for s in np.flatnonzero(enc.changeable):
        rows = np.arange(groups[s], groups[s + 1])
        rows = rows[enc.free[rows]]
        lin = FP[s]
        quad = rows[q_of[rows] >= 0]
        const = rows[q_of[rows] < 0]
        fb.quadratic(QuadraticRow(
            lin_idx=np.concatenate([[p[s]], p[lin.indices], x_of[const]]),
            lin_val=np.concatenate([[1.0], -lin.data, -enc.b[const]]),
            q_i=x_of[quad], q_j=q_of[quad], q_val=-np.ones(quad.size), lhs=float(Fb[s]), rhs=INF))


def _miqcqp_start(enc: Encoding, n: int, probs: np.ndarray, p, x, u, q, i, dinf, F, has_q, C) -> np.ndarray:
    x0 = np.zeros(n)
    values = evaluate(enc, probs)
    x0[p] = values
    x0[x] = probs[F]
    x0[u] = np.maximum(enc.sigma[F] - probs[F], 0.0)
    x0[q] = (enc.P[F[has_q]] @ values) + enc.b[F[has_q]]
    delta = changes(enc, probs)
    if i is not None:
        x0[i] = delta[C] > 0
    if dinf is not None:
        x0[dinf] = delta.max(initial=0.0)
    return x0


def paper_program(problem: "CounterfactualProblem", gamma: float) -> Program:
    """The paper's MIQCQP (seed 000, constraints (1)-(13)) on the whole model, without stormcf's pruning: the
    direct encoding the paper solved with Gurobi, for side-by-side benchmarks. Variables p_s (every state), p_sa
    (every choice; uncontrollable choices fixed to σ), a_sa >= |σ(s)(a) - p_sa|, Δ_s = ½ Σ_a a_sa, i_s ∈ {0,1}
    with Δ_s <= i_s, D∞ >= Δ_s; p_t = 1 on the target, p_s = 0 where the target is unreachable (the paper's graph
    analysis), the Bellman *equalities* p_s = Σ_a Σ_s' p_sa·δ(s, a, s')·p_s' (one bilinear term per transition),
    p_s0 <= γ; objective r0·Σ i_s + r1/|S|·Σ Δ_s + r∞·D∞. ``x_rows`` of the result are the p_sa."""
    from ..reachability import can_reach

    m, sigma = problem.model, problem.strategy.probabilities
    n, c = m.n_states, m.n_choices
    soc = m.state_of_choice
    r0, r1, rinf = problem.weights.as_tuple()
    target = problem.target
    reach = can_reach(m, target)
    fb = FormulationBuilder()
    p = fb.variables(n, lb=np.where(target, 1.0, 0.0), ub=np.where(reach, 1.0, 0.0))
    fb.set_upper(p[m.initial_state], min(gamma, 1.0))
    fixed = ~problem.free
    x = fb.variables(c, lb=np.where(fixed, sigma, 0.0), ub=np.where(fixed, sigma, 1.0))
    a = fb.variables(c)
    delta = fb.variables(n)
    i = fb.variables(n, binary=True)
    dinf = fb.variables(1)[0]
    member = sp.csr_matrix((np.ones(c), (soc, np.arange(c))), shape=(n, c))
    fb.rows(member, x, lhs=1.0, rhs=1.0)                                              # Σ_a p_sa = 1
    eye_c = sp.identity(c, format="csr")
    fb.rows(sp.hstack([eye_c, eye_c]), np.concatenate([a, x]), lhs=sigma)             # a >= σ - p_sa
    fb.rows(sp.hstack([eye_c, -eye_c]), np.concatenate([a, x]), lhs=-sigma)           # a >= p_sa - σ
    eye_n = sp.identity(n, format="csr")
    fb.rows(sp.hstack([eye_n, -0.5 * member]), np.concatenate([delta, a]), lhs=0.0, rhs=0.0)
    fb.rows(sp.hstack([eye_n, -eye_n]), np.concatenate([delta, i]), rhs=0.0)          # Δ_s <= i_s
    fb.rows(sp.hstack([eye_n, sp.csr_matrix(-np.ones((n, 1)))]), np.concatenate([delta, [dinf]]), rhs=0.0)
    P = m.transitions
    entry_row = np.repeat(np.arange(c), np.diff(P.indptr))
    for s in np.flatnonzero(reach & ~target):
        span = slice(P.indptr[m.row_groups[s]], P.indptr[m.row_groups[s + 1]])
        fb.quadratic(QuadraticRow(lin_idx=np.array([p[s]]), lin_val=np.array([1.0]), q_i=x[entry_row[span]],
                                  q_j=p[P.indices[span]], q_val=-P.data[span], lhs=0.0, rhs=0.0))
    n_decision = max(int(m.decision_states.sum()), 1)
    cost = np.zeros(fb.n_vars)
    cost[i] = r0
    cost[delta] = r1 / n_decision
    cost[dinf] = rinf
    return Program(fb.build(cost, tolerance=tolerance(gamma)), x, binary_rows=False)
