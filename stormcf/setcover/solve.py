"""The entry points: :func:`solve_setcover` for one agent, :func:`solve_setcovers` for many agents of one instance
(a batch, certified with one Storm call per chunk of optima and one for all plans): an engine chosen by name, then
Storm's re-check.

1. the engine (``bnb``, the default, ``dp``, ``milp``, ``storm``, ``bruteforce``; ``greedy`` as the baseline) finds
   each agent's canonical set (``milp`` on the solver chosen by name, :data:`stormcf.solvers.SOLVERS`, which also
   solves the LP bound of a greedy answer);
2. Storm computes ``Rmin=? [F "goal"]`` on each agent's projected MDP (built from arrays, only the states its
   choices reach from the agent: the actions providing each state's pivot feature, dominated choices dropped; see
   :meth:`Transitions.explicit_model`): the optimum, compared with the engine's (a disagreement is refused). The
   projected MDPs of consecutive agents sit side by side in one model (:func:`~stormcf.model.disjoint_union`), a
   chunk of at most :data:`CERTIFICATE_CHOICES` choices per Storm call, so the certificate's memory is bounded by a
   chunk, not the batch; each agent's certificate names its own MDP and Storm's value at its state. When an
   agent's projected MDP is too large to build, its optimality rests on the engine's proof (branch and bound, DP,
   HiGHS, enumeration) and the notes say so;
3. Storm checks each plan on the DTMC it induces (``R{"cost"}=? [F "goal"]``, a chain of |I| + 1 states; the plans
   of a batch side by side, one Storm call): the cost shown is Storm's.

The learning pipeline's entry points: :func:`generate_data` (``setcover-data``), :func:`train_generator`
(``setcover-learn``) and :func:`evaluate_generator` (``setcover-evaluate``), each within a run whose progress
reporter names every long phase (labelling, augmentation, training epochs, guarantees).
"""
from __future__ import annotations

import itertools
import math
import time
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import OptionError, SolverError, StormcfError, VerificationFailure
from ..interrupt import Interrupted
from ..limits import require_memory
from ..model import ExplicitModel, RewardModel, disjoint_union
from ..run import Run
from ..verify import Check, check_model_states
from .data import LabelledAgents, frequency_filter, generate, generate_grouped, split
from .engines import DEFAULT_METHOD, RMIN, EngineSolution, agent_transitions, close, lp_bound, run_engine
from .generators import TrainingSettings, augment, evaluate, exact_match, train
from .pipeline import DataSetProblem, EvaluationProblem, TrainingProblem
from .problem import SetCoverProblem
from .result import DataSetResult, EvaluationResult, SetCoverResult, TrainingResult

#: the plan's cost on the DTMC it induces
PLAN_COST = 'R{"cost"}=? [F "goal"]'
#: the most choices (rows) of projected MDPs that one Storm call certifies: the certificate takes about 200 bytes
#: per choice from stormcf's arrays to Storm's model (n = 50, 200 agents in one call: 4.1 GB peak for 21.8M
#: choices), so a chunk stays near 0.4 GB whatever the batch's size, while Storm's cost per call stays small
#: against a chunk's work
CERTIFICATE_CHOICES = 2_000_000


def solve_setcover(problem: SetCoverProblem, method: str = DEFAULT_METHOD, verify: bool = True,
                   solver: str = "auto", *, run: Run | None = None, time_limit: float | None = None) -> SetCoverResult:
    """The optimal counterfactual explanation of one agent (or the greedy baseline's), checked by Storm within
    ``run`` (or a new one of ``time_limit`` seconds); ``solver`` solves the programmes (the ``milp`` engine, LP
    bounds)."""
    result, = solve_setcovers([problem], method, verify, solver, run=run, time_limit=time_limit)
    if isinstance(result, BaseException):
        raise result
    return result


