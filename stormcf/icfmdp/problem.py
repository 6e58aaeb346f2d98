"""The interval counterfactual MDP (ICFMDP) of an observed path (Lally, Kazemi, Paoletti; seed 004), and the problem
``stormcf icfmdp`` solves on it.

The ICFMDP is a :class:`~stormcf.counterfactual_mdp.CounterfactualMDP` with interval rows: at step t the
counterfactual probability of every transition (s, a, s') lies in [LB_t, UB_t] given the observation
(s_t, a_t) -> s_{t+1}, by the closed forms of :mod:`.bounds` or by the LPs of :mod:`.lp`. A path without
``final_state`` has no observation at its last step: that step is the nominal P (point intervals).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..counterfactual_mdp import ESTIMATORS, CounterfactualMDP, build_cfmdp, nominal_transitions
from ..counterfactual_mdp.gumbel import require_sample_memory
from ..errors import OptionError, SolverError
from ..limits import require_unrolled_size
from ..model import ExplicitModel
from ..modes import Optimization
from ..paths import ObservedPath
from ..run import Run
from ..solvers import SOLVERS, chosen
from .bounds import SparseRows, check_assumptions, step_bounds
from .lp import lp_step_bounds

#: bound computations: the closed forms (default) or one LP per pair and successor (small models)
BOUNDS_METHODS = ("closed", "lp")
#: the LP mode solves 2 LPs per transition and step; beyond this many it refuses (minutes of HiGHS calls)
LP_LIMIT = 20_000
#: baselines the analysis can compare with
BASELINES = ("gumbel",)


def interval_cfmdp(path: ObservedPath, assumptions: str = "cs+m", bounds: str = "closed", layers: str = "nominal",
                   summation: str = "ascending", solver: str = "auto", run: Run | None = None) -> CounterfactualMDP:
    """Build the ICFMDP of ``path``: the counterfactual bounds of every transition of the states the path's start
    reaches (``layers="nominal"``; ``"all"``: every state at every step), at every step.

    ``bounds="closed"`` evaluates the closed forms (vectorised); ``bounds="lp"`` solves the exact LPs (2 per
    transition and step, on ``solver``, a name of :data:`stormcf.solvers.SOLVERS`; refused beyond :data:`LP_LIMIT`
    LPs with a :class:`SolverError`). ``summation="authors"`` adds up the sums in H in the authors' order, for
    bit-identical comparisons with their outputs. ``run`` (default: unlimited) bounds the LPs and shows their
    progress.
    """
    check_assumptions(assumptions)
    if bounds not in BOUNDS_METHODS:
        raise OptionError(f"unknown bounds method {bounds!r}: use one of {', '.join(BOUNDS_METHODS)}")
    model = path.model
    P = model.transitions

    def values(t: int, rows: np.ndarray, entries: np.ndarray, row: int, successor: int) -> tuple[np.ndarray, ...]:
        whole = rows.size == P.shape[0]                  # every choice: the model's own matrix, indexed once
        local = np.flatnonzero(rows == row)
        local_row = int(local[0]) if local.size else -1
        o = P[row].toarray().ravel()
        if bounds == "closed":
            sparse = model_rows(model, summation) if whole else SparseRows(P[rows], summation)
            return step_bounds(sparse, o, local_row, successor, assumptions)
        return lp_step_bounds(P if whole else P[rows], local_row, successor, assumptions, observed=o, solver=solver,
                              run=run)

    if bounds == "lp":
        _check_lp_size(path, layers)
    how = "closed forms" if bounds == "closed" else f"LPs ({chosen(solver, linear=True)})"
    return build_cfmdp(path, values, "interval", f"{assumptions}, {how}", layers)


_ROWS: "weakref.WeakKeyDictionary[ExplicitModel, dict[str, SparseRows]]" = weakref.WeakKeyDictionary()


def model_rows(model: ExplicitModel, summation: str) -> SparseRows:
    """The index arrays of the whole transition matrix in a summation order (computed once per model)."""
    cache = _ROWS.setdefault(model, {})
    if summation not in cache:
        cache[summation] = SparseRows(model.transitions, summation)
    return cache[summation]


def _check_lp_size(path: ObservedPath, layers: str) -> None:
    """Refuse LP bounds beyond :data:`LP_LIMIT` LPs (counted on the nominal layers)."""
    skeleton = build_cfmdp(path, lambda t, rows, entries, row, successor: (np.zeros(entries.size),) * 2, "interval",
                           "size", layers)
    lps = 2 * skeleton.n_transitions
    if lps > LP_LIMIT:
        raise SolverError(f"LP bounds would need {lps} LPs (limit {LP_LIMIT}); use the closed forms (they equal "
                          f"the LP optimum)")


@dataclass(frozen=True, eq=False)
class ICFMDPProblem:
    """What ``stormcf icfmdp`` answers: the best counterfactual policy of an observed path, robustly over every causal
    model consistent with it (how it is computed: :class:`ICFMDPSettings`).

    Attributes:
        path: the observed path τ (its model is the MDP).
        reward: the reward model's name (state plus state-action rewards; ``None``: the model's only one).
        optimization: whether the policy maximizes the reward or minimizes it (a cost).
        assumptions: ``"cs+m"``, ``"cs"`` or ``"none"``: which causal models count as consistent with τ.
    """

    path: ObservedPath
    reward: str | None = None
    optimization: Optimization = Optimization.MAXIMIZE
    assumptions: str = "cs+m"

    def __post_init__(self) -> None:
        object.__setattr__(self, "optimization", Optimization.parse(self.optimization))
        check_assumptions(self.assumptions)
        self.rewards                                   # unknown reward models, transition rewards: PropertyError
        require_unrolled_size(self.path.T, nominal_transitions(self.path), "the unrolled ICFMDP")

    @property
    def model(self):
        return self.path.model

    @property
    def reward_name(self) -> str:
        return self.model.reward_model(self.reward).name

    @cached_property
    def rewards(self) -> np.ndarray:
        """R(s, a) per model choice (read-only; computed once: a pass over every choice of the model)."""
        rewards = self.model.step_rewards(self.reward)
        rewards.flags.writeable = False
        return rewards


@dataclass(frozen=True)
class ICFMDPSettings:
    """How :func:`~stormcf.icfmdp.solve_icfmdp` answers an :class:`ICFMDPProblem`.

    Attributes:
        bounds: ``"closed"`` (the closed forms) or ``"lp"`` (one exact LP per transition and step).
        solver: the LPs' solver (``"lp"`` bounds), one of :data:`stormcf.solvers.SOLVERS`.
        optimistic: also compute the optimistic (best-case) policy.
        baseline: ``None`` or ``"gumbel"`` (the Gumbel-max SCM policy).
        estimator: the Gumbel-max estimator, ``"exact"`` or ``"mc"``.
        samples: Monte Carlo samples per (t, s, a) for ``"mc"``.
        seed: seed of the Monte Carlo estimator.
    """

    bounds: str = "closed"
    solver: str = "auto"
    optimistic: bool = False
    baseline: str | None = None
    estimator: str = "exact"
    samples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.bounds not in BOUNDS_METHODS:
            raise OptionError(f"unknown bounds method {self.bounds!r}: use one of {', '.join(BOUNDS_METHODS)}")
        if self.solver not in SOLVERS:
            raise OptionError(f"unknown solver {self.solver!r}: use one of {', '.join(SOLVERS)}")
        if self.baseline is not None and self.baseline not in BASELINES:
            raise OptionError(f"unknown baseline {self.baseline!r}: use one of {', '.join(BASELINES)}")
        if self.estimator not in ESTIMATORS:
            raise OptionError(f"unknown Gumbel-max estimator {self.estimator!r}: use one of {', '.join(ESTIMATORS)}")
        for name, low in (("samples", 1), ("seed", 0)):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
                raise OptionError(f"{name} must be an integer >= {low}, got {value!r}")

    def require_memory(self, model) -> None:
        """Refuse a Monte Carlo baseline whose samples would not fit in memory (before any work)."""
        if self.baseline is not None and self.estimator == "mc":
            require_sample_memory(model, int(self.samples))
