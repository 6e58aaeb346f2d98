"""One JSON shape for every command: each command's `--json -` document has exactly the envelope keys and the keys
docs/json.md documents for it (the key lists are read from the document), every check record has the documented
keys, and every document (single runs, batch lines, timeout documents) is valid under the published JSON Schema
stormcf/schema/stormcf-1.json (`stormcf schema`), whose keys are the documented ones."""
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import stormcf
import stormcf.report
from stormcf.cli import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "json.md"
SCHEMA = stormcf.report.schema_path()
LOAN, IMPATIENT = str(stormcf.example_path("loan.prism")), str(stormcf.example_path("loan.impatient.json"))
GRID, GRID_PATH = str(stormcf.example_path("gridworld.prism")), str(stormcf.example_path("gridworld.catastrophic.json"))
ADAPTIVE, ADAPTIVE_PATH = str(stormcf.example_path("adaptive.prism")), str(stormcf.example_path("adaptive.path.json"))

PERSON = str(stormcf.example_path("person.prism"))
DATA = Path(__file__).resolve().parent / "data"
SETCOVER = str(DATA / "setcover" / "paper_example.json")

#: one invocation per documented command (all options that add optional keys); {tmp} is a temporary folder that
#: the earlier invocations (in this order) write into
INVOCATIONS = {
    "info": ["info", LOAN],
    "check": ["check", LOAN, "-s", IMPATIENT, "-p", 'P=? [F "rejected"]', "-p", 'P<=0.2 [F "rejected"]'],
    "strategy": ["strategy", LOAN, "-s", IMPATIENT, "-p", 'P<=0.2 [F "rejected"]', "--diverse", "2"],
    "strategy-file": ["strategy-file", LOAN, "--optimal", 'Pmin=? [F "rejected"]', "--out", "{tmp}/best.json"],
    "simulate": ["simulate", LOAN, "-s", "{tmp}/best.json", "--steps", "5", "--out", "{tmp}/path.json"],
    "icfmdp": ["icfmdp", GRID, "-c", "p=0.4", "--path", GRID_PATH, "--optimistic", "--baseline", "gumbel"],
    "explain-path": ["explain-path", ADAPTIVE, "--path", ADAPTIVE_PATH, "--k", "1", "--k-max", "2", "--verify",
                     "--baselines", "--explanations", "50"],
    "setcover": ["setcover", SETCOVER, "--agent", "0,0,0,0,1"],
    "learn": ["learn", str(DATA / "loan_paired.csv"), "--out", "{tmp}/learned.prism", "--strategy-out",
              "{tmp}/sigma.json", "--prop", 'P=? [F "rejected"]'],
    "demo": ["demo"],
    "demo-learn": ["demo-learn", "--cases", "300"],
    "recourse": ["recourse", PERSON, "-c", "p=1", "--target", "accept", "--cost", "cost", "--generations", "5",
                 "--offspring", "20", "--mutants", "5", "--storm-front"],
    "setcover-data": ["setcover-data", "{tmp}/d.npz", "-n", "8", "-A", "12", "--draws", "500"],
    "setcover-learn": ["setcover-learn", "{tmp}/d.npz", "--out", "{tmp}/g.npz", "--hidden", "8", "--epochs", "2"],
    "setcover-evaluate": ["setcover-evaluate", "{tmp}/g.npz", "{tmp}/g.test.npz"],
    "examples": ["examples", "--copy", "{tmp}"],
    "repair": ["repair", str(stormcf.example_path("die.pm")), "-p", 'P<=0.25 [F "five"]', "-p", 'P>=0.1 [F "two"]',
               "--nominal", "p=0.3,q=0.6"],
}


def documented_keys() -> dict[str, set[str]]:
    """Section title -> the keys in the first column of its table."""
    sections, current = {}, None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#+ (.*)", line)
        if heading:
            title = heading.group(1).strip()
            current = title.strip("`") if title.startswith("`") else title
            sections.setdefault(current, set())
            continue
        row = re.match(r"\| `([a-z_]+)` \|", line)
        if row and current is not None:
            sections[current].add(row.group(1))
    return sections


