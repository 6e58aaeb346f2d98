"""Gumbel-max SCM counterfactual transition probabilities (Oberst & Sontag 2019; used by seeds 001 and 004).

Structural model of a transition: S' = argmax_x (log P(x | s, a) + U_x), with U_x i.i.d. Gumbel(0, 1) indexed by
the successor state x. An observation (s_t, a_t) -> s_{t+1} at step t conditions the noise U; the counterfactual
transition probability of another pair (s, a) is

    P_t(x | s, a) = Pr[ argmax_y (log q_y + U_y) = x  |  argmax_y (log p_y + U_y) = k ]

with p = P(. | s_t, a_t), k = s_{t+1} and q = P(. | s, a). Two estimators:

- :func:`exact_rows`, the closed form of notes-seed001 §2.3 (with E_j = exp(-U_j) ~ Exp(1) and all other noise
  integrated out): for the factual successor ``P_t(k) = 1 / Σ_j max(p_j, p_k q_j / q_k)`` (0 if q_k = 0), and for
  x ≠ k with lo = p_x, hi = p_k q_x / q_k (∞ if q_k = 0): ``P_t(x) = ∫_lo^hi dw / D(w)²`` (0 if hi <= lo, the
  counterfactual stability of the seed) with ``D(w) = p_k + w + Σ_{j ≠ k, x} max(p_j, w q_j / q_x)``. D is
  piecewise linear in w; each piece A + B·w integrates to (w2 - w1) / ((A + B w1)(A + B w2)).
- :func:`mc_rows`, Monte Carlo with top-down posterior sampling (notes §2.1): the maximum M ~ Gumbel(0);
  U_k = M - log p_k; for j ≠ k with p_j > 0 a Gumbel(log p_j) truncated above at M, minus log p_j; for p_j = 0 the
  prior Gumbel(0). Every row gets its own noise samples (the authors share the samples of a step across rows; the
  per-row marginals, which is all that the counterfactual MDP uses, are the same), and only the coordinates in the
  row's support are drawn.

Both return rows on the support of q (supp P_t(. | s, a) ⊆ supp q), summing to 1.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import OptionError, PathError
from ..limits import require_memory
from ..model import ExplicitModel
from ..paths import ObservedPath
from ..run import Run
from .model import ChoiceRule, CounterfactualMDP, build_cfmdp, entries_of, length_buckets

#: the estimators of the Gumbel-max counterfactual probabilities
ESTIMATORS = ("exact", "mc")
#: pairs x padded row length handled per vectorized block (memory bound: about 8 arrays of this many floats)
_BLOCK = 2_000_000
#: relative rounding margin of the counterfactual-stability test hi > lo in :func:`exact_rows`
_ROUNDING = 4 * np.finfo(float).eps


def _padded(Q: sp.csr_matrix, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of Q as padded dense blocks: successor ids (-1 padding), q values, p values, position of each entry."""
    lengths = np.diff(Q.indptr)
    width = int(lengths.max(initial=1))
    rows = np.repeat(np.arange(Q.shape[0]), lengths)
    pos = np.arange(Q.nnz) - Q.indptr[rows]
    cols = np.full((Q.shape[0], width), -1, dtype=np.int64)
    qv = np.zeros((Q.shape[0], width))
    cols[rows, pos] = Q.indices
    qv[rows, pos] = Q.data
    pv = np.where(cols >= 0, p[np.maximum(cols, 0)], 0.0)
    return cols, qv, pv, pos


def _check(p: np.ndarray, k: int, Q: sp.csr_matrix) -> tuple[np.ndarray, sp.csr_matrix]:
    p = np.asarray(p, dtype=float).ravel()
    if not 0 <= k < p.size or not p[k] > 0:
        raise PathError(f"the observed successor {k} has probability 0 under the observed action")
    Q = sp.csr_matrix(Q, copy=True)
    Q.eliminate_zeros()
    Q.sort_indices()
    if Q.shape[1] != p.size:
        raise PathError(f"rows have {Q.shape[1]} columns, the observed distribution {p.size}")
    return p, Q


