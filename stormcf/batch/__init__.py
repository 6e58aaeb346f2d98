"""Batches: many observed paths, strategies, agents or instances against one model, with one model build per batch
(per worker), results in input order, serially or in parallel with joblib (loky processes here, Dask on a cluster).

Any registered analysis (:mod:`stormcf.analysis`) runs as a batch. Example (Python API)::

    from stormcf.batch import ModelFile, read_jsonl, run_batch
    from stormcf.icfmdp.task import IntervalCounterfactualMDP

    source = ModelFile("prism_models/sepsis.prism")
    analysis = IntervalCounterfactualMDP(reward="r")
    for outcome in run_batch(source, analysis, read_jsonl("paths.jsonl"), workers=2):
        print(outcome.index, outcome.status, outcome.document.get("worst_case_value"))

On a Dask cluster, the same with joblib's configuration::

    from distributed import Client
    from joblib import parallel_config

    with Client("tcp://scheduler:8786"), parallel_config(backend="dask"):
        outcomes = list(run_batch(source, analysis, items))
"""
from .._lazy import lazy_exports

_EXPORTS = {**dict.fromkeys(["BatchRun", "Budget", "ModelFile", "Outcome", "Source", "Spool", "backend", "chunks",
                             "local_cluster", "read_jsonl", "run_batch", "run_chunk", "run_item", "shared"], ".run"),
            **dict.fromkeys(["BatchOutput", "BatchSummary"], ".output"),
            **dict.fromkeys(["FilePin", "Item", "ItemError"], "stormcf.items")}   # the analyses' vocabulary
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)   # public name -> submodule, imported on first use

__all__ = list(_EXPORTS)
