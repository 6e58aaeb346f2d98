"""Storm first: decide the easy instances without a solver and prune what the optimisation has to encode.

1. **trivial**: Storm checks every bound on the DTMC induced by σ; if all hold, σ itself is the answer (d = 0).
2. **the actionable MDP** M_C: every state keeps σ where the user has no control (its choices collapse into the
   single σ-mixture), and each controllable choice a becomes "σ on the uncontrollable choices, the controllable mass
   on a". Its strategies are exactly the actionable strategies (vertices of each state's polytope).
3. **infeasible** iff no actionable strategy meets some bound on its own: Storm's optimal scheduler of that bound
   (Pmin, Pmax, Rmin, Rmax on M_C), lifted to M and verified, fails the bound (and Storm's optimum does not meet it).
4. **pruning**, per bound, on M_C (:class:`Encoding`): states whose value every strategy shares are constants, states
   unreachable from s0 before them are dropped, states without two controllable choices get no strategy variables.

Storm's values are decided against the bounds three-valued (:mod:`stormcf.verify`): a floating-point value within its
precision of a bound is undecided, and re-checked exactly on small models. An undecided optimum is decided by the
exact optimum (:mod:`~stormcf.counterfactual.optimum`): on M_C built over rationals, with Storm's exact optimal
scheduler as the witness (small models); what stays undecided is not called infeasible.

Every bound becomes the same shape for the algorithms: values v over the *maybe* states, v_s = Σ_r π(r)·Q_r with
Q_r = Σ_s' P(r, s')·v_s' + b_r, and the requirement v_s0 <= γ (the value is minimised). How each bound gets there:

- ``P<=γ [ψ U φ]`` (``F φ`` is ``true U φ``): states of ¬ψ∧¬φ are absorbing failures; v = 0 where Pmax = 0, v = 1
  where Pmin = 1; b_r is the probability of row r to enter the latter. v is the *least* fixed point, so Bellman
  inequalities v >= ... certify (seed 000's soundness remark), on any model.
- ``P>=γ [ψ U φ]`` is ``P<=1−γ [F Z]`` with Z = {Pmax(ψ U φ) = 0} when that is sound: every actionable strategy
  reaches φ or Z almost surely from s0 (Storm: prob1 of Pmin(F φ∪Z)); then Pr(ψ U φ) = 1 − Pr(F Z) for every
  strategy and the Bellman system has a unique fixed point. φ is absorbing there (a target may be left again:
  reaching Z after φ does not count). Otherwise end components would let Bellman equations
  admit spurious solutions, and the bound is refused with a message saying so.
- ``R{"r"}<=c [F φ]``: Storm's value is infinite from states that reach φ with probability < 1. States where every
  strategy does (Pmax(F φ) < 1) are infinite: a row that enters them with positive probability is *forbidden* (it
  must get probability 0), and if s0 is one of them the bound is infeasible (Rmin = ∞). b_r is what one step of r
  earns. A strategy that loops forever among the maybe states collects infinite reward there, *unless* the loop
  earns nothing: such zero-reward end components would make finite Bellman inequalities admit strategies that never
  reach φ, so they are refused (the message names a state of one). Without them every finite solution of the
  inequalities reaches φ almost surely and bounds the expected reward from above.
- ``R{"r"}>=c [F φ]``: a strategy that never reaches φ has infinite expected reward (Storm) and would meet every
  lower bound, so the bound is accepted only when every actionable strategy reaches φ almost surely from s0 (Storm:
  prob1 of Pmin(F φ)); then values are finite, the fixed point unique, and the bound is v' = −v <= −c with b_r the
  negated step reward.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from .. import storm
from ..deadline import Deadline
from ..errors import PropertyError
from ..model import ExplicitModel, RewardModel
from ..properties import relative_error
from ..reachability import prob01_states
from ..run import Run
from ..strategy import Strategy
from ..verify import Check, check_strategy, format_exact
from .bounds import PROBABILITY, REWARD, Bound
from .optimum import settle_optimum
from .problem import CounterfactualProblem

#: action name of the σ-mixture choice in the actionable MDP
SIGMA_ACTION = "σ"
#: label and reward model of a bound's target and rewards in the bridge's variants of M_C
TARGET_LABEL, REWARD_NAME = "cf_target", "cf_reward"
#: how an encoding's value relates to the bound's own value
DIRECT, COMPLEMENT, NEGATE = "direct", "complement", "negate"


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
    sigma: np.ndarray

    def lift(self, rows: np.ndarray, sigma: Strategy) -> Strategy:
        """The strategy of the original model that plays the M_C choice ``rows[s]`` in every state."""
        m = sigma.model
        mass = self.free_mass(m)
        p = np.where(self.free, 0.0, sigma.probabilities)
        states = np.flatnonzero(self.changeable)
        np.add.at(p, self.origin[rows[states]], mass[states])
        return Strategy(m, p)

    def free_mass(self, m: ExplicitModel) -> np.ndarray:
        return np.bincount(m.state_of_choice, weights=np.where(self.free, self.sigma, 0.0), minlength=m.n_states)

    def mix(self, m: ExplicitModel, per_choice: np.ndarray) -> np.ndarray:
        """A quantity of the original choices (a reward) for every M_C row: σ's mixture over the uncontrollable
        choices plus the controllable mass times the row's own."""
        soc = m.state_of_choice
        fixed = np.bincount(soc, weights=np.where(self.free, 0.0, self.sigma) * per_choice, minlength=m.n_states)
        mass = self.free_mass(m)
        mc = self.model
        own = np.where(self.origin >= 0, mass[mc.state_of_choice] * per_choice[np.maximum(self.origin, 0)], 0.0)
        return fixed[mc.state_of_choice] + own

    def variant(self, target: np.ndarray, absorbing: np.ndarray | None = None,
                rewards: np.ndarray | None = None) -> ExplicitModel:
        """M_C with the label :data:`TARGET_LABEL` on ``target``, every row of the ``absorbing`` states a self-loop
        (same row numbers, so schedulers lift as they are), and the reward model :data:`REWARD_NAME` (per row)."""
        mc = self.model
        P = mc.transitions
        if absorbing is not None and absorbing.any():
            rows = absorbing[mc.state_of_choice]
            loops = sp.csr_matrix((np.ones(int(rows.sum())), (np.flatnonzero(rows), mc.state_of_choice[rows])),
                                  shape=P.shape)
            P = (sp.diags((~rows).astype(float)) @ P + loops).tocsr()
        reward_models = {} if rewards is None else {REWARD_NAME: RewardModel(REWARD_NAME, choice=rewards)}
        return ExplicitModel(P, mc.row_groups, mc.choice_actions, mc.action_names, {TARGET_LABEL: target},
                             mc.valuations, reward_models, mc.initial_state, "mdp", source=mc.source, naming=mc.naming)


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
    return ActionableMDP(model, origin, free, changeable, np.array(sigma))


