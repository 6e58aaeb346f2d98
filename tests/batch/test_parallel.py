"""Parallel batches: joblib's loky workers and a Dask cluster give the serial run's documents item by item; every
worker builds the model once."""
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from joblib import parallel_config

from stormcf.batch import ModelFile, local_cluster, read_jsonl, run_batch
from stormcf.batch.run import LEAN_DASK, chunks
from stormcf.errors import ModelError, PathError
from stormcf.explain.task import PathExplanation
from stormcf.icfmdp import ICFMDPSettings
from stormcf.icfmdp.task import IntervalCounterfactualMDP
from stormcf.report import without_times

from .conftest import SEPSIS


def documents(outcomes):
    return [without_times(o.document) for o in outcomes]


@pytest.fixture(scope="module")
def items(sepsis_paths):
    return read_jsonl(str(sepsis_paths), PathError)


@pytest.fixture(scope="module")
def serial(items):
    """The serial documents of the icfmdp and explain-path tasks (the reference)."""
    return {name: documents(run_batch(ModelFile(SEPSIS), task, items, workers=1))
            for name, task in TASKS.items()}


TASKS = {"icfmdp": IntervalCounterfactualMDP(reward="r", method=ICFMDPSettings(optimistic=True, baseline="gumbel")),
         "explain-path": PathExplanation(explanations=200, reward_model="r", k=2, k_max=3)}


@pytest.mark.parametrize("name", list(TASKS))
def test_loky_workers_give_the_serial_documents(name, items, serial):
    parallel = documents(run_batch(ModelFile(SEPSIS), TASKS[name], items, workers=2))
    assert parallel == serial[name]
    assert [d["status"] for d in parallel] == ["ok"] * 6 + ["error"] * 2


@dataclass(frozen=True)
class CountingModelFile(ModelFile):
    """A model file whose every build appends the building process's id to ``log``."""

    log: str = ""

    def load(self):
        with open(self.log, "a") as f:
            f.write(f"{os.getpid()}\n")
        return super().load()


def test_each_worker_builds_the_model_once(items, tmp_path):
    log = tmp_path / "builds.log"
    source = CountingModelFile(SEPSIS, log=str(log))
    many = [replace(item, index=k) for k, item in enumerate(items * 3)]
    outcomes = list(run_batch(source, IntervalCounterfactualMDP(reward="r"), many, workers=2))
    assert len(outcomes) == 24
    builds = log.read_text().split()
    assert len(set(builds)) == len(builds), builds                          # at most once per worker process
    assert 1 <= len(builds) < len(chunks(many, 2, False)), builds           # fewer than the chunks: kept, reused
    assert str(os.getpid()) not in builds                                   # and never here


def test_items_of_one_position_are_refused(items):
    """Outcomes are matched to items by position: two items with one index would be one answer for two inputs."""
    with pytest.raises(ValueError, match="two items at position 0"):
        run_batch(ModelFile(SEPSIS), IntervalCounterfactualMDP(reward="r"), items * 2, workers=2)


def test_a_bad_model_fails_a_parallel_batch(items, tmp_path):
    with pytest.raises(ModelError, match="nothing.prism: file not found"):
        list(run_batch(ModelFile(str(tmp_path / "nothing.prism")), IntervalCounterfactualMDP(), items, workers=2))


@pytest.fixture(scope="module")
def cluster():
    """A Dask cluster of two single-threaded worker processes, started for these tests as stormcf starts one (the
    extra stormcf[dask], part of stormcf[all])."""
    with local_cluster(2) as local:
        yield local


def lean_settings() -> dict:
    """The settings of :data:`~stormcf.batch.run.LEAN_DASK` as Dask's configuration in this process has them."""
    import dask.config
    return {key: dask.config.get(key) for key in LEAN_DASK}


def test_the_cluster_stormcf_starts_runs_with_the_lean_settings(cluster):
    """Every worker process has the lean settings (the nannies pass on the configuration of the process where the
    cluster started) and no glibc trim threshold of Dask's, and each setting names one of Dask's (a misspelt key
    would silently change nothing)."""
    import dask.config
    from distributed import Client
    defaults = dask.config.merge(*dask.config.defaults)
    assert all(dask.config.get(key, None, config=defaults) not in (None, value) for key, value in LEAN_DASK.items())
    with Client(cluster) as client:
        assert list(client.run(lean_settings).values()) == [LEAN_DASK] * 2
        trim = client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_")     # this process's, not Dask's 65536
        assert list(trim.values()) == [os.environ.get("MALLOC_TRIM_THRESHOLD_")] * 2


