import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import stormcf
from tiers import SLOW_MODULES, slow_tests

# Deterministic example generation in CI; Storm calls are too slow for hypothesis' default deadline.
settings.register_profile("stormcf", derandomize=True, deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "stormcf"))


@pytest.fixture(scope="session")
def loan():
    return stormcf.load_model(stormcf.example_path("loan.prism"))


@pytest.fixture(scope="session")
def impatient(loan):
    return stormcf.Strategy.load(loan, stormcf.example_path("loan.impatient.json"))


DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def reference_instances() -> Path:
    """The seed authors' outputs (tests/data/reference-instances, see tests/data/README.md)."""
    return DATA / "reference-instances"


@pytest.fixture
def cli(capsys):
    """Run the command line in-process: ``cli("check", MODEL, ...)`` -> (exit code, stdout, stderr)."""
    from stormcf.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


class Process:
    """A finished ``python -m stormcf`` run: exit code, stdout, stderr."""

    def __init__(self, proc):
        self.code, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    @property
    def one_line_error(self) -> bool:
        return self.code == 2 and self.err.count("\n") == 1 and self.err.startswith("stormcf: ") and not self.out


#: run a command without the capabilities that let root read and write any file (setpriv, util-linux), so that
#: file permissions apply as they do for other users
UNPRIVILEGED = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


@pytest.fixture
def stormcf_process(tmp_path):
    """Run the command line in a fresh process: ``stormcf_process("info", MODEL)`` -> :class:`Process`.

    Options: ``unprivileged=True`` drops root's file-permission override (see UNPRIVILEGED), ``memory=bytes``
    limits the address space (``ulimit -v``), ``env={...}`` adds environment variables, ``timeout`` in seconds."""
    import resource
    import subprocess
    import sys

    def run(*argv, unprivileged=False, memory=None, env=None, timeout=600, cwd=None):
        command = [sys.executable, "-m", "stormcf", *map(str, argv)]
        if unprivileged and os.geteuid() == 0:
            command = UNPRIVILEGED + command
        limit = (lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory))) if memory else None
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, preexec_fn=limit,
                              env={**os.environ, **(env or {})}, cwd=cwd or tmp_path, stdin=subprocess.DEVNULL)
        return Process(proc)
    return run


def pytest_collection_modifyitems(config, items):
    """Mark the tests of ``tiers.SLOW_MODULES`` and of tests/slow_tests.txt as ``slow``."""
    root = Path(__file__).resolve().parent
    listed = slow_tests()
    for item in items:
        module = Path(str(item.fspath)).resolve().relative_to(root).as_posix()
        function = getattr(item, "originalname", None) or item.name.split("[")[0]
        if module in SLOW_MODULES or module.startswith("fuzz/") or f"{module}::{function}" in listed:
            item.add_marker(pytest.mark.slow)
