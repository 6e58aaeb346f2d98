"""What a worker receives: a model file by absolute path and content hash (a worker in another directory, or with
another file of that name, must not analyse a different model); how many workers a machine can hold."""
import os
import shutil
from pathlib import Path

import pytest

from stormcf.batch import ModelFile, backend, run_batch
from stormcf.modelcheck.task import PropertyCheck
from stormcf.setcover.task import InstanceFile
from stormcf.batch.run import Item, usable_cores
from stormcf.errors import ModelError, OptionError

from .conftest import LOAN

PAPER_EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "setcover" / "paper_example.json"


def test_a_model_file_is_sent_by_absolute_path_and_hash(tmp_path, monkeypatch):
    shutil.copy(LOAN, tmp_path / "m.prism")
    monkeypatch.chdir(tmp_path)
    source = ModelFile("m.prism")
    assert source.pin.location == str(tmp_path / "m.prism") and source.path == "m.prism"
    assert len(source.pin.digest) == 64
    monkeypatch.chdir(os.path.dirname(LOAN))             # a worker elsewhere still builds the same model
    assert source.load().n_states == 9


def test_a_worker_refuses_a_model_file_that_changed(tmp_path):
    model = tmp_path / "m.prism"
    shutil.copy(LOAN, model)
    source = ModelFile(str(model))
    model.write_text(model.read_text().replace("0.5", "0.25", 1))          # another model of the same name
    with pytest.raises(ModelError, match="differs from the one the batch started with"):
        source.load()
    model.unlink()
    with pytest.raises(ModelError, match="cannot read the file"):
        source.load()


def test_an_instance_file_is_read_where_the_batch_started(tmp_path, monkeypatch):
    instance = tmp_path / "i.json"
    shutil.copy(PAPER_EXAMPLE, instance)
    monkeypatch.chdir(tmp_path)
    source = InstanceFile("i.json")
    monkeypatch.chdir(os.path.dirname(LOAN))                   # a worker elsewhere: the absolute path
    assert source.load().n_actions == 9
    instance.write_text(instance.read_text().replace('"cost": 6', '"cost": 7'))
    with pytest.raises(ModelError, match="differs"):
        source.load()


def test_a_batch_fails_on_a_worker_whose_file_differs(tmp_path):
    model = tmp_path / "m.prism"
    shutil.copy(LOAN, model)
    source = ModelFile(str(model))
    model.write_text(model.read_text() + "\n// edited\n")
    with pytest.raises(ModelError, match="differs"):
        list(run_batch(source, PropertyCheck(properties=['Pmax=? [F "rejected"]']), [Item(0, "x", None)], workers=1))


def test_more_workers_than_cores_are_refused():
    with pytest.raises(OptionError, match=f"on a machine with {usable_cores()} cores"):
        with backend("loky", usable_cores() + 1):
            pass


def test_workers_that_memory_cannot_hold_are_refused(monkeypatch):
    import stormcf.batch.run as run
    monkeypatch.setattr(run, "usable_cores", lambda: 64)
    monkeypatch.setattr(run, "resident_memory", lambda: 2 ** 50)              # 1 PiB per worker
    with pytest.raises(OptionError, match="2 worker processes .* would need about"):
        with backend("loky", 2):
            pass


def test_a_dask_cluster_of_one_thread_says_the_batch_ran_here():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=40) as cluster:
        with backend("dask", None, cluster.scheduler_address) as words:
            assert "one worker thread, so the batch ran serially in this process" in words
