"""The optimisation programmes over the pruned encodings: the d0 MILP and the MIQCQP of seed 000 (1)-(13).

Both use Bellman *inequalities* v_s >= Σ_a σ'(s)(a)·Q(s, a) for every bound (in the form v_s0 <= γ of
:mod:`preanalysis`): every solution is a pre-fixed point of the Bellman operator of σ', hence above its least fixed
point (the true values; for upper reward bounds, a finite pre-fixed point also proves that σ' reaches the target
almost surely, as there are no zero-reward end components), so v_s0 <= γ certifies the strategy; the true values
of a valid strategy are themselves a solution, so the programme is a relaxation and its bound is valid.

Value boxes: v_s ∈ [low_s, high_s], Storm's optimum and pessimum over all actionable strategies (valid for every
strategy). For one bound, ``high`` is lowered to σ's own values V_σ where that is valid: the d0 MILP's optimal rows
of a switched set are optimal in every state, so V ≤ V_σ; for the MIQCQP, when σ is proper on the maybe states, an
optimal σ* whose changed states do not all strictly improve can be reverted there without growing any distance, so
some optimal σ* is a post-fixed point of σ's Bellman operator and V_σ* ≤ V_σ. Where ``high`` is infinite (upper reward
bounds, some strategy never reaches the target, and σ not proper there) a cap is used: the programme is then a
restriction, and :attr:`Program.proves_bounds` is False (its bound is not used).

Variables and constraints (per bound: k maybe states, C changeable states, F their controllable rows):

MIQCQP (any weights; several bounds share the strategy variables x over the :class:`~preanalysis.Region`)
    v_s ∈ [low, high] (s ∈ maybe; v_s0 <= γ)   x_r ∈ [0,1] σ'(r) (r ∈ F)      u_r >= σ(r) - x_r, u_r >= 0
    q_r = Σ_s' δ(r, s') v_s' + b_r (r ∈ F with maybe successors; otherwise Q_r is the constant b_r)
    Σ_{r ∈ F(s)} x_r = Σ_{r ∈ F(s)} σ(r)                        (2)-(4): the controllable mass is kept
    v_s >= Σ_{r ∉ F} σ(r)·Q_r + Σ_{r ∈ F(s)} x_r·q_r             (5)-(8), bilinear for s ∈ C, linear otherwise
    Δ_s = Σ_{r ∈ F(s)} u_r  (the TV distance, as the positive part of σ - σ' since the mass is equal)   (9)
    each norm's block (:meth:`stormcf.distance.Norm.encode`): Δ_s <= i_s, i_s ∈ {0,1} for d0; Δ_s <= D∞ for d∞
    (10)-(13); min Σ_norm r_norm·norm, plus the valid cuts norm >= its proven lower bound. Forbidden rows: x_r = 0.

d0 MILP (one bound; z_r ∈ {0,1}: state s switches its controllable mass m_s to the row r; SW_r(v) = Σ_{r' ∉ F}
σ(r')·Q_r' + m_s·Q_r is the right-hand side of a switched state)
    v_s >= Σ_r σ(r)·Q_r - Σ_{r ∈ F(s)} A_r·z_r      A_r = max over the box of σQ_s(v) - SW_r(v)
    v_s >= SW_r(v) - M_r·(1 - z_r)                   M_r = max over the box of SW_r(v) - v_s
    Σ_{r ∈ F(s)} z_r <= 1 (= 1 where σ uses a forbidden row),        min Σ z_r
  The first row is valid for every choice (unchanged: Σ z = 0; switched to r: v_s >= SW_r >= σQ - A_r) and is much
  tighter than a big-M on "unchanged" (A_r is the largest gain of switching to r, not the range of v_s); with the box
  [low, V_σ] instead of [Pmin, Pmax] it is tighter still (the LP relaxation of the 15k-state process instance of
  the benchmark rises from 0.5 to 70, HiGHS proves d0* = 292 in 23 s). Rows with A_r <= 0 never lower v_s
  (dominated by σ) and get no variable; states left without rows keep σ. For a fixed set of changed states a
  deterministic choice is optimal (min-value MDPs have memoryless deterministic optimal strategies; here the
  controllable mass m_s goes to one row).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from ..distance import ChangeTerms, Weights
from .bellman import evaluate, policy_matrix
from .preanalysis import Encoding, Region
from ..solvers.formulation import INF, Formulation, FormulationBuilder, QuadraticRow
from .robust import changes

if TYPE_CHECKING:
    from .diverse import DiversityTerm
    from .problem import CounterfactualProblem


@dataclass(frozen=True, eq=False)
class Program:
    """A formulation plus how to read a policy back from a solution.

    ``x_rows``: the variable of each row's probability or switch (-1 where fixed); over an encoding's rows for the
    d0 MILP (``binary_rows``: switches z), over the :class:`~preanalysis.Region`'s rows for the MIQCQP.
    ``proves_bounds``: whether the programme is a relaxation of the problem (its bound is then valid)."""

    formulation: Formulation
    x_rows: np.ndarray
    binary_rows: bool
    proves_bounds: bool = True
    region: Region | None = None

    def policy(self, enc: Encoding, x: np.ndarray) -> np.ndarray:
        """The d0 MILP's policy over the encoding's rows."""
        probs = enc.sigma.copy()
        has = self.x_rows >= 0
        z = x[self.x_rows[has]] > 0.5
        rows = np.flatnonzero(has)
        switched = np.zeros(enc.n_maybe, dtype=bool)
        switched[enc.row_state[rows[z]]] = True
        mass = enc.free_mass
        probs[enc.free & switched[enc.row_state]] = 0.0
        probs[rows[z]] = mass[enc.row_state[rows[z]]]
        return probs

    def switch_share(self, enc: Encoding, x: np.ndarray) -> np.ndarray:
        """Per maybe state, the d0 MILP's (or its LP relaxation's) switched share Σ_{r ∈ F(s)} z_r."""
        has = self.x_rows >= 0
        return np.bincount(enc.row_state[has], weights=np.clip(x[self.x_rows[has]], 0.0, 1.0),
                           minlength=enc.n_maybe)

    def strategy(self, sigma: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The MIQCQP's strategy: σ (over all choices of the model) with the region's rows read from ``x``."""
        region = self.region
        assert region is not None           # the MIQCQP's program has its region
        rows = np.clip(x[self.x_rows], 0.0, 1.0)
        rows[region.forbidden] = 0.0
        out = np.array(sigma, dtype=float)
        out[region.rows] = snap_unchanged(region, rows)
        return out


