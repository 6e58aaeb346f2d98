"""Output in the field's words: no internal labels of the papers' notes ("seed 000", oracle names such as "O8",
section signs) and no unexplained symbols (h(s0, T, k), o(τ)) in any command's text, help or JSON notes."""
import re

import pytest

import stormcf
from stormcf.cli import commands
from test_json_schema import INVOCATIONS

BANNED = re.compile(r"seed 00\d|\bO\d{1,2}\b|h\(s_?0|o\(τ|§|\(\d+\)-\(\d+\)")

LOAN, IMPATIENT = str(stormcf.example_path("loan.prism")), str(stormcf.example_path("loan.impatient.json"))
TREAT, TREAT_PATH = str(stormcf.example_path("treat.prism")), str(stormcf.example_path("treat.path.json"))

RUNS = {**INVOCATIONS,
        "explain-path (Monte Carlo)": ["explain-path", TREAT, "--path", TREAT_PATH, "--k", "1", "--estimator", "mc",
                                       "--mc-samples", "200", "--explanations", "100"]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("words")


@pytest.mark.parametrize("name", list(RUNS))
def test_command_output_is_in_the_fields_words(name, folder, cli):
    argv = [a.replace("{tmp}", str(folder)) for a in RUNS[name]]
    for mode in ([], ["--json", "-"]):
        code, out, err = cli(*argv, *mode)
        assert code == 0, err
        assert not [line for line in (out + err).splitlines() if BANNED.search(line)]


@pytest.mark.parametrize("command", [""] + [c.rsplit(".", 1)[-1].replace("_", "-") for c in commands()])
def test_help_is_in_the_fields_words(command, cli):
    code, out, _ = cli(*([command] if command else []), "--help")
    assert code == 0 and out and not BANNED.search(out)
