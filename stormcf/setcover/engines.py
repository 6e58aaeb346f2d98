"""The exact engines (branch and bound, bitmask/mixed-radix DP, MILP, Storm, brute force) and the greedy baseline,
and the canonical choice among tied optima.

Every engine returns an :class:`EngineSolution` for one agent. The set is **canonical**: among the optimal sets,
the one with the fewest actions, then the lexicographically least sorted index tuple; a least-cardinality optimum
is inclusion-minimal (so the zero-cost no-op of the paper's example is never in it). ``unique`` says whether it is
the only optimal set (any superset with zero-cost actions counts as another one, as in the paper's example).

With integer thresholds (multicover) an action may be taken more than once, as in the capped-integer MDP (notes
§5.2): a CFE is then a multiset (a sorted tuple with repeats), and ``unique`` is not decided (None).

How ties are decided from the optimal values V* (DP, Storm): the optimal first steps at the agent's state are

    O(x) = {i effective at x : c_i + V*(δ(x, i)) = V*(x)}

Every action of an optimal set that changes x is in O(x), so the canonical set is the least subset of O(x) that
is a cover of cost V*(x); and the optimum is unique iff it equals O(x) and contains every zero-cost action.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from .. import storm
from ..deadline import Deadline
from ..errors import SolverError
from ..model import ExplicitModel
from ..solvers import Formulation, FormulationBuilder, solve
from .branch import Covering, search, tolerance
from .problem import TIE_TOLERANCE, SetCoverProblem
from .space import StateSpace, Transitions

#: exact engines, by name
EXACT = ("bnb", "dp", "milp", "storm", "bruteforce")
#: the engine used when none is named (the fastest, scripts/setcover_experiments.py engines)
DEFAULT_METHOD = "bnb"
#: every engine, by name (greedy is the cheap baseline, not exact)
METHODS = EXACT + ("greedy",)
#: the engines that handle preconditions (ordered actions): the MDP ones
ORDERED = ("dp", "storm")
#: the engines that solve mathematical programmes (with the solver chosen by name, stormcf.solvers.SOLVERS)
PROGRAMMES = ("milp",)
#: brute force enumerates 2^A' subsets of the A' effective actions
BRUTEFORCE_LIMIT = 20
#: the canonical choice among tied optima examines at most this many candidate sets, of at most this many action
#: entries in all, in batches of about this many (action, feature) entries (memory)
TIE_SEARCH_LIMIT = 1_000_000
TIE_ENTRY_LIMIT = 10_000_000
TIE_CHUNK = 1 << 22
#: the property Storm checks
RMIN = 'R{"cost"}min=? [F "goal"]'


@dataclass(frozen=True)
class EngineSolution:
    """What an engine found for one agent.

    Attributes:
        actions: the canonical optimal set (ascending indices); for ordered instances the plan's actions.
        plan: the actions in the order they are taken (ascending for sets: any order is optimal).
        value: the optimal (expected) cost, inf when no cover exists.
        unique: whether the optimal set is unique (None where not decided: ordered instances, greedy).
        optimal: whether the engine proves optimality (False for greedy).
    """

    actions: tuple[int, ...]
    plan: tuple[int, ...]
    value: float
    unique: bool | None
    optimal: bool

    @property
    def feasible(self) -> bool:
        return math.isfinite(self.value)


def close(a: float, b: float, tolerance: float = TIE_TOLERANCE) -> bool:
    """a = b within the relative tie tolerance."""
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


def infeasible() -> EngineSolution:
    return EngineSolution((), (), math.inf, True, True)


# ==================================================================================================== ties
def canonical_set(problem: SetCoverProblem, value: float, pool) -> tuple[int, ...]:
    """The least-cardinality, then lexicographically least, subset of ``pool`` that covers the agent at cost
    ``value`` (within the tolerance). Subsets are tried by size, each size in vectorised batches of at most
    :data:`TIE_CHUNK` action entries; at most :data:`TIE_SEARCH_LIMIT` sets and :data:`TIE_ENTRY_LIMIT` entries in
    all (multisets of thousands of actions, with large multicover thresholds, are refused)."""
    inst, x = problem.instance, problem.agent
    pool = np.array(sorted(int(i) for i in pool), dtype=np.int64)
    subsets = itertools.combinations if inst.binary else itertools.combinations_with_replacement
    longest = pool.size if inst.binary else int(repeat_bounds(problem).sum())
    tried = entries = 0
    for r in range(1, longest + 1):
        count = math.comb(pool.size, r) if inst.binary else math.comb(pool.size + r - 1, r)
        tried, entries = tried + count, entries + count * r
        if tried > TIE_SEARCH_LIMIT or entries > TIE_ENTRY_LIMIT:
            raise SolverError(f"more than {min(tried, TIE_SEARCH_LIMIT):,} tied candidate sets (of up to {r} "
                              "actions); cannot pick the canonical optimum")
        candidates = subsets(range(pool.size), r)
        rows = max(TIE_CHUNK // (r * max(inst.n_features, 1)), 1)
        while chunk := list(itertools.islice(candidates, rows)):
            combos = pool[np.array(chunk, dtype=np.int64)]
            final = x + inst.effects[combos].sum(axis=1)
            cost = inst.expected_costs[combos].sum(axis=1)
            ok = np.all(final >= inst.thresholds, axis=1) & (cost <= value + TIE_TOLERANCE * max(1.0, abs(value)))
            if ok.any():
                return tuple(int(i) for i in combos[int(np.argmax(ok))])
    raise SolverError("no optimal set among the optimal first steps (inconsistent optimal values)")


def from_values(problem: SetCoverProblem, trans: Transitions, values: np.ndarray, s0: int) -> EngineSolution:
    """The canonical optimum of one agent from V* over its states (DP or Storm)."""
    value = float(values[s0])
    if not math.isfinite(value):
        return infeasible()
    if problem.instance.ordered:
        plan = _plan(trans, values, s0)
        return EngineSolution(tuple(sorted(set(plan))), plan, value, None, True)
    q = trans.q_values(values, np.array([s0]))[0]
    first = np.flatnonzero(q <= value + TIE_TOLERANCE * max(1.0, abs(value)))
    zero = np.flatnonzero(problem.available & (problem.instance.expected_costs == 0))
    inst = problem.instance
    if not inst.binary:
        actions = canonical_set(problem, value, first)
        return EngineSolution(actions, actions, value, None, True)
    if inst.is_valid(problem.agent, first) and close(inst.cost(first), value) and not np.isin(first, zero).any():
        actions = tuple(int(i) for i in first)
    else:
        actions = canonical_set(problem, value, first)
    unique = len(actions) == first.size and bool(np.isin(zero, actions).all())
    return EngineSolution(actions, actions, value, unique, True)


def _plan(trans: Transitions, values: np.ndarray, s: int) -> tuple[int, ...]:
    """An optimal plan: in each state the lowest-index optimal effective action (levels rise, so it ends)."""
    plan = []
    while not trans.goal[s]:
        q = trans.q_values(values, np.array([s]))[0]
        i = int(np.flatnonzero(q <= values[s] + TIE_TOLERANCE * max(1.0, abs(values[s])))[0])
        plan.append(i)
        s = int(trans.successor[s, i])
    return tuple(plan)


# ==================================================================================================== MDP engines
def agent_transitions(problem: SetCoverProblem, reduced: bool = False) -> tuple[Transitions, int]:
    """The reachable projected MDP of one agent and the index of its initial state min(x, cap) (``reduced``: only
    the states Storm's model reaches, :meth:`StateSpace.reachable`)."""
    space = StateSpace.for_agents(problem.instance, problem.agent[None, :], problem.available)
    s0 = space.encode(problem.agent)
    trans = space.reachable(np.array([s0]), reduced=reduced)
    return trans, int(np.searchsorted(trans.codes, s0))


def solve_dp(problem: SetCoverProblem) -> EngineSolution:
    """Backward induction over the reachable states of the projected MDP (exact)."""
    trans, s0 = agent_transitions(problem)
    return from_values(problem, trans, trans.state_values(), s0)


def storm_values(model: ExplicitModel) -> np.ndarray:
    """Storm's ``Rmin=? [F "goal"]`` in every state of a projected MDP (:meth:`Transitions.explicit_model`): one
    Storm call."""
    values = storm.check(model, storm.parse_property(model, RMIN)).values
    assert values is not None  # Rmin=? is quantitative: a value per state
    return values


def solve_storm(problem: SetCoverProblem) -> EngineSolution:
    """Storm's Rmin on the projected MDP; the canonical set from Storm's values."""
    trans, s0 = agent_transitions(problem)
    return from_values(problem, trans, storm_values(trans.explicit_model(s0)), s0)


# ==================================================================================================== branch and bound
def solve_bnb(problem: SetCoverProblem, deadline: Deadline | None = None) -> EngineSolution:
    """Best-first branch and bound over covers with LP-price bounds after dominance (:mod:`.branch`), within
    ``deadline`` (default: unlimited): every tied optimum is a leaf, so the canonical set and uniqueness come from
    the leaves."""
    covering = Covering.of(problem)
    leaves = search(covering, deadline if deadline is not None else Deadline(None))
    if not leaves:
        return infeasible()
    inst = problem.instance
    leaf = min(leaves, key=lambda leaf: (len(leaf.actions), sorted(leaf.actions)))
    actions = tuple(sorted(int(covering.pool[i]) for i in leaf.actions))
    value = inst.cost(actions)
    unique = None
    if inst.binary:
        optimum = min(other.cost for other in leaves)
        slack = optimum + tolerance(optimum) - leaf.cost
        others = problem.available.copy()
        others[list(actions)] = False
        unique = len(leaves) == 1 and not np.any(others & (inst.expected_costs <= slack))
    return EngineSolution(actions, actions, value, unique, True)


# ==================================================================================================== MILP
def repeat_bounds(problem: SetCoverProblem) -> np.ndarray:
    """How often each available action can usefully be taken: max_j ceil((t_j − x_j) / e_ij); at most once for 0/1
    instances (where the useless ones count too: a zero-cost one makes the optimum not unique)."""
    if problem.instance.binary:
        return problem.available.astype(np.int64)
    cov, need = problem.coverage(), problem.deficit()
    with np.errstate(divide="ignore"):
        times = np.where(cov > 0, np.ceil(need / np.maximum(cov, 1)), 0).max(axis=1, initial=0)
    return (times * problem.available).astype(np.int64)


#: the covering MILP's relative optimality gap: its optimum decides ties (TIE_TOLERANCE), so it is solved exactly
EXACT_GAP = 1e-10
#: an extra row block of the covering programme: (matrix, lhs, rhs) over the action counts
Rows = tuple[np.ndarray, float, float]


def covering_programme(problem: SetCoverProblem, extra: tuple[Rows, ...] = (), objective: np.ndarray | None = None,
                       fixed: dict[int, int] | None = None) -> Formulation:
    """min c·s  s.t.  Σ_i min(e_ij, t_j − x_j) s_i >= t_j − x_j (j ∈ M(x)),  0 <= s_i <= u_i integer
    (u_i = 0 for unavailable actions, 1 for 0/1 instances), the ``extra`` rows, s_i = v for ``fixed`` {i: v}."""
    inst = problem.instance
    lb, ub = np.zeros(inst.n_actions), repeat_bounds(problem).astype(float)
    for i, v in (fixed or {}).items():
        lb[i] = ub[i] = v
    fb = FormulationBuilder()
    s = fb.variables(inst.n_actions, lb, ub, integer=True)
    fb.rows(sp.csr_matrix(problem.coverage().T.astype(float)), s, lhs=problem.deficit().astype(float))
    for matrix, lhs, rhs in extra:
        fb.rows(sp.csr_matrix(matrix), s, lhs, rhs)
    return fb.build(inst.expected_costs if objective is None else objective, gap=EXACT_GAP)


def _milp(problem: SetCoverProblem, solver: str, extra: tuple[Rows, ...] = (), objective: np.ndarray | None = None,
          fixed: dict[int, int] | None = None) -> np.ndarray | None:
    """The optimal action counts of :func:`covering_programme`, None when it is infeasible."""
    out = solve(covering_programme(problem, extra, objective, fixed), solver).proven("the set-cover MILP")
    return np.round(out.x).astype(np.int64) if out.optimal else None


def _multiset(counts: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.repeat(np.arange(counts.size), counts))


def solve_milp(problem: SetCoverProblem, solver: str = "auto") -> EngineSolution:
    """The covering MILP (:func:`covering_programme`, on the solver chosen by name): the optimum; for 0/1 instances
    a second solve with a no-good cut decides uniqueness; on ties (or repeats), the least number of actions, then
    the lexicographically least tuple by maximising the multiplicity of each action in index order."""
    inst = problem.instance
    best = _milp(problem, solver)
    if best is None:
        return infeasible()
    value = inst.cost(_multiset(best))
    unique = None
    if inst.binary:
        chosen = best > 0
        cut = (np.where(chosen, -1.0, 1.0)[None, :], 1.0 - chosen.sum(), np.inf)
        other = _milp(problem, solver, (cut,))
        unique = other is None or not close(inst.cost(_multiset(other)), value)
        if unique:
            return EngineSolution(_multiset(best), _multiset(best), value, True, True)
    budget = (inst.expected_costs[None, :], -np.inf, value + TIE_TOLERANCE * max(1.0, abs(value)))
    fewest = _milp(problem, solver, (budget,), objective=np.ones(inst.n_actions))
    assert fewest is not None  # best meets the budget
    k = int(fewest.sum())
    size = (np.ones((1, inst.n_actions)), k, k)
    fixed: dict[int, int] = {}
    for i in np.flatnonzero(repeat_bounds(problem)):
        most = _milp(problem, solver, (budget, size), objective=-np.eye(inst.n_actions)[i], fixed=fixed)
        assert most is not None  # the optimum found so far meets the budget, the size and the fixed counts
        fixed[int(i)] = int(most[i])
        if sum(fixed.values()) == k:
            break
    counts = np.zeros(inst.n_actions, dtype=np.int64)
    counts[list(fixed)] = list(fixed.values())
    return EngineSolution(_multiset(counts), _multiset(counts), value, unique, True)


def lp_bound(problem: SetCoverProblem, solver: str = "auto") -> float:
    """The LP relaxation of the covering programme (:func:`covering_programme` with 0 <= s_i <= u_i real), on the
    solver chosen by name: a lower bound on the optimal cost (inf when no cover exists)."""
    if problem.positive:
        return 0.0
    out = solve(covering_programme(problem).relaxation(), solver).proven("the set-cover LP relaxation")
    return out.objective if out.optimal else math.inf


# ==================================================================================================== brute force
def solve_bruteforce(problem: SetCoverProblem) -> EngineSolution:
    """Every subset (multiset with repeats for integer instances) of the effective actions, for tests and tiny
    instances: all optima, so the canonical one and uniqueness directly (a zero-cost action that changes nothing
    doubles every optimum)."""
    inst = problem.instance
    pool = np.flatnonzero(problem.effective())
    radix = repeat_bounds(problem)[pool] + 1
    if float(np.prod(radix.astype(float))) > 2.0 ** BRUTEFORCE_LIMIT:
        raise SolverError(f"brute force enumerates {np.prod(radix.astype(float)):.3g} subsets; it is limited to "
                          f"2^{BRUTEFORCE_LIMIT}")
    codes = np.arange(int(np.prod(radix)), dtype=np.int64)
    mult = np.concatenate([[1], np.cumprod(radix)])[:pool.size]
    member = (codes[:, None] // mult) % radix
    final = problem.agent + member @ inst.effects[pool]
    cost = member @ inst.expected_costs[pool]
    ok = np.all(final >= inst.thresholds, axis=1)
    if not ok.any():
        return infeasible()
    value = float(cost[ok].min())
    optimal = np.flatnonzero(ok & (cost <= value + TIE_TOLERANCE * max(1.0, value)))
    sets = sorted((int(member[m].sum()), tuple(int(i) for i in np.repeat(pool, member[m]))) for m in optimal)
    idle_zero = problem.available & ~problem.effective() & (inst.expected_costs == 0)
    actions = sets[0][1]
    unique = len(sets) == 1 and not idle_zero.any() if inst.binary else None
    return EngineSolution(actions, actions, inst.cost(actions), unique, True)


# ==================================================================================================== greedy
def greedy_completion(problem: SetCoverProblem, start: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """Chvátal's rule from the actions ``start``: repeatedly add the action of least cost per missing unit it
    provides, then delete redundant actions, most expensive first (reverse delete). None if no cover exists.
    (An action is added again only when it still provides a missing unit: integer instances.)"""
    inst = problem.instance
    chosen = [int(i) for i in start]
    state = inst.final_state(problem.agent, chosen)
    costs = inst.expected_costs
    while True:
        need = np.maximum(inst.thresholds - state, 0)
        if not need.any():
            break
        gain = np.minimum(inst.effects, need).sum(axis=1) * problem.available
        if not gain.any():
            return None
        ratio = np.where(gain > 0, costs / np.maximum(gain, 1), np.inf)
        best = int(np.argmin(ratio))
        chosen.append(best)
        state = state + inst.effects[best]
    for i in sorted(chosen, key=lambda i: (-costs[i], -i)):
        rest = list(chosen)
        rest.remove(i)
        if inst.is_valid(problem.agent, rest):
            chosen = rest
    return tuple(sorted(chosen))


def solve_greedy(problem: SetCoverProblem) -> EngineSolution:
    """The baseline (not in the paper): greedy + reverse delete; approximation ratio <= H(max |S_i ∩ M(x)|)."""
    actions = greedy_completion(problem)
    if actions is None:
        return infeasible()
    return EngineSolution(actions, actions, problem.instance.cost(actions), None, False)


ENGINES: dict[str, Callable[..., EngineSolution]] = {
    "bnb": solve_bnb, "dp": solve_dp, "milp": solve_milp, "storm": solve_storm, "bruteforce": solve_bruteforce,
    "greedy": solve_greedy}


def run_engine(problem: SetCoverProblem, method: str, solver: str = "auto",
               deadline: Deadline | None = None) -> EngineSolution:
    """Solve one agent with the engine ``method`` (the problem is negative; see :func:`solve.solve_setcover`); the
    engines of :data:`PROGRAMMES` solve their programmes with ``solver`` (``stormcf.solvers.SOLVERS``), branch and
    bound searches within ``deadline`` (default: unlimited)."""
    if method not in ENGINES:
        raise SolverError(f"unknown method '{method}': use one of {', '.join(METHODS)}")
    if problem.instance.ordered and method not in ORDERED:
        raise SolverError(f"{problem.instance.source}: actions with preconditions (requires) make the order matter; "
                          f"method '{method}' solves sets only: use {' or '.join(ORDERED)}")
    if method == "bnb":
        return solve_bnb(problem, deadline)
    return ENGINES[method](problem, solver) if method in PROGRAMMES else ENGINES[method](problem)

