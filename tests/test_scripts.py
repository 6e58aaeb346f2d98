"""Every benchmark and experiment under ``scripts/`` runs in its smoke setting (issue 20), so that a renamed function
cannot break one unnoticed. The convention (scripts/README.md): every ``scripts/*.py`` accepts ``--quick`` and then
finishes in seconds, printing its table, writing nothing outside the current directory; every shell script is listed
here with the reason it does not run in the tests. Private modules (``_*.py``, e.g. the benchmarks' shared measuring
code ``_measure.py``) are imported by the scripts, not run."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

#: shell scripts, and why the tests do not run them
NOT_RUN = {
    "container_smoke.sh": "builds and runs the Docker image (needs Docker; minutes)",
    "fresh_install_smoke.sh": "installs stormcf into a new virtual environment from the package index (minutes)",
}


#: what the solvers print from C code when it is not routed away (HiGHS's banner, Gurobi's and SCIP's logs)
NATIVE_OUTPUT = ("Running HiGHS", "Copyright (c)", "Gurobi Optimizer", "Set parameter", "SCIP version")


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*.py") if not p.name.startswith("_")))
def test_every_script_runs_in_its_quick_setting(script, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(SCRIPTS / script), "--quick"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script} --quick failed:\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} --quick printed nothing"
    assert not [line for line in done.stdout.splitlines() if line.lstrip().startswith(NATIVE_OUTPUT)], \
        f"{script} --quick: a solver's own output on stdout"


def test_every_shell_script_is_listed_with_a_reason():
    assert {p.name for p in SCRIPTS.glob("*.sh")} == set(NOT_RUN)
