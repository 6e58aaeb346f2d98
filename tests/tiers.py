"""The two tiers of the test suite: the full suite (``make test``, CI) and the fast tier (``make test-fast``:
``pytest -m "not slow"``), which leaves out the tests tests/conftest.py marks ``slow`` from these lists."""
from pathlib import Path

#: test modules whose tests start fresh processes, sweep resource limits, train networks or run long searches: the
#: full suite (``make test``, CI) runs them, the fast tier (``make test-fast``: ``pytest -m "not slow"``) does not
SLOW_MODULES = frozenset({
    "test_conformance.py", "test_plugins.py", "test_doc_commands.py", "test_python_api_docs.py", "test_tutorial.py",
    "test_scripts.py", "test_typing.py", "test_json_schema.py", "test_cli_contract.py", "test_console.py",
    "test_packaging.py",
    "batch/test_parallel.py", "batch/test_endings.py", "batch/test_batch_cli.py",
    "counterfactual/test_cf_qvbs.py", "counterfactual/test_cf_interrupt.py", "counterfactual/test_cf_exact.py",
    "counterfactual/test_cf_random.py", "counterfactual/test_cf_stages.py", "counterfactual/test_cf_bounds.py",
    "counterfactual/test_cf_dot.py", "learn/test_learn_out_of_memory.py", "setcover/test_setcover_learning.py",
    "setcover/test_setcover_generators.py", "setcover/test_setcover_engines.py", "storm/test_isolate.py",
    "recourse/test_datasets.py", "recourse/test_oracles.py", "test_verify.py",
})


#: the longest tests of the other modules, one ``MODULE::FUNCTION`` per line (how they were chosen: the file's header)
SLOW_TESTS_FILE = Path(__file__).resolve().parent / "slow_tests.txt"


def slow_tests() -> frozenset[str]:
    lines = SLOW_TESTS_FILE.read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))
