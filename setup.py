"""Packaging for stormcf: counterfactual explanations on top of the Storm model checker."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent

setup(
    name="stormcf",
    version="0.2.0",
    description="Counterfactual explanations for MDPs, built on the Storm probabilistic model checker (stormpy 2.0)",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["stormcf", "stormcf.*"]) + ["stormcf.prism_models"],
    # the example models and inputs live at the top level (prism_models/) and ship inside the package
    package_dir={"stormcf.prism_models": "prism_models"},
    # the example inputs of the documented commands: models, strategies, paths, batches, properties, logs, instances
    package_data={"stormcf.prism_models": ["*.prism", "*.pm", "*.json", "*.jsonl", "*.props", "*.csv"],
                  # the JSON Schema of the documents (docs/json.md; `stormcf schema` prints it)
                  "stormcf": ["schema/*.json"],
                  # UCI Adult and German credit (CC BY 4.0, attribution in data/README.txt)
                  "stormcf.recourse": ["data/*.gz", "data/*.names", "data/README.txt"]},
    # HiGHS ships with scipy (scipy.optimize.milp/linprog): the core install solves every analysis; SCIP
    # (pyscipopt, about 65 MB installed) proves the counterfactual strategies of mixed weights optimal (the MIQCQP),
    # `stormcf demo`'s headline among them, which the linear solvers cannot; pydot writes strategy --dot's drawings
    install_requires=["stormpy==2.0.*", "numpy>=1.24", "scipy>=1.10", "scikit-learn>=1.3", "aalpy>=2.0",
                      "joblib>=1.3", "tqdm>=4.60", "pyscipopt>=5.0", "pydot>=2.0"],
    extras_require={
        # the solvers `auto` prefers (SCIP is in the core), plots, dask, and PyTorch for the set-cover generators;
        # the Docker image has all but `learn` by default (Dockerfile)
        "all": ["gurobipy", "highspy", "matplotlib", "dask[distributed]", "torch==2.13.0"],
        "solvers": ["gurobipy", "highspy"],
        "plot": ["matplotlib"],
        # training the set-cover generators (setcover-learn mc/na/fa/seq2seq); inference of saved ones is numpy
        "learn": ["torch==2.13.0"],
        "dask": ["dask[distributed]"],
        "xes": ["pm4py"],   # reading XES logs; pm4py is AGPL, so never a core dependency
        # nbclient...: the tutorial notebook runs in a test; cryptography: a throwaway certificate for the Dask TLS
        # test; jsonschema: the documents against stormcf/schema/stormcf-1.json
        "test": ["pytest", "hypothesis", "nbclient", "nbformat", "ipykernel", "cryptography", "jsonschema", "mypy"],
    },
    entry_points={"console_scripts": ["stormcf=stormcf.__main__:main"]},
)