def snap_unchanged(enc: Encoding | Region, probs: np.ndarray, tolerance: float = 1e-7) -> np.ndarray:
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
    """The solvers' primal feasibility tolerance for a bound γ: 1e-4·|γ| between 1e-9 and 1e-6 (their default). A
    tolerance is a relaxation, so solver bounds stay valid; relative to γ it cannot turn p_s0 <= 4e-6 into 5e-6, and
    at 1e-6 SCIP solves the d0 MILP of the 30,000-state process model in seconds, while at 1e-9 it wrongly reports
    it infeasible. At 1e-3·|γ| the optimum SCIP proves for zeroconf's mixed objective (γ = 4e-6) was 1.4e-4 below
    that of strategies meeting the bound exactly, more than the certificate's gap. Storm checks every solution."""
    return float(min(max(1e-4 * abs(gamma), 1e-9), 1e-6))


@dataclass(frozen=True)
class Box:
    """Valid bounds on the value variables of one encoding; ``exact``: False where a cap replaced an infinite
    upper bound (the programme is then a restriction)."""

    low: np.ndarray
    high: np.ndarray
    exact: bool = True


def value_box(enc: Encoding, gamma: float, sigma_values: np.ndarray | None = None) -> Box:
    """[low, high] of the encoding, ``high`` lowered to ``sigma_values`` (σ's own values, where the caller has
    established that this is valid: module docstring) and infinite entries capped."""
    if sigma_values is not None:
        sigma_values = sigma_values + 1e-9 * np.maximum(1.0, np.abs(sigma_values))     # as Storm's boxes are widened
    high = enc.high if sigma_values is None else np.minimum(enc.high, np.maximum(sigma_values, enc.low))
    if np.isfinite(high).all():
        return Box(enc.low, high)
    finite = np.concatenate([high[np.isfinite(high)], enc.low, [gamma]])
    cap = 10.0 * float(np.abs(finite).max(initial=1.0)) + 1.0
    return Box(enc.low, np.where(np.isfinite(high), high, np.maximum(cap, enc.low)), exact=False)