def cli_commands() -> set[str]:
    """The commands that write a JSON document (``--json``); ``stormcf schema`` prints the schema itself."""
    from stormcf.cli import build_parser
    parsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    return {name for name, parser in parsers.items()
            if any("--json" in action.option_strings for action in parser._actions)}


def test_the_schema_command_prints_the_shipped_schema(capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert main(["schema", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()).samefile(SCHEMA)


def test_every_documented_command_has_an_invocation():
    """docs/json.md documents every command of the command line, and each has an invocation here: a new command
    fails this test, naming what is missing."""
    commands = {k for k in documented_keys() if k not in ("Envelope (every command)", "Check records (`checks`)",
                                                            "stormcf's JSON output (schema `stormcf/1`)",
                                                            "Batch runs", "A command without an answer in time")}
    assert not cli_commands() - commands, f"not in docs/json.md: {sorted(cli_commands() - commands)}"
    assert not cli_commands() - set(INVOCATIONS), f"no invocation here: {sorted(cli_commands() - set(INVOCATIONS))}"
    assert commands == set(INVOCATIONS) == cli_commands()


#: commands whose result is a set of facts (data sets, trained models, metrics), not a model-checked answer
FACTS = {"info", "simulate", "demo", "setcover-data", "setcover-learn", "setcover-evaluate", "demo-learn", "examples"}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def require_valid(validator: jsonschema.Draft202012Validator, document: dict) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(document)]
    assert not errors, errors[:5]


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict:
    """Every command's `--json -` document (run once, in the order of INVOCATIONS), each in a fresh process, so that
    what solvers and Storm print from C code would show: stdout must hold exactly one JSON document and stderr
    nothing (stderr is no terminal here, so there are no progress bars either)."""
    tmp = tmp_path_factory.mktemp("json")
    out = {}
    for command, argv in INVOCATIONS.items():
        proc = subprocess.run([sys.executable, "-m", "stormcf", *[a.replace("{tmp}", str(tmp)) for a in argv],
                               "--json", "-"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0 and proc.stderr == "", (command, proc.stderr)
        out[command] = json.loads(proc.stdout)                    # exactly one document on stdout
    return out


@pytest.mark.parametrize("command", list(INVOCATIONS))
def test_json_document_matches_the_documentation(command, documents):
    data = documents[command]
    keys = documented_keys()
    envelope, check_keys = keys["Envelope (every command)"], keys["Check records (`checks`)"]
    assert set(data) == envelope | keys[command]
    assert data["schema"] == "stormcf/1" and data["command"] == command
    assert data["status"] in stormcf.report.STATUSES
    if command not in FACTS:
        assert data["checks"], "every command re-checks its answer with Storm"
    for check in data["checks"]:
        assert set(check) <= check_keys and check_keys - set(check) <= {"details", "undecided"}
        assert check["agrees"] in (True, None)


@pytest.mark.parametrize("command", list(INVOCATIONS))
def test_json_document_is_valid_under_the_schema(command, documents, validator):
    require_valid(validator, documents[command])


def test_the_schema_has_the_documented_keys():
    """The schema's envelope, check record and per-command keys are the tables of docs/json.md."""
    schema, keys = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"], documented_keys()
    assert set(schema["envelope"]["properties"]) - {"batch"} == keys["Envelope (every command)"]
    assert set(schema["check"]["properties"]) == keys["Check records (`checks`)"]
    missing = sorted(c for c in cli_commands() if f"command_{c.replace('-', '_')}" not in schema)
    assert not missing, f"no $defs/command_* in the schema for {missing}"
    for command in INVOCATIONS:
        assert set(schema[f"command_{command.replace('-', '_')}"]["properties"]) == keys[command], command
    assert set(schema["error_document"]["properties"]) == {"status", "error"}


@pytest.mark.parametrize("change", ["unknown status", "no checks", "a check without a value", "a command not a word",
                                    "a probability as text", "an error without a message"])
def test_the_schema_rejects_malformed_documents(change, documents, validator):
    """The schema is not vacuous: each of these changes to a valid document makes it invalid."""
    data = json.loads(json.dumps(documents["strategy"]))
    if change == "unknown status":
        data["status"] = "great"
    elif change == "no checks":
        del data["checks"]
    elif change == "a check without a value":
        del data["checks"][0]["value"]
    elif change == "a command not a word":
        data["command"] = "Strategy!"
    elif change == "a probability as text":
        data["probability"] = "0.2"
    else:
        data = {**data, "status": "timeout", "error": {"type": "TimeLimitReached", "internal": False}}
    assert not validator.is_valid(data)


def test_timeout_document_is_valid_under_the_schema(validator, tmp_path):
    """A command whose time limit runs out before it has an answer writes the timeout document (exit code 5): branch
    and bound on a set-cover instance that takes it many seconds, stopped after one."""
    from conformance import builtin_cases
    proc = subprocess.run([sys.executable, "-m", "stormcf", *builtin_cases()["setcover"].slow(tmp_path),
                           "--time-limit", "1", "--json", "-"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    data = json.loads(proc.stdout)
    assert proc.returncode == 5 and data["status"] == "timeout" and data["error"]["type"] == "TimeLimitReached", \
        (proc.returncode, proc.stderr)
    require_valid(validator, data)


#: one batch invocation per command with batch inputs: {good} is the file of two inputs, the first valid, the second
#: not; the documents are JSON lines on stdout
BATCHES = {
    "icfmdp": (["icfmdp", GRID, "-c", "p=0.4", "--paths", "{file}"], GRID_PATH),
    "explain-path": (["explain-path", ADAPTIVE, "--paths", "{file}", "--k", "1", "--explanations", "20"],
                     ADAPTIVE_PATH),
    "check": (["check", LOAN, "--strategies", "{file}", "-p", 'P=? [F "rejected"]'], IMPATIENT),
    "strategy": (["strategy", LOAN, "--strategies", "{file}", "-p", 'P<=0.2 [F "rejected"]'], IMPATIENT),
    "setcover": (["setcover", SETCOVER, "--agents", "{file}"], '[0, 0, 0, 0, 1]'),
    "recourse": (["recourse", "--dataset", "german", "--instances", "{file}", "--generations", "2", "--offspring",
                  "8", "--mutants", "2", "--no-exact"], "0"),
    "repair": (["repair", str(stormcf.example_path("die.pm")), "-p", 'P>=0.1 [F "two"]', "--instances", "{file}"],
               '{"nominal": {"p": 0.3, "q": 0.6}}'),
}


@pytest.mark.parametrize("command", list(BATCHES))
def test_batch_documents_match_the_documentation(command, tmp_path, validator):
    import contextlib
    import io
    argv, good = BATCHES[command]
    line = json.dumps(json.loads(Path(good).read_text())) if Path(good).suffix == ".json" else good
    file = tmp_path / "items.jsonl"
    file.write_text(line + '\n{"id": "bad"}\n')
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main([str(file) if a == "{file}" else a for a in argv] + ["--json", "-"])
    assert code == 4
    ok, failed = [json.loads(x) for x in stdout.getvalue().splitlines()]
    keys = documented_keys()
    envelope = keys["Envelope (every command)"]
    assert set(ok) == envelope | keys[command] | {"batch"} and ok["status"] != "error"
    assert set(failed) == envelope | {"batch", "error"} and failed["status"] == "error"
    assert failed["command"] == command and failed["checks"] == []
    assert ok["batch"] == {"index": 0, "input": f"{file}:1", "id": None}
    assert failed["batch"] == {"index": 1, "input": f"{file}:2", "id": "bad"}
    assert set(failed["error"]) == {"type", "message", "internal"} and failed["error"]["internal"] is False
    assert failed["error"]["message"].startswith(f"{file}:2")
    require_valid(validator, ok)
    require_valid(validator, failed)
