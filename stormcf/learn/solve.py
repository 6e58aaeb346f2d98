"""``learn_mdp(problem) -> LearnResult``: the pipeline of ``stormcf learn``.

log → traces → IOAlergia (stormcf's or AALpy's) → PRISM text (and DRN) → **Storm builds the written file** →
the built model is compared with the learned frequencies (same states, actions and probabilities, else refuse) →
the users' strategy σ(s)(a) = (n(s, a) + λ) / (n(s) + λ·|A(s)|) on Storm's model (λ = 0: the empirical frequency) →
Storm checks the requested properties under σ.
"""
from __future__ import annotations

import dataclasses
import os
import time
from fractions import Fraction
from pathlib import Path
from typing import cast

import numpy as np

from .. import interrupt
from ..errors import OutputError, StormcfError, TimeLimitReached, VerificationFailure
from ..interrupt import temporary_directory
from ..model import ExplicitModel
from ..report import temporary_beside
from ..run import Run
from ..storm import load_model
from ..strategy import Strategy
from ..verify import check_strategy
from .alergia import Automaton, aalpy_ioalergia, ioalergia
from .coverage import coverage
from .prism import Naming, drn_text, frequencies, prism_text
from .problem import STEPS, LearnProblem
from .result import LearnResult

#: largest difference between Storm's probabilities (read as doubles) and the exact frequencies
AGREEMENT = 1e-12


def learn_mdp(problem: LearnProblem, *, run: Run | None = None, time_limit: float | None = None) -> LearnResult:
    """Learn the MDP and the users' strategy from the problem's log, let Storm build and check them (module docs).

    The files (model, DRN, strategy) are moved into place only when everything succeeded, within ``run`` (or a new
    one of ``time_limit`` seconds; :class:`~stormcf.errors.TimeLimitReached` names the phase it ran out in)."""
    run = Run.of(run, time_limit)
    with run.active():
        return _learn(problem, run)


def _learn(problem: LearnProblem, deadline: Run) -> LearnResult:
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    traces = problem.traces()
    learner = ioalergia if problem.learner == "stormcf" else aalpy_ioalergia
    automaton = learner(traces, problem.alpha_value, deadline)
    cover = coverage(traces, automaton)
    if cover.cases_replayed != cover.cases:
        raise VerificationFailure(f"{cover.cases - cover.cases_replayed} cases of the log are not paths of the "
                                  f"learned automaton; refusing to report it")
    timings["learn"] = time.perf_counter() - clock
    deadline.check("IOAlergia")

    clock = time.perf_counter()
    naming = _naming(problem, automaton)
    prism = prism_text(automaton, naming)
    drn = drn_text(automaton, naming) if problem.drn_path is not None else None
    timings["write"] = time.perf_counter() - clock

    files: dict[Path, Path] = {}                   # staged file -> its target
    with temporary_directory() as scratch:
        try:
            clock = time.perf_counter()
            model = _built_by_storm(prism, problem.model_path or Path(scratch) / "learned.prism", files)
            _same_model(model, automaton, naming)
            if drn is not None and problem.drn_path is not None:
                _same_model(_built_by_storm(drn, problem.drn_path, files), automaton, naming, by_valuation=False)
            timings["storm_build"] = time.perf_counter() - clock
            deadline.check("Storm's build of the learned model")

            clock = time.perf_counter()
            strategy = learned_strategy(model, automaton, naming, problem.laplace)
            if problem.strategy_path is not None:
                files[_staged(problem.strategy_path, strategy.save)] = problem.strategy_path
            timings["strategy"] = time.perf_counter() - clock

            clock = time.perf_counter()
            props = [f'P=? [F "{name}"]' for name in problem.labels] + list(problem.properties)
            checks = [check_strategy(strategy, p, subject="DTMC induced by the learned strategy on the learned MDP")
                      for p in props]
            timings["check"] = time.perf_counter() - clock
            deadline.check("Storm's checks under the learned strategy")
            interrupt.raise_if_ending()             # no output after a final signal whose exception was lost
            for staged, target in files.items():
                os.replace(staged, target)
        finally:
            for staged in files:
                staged.unlink(missing_ok=True)
                interrupt.untrack_path(staged)
    return LearnResult(problem, automaton, model, strategy, cover, checks, timings, prism, drn)


# ================================================================================================ names
def _naming(problem: LearnProblem, a: Automaton) -> Naming:
    log = problem.log
    outputs = problem.outputs
    observation_labels: dict[str, list[int]] = {}
    for code, (obs, _) in enumerate(outputs):
        observation_labels.setdefault(problem.observation_ids[obs], []).append(code)
    grouped = {name: [code for code, (obs, final) in enumerate(outputs)
                      if obs in members and (final or name not in problem.final_only)]
               for name, members in problem.labels.items()}
    action_code = {name: k for k, name in enumerate(log.actions)}
    rewards = {STEPS: {k: Fraction(1) for k in range(len(log.actions))}}
    # LearnProblem's rewards are exact (Fractions) once it is built
    rewards.update({name: {action_code[act]: cast(Fraction, value) for act, value in costs.items()}
                    for name, costs in problem.rewards.items()})
    alpha = problem.alpha_value
    header = [f"Learned by stormcf learn from {log.source}: {log.n_cases} cases, {log.events} events "
              f"({log.form} form).",
              f"IOAlergia ({problem.learner}), alpha = {alpha:g}: {a.n_states} states; probabilities are the exact "
              f"frequencies of the log."]
    texts = [f"{obs}" + (" (last event of a case)" if final else "") for obs, final in outputs]
    return Naming([problem.action_ids[x] for x in log.actions], texts, {**observation_labels, **grouped}, rewards,
                  header)