@dataclass(frozen=True, eq=False)
class Encoding:
    """One bound after pruning, as arrays over its *maybe* states (positions 0..k-1), in the form "v_s0 <= γ".

    Attributes:
        kind: :data:`~stormcf.counterfactual.bounds.PROBABILITY` or :data:`~stormcf.counterfactual.bounds.REWARD`.
        maybe: the original indices of the maybe states; ``index[s]`` is the position of state s (or -1).
        s0: position of the initial state.
        rows: the original choices of the maybe states, grouped by state; ``row_state`` their state positions.
        P: transition probabilities from ``rows`` into maybe states (len(rows) x k, CSR).
        b: the constant part of Q_r: the probability of row r to enter the states with v = 1 (probabilities), or
            what one step of r earns (rewards; negated for lower bounds).
        leak: probabilities: the probability of r to enter the states with v = 0.
        exit: the probability of r to leave the maybe states into states of known, finite value.
        forbidden: rows that enter states of infinite value (upper reward bounds): they must get probability 0.
        sigma: σ of each row; ``free``: whether the user controls the row (its state is changeable).
        changeable: per maybe state, whether it gets strategy variables.
        n_decision: |S| of d1 (the decision states of the whole model).
        low, high: the least and largest value of the maybe states over the actionable strategies (Storm), widened
            by 1e-9 relative: every strategy's values lie in between (valid bounds for the value variables); ``high``
            is infinite where some strategy never reaches the target of an upper reward bound.
    """

    kind: str
    maybe: np.ndarray
    index: np.ndarray
    s0: int
    rows: np.ndarray
    row_state: np.ndarray
    P: sp.csr_matrix
    b: np.ndarray
    leak: np.ndarray
    exit: np.ndarray
    forbidden: np.ndarray
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

    @property
    def is_reward(self) -> bool:
        return self.kind == REWARD