def exact_rows(p: np.ndarray, k: int, Q: sp.csr_matrix) -> sp.csr_matrix:
    """Exact Gumbel-max counterfactual rows for the rows q of ``Q`` given the observation (p, k) (module docs)."""
    p, Q = _check(p, k, Q)
    rows = np.repeat(np.arange(Q.shape[0]), np.diff(Q.indptr))
    cols, q, pj = Q.indices, Q.data, p[Q.indices]
    qk = np.asarray(Q[:, [k]].todense()).ravel()
    p_in_support = np.bincount(rows, weights=pj, minlength=Q.shape[0])        # Σ_{j ∈ supp q} p_j
    out = np.zeros(Q.nnz)

    factual = cols == k                                                       # P_t(k) = 1 / Σ_j max(p_j, p_k q_j/q_k)
    if factual.any():
        ratio = np.where(qk[rows] > 0, p[k] * q / np.where(qk[rows] > 0, qk[rows], 1.0), 0.0)
        denominator = 1.0 - p_in_support + np.bincount(rows, weights=np.maximum(pj, ratio), minlength=Q.shape[0])
        out[factual] = 1.0 / denominator[rows[factual]]

    other = np.flatnonzero(~factual)
    lo = pj[other]
    with np.errstate(divide="ignore"):
        hi = np.where(qk[rows[other]] > 0, p[k] * q[other] / qk[rows[other]], np.inf)
    # counterfactual stability: 0 unless hi > lo; hi and lo that are equal in exact arithmetic (q proportional to p
    # on {k, x}, e.g. q == p) differ by a few ulps after rounding, and the neglected mass is <= (hi - lo) / (4 p_k lo)
    live = other[hi > lo * (1.0 + _ROUNDING)]
    if live.size:
        out[live] = _integrals(p, k, Q, rows, live, p_in_support, qk)
    result = sp.csr_matrix((out, Q.indices.copy(), Q.indptr.copy()), shape=Q.shape)
    result.eliminate_zeros()
    return result