def _value_variables(fb: FormulationBuilder, enc: Encoding, gamma: float, box: Box) -> np.ndarray:
    """v_s ∈ [low_s, high_s] (valid: module docstring), v_s0 <= γ."""
    p = fb.variables(enc.n_maybe, lb=box.low, ub=box.high)
    fb.set_upper(p[enc.s0], min(gamma, float(box.high[enc.s0])))
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
    """The d0 MILP of one bound (module docstring). ``start``: a policy whose changed states switch
    deterministically. The box is [low, V_σ] (valid for the d0 MILP: module docstring)."""
    box = value_box(enc, gamma, evaluate(enc, enc.sigma))
    fb = FormulationBuilder()
    k = enc.n_maybe
    p = _value_variables(fb, enc, gamma, box)
    eye = sp.identity(k, format="csr")
    sigma_ok = ~enc.forbidden | (enc.sigma == 0)
    must = np.bincount(enc.row_state, weights=(~sigma_ok).astype(float), minlength=k) > 0   # σ uses a forbidden row
    SP, Sb = _fixed_part(enc, np.where(sigma_ok, enc.sigma, 0.0))
    FP, Fb = _fixed_part(enc, np.where(enc.free, 0.0, enc.sigma))
    mass = enc.free_mass
    F = np.flatnonzero(enc.free & ~enc.forbidden)
    s_of = enc.row_state[F]
    switched = FP[s_of] + sp.diags(mass[s_of]) @ enc.P[F]                    # SW_r(v) = fixed + m_s·P_r v
    switched_b = Fb[s_of] + mass[s_of] * enc.b[F]
    advantage = box_max(SP[s_of] - switched, Sb[s_of] - switched_b, box.low, box.high)
    useful = (advantage > 1e-12) | must[s_of]                                 # rows that can ever lower v_s
    first, second = _pairs(s_of)
    diff = box_max(switched[first] - switched[second], switched_b[first] - switched_b[second], box.low, box.high)
    dominated = (diff <= 0) & ((diff < 0) | (first < second))               # SW_first <= SW_second everywhere
    useful[second[dominated]] = False
    # M_r: v_s is at least σQ_s (unchanged) or SW_r' (switched to r'), so SW_r - v_s <= the largest box maximum of
    # SW_r - σQ_s and of SW_r - SW_r'
    big = np.where(must[s_of], 0.0, box_max(switched - SP[s_of], switched_b - Sb[s_of], box.low, box.high))
    np.maximum.at(big, first, diff)
    F, s_of, switched, switched_b, advantage, big = (a[useful] for a in (F, s_of, switched, switched_b, advantage,
                                                                          big))
    C = np.unique(s_of)
    pos = -np.ones(k, dtype=np.int64)
    pos[C] = np.arange(C.size)
    z = fb.variables(F.size, integer=True)
    _bellman_rows(fb, enc, p, np.setdiff1d(np.arange(k), C))
    free_choice = C[~must[C]]                                                # v_s - σP_s v + Σ_r A_r z_r >= σb_s
    weights = sp.csr_matrix((advantage, (pos[s_of], np.arange(F.size))), shape=(C.size, F.size))[pos[free_choice]]
    fb.rows(sp.hstack([eye[free_choice] - SP[free_choice], weights]), np.concatenate([p, z]), lhs=Sb[free_choice])
    # v_s - SW_r v >= SW_b - M_r (1 - z_r)
    big = np.maximum(big, 0.0)
    fb.rows(sp.hstack([eye[s_of] - switched, -sp.diags(big)]), np.concatenate([p, z]), lhs=switched_b - big)
    member = sp.csr_matrix((np.ones(F.size), (pos[s_of], np.arange(F.size))), shape=(C.size, F.size))
    fb.rows(member, z, lhs=np.where(must[C], 1.0, -INF), rhs=1.0)            # at most (exactly) one row per state
    c = np.zeros(fb.n_vars)
    c[z] = 1.0
    x0 = None
    if start is not None:
        x0 = np.zeros(fb.n_vars)
        x0[p] = np.minimum(evaluate(enc, start), box.high)
        x0[z] = (changes(enc, start) > 1e-9)[s_of] & (start[F] > 0.5 * mass[s_of])
    x_rows = -np.ones(enc.rows.size, dtype=np.int64)
    x_rows[F] = z
    return Program(fb.build(c, start=x0, tolerance=tolerance(gamma)), x_rows, binary_rows=True,
                   proves_bounds=box.exact)