@dataclass(eq=False)
class BoundAnalysis:
    """Storm's verdicts on one bound and its encoding.

    ``initial``: Storm's check of the bound on σ; ``optimum``: the best value of the bound over all actionable
    strategies (Storm's Pmin, Pmax, Rmin or Rmax on M_C); ``witness``: Storm's optimal scheduler, lifted and
    verified (None if Storm rejects it); ``gamma``: the bound on the encoding's value; ``transform``: how the
    encoding's value relates to the bound's (:data:`DIRECT`, :data:`COMPLEMENT`: 1 − v, :data:`NEGATE`: −v);
    ``exact_optimum``: the optimum in exact arithmetic, when the floating-point one could not decide the bound
    (:mod:`~stormcf.counterfactual.optimum`; ``optimum`` is then its float)."""

    bound: Bound
    initial: Check
    optimum: float
    witness: Strategy | None
    witness_check: Check | None
    gamma: float
    transform: str = DIRECT
    encoding: Encoding | None = None
    sets: "_Sets | None" = field(default=None, repr=False)
    exact_optimum: Fraction | float | None = None

    def value_of(self, v: float) -> float:
        """The bound's own value for the encoding's value ``v``."""
        return {DIRECT: v, COMPLEMENT: 1.0 - v, NEGATE: -v}[self.transform]

    def met_alone(self) -> bool | None:
        """Whether some actionable strategy meets this bound on its own: True when Storm's scheduler does, else
        whether Storm's optimum does (the exact one when there is one; the sound floating-point one, ± its
        precision, else), None when the floating-point optimum is within its precision of the bound."""
        if self.witness_check is not None and self.witness_check.holds:
            return True
        if self.exact_optimum is not None:
            return self.bound.property.decide(self.exact_optimum)
        raw = {DIRECT: self.optimum, COMPLEMENT: 1.0 - self.optimum, NEGATE: -self.optimum}[self.transform]
        return self.bound.property.decide(self.optimum, relative_error(raw, storm.PRECISION))

    def optimum_text(self) -> str:
        word = {PROBABILITY: "P", REWARD: "R"}[self.bound.kind] + self.bound.optimization.value
        if isinstance(self.exact_optimum, Fraction):
            return f"{word} = {format_exact(self.exact_optimum)} (exact)"
        return f"{word} = {self.optimum:.6g}"


@dataclass(eq=False)
class Preanalysis:
    """Storm's verdicts and the pruned encodings (``status`` is ``"trivial"``, ``"infeasible"`` or ``None``;
    ``reason`` says why when it is set)."""

    problem: CounterfactualProblem
    actionable: ActionableMDP
    bounds: list[BoundAnalysis]
    status: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def initial_checks(self) -> list[Check]:
        return [a.initial for a in self.bounds]

    # ------------------------------------------------------------------------------- the first (or only) bound
    @property
    def initial(self) -> Check:
        return self.bounds[0].initial

    @property
    def encoding(self) -> Encoding | None:
        return self.bounds[0].encoding

    @property
    def gamma(self) -> float:
        return self.bounds[0].gamma

    @property
    def optimal_probability(self) -> float:
        """Storm's optimum of the first bound over all actionable strategies (Pmin for ``P<=``, Pmax for ``P>=``,
        Rmin/Rmax for rewards)."""
        return self.bounds[0].optimum


