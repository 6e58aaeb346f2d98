"""The logs in tests/data are what tests/learn/make_data.py writes (their provenance)."""
import importlib.util
from pathlib import Path


def test_data_files_are_current(tmp_path, data, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_data", Path(__file__).with_name("make_data.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "DATA", tmp_path)
    module.main()
    for name in ("loan_paired.csv", "loan_activity.csv", "loan_activity.xes", "names.csv"):
        assert (tmp_path / name).read_bytes() == (data / name).read_bytes(), name