def solve_setcovers(problems: Sequence[SetCoverProblem], method: str = DEFAULT_METHOD, verify: bool = True,
                    solver: str = "auto", *, run: Run | None = None, time_limit: float | None = None
                    ) -> list[SetCoverResult | StormcfError | VerificationFailure | Interrupted]:
    """The optimal counterfactual explanations of many agents (any instances), each checked by Storm as
    :func:`solve_setcover` checks one, with one Storm call for the optima of all of them and one for all plans
    (module docs). An agent the engine cannot solve, or whose answer Storm refutes, gets its error instead of a
    result; the others are not affected. Agents not reached within ``run`` (or ``time_limit`` seconds) get
    :class:`~stormcf.errors.TimeLimitReached` (or :class:`~stormcf.interrupt.Interrupted`); when it runs out during
    Storm's certificate, that error is raised."""
    deadline = Run.of(run, time_limit)
    outcomes: list = [None] * len(problems)
    solved = []
    with deadline.active():
        for k, problem in enumerate(problems):
            start = time.perf_counter()
            try:
                deadline.check(f"the {method} engine")
                solution = (EngineSolution((), (), 0.0, True, True) if problem.positive
                            else run_engine(problem, method, solver, deadline))
                deadline.check(f"the {method} engine")
            except (StormcfError, Interrupted) as err:
                outcomes[k] = err
                continue
            solved.append(_Agent(k, problem, solution, {"solve": time.perf_counter() - start}))
        if verify:
            _certify_optima(solved, method)
            _certify_plans([agent for agent in solved if agent.solution.feasible])
        for agent in solved:
            try:
                outcomes[agent.index] = agent.result(method, verify, solver)
            except (StormcfError, Interrupted) as err:      # the LP bound of a suboptimal answer
                outcomes[agent.index] = err
    return outcomes


class _Agent:
    """One agent of a batch on its way to a result: the engine's solution, then Storm's checks."""

    def __init__(self, index: int, problem: SetCoverProblem, solution: EngineSolution, timings: dict) -> None:
        self.index, self.problem, self.solution, self.timings = index, problem, solution, timings
        self.checks: list[Check] = []
        self.storm: dict[str, float] = {}            # "optimum" and "cost": Storm's values
        self.notes: list[str] = []
        self.mdp: ExplicitModel | None = None
        self.error: VerificationFailure | None = None

    def add_check(self, what: str, check: Check, seconds: float) -> None:
        self.timings["check"] = self.timings.get("check", 0.0) + seconds
        try:
            self.checks.append(check.confirm())
            self.storm[what] = check.value
        except VerificationFailure as err:
            self.error = self.error or err

    def result(self, method: str, verify: bool, solver: str) -> SetCoverResult | VerificationFailure:
        if self.error is not None:
            return self.error
        problem, solution = self.problem, self.solution
        optimum = self.storm.get("optimum", solution.value if solution.optimal else None)
        cost = self.storm.get("cost", solution.value if solution.feasible else math.inf)
        if not verify and not solution.optimal:
            self.notes.append("not checked by Storm (verify=False)")
        status = _status(problem, solution, cost, optimum)
        lower = lp_bound(problem, solver) if status == "suboptimal" and optimum is None else None
        if problem.instance.stochastic:
            self.notes.append("stochastic effects: the cost is the expected cost of repeating each action until it "
                              "succeeds")
        return SetCoverResult(problem, status, method, solution.actions, solution.plan, cost, optimum,
                              solution.unique if status != "suboptimal" else None, lower, self.checks, self.timings,
                              self.notes, self.mdp)


def _certify_optima(agents: list[_Agent], method: str) -> None:
    """Storm's ``Rmin`` on every agent's projected MDP at the agent's state, the MDPs of consecutive agents side by
    side in chunks of at most :data:`CERTIFICATE_CHOICES` choices (one agent at least), one Storm call per chunk;
    a chunk's union is built when it is full, so the certificate's memory is bounded by a chunk, not the batch."""
    chunk: list[tuple[_Agent, ExplicitModel]] = []
    choices = 0                                     # the chunk's
    for agent in agents:
        mdp = _projected_mdp(agent, method)
        if mdp is None:
            continue
        if chunk and choices + mdp.n_choices > CERTIFICATE_CHOICES:
            _check_optima(chunk)
            chunk, choices = [], 0
        chunk.append((agent, mdp))
        choices += mdp.n_choices
    if chunk:
        _check_optima(chunk)


def _projected_mdp(agent: _Agent, method: str) -> ExplicitModel | None:
    """The agent's projected MDP as Storm gets it (only the states its choices reach from the agent's), kept on the
    agent; None, with a note, when it is too large to build."""
    problem = agent.problem
    try:
        trans, s0 = agent_transitions(problem, reduced=True)
        agent.mdp = trans.explicit_model(s0, source=f"{problem.instance.source} (agent {problem.agent_text()})")
    except SolverError as err:
        agent.notes.append(f"optimality proven by the {method} engine, not re-checked by Storm: {err}"
                           if agent.solution.optimal else f"Storm's optimum not computed: {err}")
    return agent.mdp


