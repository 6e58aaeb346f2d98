"""A new analysis is its package and one command-line module: a toy analysis written here, in a temporary folder,
registered as a plugin (entry points), passes the whole conformance suite and the published JSON Schema without any
other file of stormcf changing."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import stormcf

from conformance import (Case, check_bad_input, check_batch_of_one, check_ctrl_c, check_schema, check_sigterm,
                         check_time_limit, in_process, lines_file)

TASK = '''
"""toy-labels: the states of a model's label, counted in rounds (a stand-in for an anytime analysis)."""
import time
from dataclasses import dataclass, field
from typing import Any

from stormcf.analysis import Analysis
from stormcf.errors import StateError
from stormcf.report import Report
from stormcf.verify import check_model


@dataclass(frozen=True)
class ToySettings:
    rounds: int = 1


@dataclass(frozen=True, eq=False)
class ToyResult(Report):
    command: str = "toy-labels"
    label: str = ""
    states: int = 0
    rounds: int = 0
    model: Any = None
    status: str = "ok"
    checks: Any = ()
    timings: dict = field(default_factory=dict)

    def payload(self):
        return {"label": self.label, "states": self.states, "rounds": self.rounds}

    def text(self):
        return f"{self.states} states labelled {self.label} ({self.rounds} rounds)"


class ToyLabels(Analysis):
    command = "toy-labels"
    Settings = ToySettings
    items = "label"
    stoppable = True
    columns = {"states": lambda r: r.states}

    def problem(self, model, data, where):
        if not isinstance(data, str) or data not in model.labels:
            raise StateError(f"{where}: no label {data!r} in the model")
        return model, data

    def solve(self, problem, run):
        model, label = problem
        check = check_model(model, f'Pmax=? [F "{label}"]')
        rounds = 0
        with run.activity("counting"):
            while rounds < self.settings.rounds and not run.expired:
                rounds += 1
                time.sleep(0.01)
        status = "interrupted" if run.interrupted else "timeout" if run.out_of_time else "ok"
        states = int(model.labels[label].sum())
        return ToyResult(label=label, states=states, rounds=rounds, model=model, status=status, checks=(check,))
'''

CLI = '''
"""stormcf toy-labels MODEL --label L [--rounds N] | --labels FILE.jsonl"""
from stormcf.cli.common import (add_batch_arguments, add_json_argument, add_model_arguments, batch_exit_code,
                                model_file, model_from_args, require_single, run_batch_command, run_single)


def register(sub):
    p = sub.add_parser("toy-labels", help="count the states of a label")
    add_model_arguments(p)
    p.add_argument("--label")
    p.add_argument("--labels")
    p.add_argument("--rounds", type=int, default=1)
    add_json_argument(p)
    add_batch_arguments(p, "--labels")
    p.set_defaults(run=run, analysis="toy_analysis.task:ToyLabels")


def run(args):
    from stormcf.batch import read_jsonl
    from toy_analysis.task import ToyLabels
    analysis = ToyLabels(rounds=args.rounds)
    if args.labels:
        return batch_exit_code(run_batch_command(args, model_file(args), analysis, read_jsonl(args.labels)))
    require_single(args, "--labels")
    return run_single(args, analysis, model_from_args(args), args.label, "--label")
'''

ENTRY_POINTS = """
[stormcf.analyses]
toy = toy_analysis.task

[stormcf.commands]
toy = toy_analysis.cli
"""


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """The toy plugin installed in a folder (its package and its distribution's entry points)."""
    folder = tmp_path_factory.mktemp("plugin")
    package = folder / "toy_analysis"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "task.py").write_text(textwrap.dedent(TASK))
    (package / "cli.py").write_text(textwrap.dedent(CLI))
    info = folder / "toy_analysis-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-analysis\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return folder


def toy_case(plugin: Path) -> Case:
    loan = str(stormcf.example_path("loan.prism"))
    return Case(slow=lambda d: ["toy-labels", loan, "--label", "rejected", "--rounds", "100000000"],
                single=lambda d: ["toy-labels", loan, "--label", "rejected"],
                batch=lambda d: ["toy-labels", loan, "--labels", lines_file(d, "l.jsonl", '"rejected"')],
                refusal=(lambda d: ["toy-labels", loan, "--label", "nothing"], "no label 'nothing' in the model"),
                working="counting", env={"PYTHONPATH": str(plugin)})


def test_the_plugin_is_a_command(plugin, tmp_path):
    code, out, err = in_process(["toy-labels", stormcf.example_path("loan.prism"), "--label", "rejected"],
                                {"PYTHONPATH": str(plugin)})
    assert code == 0, err
    assert "1 states labelled rejected (1 rounds)" in out


@pytest.mark.parametrize("check", [check_time_limit, check_sigterm, check_bad_input, check_batch_of_one, check_schema])
def test_the_plugin_passes_the_conformance_suite(check, plugin, tmp_path):
    check("toy-labels", toy_case(plugin), tmp_path)


def test_the_plugin_stops_with_its_best_answer_at_the_first_ctrl_c(plugin, tmp_path):
    check_ctrl_c("toy-labels", toy_case(plugin), tmp_path, stoppable=True)
