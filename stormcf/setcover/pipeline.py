"""The problems of the learning pipeline's analyses (:mod:`.task`): ``setcover-data`` generates and labels a data set
(:class:`DataSetProblem`), ``setcover-learn`` trains a generator on one (:class:`TrainingProblem`),
``setcover-evaluate`` evaluates a generator on labelled agents (:class:`EvaluationProblem`). Each is validated once,
in its constructor. They build on the data sets and generators (:mod:`.data`, :mod:`.generators`), which build on the
instance (:mod:`.problem`), hence a module of their own.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import OptionError
from .data import LabelledAgents, check_parameters
from .engines import EXACT
from .generators import DEFAULT_SETTINGS, ENSEMBLE_KINDS, GENERATORS, NETWORKS, Generator, GeneratorError, TrainingSettings

#: how a generator's answers can be certified (``setcover-evaluate --certify``): the LP bound or an exact engine
CERTIFIERS = ("lp", *EXACT)


@dataclass(frozen=True)
class DataSetProblem:
    """A data set as the paper generates it (:mod:`.data`): ``n`` features, ``actions`` actions, ``draws`` agents
    drawn with feature probability ``p_f`` and effect probability ``p_a``, the coordinate costs (``costs``), the
    classifier (``thresholds``), Table 4's ``groups`` (None: no groups; ``p_a`` is then unused), the labelling
    engine (``method``; ``milp`` on ``solver``, a name of :data:`stormcf.solvers.SOLVERS`), the largest CFE kept
    (``max_size``) and the ``seed``."""

    n: int = 20
    actions: int = 100
    draws: int = 100_000
    p_f: float = 0.68
    p_a: float = 0.5
    costs: str = "real"
    thresholds: str = "ones"
    groups: str | None = None
    method: str = "storm"
    max_size: int = 3
    seed: int = 0
    solver: str = "auto"

    def __post_init__(self) -> None:
        check_parameters(self.n, self.actions, self.draws, self.p_f, self.p_a, self.costs, self.thresholds,
                         self.groups, self.method, self.max_size, self.seed)


@dataclass(frozen=True, eq=False)
class TrainingProblem:
    """A generator to train on labelled agents (``setcover-learn``).

    Attributes:
        data: the labelled agents (a data set from ``setcover-data``).
        generator: ``mc``, ``na``, ``fa``, ``seq2seq`` or ``knn``.
        training: the network's hyper-parameters (default: the generator's :data:`~.generators.DEFAULT_SETTINGS` with
            ``seed``); None for ``knn``.
        k: ``knn``'s neighbours (None: the paper's 5/10/15).
        min_frequency: keep the agents whose CFE occurs more than this often in ``data`` (the ``>10``, ``>40`` sets).
        augment: Algorithm 1's target on the training split (0: no augmentation).
        test: the share of the agents held out, in (0, 1).
        seed: seeds the held-out split and the augmentation.
        source: where ``data`` came from (a file), recorded in the generator's facts.
    """

    data: LabelledAgents
    generator: str = "mc"
    training: TrainingSettings | None = None
    k: int | None = None
    min_frequency: int = 0
    augment: int = 0
    test: float = 0.2
    seed: int = 0
    source: str | None = None

    def __post_init__(self) -> None:
        if self.generator not in GENERATORS:
            raise GeneratorError(f"unknown generator '{self.generator}': use {', '.join(GENERATORS)}")
        training = None
        if self.generator in NETWORKS:
            training = self.training or replace(DEFAULT_SETTINGS[self.generator], seed=self.seed)
            training.check()
        object.__setattr__(self, "training", training)
        if self.k is not None and not (isinstance(self.k, int) and self.k >= 1):
            raise GeneratorError(f"k must be at least 1, got {self.k!r}")
        for name in ("min_frequency", "augment", "seed"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 0):
                raise OptionError(f"{name} must be an integer >= 0, got {getattr(self, name)!r}")
        if not 0 < self.test < 1:
            raise OptionError(f"the held-out share must be in (0, 1), got {self.test!r}")


def training_settings(generator: str, **options: Any) -> TrainingSettings | None:
    """A network generator's hyper-parameters: its :data:`~.generators.DEFAULT_SETTINGS` with the ``options`` that are
    not None (``hidden``, ``epochs``, ..., ``ensemble``, ``seed``); None for ``knn``. An ensemble is refused for the
    generators that cannot be one."""
    ensemble = options.get("ensemble")
    if ensemble not in (None, 1) and generator not in ENSEMBLE_KINDS:
        raise OptionError(f"--ensemble {ensemble}: an ensemble is for {', '.join(ENSEMBLE_KINDS)}, not {generator}")
    if generator not in NETWORKS:
        return None
    return replace(DEFAULT_SETTINGS[generator], **{name: value for name, value in options.items() if value is not None})


@dataclass(frozen=True, eq=False)
class EvaluationProblem:
    """A generator to evaluate on labelled agents (``setcover-evaluate``): its exact match and the guarantees, with
    the cheapest valid of the ``top_k`` best candidates (mc, knn) and, with ``certify``, every answer's optimality
    gap bounded by the LP relaxation (``lp``) or an exact engine, their programmes on ``solver``
    (:data:`stormcf.solvers.SOLVERS`)."""

    generator: Generator
    agents: LabelledAgents
    top_k: int = 1
    certify: str | None = None
    solver: str = "auto"

    def __post_init__(self) -> None:
        if not (isinstance(self.top_k, int) and self.top_k >= 1):
            raise OptionError(f"top_k must be an integer >= 1, got {self.top_k!r}")
        if self.certify is not None and self.certify not in CERTIFIERS:
            raise OptionError(f"unknown certificate '{self.certify}': use {', '.join(CERTIFIERS)}")
        self.generator.check_fits(self.agents.instance)