def _check_optima(chunk: list[tuple[_Agent, ExplicitModel]]) -> None:
    """One Storm call for the optima of a chunk of agents, their projected MDPs side by side."""
    union, offsets = disjoint_union([mdp for _, mdp in chunk], "projected MDPs of the batch")
    start = time.perf_counter()
    checks = check_model_states(
        union, RMIN, (offsets + np.array([mdp.initial_state for _, mdp in chunk])).tolist(),
        [f"projected MDP ({mdp.n_states} states, {mdp.n_choices} choices)" for _, mdp in chunk],
        expected=[agent.solution.value if agent.solution.optimal else None for agent, _ in chunk])
    seconds = (time.perf_counter() - start) / len(chunk)
    for (agent, _), check in zip(chunk, checks):
        agent.add_check("optimum", check, seconds)


def _certify_plans(agents: list[_Agent]) -> None:
    """Storm's cost of every agent's plan on the DTMC it induces, the DTMCs of consecutive agents of one instance side
    by side (one Storm call; one per instance when the batch mixes them)."""
    for _, group in itertools.groupby(agents, key=lambda agent: id(agent.problem.instance)):
        same = list(group)
        chains, starts = plan_dtmcs([agent.problem for agent in same], [agent.solution.plan for agent in same])
        start = time.perf_counter()
        checks = check_model_states(chains, PLAN_COST, starts.tolist(),
                                    [f"DTMC of the plan ({len(agent.solution.plan) + 1} states)" for agent in same],
                                    expected=[agent.solution.value for agent in same])
        seconds = (time.perf_counter() - start) / len(same)
        for agent, check in zip(same, checks):
            agent.add_check("cost", check, seconds)


def _status(problem: SetCoverProblem, solution: EngineSolution, cost: float, optimum: float | None) -> str:
    if problem.positive:
        return "trivial"
    if not solution.feasible:
        return "infeasible"
    if solution.optimal or (optimum is not None and close(cost, optimum)):
        return "optimal"
    return "suboptimal"


def plan_dtmcs(problems: Sequence[SetCoverProblem], plans: Sequence[tuple[int, ...]]
               ) -> tuple[ExplicitModel, np.ndarray]:
    """The DTMCs the plans induce, side by side in one model, and each one's first state (agents of one instance).
    A plan's DTMC has the states x = s_0, s_1, ..., s_k along the plan (s_{r+1} = s_r + e_{i_r} with p_i, s_r with
    1 − p_i; s_k loops), the goal label where ``s >= t`` and reward c_i on each step; all chains are built at once."""
    inst = problems[0].instance
    lengths = np.array([len(plan) + 1 for plan in plans])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    n = int(lengths.sum())
    last = starts + lengths - 1
    step = np.ones(n, dtype=bool)
    step[last] = False                                   # the rows that take a plan's action
    actions = np.zeros(n, dtype=np.int64)                # 0: the last state's unlabelled self-loop
    actions[step] = np.concatenate([np.asarray(plan, dtype=np.int64) for plan in plans]) + 1
    effects = np.vstack([np.zeros((1, inst.n_features), dtype=np.int64), inst.effects])[actions]
    before = np.cumsum(effects, axis=0) - effects                 # the effects of the rows before, from row 0 on
    agents = np.array([problem.agent for problem in problems])
    states = np.repeat(agents - before[starts], lengths, axis=0) + before
    prob = np.concatenate([[1.0], np.ones(inst.n_actions) if inst.success is None else inst.success])[actions]
    rows = np.arange(n)
    succ = np.where(step, rows + 1, rows)
    fail = np.flatnonzero(prob < 1)
    P = sp.csr_matrix((np.concatenate([prob, 1 - prob[fail]]), (np.concatenate([rows, fail]),
                                                                  np.concatenate([succ, fail]))), shape=(n, n))
    reward = np.concatenate([[0.0], inst.costs])[actions]
    model = ExplicitModel(P, np.arange(n + 1), actions, ("",) + inst.action_names,
                          {"goal": np.asarray(inst.is_positive(states))}, {},
                          {"cost": RewardModel("cost", choice=reward)}, 0, model_type="dtmc",
                          source="DTMCs of the batch's plans")
    return model, starts


# ======================================================================================== the learning pipeline
#: the share of the time left that training may use, so that the held-out test and saving the best epoch fit in
#: the limit
TRAINING_SHARE = 0.95


