"""What a user's first commands install: ``make demo`` the core alone, with pip's progress shown (issue 35: it was
all extras, 1.7 GB, behind ``--quiet``), ``make test`` the extras and test tools on top; the Docker image's default
extras have no PyTorch (PyPI's is the CUDA build), and its dependencies are installed before the code is copied, so
that a code change rebuilds one small layer. scripts/container_smoke.sh builds and measures the image itself."""
import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def extras_require() -> dict[str, list[str]]:
    """setup.py's extras, read from its text (running it would run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    call = next(node for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup")
    return ast.literal_eval(next(k.value for k in call.keywords if k.arg == "extras_require"))


def make_dry_run(target: str, venv: Path) -> list[str]:
    """The pip commands ``make TARGET`` would run in a new virtual environment ``venv``."""
    done = subprocess.run(["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    return [line for line in done.stdout.splitlines() if "pip install" in line]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_installs_the_core_and_shows_pips_progress(tmp_path):
    venv = tmp_path / "venv"
    assert make_dry_run("demo", venv) == [f"{venv}/bin/pip install --progress-bar on -e ."]
    assert make_dry_run("test", venv) == [f"{venv}/bin/pip install --progress-bar on -e .",
                                          f"{venv}/bin/pip install --progress-bar on -e '.[all,test]'"]


def test_the_default_image_has_no_pytorch_and_copies_the_code_last():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    default = re.search(r"^ARG EXTRAS=(\S+)$", dockerfile, re.MULTILINE).group(1).split(",")
    extras = extras_require()
    assert set(default) <= set(extras)
    assert not [r for name in default for r in extras[name] if r.startswith("torch")]
    assert [r for r in extras["all"] if r.startswith("torch")] == extras["learn"]
    dependencies = dockerfile.index('pip install ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} ".[$EXTRAS]"')
    assert dockerfile.index("COPY setup.py pyproject.toml") < dependencies < dockerfile.index("COPY . ")
