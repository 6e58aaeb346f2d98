"""``setcover`` as an analysis (:mod:`stormcf.analysis`): one item is an agent, ``[0, 0, 1, ...]`` or
``{"agent": [...], "group": "g"}``, of the set-cover instance the items share (:class:`InstanceFile`); and the
learning pipeline's analyses: ``setcover-data`` (no input), ``setcover-learn`` (a labelled data set) and
``setcover-evaluate`` (a generator and labelled agents)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

from ..analysis import Analysis
from ..errors import StateError
from ..items import FilePin
from ..run import Run
from .data import LabelledAgents, load_instance
from .engines import DEFAULT_METHOD
from .generators import Generator, TrainingSettings
from .pipeline import DataSetProblem, EvaluationProblem, TrainingProblem, training_settings
from .problem import SetCoverInstance, SetCoverProblem
from .result import DataSetResult, EvaluationResult, SetCoverResult, TrainingResult
from .solve import evaluate_generator, generate_data, solve_setcover, solve_setcovers, train_generator


@dataclass(frozen=True)
class InstanceFile:
    """A set-cover instance file (JSON, or a labelled data set ``.npz``): what a batch worker loads once (the file
    pinned by :class:`~stormcf.items.FilePin` where the batch starts)."""

    path: str
    pin: FilePin | None = None

    def __post_init__(self) -> None:
        if self.pin is None:
            object.__setattr__(self, "pin", FilePin.of(self.path))

    def load(self) -> SetCoverInstance:
        assert self.pin is not None  # __post_init__ pins the file
        return load_instance(self.pin.readable(self.path))


@dataclass(frozen=True)
class SetCoverSettings:
    """The engine, the group of agents whose item names none, and the solver of the programmes (the ``milp``
    engine's, the LP bound of a greedy answer; :data:`stormcf.solvers.SOLVERS`)."""

    method: str = DEFAULT_METHOD
    group: str | None = None
    solver: str = "auto"


class SetCoverExplanation(Analysis):
    """The cheapest set of actions that turns an agent positive (seed 003), checked by Storm."""

    command = "setcover"
    Settings = SetCoverSettings
    columns = {"cost": lambda r: r.cost, "actions": lambda r: ",".join(r.problem.instance.names(r.actions)) or "-"}
    batched = True              # a chunk's agents are certified together: one Storm call per 2M choices of optima
    items = "agent"

    def problem(self, instance: SetCoverInstance, data: Any, where: str | None) -> SetCoverProblem:
        group = self.settings.group
        if isinstance(data, Mapping):
            if "agent" not in data:
                raise StateError(f'{where}: expected an agent [0, 1, ...] or {{"agent": [...], "group": "g"}}')
            data, group = data["agent"], data.get("group", group)
        return SetCoverProblem(instance, instance.agent(data, where or "agent"), group)

    def solve(self, problem: SetCoverProblem, run: Run) -> SetCoverResult:
        return solve_setcover(problem, self.settings.method, solver=self.settings.solver, run=run)

    def solve_many(self, problems: Sequence[SetCoverProblem], run: Run) -> list:
        return solve_setcovers(problems, self.settings.method, solver=self.settings.solver, run=run)


# ======================================================================================== the learning pipeline
class DataSetGeneration(Analysis):
    """The paper's data set, generated and labelled with every agent's optimal CFE (one Storm call for the family).
    Every parameter is part of the question, so the settings are the problem (:class:`DataSetProblem`, validated
    when the analysis is made); it has no input item."""

    command = "setcover-data"
    Settings = DataSetProblem

    def problem(self, shared: None, data: None, where: str | None) -> DataSetProblem:
        return self.settings

    def solve(self, problem: DataSetProblem, run: Run) -> DataSetResult:
        return generate_data(problem, run=run)


@dataclass(frozen=True)
class TrainingOptions:
    """How to train: the generator and the options of its hyper-parameters (None: the generator's default,
    :func:`~.pipeline.training_settings`), knn's ``k``, the frequency filter, the augmentation target, the
    held-out share and the seed (:class:`TrainingProblem`)."""

    generator: str = "mc"
    hidden: tuple[int, ...] | None = None
    epochs: int | None = None
    patience: int | None = None
    batch_size: int | None = None
    learning_rate: float | None = None
    dropout: float | None = None
    l2: float | None = None
    p_w: float | None = None
    alpha: float | None = None
    decoder: int | None = None
    ensemble: int | None = None
    k: int | None = None
    min_frequency: int = 0
    augment: int = 0
    test: float = 0.2
    seed: int = 0


#: the fields of :class:`TrainingOptions` that are hyper-parameters of a network (:class:`~.generators.TrainingSettings`)
HYPER_PARAMETERS = tuple(f.name for f in fields(TrainingOptions)
                         if f.name in {g.name for g in fields(TrainingSettings)})


class GeneratorTraining(Analysis):
    """A learned CFE generator trained on labelled agents (what the analysis is given; there is no input item), its
    exact match measured on the agents held out. The first Ctrl-C (or :meth:`Run.stop`) ends training after the
    current batch with the best epoch so far."""

    command = "setcover-learn"
    Settings = TrainingOptions
    stoppable = True            # the best epoch so far

    def problem(self, agents: LabelledAgents, _: None, where: str | None) -> TrainingProblem:
        s = self.settings
        training = training_settings(s.generator, **{name: getattr(s, name) for name in HYPER_PARAMETERS})
        return TrainingProblem(agents, s.generator, training, s.k, s.min_frequency, s.augment, s.test, s.seed, where)

    def solve(self, problem: TrainingProblem, run: Run) -> TrainingResult:
        return train_generator(problem, run=run)


@dataclass(frozen=True)
class EvaluationSettings:
    """The cheapest valid of the ``top_k`` best candidates (mc, knn), and how answers are certified (None: not)."""

    top_k: int = 1
    certify: str | None = None
    solver: str = "auto"


class GeneratorEvaluation(Analysis):
    """A learned generator (what the items share) evaluated on labelled agents (the item): the paper's exact match
    and the guarantees stormcf adds."""

    command = "setcover-evaluate"
    Settings = EvaluationSettings

    def problem(self, generator: Generator, agents: LabelledAgents, where: str | None) -> EvaluationProblem:
        s = self.settings
        return EvaluationProblem(generator, agents, s.top_k, s.certify, s.solver)

    def solve(self, problem: EvaluationProblem, run: Run) -> EvaluationResult:
        return evaluate_generator(problem, run=run)
