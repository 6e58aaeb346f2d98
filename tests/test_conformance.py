"""The analysis contract (tests/conformance.py), checked for every registered analysis
(``stormcf.analysis.registry()``): a tiny time limit, SIGTERM, Ctrl-C once and twice, a bad input, a batch of one
item and the JSON Schema; and SIGTERM during Python's start-up. What each analysis can do (stop with its best answer,
answer batches) is read from its class; how to exercise it from ``tests/<package>/conformance_cases.py``. A registered analysis without a case fails
:func:`test_every_registered_analysis_has_a_case`, naming it. Time bounds allow generous slack (CI machines are
shared): what they catch is a command that runs on minutes past its limit, not a slow machine."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

import stormcf
from stormcf.analysis import registry

from conformance import (builtin_cases, check_bad_input, check_batch_of_one, check_ctrl_c, check_schema,
                         check_second_ctrl_c, check_sigterm, check_time_limit)

CASES = builtin_cases()
ANALYSES = registry()


def test_every_registered_analysis_has_a_case():
    missing = sorted(set(ANALYSES) - set(CASES))
    assert not missing, f"no conformance case for {missing}: add one to tests/<package>/conformance_cases.py"
    assert not set(CASES) - set(ANALYSES), f"cases of unregistered commands: {sorted(set(CASES) - set(ANALYSES))}"


def test_every_batched_analysis_has_a_batch_case():
    """An analysis that declares what its batch items are must show that a batch of one gives the single run."""
    missing = sorted(c for c, a in ANALYSES.items() if a.items and c in CASES and CASES[c].batch is None)
    assert not missing, f"analyses with batch items but no batch case: {missing}"


@pytest.mark.parametrize("command", sorted(CASES))
def test_a_tiny_time_limit_ends_the_command_with_an_honest_status(command, tmp_path):
    check_time_limit(command, CASES[command], tmp_path)


@pytest.mark.parametrize("command", sorted(CASES))
def test_sigterm_ends_the_command_with_143_and_leaves_nothing(command, tmp_path):
    check_sigterm(command, CASES[command], tmp_path)


@pytest.mark.parametrize("command", sorted(CASES))
def test_the_first_ctrl_c_reports_the_best_answer_or_exits_130(command, tmp_path):
    check_ctrl_c(command, CASES[command], tmp_path, ANALYSES[command].stoppable)


@pytest.mark.parametrize("command", sorted(CASES))
def test_the_second_ctrl_c_exits_130_and_writes_nothing(command, tmp_path):
    check_second_ctrl_c(command, CASES[command], tmp_path, ANALYSES[command].stoppable)


def test_sigterm_during_start_up_exits_143_with_a_line(tmp_path):
    """SIGTERM while Python imports the command's modules (numpy, scipy, Storm), right after stormcf's first module
    was imported (``-X importtime`` says when): 143 and the line, not the default action (no line) or an ImportError
    ("initialization failed") of the module whose import the signal interrupted (exit code 1)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "stormcf", "info",
                             str(stormcf.example_path("loan.prism"))], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(scratch)})
    for line in proc.stderr:
        if line.rstrip().endswith("| stormcf.limits"):          # imported right after the handlers are in
            proc.send_signal(signal.SIGTERM)
            break
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 143 and stderr.endswith("stormcf: terminated\n"), stderr[-500:]
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("command", sorted(CASES))
def test_a_bad_input_is_one_line_and_exit_code_2(command, tmp_path):
    check_bad_input(command, CASES[command], tmp_path)


@pytest.mark.parametrize("command", sorted(c for c in CASES if CASES[c].batch))
def test_a_batch_of_one_item_gives_the_single_document(command, tmp_path):
    check_batch_of_one(command, CASES[command], tmp_path)


@pytest.mark.parametrize("command", sorted(c for c in CASES if CASES[c].single))
def test_the_single_document_is_valid_under_the_published_schema(command, tmp_path):
    check_schema(command, CASES[command], tmp_path)
