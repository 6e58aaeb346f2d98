"""A primal method for any weights, and the repair of strategies Storm rejects: sequential linear programming.

From a strategy π (probabilities of the shared strategy rows, :class:`~stormcf.counterfactual.preanalysis.Region`)
every bound's value at s0 is linearised with the performance-difference lemma,

    v^σ'(s0) ≈ v^π(s0) + Σ_s ν^π(s) Σ_r (σ'(r) − π(r))·Q^π_r          (ν^π: expected visits of s from s0 under π)

which is exact to first order in σ' − π. One step solves the linear programme

    min  Σ_norm r_norm·norm(Δ(σ, σ'))   (each norm's block, binaries relaxed: d1 and d∞ exactly, d0 as Σ Δ_s)
    s.t. the linearised v^σ'(s0) <= γ' for every bound,   |σ'(r) − π(r)| <= ρ (trust region),
         the controllable mass of every state kept, forbidden rows 0, and (when a norm that counts changed states,
         d0, weighs) the states π leaves unchanged stay unchanged,

then evaluates σ' exactly (:func:`~stormcf.counterfactual.bellman.evaluate`, every bound): an improvement that meets
every bound is checked by Storm and becomes the new π (ρ doubles), otherwise ρ shrinks fourfold. It stops at a
local optimum (ρ below 1e-6), at the deadline, or after :data:`MAX_STEPS` steps.

- :func:`descent_stage` runs it from the best candidates of the other stages (the d∞ bisection's strategy, which
  changes many states a little, the sparse d0 one, the best weighted one): the d1 answers of the special cases were
  2-48x worse than the optimum in issue 23 because nothing moved them; each step here trades change where it buys
  little value for change where it buys much.
- :func:`repair`: when Storm rejects a solver's strategy, two causes are repaired. (1) A tiny probability η on a row
  that leaves an end component: the solver's Bellman rows tolerate it and value the component as closed (0), while
  the strategy leaves it almost surely (the 4-state cyclic MDP of issue 23: η = 1.4e-4 took P(F goal) from 0.5 to
  1). Such rows are dropped (probabilities below η = 1e-7 ... 1e-2 of the changed states set to 0 and the state's
  mass renormalised; d moves by at most η per state). (2) A value within the solver's tolerance of γ, amplified by a
  cycle: the same programme as above with γ' = γ·(1 − ρ), ρ = 1e-9 ... 1e-3, linearised at exact values (not the
  solver's), moves the strategy the least distance into the bound.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from ..deadline import Deadline
from ..distance import CHANGE_TOLERANCE, ChangeTerms, Weights, distance_of
from ..solvers import FormulationBuilder, backend
from .bellman import evaluate, leaves_surely, policy_matrix, q_values, tightened
from .certify import Candidate
from .context import RunContext
from .preanalysis import Encoding
from .programs import snap_unchanged
from .robust import changes

#: steps of one descent at most
MAX_STEPS = 40
#: the first trust region (probability moved per row), and the smallest before the descent stops
TRUST, TRUST_MIN = 0.25, 1e-6
#: relative margin of the linearised bounds (the exact evaluation decides)
LINEAR_MARGIN = 1e-9
#: relative margins the repair aims at, in turn
REPAIR_MARGINS = (1e-9, 1e-7, 1e-5, 1e-3)
#: probabilities below which the rows of changed states are dropped by the repair, in turn
ROUNDING = (1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
#: discount of the visits when a strategy does not leave the maybe states surely (visits are then infinite)
VISIT_DISCOUNT = 1 - 1e-6


def descent_stage(ctx: RunContext, deadline: Deadline, weights: Weights, name: str = "d1 descent") -> None:
    """Descend from the best candidates of every other stage (module docstring), within ``deadline``."""
    starts: dict[str, Candidate] = {}
    for key in ("dinf", "d0", None):
        c = ctx.certificate.best_by(key) if key else ctx.certificate.best
        if c is not None:
            starts.setdefault(c.source, c)
    for c in sorted(starts.values(), key=lambda c: c.weighted):
        if deadline.expired:
            return
        descend(ctx, c.probs, weights, deadline, f"{name} from {c.source}")


def descend(ctx: RunContext, probs: np.ndarray, weights: Weights, deadline: Deadline, name: str) -> np.ndarray:
    """The SLP from the valid strategy ``probs`` (module docstring); returns the last strategy Storm accepted."""
    region = ctx.region
    current = _weighted(ctx, probs[region.rows], weights)
    trust = TRUST
    for _ in range(MAX_STEPS):
        if trust < TRUST_MIN or deadline.expired:
            break
        step = _step(ctx, probs, weights, trust, [tightened(g, LINEAR_MARGIN) for g in ctx.gammas], deadline)
        if step is None:
            trust /= 4
            continue
        value = _weighted(ctx, step[region.rows], weights)
        if value < current * (1 - 1e-9) - 1e-12 and _meets(ctx, step) and ctx.accept_strategy(step, name):
            probs, current, trust = step, value, min(2 * trust, 1.0)
        else:
            trust /= 4
    return probs


def repair(ctx: RunContext, probs: np.ndarray, weights: Weights, deadline: Deadline, name: str) -> Candidate | None:
    """A strategy near ``probs`` (which Storm rejected) that meets every bound (module docstring): rows of tiny
    probability dropped, then the linearised step from exact values aiming at γ·(1 − ρ) for growing ρ; the first
    that Storm accepts, or None."""
    region = ctx.region
    for eta in ROUNDING:
        rounded = np.array(probs)
        rows = rounded[region.rows]
        changed = (changes(region, rows) > CHANGE_TOLERANCE)[region.row_state]
        small = changed & (rows > 0) & (rows < eta)
        if not small.any():
            continue
        rows[small] = 0.0
        rounded[region.rows] = snap_unchanged(region, rows, tolerance=0.0)
        if _meets(ctx, rounded):
            found = ctx.accept_strategy(rounded, name)
            if found is not None:
                return found
    for rho in REPAIR_MARGINS:
        for trust in (0.01, 0.1, 1.0):
            if deadline.expired:
                return None
            step = _step(ctx, probs, weights, trust, [tightened(g, rho) for g in ctx.gammas], deadline,
                         around=True)
            if step is not None and _meets(ctx, step):
                found = ctx.accept_strategy(step, name)
                if found is not None:
                    return found
    return None


def _weighted(ctx: RunContext, rows: np.ndarray, weights: Weights) -> float:
    return weights.combine(distance_of(changes(ctx.region, rows), ctx.region.n_decision).values)


def _meets(ctx: RunContext, probs: np.ndarray) -> bool:
    return all(evaluate(enc, probs[enc.rows])[enc.s0] <= tightened(g, 1e-10)
               for enc, g in zip(ctx.encodings, ctx.gammas))


def linearised(enc: Encoding, policy: np.ndarray) -> tuple[float, np.ndarray]:
    """v^π(s0) and, per row of the encoding, ν^π(s)·Q^π_r: the first-order effect of the row's probability on v(s0)
    (0 for rows of states π never visits; ∞ for rows into states of infinite value)."""
    values = evaluate(enc, policy)
    Q = q_values(enc, values)
    P_pi = (policy_matrix(enc, policy) @ enc.P).tocsr()
    beta = 1.0 if leaves_surely(enc, policy).all() else VISIT_DISCOUNT
    start = np.zeros(enc.n_maybe)
    start[enc.s0] = 1.0
    visits = np.maximum(np.atleast_1d(spsolve((sp.identity(enc.n_maybe, format="csc") - beta * P_pi.T).tocsc(),
                                              start)), 0.0)
    weight = visits[enc.row_state]
    with np.errstate(invalid="ignore"):
        effect = np.where(weight > 0, weight * Q, 0.0)
    return float(values[enc.s0]), effect


def _step(ctx: RunContext, probs: np.ndarray, weights: Weights, trust: float, targets: list[float],
          deadline: Deadline, around: bool = False) -> np.ndarray | None:
    """One linear programme (module docstring) from ``probs``; the new strategy, or None when it is infeasible."""
    region = ctx.region
    pi = probs[region.rows]
    n = region.rows.size
    lo, hi = np.maximum(pi - trust, 0.0), np.minimum(pi + trust, 1.0)
    if any(k.counts_states for k in weights.positive()) and not around:   # states π leaves unchanged stay so
        same = (changes(region, pi) <= CHANGE_TOLERANCE)[region.row_state]
        lo[same], hi[same] = region.sigma[same], region.sigma[same]
    lo[region.forbidden] = hi[region.forbidden] = 0.0
    fb = FormulationBuilder()
    x = fb.variables(n, lb=lo, ub=hi)
    u = fb.variables(n, ub=region.sigma)
    member = sp.csr_matrix((np.ones(n), (region.row_state, np.arange(n))), shape=(region.n_maybe, n))
    fb.rows(member, x, lhs=region.free_mass, rhs=region.free_mass)
    fb.rows(sp.hstack([sp.identity(n), sp.identity(n)]), np.concatenate([u, x]), lhs=region.sigma)
    blocks = [(weights[k.key], k.encode(fb, ChangeTerms(member, u), region.n_decision, relaxed=True))
              for k in weights.positive()]
    for enc, target in zip(ctx.encodings, targets):
        value, effect = linearised(enc, probs[enc.rows])
        at = region.positions(enc.rows)
        use = (at >= 0) & (effect != 0)
        blocked = use & ~np.isfinite(effect)
        fb.set_upper(x[at[blocked]], 0.0)
        use &= np.isfinite(effect)
        if not use.any():
            if value > target:
                return None
            continue
        coef, cols = effect[use], x[at[use]]
        fb.rows(sp.csr_matrix(coef[None, :]), cols, rhs=target - value + float(coef @ pi[at[use]]))
    c = np.zeros(fb.n_vars)
    for w, block in blocks:
        np.add.at(c, block.objective_vars, w * block.objective_coefs)
    out = backend("highs").solve(fb.build(c), max(deadline.budget(), 0.01))
    if out.x is None:
        return None
    strategy = np.array(ctx.sigma, dtype=float)
    strategy[region.rows] = snap_unchanged(region, np.clip(out.x[x], 0.0, 1.0))
    return strategy