def preanalyse(problem: CounterfactualProblem, run: Run | None = None) -> Preanalysis:
    """Run the Storm pre-analysis of a problem (see the module docstring) within ``run`` (default: a new unlimited
    one); raises :class:`~stormcf.errors.TimeLimitReached` when it runs out between its Storm calls."""
    run = run or Run()
    actionable = actionable_mdp(problem)
    analyses = []
    for bound in problem.bounds:
        run.check("the Storm pre-analysis")
        analyses.append(analyse_bound(problem, actionable, bound, run))
    pre = Preanalysis(problem, actionable, analyses)
    if all(a.initial.holds for a in analyses):
        pre.status, pre.reason = "trivial", "σ already meets " + ("every bound" if len(analyses) > 1 else "the bound")
        return pre
    for a in analyses:
        why = settle_optimum(problem, actionable, a, run) if a.met_alone() is None else ""
        met = a.met_alone()
        if met is False:
            pre.status = "infeasible"
            exactly = ", in exact arithmetic," if a.exact_optimum is not None else ""
            pre.reason = (f"{a.optimum_text()} over all actionable strategies (Storm{exactly} on the MDP with the "
                          f"uncontrollable states fixed to σ) does not meet {a.bound.text}")
            return pre
        if met is None:
            pre.notes.append(f"Storm's optimum {a.optimum_text()} lies within its precision of {a.bound.text} and "
                             f"exact arithmetic could not decide whether it meets it ({why}): infeasibility is not "
                             f"claimed")
    if len(analyses) > 1:
        run.check("the Storm pre-analysis")
        pre.reason = joint_infeasibility(problem, actionable, analyses, pre.notes)
        if pre.reason:
            pre.status = "infeasible"
            return pre
    run.check("the Storm pre-analysis")
    for a in analyses:
        if a.encoding is None:
            a.encoding = encode_bound(problem, actionable, a)
    return pre


#: absolute precision of Storm's multi-objective answer, and the margin it must miss a bound by to prove it infeasible
JOINT_PRECISION = 1e-6


def joint_infeasibility(problem: CounterfactualProblem, actionable: ActionableMDP, analyses: list[BoundAnalysis],
                        notes: list[str]) -> str:
    """Why no strategy meets every bound at once, by Storm's multi-objective query on M_C (the best value of the
    first bound among all strategies, also randomised ones with memory, that meet the others), or "" when Storm
    finds one (the memoryless question is then the MIQCQP's)."""
    from ..storm import check_multiobjective

    labels, rewards, parts = {}, {}, []
    for j, a in enumerate(analyses):
        b = a.bound
        labels[f"cf_t{j}"] = b.target
        path = f'F "cf_t{j}"'
        if b.is_until:
            labels[f"cf_c{j}"] = b.constraint
            path = f'"cf_c{j}" U "cf_t{j}"'
        op = "P"
        if b.kind == REWARD:
            assert b.rewards is not None        # a reward bound has its step rewards
            rewards[f"cf_r{j}"] = RewardModel(f"cf_r{j}", choice=actionable.mix(problem.model, b.rewards))
            op = f'R{{"cf_r{j}"}}'
        limit = f"{b.optimization.value}=?" if j == 0 else \
            f"{b.comparison}{b.threshold.numerator}/{b.threshold.denominator}"
        parts.append(f"{op}{limit} [{path}]")
    mc = actionable.model
    joint = ExplicitModel(mc.transitions, mc.row_groups, mc.choice_actions, mc.action_names, labels, mc.valuations,
                          rewards, mc.initial_state, "mdp", source=mc.source, naming=mc.naming)
    query = f"multi({', '.join(parts)})"
    try:
        best = check_multiobjective(joint, query, precision=JOINT_PRECISION).value
    except PropertyError as err:
        notes.append(f"Storm's multi-objective query could not decide whether the bounds can hold together: {err}")
        return ""
    first = analyses[0].bound
    others = " and ".join(a.bound.text for a in analyses[1:])
    where = "Storm's multi-objective query on the MDP with the uncontrollable states fixed to σ"
    if best is None:                    # Storm: no strategy meets the others with a finite value of the first
        finite = f" with a finite {first.quantity()}" if first.kind == REWARD else ""
        return (f"no strategy (also randomised ones with memory) meets {others}{finite} ({where}), so none meets "
                f"{first.text} as well")
    margin = 10 * JOINT_PRECISION * max(1.0, abs(first.value))
    if first.property.satisfied_by(best - margin if first.optimization.value == "min" else best + margin):
        return ""
    extreme = "least" if first.optimization.value == "min" else "largest"
    return (f"the {extreme} {first.quantity()} among all strategies that meet {others} (also randomised ones with "
            f"memory) is {best:.6g} ({where}, absolute precision {JOINT_PRECISION:g}), which does not meet "
            f"{first.text}")


# ================================================================================================ one bound
@dataclass(eq=False)
class _Sets:
    """What Storm decided about one bound on M_C: the stop sets and values of the encoding."""

    one: np.ndarray                   # probabilities: v = 1 (or the target of the complement)
    zero: np.ndarray                  # v = 0 (probabilities) / the target (rewards)
    infinite: np.ndarray              # rewards: v = ∞
    low: np.ndarray | None            # the least values on M_C (set by analyse_bound)
    high: np.ndarray | None
    b: np.ndarray | None              # rewards: per original choice, the constant part of Q
    model: ExplicitModel              # the M_C variant Storm checked
    gamma: float
    transform: str