def _integrals(p, k, Q, rows, entries, p_in_support, qk) -> np.ndarray:
    """∫_lo^hi dw / D(w)² for the given non-factual entries of Q, vectorized: the entries' rows are padded to the
    longest row of their length bucket (:func:`~stormcf.counterfactual_mdp.model.length_buckets`)."""
    # C = p_k + Σ_{j ∉ supp q, j ≠ k} p_j = 1 - Σ_{j ∈ supp q, j ≠ k} p_j
    C = 1.0 - (p_in_support - p[k] * (qk > 0))
    lengths = np.diff(Q.indptr)[rows[entries]]
    out = np.empty(entries.size)
    for bucket in length_buckets(lengths):
        width = int(lengths[bucket].max())
        step = max(1, _BLOCK // (width + 1))
        for start in range(0, bucket.size, step):
            at = bucket[start:start + step]
            out[at] = _integral_block(p, k, Q, rows[entries[at]], entries[at], C, qk, width)
    return out


def _integral_block(p, k, Q, i, e, C, qk, width) -> np.ndarray:
    """The integrals of the entries ``e`` (rows ``i``, at most ``width`` successors each) as one dense block."""
    qx, px = Q.data[e], p[Q.indices[e]]
    hi = np.where(qk[i] > 0, p[k] * qx / np.where(qk[i] > 0, qk[i], 1.0), np.inf)
    pos = np.arange(width)
    inside = pos < (Q.indptr[i + 1] - Q.indptr[i])[:, None]
    E = np.where(inside, Q.indptr[i][:, None] + pos, 0)
    c_o = np.where(inside, Q.indices[E], -1)
    q_o = np.where(inside, Q.data[E], 0.0)
    p_o = np.where(inside, p[np.maximum(c_o, 0)], 0.0)
    drop = (c_o < 0) | (c_o == k)
    drop[np.arange(e.size), e - Q.indptr[i]] = True                           # the entry x itself
    r = np.where(drop, 0.0, q_o / qx[:, None])                                # r_j = q_j / q_x
    p_o[drop] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(r > 0, p_o / r, np.inf)                                  # breakpoints w_j = p_j q_x / q_j
    order = np.argsort(b, axis=1)
    b = np.take_along_axis(b, order, axis=1)
    p_s = np.take_along_axis(p_o, order, axis=1)
    r_s = np.take_along_axis(r, order, axis=1)
    # piece l covers [b_(l-1), b_(l)) with A_l = C + Σ_{later} p_j and B_l = 1 + Σ_{earlier} r_j
    A = (C[i] + p_o.sum(axis=1))[:, None] - np.hstack([np.zeros((e.size, 1)), np.cumsum(p_s, axis=1)])
    B = 1.0 + np.hstack([np.zeros((e.size, 1)), np.cumsum(r_s, axis=1)])
    lower = np.hstack([np.full((e.size, 1), -np.inf), b])
    upper = np.hstack([b, np.full((e.size, 1), np.inf)])
    w1 = np.clip(lower, px[:, None], hi[:, None])
    w2 = np.clip(upper, px[:, None], hi[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        finite = (w2 - w1) / ((A + B * w1) * (A + B * w2))
        tail = 1.0 / (B * (A + B * w1))
    piece = np.where(np.isinf(w2), tail, finite)
    return np.where(w2 > w1, piece, 0.0).sum(axis=1)


def posterior_noise(p: np.ndarray, k: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``samples`` draws of the Gumbel noise vector U given argmax(log p + U) = k (top-down sampling), shape
    (samples, len(p)). Every draw satisfies argmax_j (log p_j + U_j) = k."""
    p = np.asarray(p, dtype=float)
    M = rng.gumbel(size=(samples, 1))
    return _condition(np.log(np.where(p > 0, p, 1.0)), p > 0, np.arange(p.size) == k, M,
                      rng.gumbel(size=(samples, p.size)))


def _condition(log_p, in_p, is_k, M, G):
    """Turn prior Gumbel(0) draws G into posterior noise given the maximum M (broadcasting over leading axes)."""
    truncated = -np.logaddexp(-(log_p + G), -M) - log_p                     # Gumbel(log p_j) truncated at M
    return np.where(is_k, M - log_p, np.where(in_p, truncated, G))


def require_sample_memory(model: ExplicitModel, samples: int) -> None:
    """Refuse a number of Monte Carlo samples per (t, s, a) whose noise arrays (samples x successors, a few
    float64 arrays for the widest row of ``model``) do not fit in the available memory."""
    width = int(np.diff(model.transitions.indptr).max(initial=1))
    require_memory(samples * (3 * width + 4) * 8, f"{samples} Monte Carlo samples per (t, s, a) "
                                                  f"(rows of up to {width} successors)")


def mc_rows(p: np.ndarray, k: int, Q: sp.csr_matrix, samples: int, rng: np.random.Generator,
            run: Run | None = None) -> sp.csr_matrix:
    """Monte Carlo estimate of the counterfactual rows (entries are multiples of 1/samples; the observed pair's own
    row is exactly the point mass on k), within ``run`` (default: unlimited), checked between blocks of rows.

    A row with one successor is the point mass on it, exactly (the argmax over one value); the others are sampled
    in blocks of rows of similar length (:func:`~stormcf.counterfactual_mdp.model.length_buckets`), each padded
    to its own longest row, so that padding costs at most twice the rows' own work."""
    if samples < 1:
        raise OptionError(f"the Monte Carlo estimator needs at least one sample, got {samples}")
    p, Q = _check(p, k, Q)
    lengths = np.diff(Q.indptr)
    out = np.ones(Q.nnz)
    blocks = [bucket[a:a + step] for bucket in length_buckets(lengths) if lengths[bucket[0]] > 1
              for step in [max(1, _BLOCK // (samples * int(lengths[bucket].max())))]
              for a in range(0, bucket.size, step)]
    deadline = run if run is not None else Run()
    for rows in deadline.progress(blocks, desc=f"Monte Carlo, {samples} samples per row", unit="block"):
        deadline.check("the Monte Carlo counterfactual probabilities")
        block = Q[rows]
        cols, qv, pv, pos = _padded(block, p)
        counts = _winner_counts(cols, qv, pv, k, samples, rng)
        owner = np.repeat(np.arange(rows.size), np.diff(block.indptr))
        out[entries_of(Q, rows)[0]] = counts[owner, pos] / samples
    result = sp.csr_matrix((out, Q.indices.copy(), Q.indptr.copy()), shape=Q.shape)
    result.eliminate_zeros()
    return result


def _winner_counts(cols: np.ndarray, qv: np.ndarray, pv: np.ndarray, k: int, samples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """How often each padded position of a block of rows wins argmax(log q + U) over ``samples`` posterior draws
    of U given the observation (p, k), one independent set of draws per row."""
    n_rows, width = cols.shape
    log_p = np.log(np.where(pv > 0, pv, 1.0))
    log_q = np.where(cols >= 0, np.log(np.where(qv > 0, qv, 1.0)), -np.inf)
    M = rng.gumbel(size=(n_rows, samples, 1))
    is_k = cols == k
    U = _condition(log_p[:, None, :], (pv > 0)[:, None, :], is_k[:, None, :], M,
                   rng.gumbel(size=(n_rows, samples, width)))
    score = log_q[:, None, :] + U
    winner = np.argmax(score, axis=2)
    has_k = is_k.any(axis=1)
    kpos = np.argmax(is_k, axis=1)
    # a truncated draw can round up to M exactly; the observed successor wins such ties (it attains the max)
    ties = has_k[:, None] & (np.take_along_axis(score, kpos[:, None, None], axis=2)[..., 0] >= score.max(axis=2))
    winner = np.where(ties, kpos[:, None], winner)
    counts = np.zeros((n_rows, width))
    np.add.at(counts, (np.repeat(np.arange(n_rows), samples), winner.ravel()), 1.0)
    return counts


def counterfactual_transitions(model: ExplicitModel, observed_choice: int, observed_next: int,
                               choices: np.ndarray | None = None, estimator: str = "exact", samples: int = 1000,
                               seed: int | list[int] | None = 0, run: Run | None = None) -> sp.csr_matrix:
    """The Gumbel-max counterfactual P_t(. | s, a) of the choices ``choices`` (default: all), given the observed
    step (row ``observed_choice``) -> ``observed_next``; one CSR row per requested choice, one column per state.

    ``estimator`` is ``"exact"`` (closed form) or ``"mc"`` (``samples`` posterior draws per row, seeded by
    ``numpy.random.default_rng(seed)``; pass e.g. ``[seed, t]`` for an independent stream per step) within ``run``.
    """
    p = model.transitions[observed_choice].toarray().ravel()
    if not p[observed_next] > 0:
        raise PathError(f"action '{model.choice_name(observed_choice)}' in state "
                        f"{model.state_name(int(model.state_of_choice[observed_choice]))} reaches "
                        f"{model.state_name(observed_next)} with probability 0")
    Q = model.transitions if choices is None else model.transitions[np.asarray(choices, dtype=np.int64)]
    if estimator == "exact":
        return exact_rows(p, observed_next, Q)
    if estimator == "mc":
        return mc_rows(p, observed_next, Q, samples, np.random.default_rng(seed), run)
    raise OptionError(f"unknown Gumbel-max estimator {estimator!r}: use one of {', '.join(ESTIMATORS)}")


def gumbel_cfmdp(path: ObservedPath, estimator: str = "exact", samples: int = 1000, seed: int = 0,
                 layers: str = "support", choice_rule: ChoiceRule | None = None,
                 run: Run | None = None) -> CounterfactualMDP:
    """The Gumbel-max SCM counterfactual MDP of ``path`` (Oberst & Sontag; M_τ of seed 001, the baseline of 004).

    ``estimator="exact"``: the closed form; ``"mc"``: ``samples`` posterior draws per (t, s, a), step t seeded with
    ``[seed, t]`` (approximate). The observed pair's row is exactly the point mass on s_{t+1} (the SCM reproduces
    the observation). ``layers`` and ``choice_rule`` as in :func:`~stormcf.counterfactual_mdp.model.build_cfmdp`.
    ``run`` (default: unlimited) bounds the Monte Carlo estimator.
    """
    if estimator not in ESTIMATORS:
        raise OptionError(f"unknown Gumbel-max estimator {estimator!r}: use one of {', '.join(ESTIMATORS)}")
    if estimator == "mc" and samples < 1:
        raise OptionError(f"the Monte Carlo estimator needs at least one sample, got {samples}")
    model = path.model
    P = model.transitions

    def values(t: int, rows: np.ndarray, entries: np.ndarray, row: int, successor: int
               ) -> tuple[np.ndarray, np.ndarray]:
        Q = counterfactual_transitions(model, row, successor, rows, estimator, samples, seed=[seed, t], run=run)
        v = _on_entries(Q, P, rows, entries)
        mine = np.repeat(rows == row, P.indptr[rows + 1] - P.indptr[rows])
        v[mine] = (P.indices[entries[mine]] == successor).astype(float)
        return v, v

    method = "gumbel-max, exact" if estimator == "exact" else \
        f"gumbel-max, Monte Carlo, {samples} samples per (t, s, a)"
    return build_cfmdp(path, values, "point", method, layers, choice_rule, approximate=estimator == "mc")


def _on_entries(Q: sp.csr_matrix, P: sp.csr_matrix, rows: np.ndarray, entries: np.ndarray) -> np.ndarray:
    """The values of ``Q`` (one row per requested row, support within P's) at the given transitions of those rows."""
    n = P.shape[1]
    owner = np.repeat(np.arange(rows.size), P.indptr[rows + 1] - P.indptr[rows])
    want = owner.astype(np.int64) * n + P.indices[entries]
    have = np.repeat(np.arange(Q.shape[0], dtype=np.int64), np.diff(Q.indptr)) * n + Q.indices
    at = np.searchsorted(want, have)
    if np.any(at >= want.size) or np.any(want[np.minimum(at, want.size - 1)] != have):
        raise PathError("Gumbel-max counterfactual rows leave the support of the model")
    out = np.zeros(entries.size)
    out[at] = Q.data
    return out
