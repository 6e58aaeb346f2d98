"""Storm first: decide the easy instances without a solver and prune what the optimisation has to encode.

1. **trivial**: Storm checks the bound on the DTMC induced by σ; if it holds, σ itself is the answer (d = 0).
2. **the actionable MDP** M_C: every state keeps σ where the user has no control (its choices collapse into the
   single σ-mixture), and each controllable choice a becomes "σ on the uncontrollable choices, the controllable mass
   on a". Its strategies are exactly the actionable strategies (vertices of each state's polytope).
3. **infeasible** iff no actionable strategy meets the bound: Storm's optimal scheduler of Pmin(F target) on M_C,
   lifted to M and verified, fails the bound (then Pmin > γ).
4. **pruning** on M_C: prob1 states of Pmin (every strategy reaches the target surely) get p = 1, prob0 states of
   Pmax (no strategy reaches it) get p = 0; states unreachable from s0 before those are dropped; states without
   two controllable choices get no strategy variables.

``P>=γ [F φ]`` is turned into ``P<=1-γ [F Z]`` with Z = {Pmax(F φ) = 0} when that is sound: every actionable
strategy must reach φ or Z almost surely from s0 (Storm: prob1 of Pmin(F φ∪Z)). Then Pr(F φ) = 1 - Pr(F Z) for
every strategy and the Bellman system of Pr(F Z) has a unique fixed point. Otherwise end components could make
Bellman equalities admit spurious solutions, and the problem is rejected with a message saying so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from .. import storm
from ..deadline import Deadline
from ..errors import PropertyError
from ..modes import Maximize
from ..model import ExplicitModel
from ..reachability import prob01_states, state_graph
from ..strategy import Strategy
from ..verify import Check, check_strategy
from .problem import CounterfactualProblem

#: action name of the σ-mixture choice in the actionable MDP
SIGMA_ACTION = "σ"


@dataclass(frozen=True, eq=False)
class ActionableMDP:
    """M_C: the MDP whose memoryless deterministic strategies are the vertices of the actionable strategies.

    ``origin[row]`` is the choice of the original model a row puts the controllable mass on (``-1`` for the
    σ-mixture of a state the user cannot change); ``free`` marks the original choices the user controls in the
    ``changeable`` states (two or more controllable choices sharing positive σ-mass)."""

    model: ExplicitModel
    origin: np.ndarray
    free: np.ndarray
    changeable: np.ndarray

    def lift(self, rows: np.ndarray, sigma: Strategy) -> Strategy:
        """The strategy of the original model that plays the M_C choice ``rows[s]`` in every state."""
        m = sigma.model
        soc = m.state_of_choice
        mass = np.bincount(soc, weights=np.where(self.free, sigma.probabilities, 0.0), minlength=m.n_states)
        p = np.where(self.free, 0.0, sigma.probabilities)
        states = np.flatnonzero(self.changeable)
        np.add.at(p, self.origin[rows[states]], mass[states])
        return Strategy(m, p)


def actionable_mdp(problem: CounterfactualProblem) -> ActionableMDP:
    """Build M_C from arrays (vectorised; Storm gets it through the bridge when it is model-checked)."""
    m, sigma = problem.model, problem.strategy.probabilities
    soc = m.state_of_choice
    free = problem.free & problem.controllable_states_mask[soc]
    free_mass = np.bincount(soc, weights=np.where(free, sigma, 0.0), minlength=m.n_states)
    changeable = problem.controllable_states_mask & (free_mass > 0)
    free &= changeable[soc]
    P = m.transitions
    fixed_weights = np.where(free, 0.0, sigma)
    fixed_part = sp.csr_matrix((fixed_weights, (soc, np.arange(m.n_choices))), shape=(m.n_states, m.n_choices)) @ P
    free_rows = np.flatnonzero(free)
    rows_free = sp.diags(free_mass[soc[free_rows]]) @ P[free_rows] + fixed_part[soc[free_rows]]
    mixture_states = np.flatnonzero(~changeable)
    rows = sp.vstack([rows_free, fixed_part[mixture_states]]).tocsr()
    np.minimum(rows.data, 1.0, out=rows.data)       # a mixture's rounding (1 + 2e-16) is no probability above 1
    states = np.concatenate([soc[free_rows], mixture_states])
    order = np.argsort(states, kind="stable")
    origin = np.concatenate([free_rows, -np.ones(mixture_states.size, dtype=np.int64)])[order]
    names = tuple(m.action_names) + (SIGMA_ACTION,)
    actions = np.where(origin >= 0, m.choice_actions[np.maximum(origin, 0)], len(names) - 1)
    labels = {name: m.labels[name] for name in m.user_labels}     # no expression labels: Storm cannot quote them
    model = ExplicitModel(rows[order], np.concatenate([[0], np.cumsum(np.bincount(states, minlength=m.n_states))]),
                          actions, names, labels, m.valuations, {}, m.initial_state, "mdp",
                          source=f"{m.source} (actionable part)", naming=m.naming)
    return ActionableMDP(model, origin, free, changeable)


@dataclass(frozen=True, eq=False)
class Encoding:
    """What the optimisation encodes after pruning, as arrays over the *maybe* states (positions 0..k-1).

    Attributes:
        maybe: the original indices of the maybe states; ``index[s]`` is the position of state s (or -1).
        s0: position of the initial state.
        rows: the original choices of the maybe states, grouped by state; ``row_state`` their state positions.
        P: transition probabilities from ``rows`` into maybe states (len(rows) x k, CSR).
        b: probability of each row to enter the states with p = 1; ``leak``: to enter the states with p = 0.
        sigma: σ of each row; ``free``: whether the user controls the row (its state is changeable).
        changeable: per maybe state, whether it gets strategy variables.
        n_decision: |S| of d1 (the decision states of the whole model).
        low, high: Pmin and Pmax of the maybe states over the actionable strategies (Storm), widened by 1e-9:
            every strategy's reachability probabilities lie in between (valid bounds for the p_s variables).
    """

    maybe: np.ndarray
    index: np.ndarray
    s0: int
    rows: np.ndarray
    row_state: np.ndarray
    P: sp.csr_matrix
    b: np.ndarray
    leak: np.ndarray
    sigma: np.ndarray
    free: np.ndarray
    changeable: np.ndarray
    n_decision: int
    low: np.ndarray
    high: np.ndarray

    @property
    def n_maybe(self) -> int:
        return self.maybe.size

    @property
    def free_mass(self) -> np.ndarray:
        """Per maybe state, the σ-mass on its controllable rows."""
        return np.bincount(self.row_state, weights=np.where(self.free, self.sigma, 0.0), minlength=self.n_maybe)

    def row_groups(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(np.bincount(self.row_state, minlength=self.n_maybe))])


@dataclass(eq=False)
class Preanalysis:
    """Storm's verdicts and the pruned encoding (``status`` is ``"trivial"``, ``"infeasible"`` or ``None``)."""

    problem: CounterfactualProblem
    initial: Check
    actionable: ActionableMDP
    one: np.ndarray
    zero: np.ndarray
    gamma: float                       # the bound on Pr(F one) (<= form; 1-γ for P>=γ)
    pmin: float                        # least Pr(F one) of any actionable strategy (Storm)
    witness: Strategy | None           # Storm's Pmin scheduler, lifted and verified (None if Storm rejects it)
    witness_check: Check | None
    status: str | None
    encoding: Encoding | None = None
    complemented: bool = False

    @property
    def optimal_probability(self) -> float:
        """Pmin (or Pmax for P>=) of the original target over all actionable strategies."""
        return 1.0 - self.pmin if self.complemented else self.pmin


