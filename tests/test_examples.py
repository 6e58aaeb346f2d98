"""The shipped example inputs (``prism_models/``, installed as ``stormcf.prism_models``) and ``stormcf examples``:
every file is described, listed and copied; a copy keeps the user's files; the event logs are the generated test
logs (their provenance: tests/learn/make_data.py)."""
import json
from pathlib import Path

import stormcf
from stormcf.examples import EXAMPLES, list_examples

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_example_is_described_and_nothing_else():
    assert set(list_examples()) == set(EXAMPLES)
    assert all(stormcf.example_path(name).is_file() for name in EXAMPLES)


def test_the_example_logs_are_the_generated_test_logs():
    data = ROOT / "tests" / "data"
    assert stormcf.example_path("loan_log.csv").read_bytes() == (data / "loan_paired.csv").read_bytes()
    assert stormcf.example_path("loan_activity.csv").read_bytes() == (data / "loan_activity.csv").read_bytes()
    assert (stormcf.example_path("setcover.paper.json").read_bytes()
            == (data / "setcover" / "paper_example.json").read_bytes())


def test_examples_lists_every_file(cli):
    code, out, err = cli("examples")
    assert code == 0 and not err
    assert all(f"prism_models/{name}" in out for name in EXAMPLES)
    code, out, _ = cli("examples", "--json", "-")
    facts = json.loads(out)["facts"]
    assert code == 0 and [f["name"] for f in facts["files"]] == list_examples() and facts["copied_to"] is None


def test_copy_writes_every_example_and_keeps_existing_files(tmp_path, cli):
    mine = tmp_path / "prism_models" / "loan.prism"
    mine.parent.mkdir()
    mine.write_text("// my edit\n")
    code, out, _ = cli("examples", "--copy", str(tmp_path))
    assert code == 0 and "kept 1 files" in out
    assert mine.read_text() == "// my edit\n"
    for name in set(EXAMPLES) - {"loan.prism"}:
        assert (tmp_path / "prism_models" / name).read_bytes() == stormcf.example_path(name).read_bytes()
    code, out, _ = cli("examples", "--copy", str(tmp_path), "--json", "-")
    facts = json.loads(out)["facts"]
    assert code == 0 and facts["copied"] == [] and facts["kept"] == list_examples()


def test_copy_into_a_missing_folder_or_over_a_file_is_one_line(tmp_path, cli):
    code, _, err = cli("examples", "--copy", str(tmp_path / "missing"))
    assert code == 2 and "no such directory" in err and err.count("\n") == 1
    (tmp_path / "prism_models").write_text("a file")
    code, _, err = cli("examples", "--copy", str(tmp_path))
    assert code == 2 and "is not a folder" in err and err.count("\n") == 1