# ================================================================================================ Storm
def _built_by_storm(text: str, target: Path, files: dict[Path, Path]) -> ExplicitModel:
    """Storm's model of ``text``, written to a staged file beside ``target`` (recorded in ``files``, staged ->
    target, to be moved into place when everything succeeded)."""
    staged = _staged(target, lambda path: Path(path).write_text(text, encoding="utf-8"))
    files[staged] = target
    try:
        model = load_model(staged)
    except TimeLimitReached:
        raise
    except StormcfError as err:
        raise VerificationFailure(f"Storm does not build the learned model stormcf wrote: {err}") from None
    return dataclasses.replace(model, source=target.name)


def _staged(target: Path, write) -> Path:
    """A new file beside ``target`` (same suffix) that ``write(path)`` filled; a full disk or a file size limit
    raises :class:`OutputError` naming ``target``."""
    try:
        name = temporary_beside(target, suffix=target.suffix)     # Storm reads the staged file by its suffix
    except OSError as err:
        raise OutputError(f"{target}: cannot write ({err.strerror})") from None
    try:
        write(name)
    except BaseException as err:
        Path(name).unlink(missing_ok=True)
        interrupt.untrack_path(name)
        if isinstance(err, OSError):
            raise OutputError(f"{target}: cannot write ({err.strerror})") from None
        raise
    return Path(name)


def _state_map(model: ExplicitModel, by_valuation: bool) -> np.ndarray:
    """The learned state (automaton index) of every state of Storm's model."""
    return np.asarray(model.valuations["s"], dtype=np.int64) if by_valuation else np.arange(model.n_states)


def _same_model(model: ExplicitModel, a: Automaton, naming: Naming, by_valuation: bool = True) -> None:
    """Refuse (VerificationFailure) unless Storm's model has the automaton's states, actions and frequencies."""
    learned = _state_map(model, by_valuation)
    if model.n_states != a.n_states or not np.array_equal(np.sort(learned), np.arange(a.n_states)):
        raise VerificationFailure(f"Storm built {model.n_states} states from {model.source}, stormcf learned "
                                  f"{a.n_states}; refusing to report the model")
    storm_state = np.empty(a.n_states, dtype=np.int64)
    storm_state[learned] = np.arange(model.n_states)
    expected = _expected_rows(model, a, naming, learned)
    P = model.transitions
    for row, (cols, probs) in enumerate(expected):
        lo, hi = P.indptr[row], P.indptr[row + 1]
        got = dict(zip(P.indices[lo:hi].tolist(), P.data[lo:hi].tolist()))
        want = dict(zip(storm_state[cols].tolist(), probs.tolist()))
        if got.keys() != want.keys() or any(abs(got[k] - want[k]) > AGREEMENT for k in got):
            s = int(model.state_of_choice[row])
            raise VerificationFailure(f"Storm's model of {model.source} differs from the learned frequencies in "
                                      f"state s={learned[s]}, action '{model.action(row)}'; refusing to report it")


def _expected_rows(model: ExplicitModel, a: Automaton, naming: Naming, learned: np.ndarray):
    """For every choice of Storm's model: the automaton's successors and probabilities (a self-loop with
    probability 1 for the unlabelled choice of a state without successors)."""
    num, den = frequencies(a)
    code = {name: k for k, name in enumerate(naming.actions)}
    edges: dict[tuple[int, int], slice] = {}
    key = np.stack([a.source, a.action])
    starts: np.ndarray | list[int] = []
    if a.source.size:
        starts = np.flatnonzero(np.r_[True, np.any(key[:, 1:] != key[:, :-1], axis=0)])
    for lo, hi in zip(list(starts), list(starts[1:]) + [a.source.size]):
        edges[(int(a.source[lo]), int(a.action[lo]))] = slice(int(lo), int(hi))
    out = []
    for row in range(model.n_choices):
        s = int(learned[model.state_of_choice[row]])
        name = model.action(row)
        if name == "" or name == "__NOLABEL__":
            out.append((np.array([s]), np.array([1.0])))
            continue
        k = edges.get((s, code.get(name, -1)))
        if k is None:
            raise VerificationFailure(f"Storm's model of {model.source} has action '{name}' in state s={s}, "
                                      f"which stormcf did not learn; refusing to report it")
        out.append((a.target[k], num[k] / den[k]))
    return out


# ================================================================================================ the strategy
def learned_strategy(model: ExplicitModel, a: Automaton, naming: Naming, laplace: float = 0.0) -> Strategy:
    """σ(s)(a) = (n(s, a) + λ) / (n(s) + λ·|A(s)|) on Storm's model of the learned automaton, where n(s, a) is how
    often the log takes action a in learned state s; the unlabelled self-loop of a state without successors gets 1."""
    learned = _state_map(model, True)
    n_actions = len(naming.actions)
    support = np.bincount(a.source * n_actions + a.action, weights=a.count, minlength=a.n_states * n_actions)
    code = {name: k for k, name in enumerate(naming.actions)}
    rows_action = np.array([code.get(model.action(r), -1) for r in range(model.n_choices)])
    counts = np.where(rows_action >= 0,
                      support[learned[model.state_of_choice] * n_actions + np.maximum(rows_action, 0)], 1.0)
    weights = counts + laplace * (rows_action >= 0)
    totals = np.bincount(model.state_of_choice, weights=weights, minlength=model.n_states)
    return Strategy(model, weights / totals[model.state_of_choice])