def preanalyse(problem: CounterfactualProblem, deadline: Deadline | None = None) -> Preanalysis:
    """Run the Storm pre-analysis of a problem (see the module docstring); raises
    :class:`~stormcf.errors.TimeLimitReached` when ``deadline`` passes between its Storm calls."""
    deadline = deadline or Deadline()
    initial = check_strategy(problem.strategy, problem.property)
    actionable = actionable_mdp(problem)
    mc = actionable.model
    target = problem.target
    deadline.check("the Storm pre-analysis")
    zero_t, _ = prob01_states(mc, target, "max")        # Pmax(F φ) = 0
    _, one_t = prob01_states(mc, target, "min")         # Pmin(F φ) = 1
    one_t |= target
    gamma = float(problem.bound)
    complemented = problem.optimization is Maximize
    if complemented:
        _check_complement_sound(problem, mc, target | zero_t)
        one, zero, gamma = zero_t, one_t, 1.0 - gamma
    else:
        one, zero = one_t, zero_t
    deadline.check("the Storm pre-analysis")
    values, rows = storm.reach_values(mc, one, "min", scheduler=True)
    pmin = float(values[mc.initial_state])
    witness = actionable.lift(rows, problem.strategy)
    expected = 1.0 - pmin if complemented else pmin           # Storm's Pmin, again on the DTMC of its scheduler
    check = check_strategy(witness, problem.property, expected=expected, tolerance=1e-6 * expected + 1e-10)
    pre = Preanalysis(problem, initial, actionable, one, zero, gamma, pmin, witness if check.holds else None, check,
                      None, complemented=complemented)
    if initial.holds:
        pre.status = "trivial"
    elif not check.holds and pmin > gamma:
        pre.status = "infeasible"
    else:
        deadline.check("the Storm pre-analysis")
        high, _ = storm.reach_values(mc, one, "max")
        pre.encoding = encode(problem, actionable, one, zero, values, high)
    return pre