def generate_data(problem: DataSetProblem, *, run: Run | None = None, time_limit: float | None = None
                  ) -> DataSetResult:
    """The data set of ``problem`` (:func:`~.data.generate`, :func:`~.data.generate_grouped`), labelled within
    ``run`` (or a new one of ``time_limit`` seconds; :class:`~stormcf.errors.TimeLimitReached` names the phase it
    ran out in)."""
    run = Run.of(run, time_limit)
    p = problem
    with run.active():
        if p.groups is not None:
            data = generate_grouped(p.groups, p.n, p.actions, p.p_f, p.draws, p.costs, p.thresholds, p.method,
                                    p.max_size, p.seed, p.solver, run=run)
        else:
            data = generate(p.n, p.actions, p.p_f, p.p_a, p.draws, p.costs, p.thresholds, p.method, p.max_size,
                            p.seed, p.solver, run=run)
    return DataSetResult(problem, data, dict(data.info["timings"]))


def train_generator(problem: TrainingProblem, *, run: Run | None = None, time_limit: float | None = None
                    ) -> TrainingResult:
    """Train the generator of ``problem`` within ``run`` (or a new one of ``time_limit`` seconds) and measure its
    exact match on the held-out agents: the frequency filter, the held-out split, the augmentation of the training
    split, then training with :data:`TRAINING_SHARE` of the time left. Training stopped by the time limit or the
    run's stop request keeps its best epoch (status ``interrupted`` for a stop); before its first epoch it raises
    :class:`~stormcf.errors.TimeLimitReached` (or :class:`~stormcf.interrupt.Interrupted`), as the augmentation
    does."""
    run = Run.of(run, time_limit)
    with run.active():
        return _train(problem, run)


def _train(problem: TrainingProblem, run: Run) -> TrainingResult:
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    data = frequency_filter(problem.data, problem.min_frequency) if problem.min_frequency else problem.data
    train_set, test_set = split(data, problem.test, problem.seed)
    if problem.augment:
        train_set = augment(train_set, problem.augment, seed=problem.seed, run=run)
    timings["data"] = time.perf_counter() - clock
    if problem.generator == "knn" and problem.k is not None and problem.k > len(train_set):
        raise OptionError(f"--k {problem.k}: only {len(train_set)} training agents to take neighbours from")
    if problem.training is not None:
        _require_network_memory(problem.training, train_set)
    clock = time.perf_counter()
    generator = train(problem.generator, train_set, problem.training, k=problem.k,
                      run=run.sub(fraction=TRAINING_SHARE))
    timings["training"] = time.perf_counter() - clock
    clock = time.perf_counter()
    with run.activity(f"the exact match on the {len(test_set):,} held-out agents"):
        held_out = exact_match(generator, test_set)
    timings["test"] = time.perf_counter() - clock
    generator.info.update(data=problem.source, min_frequency=problem.min_frequency, augment=problem.augment,
                          test_exact_match=held_out["exact_match"])
    return TrainingResult(problem, generator, test_set, held_out, run.limit, timings)


def _require_network_memory(settings: TrainingSettings, train_set: LabelledAgents) -> None:
    """Refuse a network that does not fit in memory: its weights, their gradients and Adam's two moments, the
    activations of a batch (float64 bounds) and the trained networks of an ensemble (float32)."""
    instance = train_set.instance
    layers = [instance.n_features, *settings.hidden, max(instance.n_actions, len(set(train_set.actions)))]
    weights = sum(a * b for a, b in zip(layers, layers[1:]))
    require_memory(8.0 * (4 * weights + settings.batch_size * sum(layers)) + 4.0 * weights * settings.ensemble,
                   f"a network of {weights:,} weights (--hidden)")


def evaluate_generator(problem: EvaluationProblem, *, run: Run | None = None, time_limit: float | None = None
                       ) -> EvaluationResult:
    """The metrics of the generator on the agents of ``problem`` (:func:`~.generators.evaluate`) within ``run`` (or a
    new one of ``time_limit`` seconds), which bounds the guarantees."""
    run = Run.of(run, time_limit)
    clock = time.perf_counter()
    with run.active():
        metrics = evaluate(problem.generator, problem.agents, problem.top_k, problem.certify, problem.solver,
                           run=run)
    return EvaluationResult(problem, metrics, {"evaluation": time.perf_counter() - clock})