def miqcqp_program(region: Region, encodings: Sequence[Encoding], gammas: Sequence[float], weights: Weights,
                   bounds: Mapping[str, float] | None = None, start: np.ndarray | None = None,
                   epsilon: float | None = None, diversity: "DiversityTerm | None" = None,
                   sigma_values: Sequence[np.ndarray | None] | None = None) -> Program:
    """The MIQCQP (1)-(13) with the pruning of :mod:`preanalysis`, every bound's Bellman rows over the shared strategy
    variables of ``region`` (module docstring). ``bounds``: proven lower bounds of the norms (key -> value), added as
    valid cuts; each norm of positive weight adds its own block (:meth:`~stormcf.distance.Norm.encode`).
    ``start``: a strategy (probabilities of every choice of the model) to start from. ``sigma_values``: per bound,
    σ's values where they may lower the box (module docstring), else None.

    ``diversity``: the term -λ·det(K) of :mod:`diverse`, which adds its own variables and constraints.
    """
    bounds = dict(bounds or {})
    fb = FormulationBuilder()
    n_rows, n_states = region.rows.size, region.n_maybe
    x = fb.variables(n_rows, ub=np.where(region.forbidden, 0.0, 1.0))
    u = fb.variables(n_rows, ub=region.sigma)
    member = sp.csr_matrix((np.ones(n_rows), (region.row_state, np.arange(n_rows))), shape=(n_states, n_rows))
    mass = region.free_mass
    fb.rows(member, x, lhs=mass, rhs=mass)                                          # controllable mass kept
    fb.rows(sp.hstack([sp.identity(n_rows), sp.identity(n_rows)]), np.concatenate([u, x]), lhs=region.sigma)
    change = ChangeTerms(member, u)                                                 # Δ_s = Σ_{r ∈ F(s)} u_r
    blocks = [(weights[n.key], n.encode(fb, change, region.n_decision, n.implied(bounds, region.n_decision)))
              for n in weights.positive()]
    boxes = [value_box(enc, gamma, None if sigma_values is None else sigma_values[j])
             for j, (enc, gamma) in enumerate(zip(encodings, gammas))]
    parts = [_bound_rows(fb, region, enc, gamma, box, x) for enc, gamma, box in zip(encodings, gammas, boxes)]
    objective_quadratic, offset = diversity.add(fb, region, x) if diversity is not None else (None, 0.0)
    c = np.zeros(fb.n_vars)
    for w, block in blocks:
        np.add.at(c, block.objective_vars, w * block.objective_coefs)
    x0 = None
    if start is not None:
        x0 = np.zeros(fb.n_vars)
        rows = start[region.rows]
        x0[x], x0[u] = rows, np.maximum(region.sigma - rows, 0.0)
        for enc, (p, q, Fq), box in zip(encodings, parts, boxes):
            values = evaluate(enc, start[enc.rows])
            x0[p] = np.minimum(np.where(np.isfinite(values), values, box.high), box.high)
            x0[q] = enc.P[Fq] @ x0[p] + enc.b[Fq]
        delta = changes(region, rows)
        for _, block in blocks:
            block.fill(x0, delta)
        if diversity is not None:
            diversity.fill_start(x0, region, rows)
    formulation = fb.build(c, offset=offset, start=x0, objective_quadratic=objective_quadratic,
                           objective_cutoff=epsilon, tolerance=min(tolerance(g) for g in gammas))
    return Program(formulation, x, binary_rows=False, proves_bounds=all(b.exact for b in boxes), region=region)