def analyse_bound(problem: CounterfactualProblem, actionable: ActionableMDP, bound: Bound,
                  deadline: Deadline) -> BoundAnalysis:
    """Storm's checks of σ and of the optimal scheduler for ``bound``, and the sets its encoding needs."""
    initial = check_strategy(problem.strategy, bound.property)
    sets = _probability_sets(problem, actionable, bound) if bound.kind == PROBABILITY else \
        _reward_sets(problem, actionable, bound)
    deadline.check("the Storm pre-analysis")
    mc = sets.model
    s0 = mc.initial_state
    direction = "min"
    if bound.kind == PROBABILITY:
        values, rows = storm.reach_values(mc, sets.one, "min", scheduler=True)
        sets.low = values
    else:
        direction = "min" if sets.transform == DIRECT else "max"
        choices = storm.optimal_choices(mc, storm.parse_property(mc, _reward_query(direction)))
        values, rows = choices.values, choices.rows
        sets.low = values if direction == "min" else -values
    optimum = {DIRECT: values[s0], COMPLEMENT: 1.0 - values[s0], NEGATE: values[s0]}[sets.transform]
    analysis = BoundAnalysis(bound, initial, float(optimum), None, None, sets.gamma, sets.transform)
    if np.isfinite(optimum):
        witness = actionable.lift(rows, problem.strategy)
        check = check_strategy(witness, bound.property, expected=float(optimum),
                               tolerance=1e-6 * abs(float(optimum)) + 1e-10)
        analysis.witness, analysis.witness_check = (witness if check.holds else None), check
    analysis.sets = sets                                          # kept for the encoding
    return analysis


def _reward_query(direction: str) -> str:
    return f'R{{"{REWARD_NAME}"}}{direction}=? [F "{TARGET_LABEL}"]'


def _probability_sets(problem: CounterfactualProblem, actionable: ActionableMDP, bound: Bound) -> _Sets:
    failed = ~bound.constraint & ~bound.target                  # ¬ψ ∧ ¬φ: the until is lost there
    # the path formula is decided in φ and in ¬ψ ∧ ¬φ: both absorbing, so that reaching Z (complement) after φ does
    # not count, and Storm's values and schedulers are those of ψ U φ
    mc = actionable.variant(bound.target, failed | bound.target)
    zero_t, _ = prob01_states(mc, bound.target, "max")          # Pmax(ψ U φ) = 0
    _, one_t = prob01_states(mc, bound.target, "min")           # Pmin(ψ U φ) = 1
    one_t |= bound.target
    zero_t |= failed
    if bound.optimization.value == "min":
        return _Sets(one_t, zero_t, np.zeros_like(one_t), None, None, None, mc, bound.value, DIRECT)
    _, surely = prob01_states(mc, bound.target | zero_t, "min")
    if not surely[mc.initial_state]:
        raise PropertyError(
            f"{bound.text}: a lower bound on reaching the target is only sound here when every strategy almost "
            f"surely reaches the target or a state that cannot reach it (end components would make the Bellman "
            f"equations admit spurious solutions), and some strategy of this model can loop forever; state the bad "
            f"outcome with an upper bound instead, e.g. P<=γ [F \"bad\"]")
    return _Sets(zero_t, one_t, np.zeros_like(one_t), None, None, None, mc, 1.0 - bound.value, COMPLEMENT)


def _reward_sets(problem: CounterfactualProblem, actionable: ActionableMDP, bound: Bound) -> _Sets:
    m = problem.model
    assert bound.rewards is not None            # a reward bound has its step rewards
    mc = actionable.variant(bound.target, rewards=actionable.mix(m, bound.rewards))
    _, sure_max = prob01_states(mc, bound.target, "max")       # some strategy reaches φ almost surely
    infinite = ~(sure_max | bound.target)
    if bound.optimization.value == "min":
        return _Sets(np.zeros_like(infinite), bound.target, infinite, None, None, bound.rewards, mc, bound.value,
                     DIRECT)
    _, sure_min = prob01_states(mc, bound.target, "min")
    if not (sure_min | bound.target)[mc.initial_state]:
        raise PropertyError(
            f"{bound.text}: some actionable strategy reaches {bound.path_text()} with probability < 1 from the "
            f"initial state; Storm counts its expected reward as infinite, which meets every lower bound, so the "
            f"closest such strategy would be one that never ends. stormcf accepts lower reward bounds only when every "
            f"strategy reaches the target almost surely; bound the reward from above, or the probability of not "
            f"reaching the target, instead")
    return _Sets(np.zeros_like(infinite), bound.target, np.zeros_like(infinite), None, None, -bound.rewards, mc,
                 -bound.value, NEGATE)