def _check_complement_sound(problem: CounterfactualProblem, mc: ExplicitModel, absorbing: np.ndarray) -> None:
    _, surely = prob01_states(mc, absorbing, "min")
    if not surely[mc.initial_state]:
        raise PropertyError(
            f"{problem.property.text}: a lower bound on reaching the target is only sound here when every strategy "
            f"almost surely reaches the target or a state that cannot reach it (end components would make the "
            f"Bellman equations admit spurious solutions), and some strategy of this model can loop forever; "
            f"state the bad outcome with an upper bound instead, e.g. P<=γ [F \"bad\"]")


def encode(problem: CounterfactualProblem, actionable: ActionableMDP, one: np.ndarray, zero: np.ndarray,
           low: np.ndarray, high: np.ndarray) -> Encoding:
    """Prune (prob0/prob1, reachability, controllability) and slice the arrays the solvers work on."""
    m = problem.model
    stop = one | zero
    graph = sp.diags((~stop).astype(float)) @ state_graph(actionable.model)
    order = breadth_first_order(graph.tocsr(), m.initial_state, directed=True, return_predecessors=False)
    reach = np.zeros(m.n_states, dtype=bool)
    reach[order] = True
    maybe = np.flatnonzero(reach & ~stop)
    index = -np.ones(m.n_states, dtype=np.int64)
    index[maybe] = np.arange(maybe.size)
    rows = np.flatnonzero(index[m.state_of_choice] >= 0)
    sub = m.transitions[rows]
    P = sub[:, maybe].tocsr()
    b = np.asarray(sub[:, np.flatnonzero(one)].sum(axis=1)).ravel()
    leak = np.asarray(sub[:, np.flatnonzero(zero)].sum(axis=1)).ravel()
    return Encoding(maybe=maybe, index=index, s0=int(index[m.initial_state]), rows=rows,
                    row_state=index[m.state_of_choice[rows]], P=P, b=b, leak=leak,
                    sigma=problem.strategy.probabilities[rows], free=actionable.free[rows],
                    changeable=actionable.changeable[maybe], n_decision=int(m.decision_states.sum()),
                    low=np.clip(low[maybe] - 1e-9, 0.0, 1.0), high=np.clip(high[maybe] + 1e-9, 0.0, 1.0))