@pytest.mark.parametrize("name", list(TASKS))
def test_dask_cluster_gives_the_serial_documents(name, items, serial, cluster):
    from distributed import Client
    with Client(cluster.scheduler_address), parallel_config(backend="dask"):
        parallel = documents(run_batch(ModelFile(SEPSIS), TASKS[name], items))
    assert parallel == serial[name]


def test_cli_on_a_dask_cluster_gives_the_serial_json_lines(sepsis_paths, cluster, tmp_path, cli):
    argv = ["icfmdp", SEPSIS, "--paths", sepsis_paths, "--reward", "r"]
    assert cli(*argv, "--json", tmp_path / "serial.jsonl")[0] == 4
    code, out, err = cli(*argv, "--json", tmp_path / "dask.jsonl", "--backend", "dask", "--scheduler",
                         cluster.scheduler_address)
    assert code == 4 and err == ""
    assert f"dask at {cluster.scheduler_address}" in out
    lines = [Path(tmp_path / f).read_text().splitlines() for f in ("serial.jsonl", "dask.jsonl")]
    assert [without_times(json.loads(x)) for x in lines[0]] == [without_times(json.loads(x)) for x in lines[1]]


def test_a_tls_scheduler_with_certificates_from_dasks_configuration(sepsis_paths, tmp_path, stormcf_process):
    """A scheduler can run code in its clients, so a cluster outside this machine is reached over tls:// with
    certificates: a throwaway self-signed one (Security.temporary) for the cluster, and the same CA, certificate
    and key for stormcf's client through Dask's configuration (environment variables). Without them: one line."""
    pytest.importorskip("cryptography")
    from distributed import LocalCluster
    from distributed.security import Security
    security = Security.temporary()
    pem = {"ca.pem": security.tls_ca_file, "client.pem": security.tls_client_cert, "key.pem": security.tls_client_key}
    for name, text in pem.items():
        (tmp_path / name).write_text(text)
    env = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(tmp_path / "ca.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(tmp_path / "client.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(tmp_path / "key.pem")}
    argv = ["icfmdp", SEPSIS, "--paths", sepsis_paths, "--reward", "r"]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tls://", security=security,
                      dashboard_address=None, silence_logs=40) as cluster:
        assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
        tls = stormcf_process(*argv, "--json", tmp_path / "tls.jsonl", "--backend", "dask", "--scheduler",
                              cluster.scheduler_address, env=env)
        refused = stormcf_process(*argv, "--backend", "dask", "--scheduler", cluster.scheduler_address)
    assert tls.code == 4 and f"dask at {cluster.scheduler_address}" in tls.out, tls.err
    serial = stormcf_process(*argv, "--json", tmp_path / "serial.jsonl")
    lines = [(tmp_path / f).read_text().splitlines() for f in ("serial.jsonl", "tls.jsonl")]
    assert [without_times(json.loads(x)) for x in lines[0]] == [without_times(json.loads(x)) for x in lines[1]]
    assert serial.code == 4 and refused.one_line_error and "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" in refused.err
def test_setcover_agents_in_chunks_give_the_serial_documents(tmp_path):
    """Each loky worker certifies its chunk of agents with one Storm call; the documents equal the serial ones
    (one chunk, one call for all)."""
    from stormcf.setcover.data import agent_pool, paper_instance
    from stormcf.setcover.task import InstanceFile, SetCoverExplanation
    instance = paper_instance(10, seed=2)
    instance.save(tmp_path / "instance.json")
    lines = [json.dumps(x) for x in agent_pool(instance, 40, 0.5, 1)[:9].tolist()] + ["[0, 1]"]
    (tmp_path / "agents.jsonl").write_text("\n".join(lines) + "\n")
    items = read_jsonl(str(tmp_path / "agents.jsonl"))
    source, task = InstanceFile(str(tmp_path / "instance.json")), SetCoverExplanation()
    serial = documents(run_batch(source, task, items, workers=1))
    assert [d["status"] for d in serial] == ["optimal"] * 9 + ["error"]
    assert documents(run_batch(source, task, items, workers=2)) == serial