def _bound_rows(fb: FormulationBuilder, region: Region, enc: Encoding, gamma: float, box: Box, x: np.ndarray):
    """One bound's value variables v, q and Bellman rows (linear for states without strategy variables, bilinear
    for the changeable ones); returns (v, q, the rows q belongs to)."""
    p = _value_variables(fb, enc, gamma, box)
    F = np.flatnonzero(enc.free & ~enc.forbidden)
    has_q = np.diff(enc.P.indptr)[F] > 0
    Fq = F[has_q]
    q_low = -box_max(-enc.P[Fq], -enc.b[Fq], box.low, box.high)
    q = fb.variables(Fq.size, lb=q_low, ub=box_max(enc.P[Fq], enc.b[Fq], box.low, box.high))  # q_r - P_r v = b_r
    fb.rows(sp.hstack([sp.identity(Fq.size), -enc.P[Fq]]), np.concatenate([q, p]), lhs=enc.b[Fq], rhs=enc.b[Fq])
    _bellman_rows(fb, enc, p, np.flatnonzero(~enc.changeable))
    FP, Fb = _fixed_part(enc, np.where(enc.free, 0.0, enc.sigma))
    q_of = -np.ones(enc.rows.size, dtype=np.int64)
    q_of[Fq] = q
    x_of = -np.ones(enc.rows.size, dtype=np.int64)
    x_of[F] = x[region.positions(enc.rows[F])]
    groups = enc.row_groups()
    for s in np.flatnonzero(enc.changeable):
        rows = np.arange(groups[s], groups[s + 1])
        rows = rows[x_of[rows] >= 0]
        lin = FP[s]
        quad = rows[q_of[rows] >= 0]
        const = rows[q_of[rows] < 0]
        fb.quadratic(QuadraticRow(
            lin_idx=np.concatenate([[p[s]], p[lin.indices], x_of[const]]),
            lin_val=np.concatenate([[1.0], -lin.data, -enc.b[const]]),
            q_i=x_of[quad], q_j=q_of[quad], q_val=-np.ones(quad.size), lhs=float(Fb[s]), rhs=INF))
    return p, q, Fq


