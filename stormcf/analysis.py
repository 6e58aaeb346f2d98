"""The analysis type: what every analysis of stormcf is, and the registry the command line and batches are built from.

An :class:`Analysis` answers one kind of question (a counterfactual strategy, an interval counterfactual MDP, a path
explanation, sequential recourse, a set-cover explanation, model checking under a strategy):

- ``command``: its name on the command line and in the JSON documents (``"strategy"``);
- ``Settings``: a frozen dataclass of *how* to answer (solver, method, seed, samples, exact, ...), with defaults;
  the problem holds only the question;
- :meth:`Analysis.problem`: how one input item (JSON data: an observed path, a strategy with a bound, an agent, a
  data-set instance) becomes its problem, given what the items share (the model, a set-cover instance, a data set);
- :meth:`Analysis.solve`: the problem, within its :class:`~stormcf.run.Run` (time budget, stop request, progress,
  native output), to a :class:`~stormcf.report.Report` (status ``timeout`` or ``interrupted`` with the best checked
  answer when the time runs out or the user stops it);
- ``columns``: the batch summary table's columns, read from the result object;
- its capabilities, declared here and nowhere else (the command line, batches and the conformance suite read them):
  ``stoppable`` (the first Ctrl-C ends it at a safe point with its best checked answer, status ``interrupted``;
  otherwise the run ends with exit code 130), ``batched`` (:meth:`Analysis.solve_many` answers a chunk of items at
  once), ``items`` (what one input item of a batch is, for messages and the docs), ``time_limit`` (the default
  limit of a run, for analyses with no natural end).

An analysis object (its class and its settings) is a picklable task: ``analysis(shared, data, where, run)``
answers one item, in this process or in a batch worker (:func:`stormcf.batch.run_batch`). Subclasses register
themselves by their ``command``; :func:`registry` imports every analysis package's ``task`` module, so a new analysis
is a new package with a ``task.py`` (and its arguments in ``stormcf/cli/<command>.py``), nothing else. Analyses of
other distributions register themselves as plugins: the entry point group ``stormcf.analyses`` names their task
modules, and ``stormcf.commands`` their command-line modules (:mod:`stormcf.plugins`).
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, Callable, ClassVar, Mapping, Sequence

from .errors import OptionError
from .plugins import ANALYSES, plugins
from .report import Report
from .run import Run

_REGISTRY: dict[str, type["Analysis"]] = {}


@dataclass(frozen=True)
class NoSettings:
    """The settings of an analysis that has none."""


def problem_settings(name: str, problem: type, item: str, extra: Sequence[tuple[str, type, Any]] = ()) -> type:
    """A frozen settings dataclass with the constructor fields of the dataclass ``problem`` except ``item`` (the
    field each input item fills: a path, a log), with the same defaults, plus ``extra`` fields ``(name, type,
    default)``: the parameters every item's problem shares, kept in step with the problem by construction.
    :func:`problem_fields` gives them back as the problem's keyword arguments."""
    shared = [(f.name, f.type, field(default=f.default, default_factory=f.default_factory))
              for f in fields(problem) if f.init and f.name != item]
    settings = make_dataclass(name, shared + [(n, t, field(default=d)) for n, t, d in extra], frozen=True)
    settings.__module__ = sys._getframe(1).f_globals["__name__"]   # the caller's module: picklable for workers
    return settings


def problem_fields(settings: Any, problem: type) -> dict[str, Any]:
    """The fields of ``settings`` that are keyword arguments of the dataclass ``problem``."""
    names = {f.name for f in fields(problem) if f.init}
    return {f.name: getattr(settings, f.name) for f in fields(settings) if f.name in names}


class Analysis(ABC):
    """One analysis of stormcf (module docstring). Subclasses set ``command``, ``Settings`` and ``columns`` and
    implement :meth:`problem` and :meth:`solve`."""

    command: ClassVar[str] = ""
    Settings: ClassVar[type] = NoSettings
    #: heading -> the cell's value, from a result of this analysis (the batch summary table)
    columns: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    #: whether :meth:`solve_many` answers several problems at once (a batch gives it whole chunks of items)
    batched: ClassVar[bool] = False
    #: whether the first Ctrl-C (or :meth:`Run.stop`) ends it at a safe point with its best checked answer
    stoppable: ClassVar[bool] = False
    #: what one item of a batch is ("observed path", "strategy", "agent"); "" for an analysis without batches
    items: ClassVar[str] = ""
    #: the default time limit of a run in seconds (None: unlimited), for an analysis with no natural end
    time_limit: ClassVar[float | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.command:
            _REGISTRY[cls.command] = cls

    def __init__(self, settings: Any = None, **options: Any) -> None:
        if settings is not None and options:
            raise TypeError("give the settings or their fields, not both")
        self.settings = settings if settings is not None else self.Settings(**options)

    @abstractmethod
    def problem(self, shared: Any, data: Any, where: str | None) -> Any:
        """The problem of one item: ``data`` (JSON data) read against ``shared`` (the model, instance or data set
        the items share); ``where`` names the item's origin in messages (a file, ``paths.jsonl:3``)."""

    @abstractmethod
    def solve(self, problem: Any, run: Run) -> Report:
        """The answer to ``problem`` within ``run`` (its time budget, stop request, progress reporter)."""

    def solve_many(self, problems: Sequence[Any], run: Run) -> list[Report | BaseException]:
        """The answers to several problems, each a result or the error it raised: one at a time here; an analysis
        with ``batched`` answers them together (set cover certifies a chunk of agents with one Storm call)."""
        answers: list[Report | BaseException] = []
        for problem in problems:
            try:
                answers.append(self.solve(problem, run))
            except Exception as err:                # noqa: BLE001 - each problem's error is its answer
                answers.append(err)
        return answers

    def __call__(self, shared: Any, data: Any, where: str | None, run: Run | None = None) -> Report:
        """One item, start to end: its problem and its answer within ``run`` (default: a new run of the
        analysis's default :attr:`time_limit`), which is the active run meanwhile."""
        run = run if run is not None else Run(self.time_limit)
        with run.active():
            return self.solve(self.problem(shared, data, where), run)

    def cells(self, result: Report) -> dict[str, Any]:
        """The batch table's cells of a result of this analysis."""
        return {heading: column(result) for heading, column in self.columns.items()}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.command}: {self.settings}>"


def registry() -> dict[str, type[Analysis]]:
    """Every analysis by command name: the ``task`` module of every stormcf package, and of every plugin, is
    imported once."""
    from . import __path__ as package_path
    for info in pkgutil.iter_modules(package_path):
        if info.ispkg and importlib.util.find_spec(f"stormcf.{info.name}.task") is not None:
            importlib.import_module(f"stormcf.{info.name}.task")
    for module in plugins(ANALYSES):
        importlib.import_module(module)
    return dict(_REGISTRY)


def analysis(command: str) -> type[Analysis]:
    """The analysis called ``command``."""
    found = registry().get(command)
    if found is None:
        raise OptionError(f"unknown analysis '{command}' (analyses: {', '.join(sorted(registry()))})")
    return found
