"""Output in the field's words: no internal labels of the papers' notes ("seed 000", oracle names such as "O8",
section signs) and no unexplained symbols (h(s0, T, k), o(τ)) in any command's text, help or JSON notes."""
import argparse
import re
from pathlib import Path

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


def option_section() -> str:
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    return text[text.index("## Option names"):text.index("## Time limits")]


def test_every_option_two_commands_share_has_one_documented_meaning():
    """docs/cli.md's table gives each shared option name its one meaning: a new command that reuses a name must be
    checked against it (a name with another meaning gets another name)."""
    from stormcf.cli import build_parser
    parsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    users: dict[str, set[str]] = {}
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.help != argparse.SUPPRESS:
                for option in action.option_strings:
                    users.setdefault(option, set()).add(name)
    table = option_section().split("\n\n")[2]
    documented = set(re.findall(r"`(-[-\w]+)`", "\n".join(line.split("|")[1] for line in table.splitlines()[2:])))
    shared = {option for option, names in users.items() if len(names) > 1} - {"-h", "--help"}
    assert shared <= documented, f"shared but not in docs/cli.md's option names: {sorted(shared - documented)}"


def test_renamed_options_work_with_a_warning_and_are_not_in_help(cli, tmp_path):
    renamed = re.findall(r"^\| `([\w-]+)` \| `(-[\w-]+)[^`]*` \| `(-[\w-]+)", option_section(), re.MULTILINE)
    assert len(renamed) == 5
    for command, old, new in renamed:
        code, out, _ = cli(command, "--help")
        assert code == 0 and not re.search(rf"[\s\[]{old}[\s,\]]", out) and new in out, (command, old)
    code, out, err = cli("strategy-file", LOAN, "--scheduler", 'Pmin=? [F "rejected"]', "--out", tmp_path / "s.json")
    assert code == 0 and "Pmin=? [F \"rejected\"] = 0.02" in out
    assert err == ("stormcf: warning: --scheduler is deprecated in stormcf strategy-file: use --optimal PROP "
                   "(--scheduler is a Dask scheduler's address in the batch commands)\n")
    code, out, err = cli("strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.5 [F "rejected"]', "-r", 'P<=0.45 [F "rejected"]')
    assert code == 0 and "already meets P<=1/2 [F \"rejected\"] and P<=9/20 [F \"rejected\"]" in out
    assert "-r is deprecated in stormcf strategy: use --require" in err