def paper_program(problem: "CounterfactualProblem", gamma: float) -> Program:
    """The paper's MIQCQP (seed 000, constraints (1)-(13)) on the whole model, without stormcf's pruning: the
    direct encoding the paper solved with Gurobi, for side-by-side benchmarks. Variables p_s (every state), p_sa
    (every choice; uncontrollable choices fixed to σ), a_sa >= |σ(s)(a) - p_sa|, Δ_s = ½ Σ_a a_sa, i_s ∈ {0,1}
    with Δ_s <= i_s, D∞ >= Δ_s; p_t = 1 on the target, p_s = 0 where the target is unreachable (the paper's graph
    analysis), the Bellman *equalities* p_s = Σ_a Σ_s' p_sa·δ(s, a, s')·p_s' (one bilinear term per transition),
    p_s0 <= γ; objective r0·Σ i_s + r1/|S|·Σ Δ_s + r∞·D∞. ``x_rows`` of the result are the p_sa.

    The first bound of the problem is encoded; beyond the paper, in the same direct way: ``ψ U φ`` (p_s = 0 on
    ¬ψ ∧ ¬φ), lower bounds (p_s0 >= γ), and expected rewards (v_s = Σ_a p_sa·(r_sa + Σ_s' δ(s, a, s')·v_s'), v = 0
    on the target, v_s >= 0 unbounded, choices into states that cannot reach the target fixed to 0)."""
    from ..reachability import can_reach

    m, sigma = problem.model, problem.strategy.probabilities
    bound = problem.bounds[0]
    n, c = m.n_states, m.n_choices
    soc = m.state_of_choice
    target = bound.target
    reward = bound.kind == "reward"
    reach = can_reach(m, target) & (bound.constraint | target)
    fixed = ~problem.free
    P = m.transitions
    fb = FormulationBuilder()
    if reward:
        p = fb.variables(n, lb=0.0, ub=np.where(target, 0.0, INF))
        dead = (P @ (~reach).astype(float)) > 0                                       # into states of value ∞
        x = fb.variables(c, lb=np.where(fixed, sigma, 0.0), ub=np.where(fixed, sigma, np.where(dead, 0.0, 1.0)))
    else:
        p = fb.variables(n, lb=np.where(target, 1.0, 0.0), ub=np.where(reach, 1.0, 0.0))
        x = fb.variables(c, lb=np.where(fixed, sigma, 0.0), ub=np.where(fixed, sigma, 1.0))
    if bound.optimization.value == "min":
        fb.set_upper(p[m.initial_state], gamma if reward else min(gamma, 1.0))
    else:
        fb.rows(sp.csr_matrix(np.ones((1, 1))), p[[m.initial_state]], lhs=gamma)
    a = fb.variables(c)
    member = sp.csr_matrix((np.ones(c), (soc, np.arange(c))), shape=(n, c))
    fb.rows(member, x, lhs=1.0, rhs=1.0)                                              # Σ_a p_sa = 1
    eye_c = sp.identity(c, format="csr")
    fb.rows(sp.hstack([eye_c, eye_c]), np.concatenate([a, x]), lhs=sigma)             # a >= σ - p_sa
    fb.rows(sp.hstack([eye_c, -eye_c]), np.concatenate([a, x]), lhs=-sigma)           # a >= p_sa - σ
    n_decision = max(int(m.decision_states.sum()), 1)
    blocks = [(problem.weights[nm.key], nm.encode(fb, ChangeTerms(0.5 * member, a), n_decision))   # Δ_s = ½ Σ_a a_sa
              for nm in problem.weights.positive()]
    entry_row = np.repeat(np.arange(c), np.diff(P.indptr))
    step = bound.rewards if bound.rewards is not None else np.zeros(c)       # (rewards: for a reward bound)
    for s in np.flatnonzero(reach & ~target):
        span = slice(P.indptr[m.row_groups[s]], P.indptr[m.row_groups[s + 1]])
        rows = np.arange(m.row_groups[s], m.row_groups[s + 1])
        earns = rows[step[rows] != 0]
        fb.quadratic(QuadraticRow(lin_idx=np.concatenate([[p[s]], x[earns]]),
                                  lin_val=np.concatenate([[1.0], -step[earns]]), q_i=x[entry_row[span]],
                                  q_j=p[P.indices[span]], q_val=-P.data[span], lhs=0.0, rhs=0.0))
    cost = np.zeros(fb.n_vars)
    for w, block in blocks:
        np.add.at(cost, block.objective_vars, w * block.objective_coefs)
    return Program(fb.build(cost, tolerance=tolerance(gamma)), x, binary_rows=False)