def encode_bound(problem: CounterfactualProblem, actionable: ActionableMDP, analysis: BoundAnalysis) -> Encoding:
    """Prune (constant values, reachability, controllability) and slice the arrays the solvers work on."""
    sets = analysis.sets
    assert sets is not None and sets.low is not None       # analyse_bound made them
    bound = analysis.bound
    m = problem.model
    mc = sets.model
    stop = sets.one | sets.zero | sets.infinite
    if bound.kind == PROBABILITY:
        high, _ = storm.reach_values(mc, sets.one, "max")
        low = sets.low
    else:
        other = "max" if sets.transform == DIRECT else "min"
        far = storm.check(mc, storm.parse_property(mc, _reward_query(other))).values
        assert far is not None                  # a quantitative query has a value in every state
        low, high = (sets.low, far) if sets.transform == DIRECT else (sets.low, -far)
    allowed_mc = ~(mc.transitions @ sets.infinite.astype(float) > 0)    # M_C rows that never enter ∞ states
    graph = sp.diags((~stop).astype(float)) @ _graph(mc, allowed_mc)
    order = breadth_first_order(graph.tocsr(), m.initial_state, directed=True, return_predecessors=False)
    reach = np.zeros(m.n_states, dtype=bool)
    reach[order] = True
    maybe = np.flatnonzero(reach & ~stop)
    index = -np.ones(m.n_states, dtype=np.int64)
    index[maybe] = np.arange(maybe.size)
    rows = np.flatnonzero(index[m.state_of_choice] >= 0)
    sub = m.transitions[rows]
    mass = lambda mask: np.asarray(sub[:, np.flatnonzero(mask)].sum(axis=1)).ravel()  # noqa: E731
    if bound.kind == PROBABILITY:
        b, leak = mass(sets.one), mass(sets.zero)
        exit_ = b + leak
    else:
        assert sets.b is not None               # a reward bound's
        b, leak, exit_ = sets.b[rows], np.zeros(rows.size), mass(sets.zero)
    forbidden = mass(sets.infinite) > 0
    free = actionable.free[rows]
    width = lambda v: 1e-9 * np.maximum(1.0, np.abs(np.where(np.isfinite(v), v, 0.0)))  # noqa: E731
    low, high = low[maybe], high[maybe]
    low = low - width(low)
    high = high + width(high)
    if bound.kind == PROBABILITY:
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    enc = Encoding(kind=bound.kind, maybe=maybe, index=index, s0=int(index[m.initial_state]), rows=rows,
                   row_state=index[m.state_of_choice[rows]], P=sub[:, maybe].tocsr(), b=b, leak=leak, exit=exit_,
                   forbidden=forbidden, sigma=problem.strategy.probabilities[rows], free=free,
                   changeable=actionable.changeable[maybe], n_decision=int(m.decision_states.sum()),
                   low=low, high=high)
    if bound.kind == REWARD and sets.transform == DIRECT:
        _refuse_zero_reward_loops(bound, enc, m)
    return enc


def _graph(mc: ExplicitModel, rows: np.ndarray) -> sp.csr_matrix:
    """The state graph of M_C through the rows ``rows`` only."""
    P = mc.transitions
    pick = sp.csr_matrix((rows.astype(float), (mc.state_of_choice, np.arange(mc.n_choices))),
                         shape=(mc.n_states, mc.n_choices))
    support = sp.csr_matrix((np.ones(P.nnz), P.indices, P.indptr), shape=P.shape)
    graph = (pick @ support).tocsr()
    graph.eliminate_zeros()
    graph.data[:] = 1.0
    return graph


