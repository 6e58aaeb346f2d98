"""Batches: many observed paths, strategies, agents or instances against one model, with one model build per batch
(per worker), results in input order, serially or in parallel with joblib (loky processes here, Dask on a cluster).

Example (Python API)::

    from stormcf.batch import ModelFile, icfmdp_task, read_jsonl, run_batch

    source = ModelFile("prism_models/sepsis.prism")
    task = icfmdp_task(reward="r")
    for outcome in run_batch(source, task, read_jsonl("paths.jsonl"), workers=2):
        print(outcome.index, outcome.status, outcome.document.get("worst_case_value"))

On a Dask cluster, the same with joblib's configuration::

    from distributed import Client
    from joblib import parallel_config

    with Client("tcp://scheduler:8786"), parallel_config(backend="dask"):
        outcomes = list(run_batch(source, task, items))
"""
from .._lazy import lazy_exports

_EXPORTS = {  # public name -> the submodule it lives in, imported on first use (stormcf._lazy)
    **dict.fromkeys(["BatchSummary", "Item", "ItemError", "ModelFile", "Outcome", "Source", "Task", "backend",
        "read_jsonl", "run_batch", "run_item", "shared"], ".run"),
    **dict.fromkeys(["COLUMNS", "InstanceFile", "RecourseData", "check_task", "counterfactual_task", "explain_task",
        "icfmdp_task", "recourse_task", "setcover_task", "strategy_items"], ".tasks"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["BatchSummary", "COLUMNS", "InstanceFile", "Item", "ItemError", "ModelFile", "Outcome", "RecourseData",
           "Source", "Task", "backend", "check_task", "counterfactual_task", "explain_task", "icfmdp_task",
           "read_jsonl", "recourse_task", "run_batch", "run_item", "setcover_task", "shared", "strategy_items"]