def end_component_states(P: sp.csr_matrix, row_state: np.ndarray, rows: np.ndarray, states: np.ndarray) -> np.ndarray:
    """The states (mask over ``states``' positions) of the maximal end components formed by the rows ``rows`` (mask)
    among ``states`` (mask): iteratively drop rows that leave the set or their strongly connected component and
    states without rows (C loops through scipy's strongly connected components). ``rows`` must not hold rows with
    mass outside ``P``'s columns (an :class:`Encoding`'s rows with an ``exit``): they leave every such set."""
    k = states.size
    inside, keep = states.copy(), rows & states[row_state]
    entry_row = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    source = row_state[entry_row]
    while True:
        keep &= ~(P @ (~inside).astype(float) > 0) & inside[row_state]
        inside &= np.bincount(row_state[keep], minlength=k) > 0
        used = keep[entry_row]
        graph = sp.csr_matrix((np.ones(int(used.sum())), (source[used], P.indices[used])), shape=(k, k))
        _, scc = connected_components(graph, directed=True, connection="strong")
        leaves = np.zeros(P.shape[0], dtype=bool)
        np.logical_or.at(leaves, entry_row, scc[P.indices] != scc[source])
        new_keep = keep & ~leaves
        new_inside = inside & (np.bincount(row_state[new_keep], minlength=k) > 0)
        if np.array_equal(new_keep, keep) and np.array_equal(new_inside, inside):
            return inside
        keep, inside = new_keep, new_inside


def _refuse_zero_reward_loops(bound: Bound, enc: Encoding, m: ExplicitModel) -> None:
    """An upper reward bound cannot tell a strategy that loops forever earning nothing (infinite for Storm) from one
    that ends: refuse models with such loops among the maybe states."""
    zero_rows = (enc.b == 0) & ~enc.forbidden & (enc.exit == 0)     # earns nothing and stays among the maybe states
    looping = end_component_states(enc.P, enc.row_state, zero_rows, np.ones(enc.n_maybe, dtype=bool))
    if looping.any():
        s = int(enc.maybe[np.flatnonzero(looping)[0]])
        raise PropertyError(
            f"{bound.text}: in state {m.state_name(s)} a strategy can loop forever without reaching the target and "
            f"without earning \"{bound.reward_model}\" reward; Storm counts such a strategy's expected reward as "
            f"infinite, which Bellman inequalities cannot tell from a finite one. Give those steps a positive reward "
            f"(e.g. a step count), or bound the probability of not reaching the target instead")


@dataclass(frozen=True, eq=False)
class Region:
    """The strategy variables all bounds share: the controllable rows of the states that are changeable and maybe
    states of some bound, grouped by state (positions 0..k-1 of ``states``). It offers the attributes of an
    :class:`Encoding` that distances and policies need (``row_state``, ``sigma``, ``free``, ``free_mass``,
    ``n_maybe``), so that the same kernels measure changes over it."""

    states: np.ndarray
    rows: np.ndarray
    row_state: np.ndarray
    sigma: np.ndarray
    forbidden: np.ndarray
    n_decision: int

    @property
    def n_maybe(self) -> int:
        return self.states.size

    @property
    def free(self) -> np.ndarray:
        return np.ones(self.rows.size, dtype=bool)

    @property
    def changeable(self) -> np.ndarray:
        return np.ones(self.states.size, dtype=bool)

    @property
    def free_mass(self) -> np.ndarray:
        return np.bincount(self.row_state, weights=self.sigma, minlength=self.n_maybe)

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The position of each original choice of ``rows`` among the region's rows (-1 if not there)."""
        at = np.searchsorted(self.rows, rows)
        at = np.minimum(at, max(self.rows.size - 1, 0))
        return np.where((self.rows.size > 0) & (self.rows[at] == rows), at, -1)


def region_of(problem: CounterfactualProblem, encodings: list[Encoding]) -> Region:
    """The :class:`Region` of the encodings of one problem."""
    m = problem.model
    rows = np.unique(np.concatenate([e.rows[e.free] for e in encodings]))
    forbidden = np.zeros(m.n_choices, dtype=bool)
    for e in encodings:
        forbidden[e.rows[e.forbidden]] = True
    states, row_state = np.unique(m.state_of_choice[rows], return_inverse=True)
    return Region(states, rows, row_state, problem.strategy.probabilities[rows], forbidden[rows],
                  int(m.decision_states.sum()))
