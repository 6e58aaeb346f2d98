"""Lazy imports (issue 20): the command line starts without the heavy libraries of the analyses, and every public
name of stormcf's packages still resolves."""
import importlib
import json
import subprocess
import sys

import pytest

import import_graph

#: libraries an analysis imports only when it runs (plots, learning, clusters, solvers)
HEAVY = ("matplotlib", "sklearn", "dask", "distributed", "aalpy", "gurobipy", "pyscipopt", "highspy", "torch",
         "pandas", "pm4py")
PACKAGES = ("stormcf", "stormcf.batch", "stormcf.counterfactual", "stormcf.counterfactual_mdp", "stormcf.explain",
            "stormcf.icfmdp", "stormcf.learn", "stormcf.recourse", "stormcf.setcover", "stormcf.solvers",
            "stormcf.storm")


def imported_by(code: str, top_level: bool = True) -> set[str]:
    """The (top-level) modules a fresh interpreter has imported after running ``code``."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                          check=True, capture_output=True, text=True)
    modules = json.loads(done.stdout.splitlines()[-1])
    return {m.split(".")[0] for m in modules} if top_level else set(modules)


@pytest.mark.parametrize("code", ["import stormcf.cli", "from stormcf.cli import build_parser\nbuild_parser()"])
def test_the_command_line_starts_without_heavy_libraries(code):
    """``import stormcf.cli`` and building the parser (``stormcf --help``) import no analysis library, not even
    numpy or Storm: the choices of options that live in analysis modules load when the option is used."""
    modules = imported_by(code)
    assert not modules & set(HEAVY), modules & set(HEAVY)
    assert not modules & {"numpy", "scipy", "stormpy", "joblib"}


def test_a_check_imports_no_heavy_library(tmp_path):
    from stormcf import example_path
    modules = imported_by("import contextlib, io\nfrom stormcf.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          f"    assert main(['check', {str(example_path('loan.prism'))!r}, '-p', "
                          "'Pmin=? [F \"rejected\"]']) == 0")
    assert not modules & set(HEAVY), modules & set(HEAVY)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        module.no_such_name        # noqa: B018


def test_lazy_choices_load_when_used():
    from stormcf._lazy import LazyChoices
    methods = LazyChoices("stormcf.setcover.engines", "METHODS", ("lp",))
    assert "bnb" in methods and methods[0] == "lp" and list(methods)[1:] == list(
        importlib.import_module("stormcf.setcover.engines").METHODS)
    assert "nothing" not in methods and len(methods) == len(list(methods))


def test_a_name_that_is_also_its_submodule_stays_the_name():
    """stormcf.recourse exports the function brkga of stormcf/recourse/brkga.py: importing that submodule first (by
    any route) must not leave the module under the name."""
    code = ("from stormcf.recourse.brkga import dominates\nfrom stormcf.recourse import BRKGASettings, brkga\n"
            "import stormcf.recourse\nassert callable(brkga) and stormcf.recourse.brkga is brkga, brkga")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_analysis_imports_the_batch_runner():
    """The analyses sit below the batch runner (issue 38): what they share with batches (items, pinned files, the
    document of an item without an answer) is in ``stormcf.items``, and importing an analysis's task imports no
    batch machinery."""
    from pathlib import Path

    from stormcf.analysis import registry
    packages = {type_.__module__.rsplit(".", 1)[0] for type_ in registry().values()}
    root = Path(__file__).resolve().parents[1] / "stormcf"
    for package in packages:
        for file in (root / package.split(".", 1)[1]).rglob("*.py"):
            text = file.read_text()
            assert "from ..batch" not in text and "stormcf.batch import" not in text, file
    done = subprocess.run([sys.executable, "-c", "import sys, stormcf.analysis\nstormcf.analysis.registry()\n"
                           "print('stormcf.batch.run' in sys.modules)"], check=True, capture_output=True, text=True)
    assert done.stdout.split()[-1] == "False"


def test_stormcf_has_no_import_cycle():
    """No module of stormcf imports, directly or through others, a module that imports it back (issue 38), at the top
    or inside a function (an import moved into a function only hides a cycle). Where a cycle is inherent, the import
    that closes it says why in a comment starting ``# import cycle:``."""
    found = import_graph.cycles()
    assert not found, "import cycles:\n" + "\n\n".join("\n".join(map(str, cycle)) for cycle in found)


def test_every_import_marked_as_closing_a_cycle_closes_one():
    """The ``# import cycle:`` comments are not stale: each marked import is an edge of a cycle of the whole graph."""
    in_cycles = {str(edge) for cycle in import_graph.cycles(deliberate=True) for edge in cycle}
    marked = [str(edge) for module in import_graph.modules() for edge in import_graph.imports(module)
              if edge.deliberate]
    assert set(marked) <= in_cycles, set(marked) - in_cycles


def test_no_module_uses_another_modules_private_names():
    """An underscore name is private to its module (issue 38): what another module of stormcf needs is public there
    (``from .handle import storm_message``, not ``_storm_message``), and the test names every use that is not."""
    found = import_graph.private_names()
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_info_imports_neither_numpy_nor_scipy():
    """``stormcf info`` reads its facts straight from Storm's model (issue 34): no explicit model, so neither numpy
    nor scipy, nor the plugins' entry points (``importlib.metadata``) for one of stormcf's own commands."""
    from stormcf import example_path
    modules = imported_by("import contextlib, io\nfrom stormcf.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          f"    assert main(['info', {str(example_path('loan.prism'))!r}, '--json', '-']) == 0",
                          top_level=False)
    top = {m.split(".")[0] for m in modules}
    assert "stormpy" in top
    assert not top & {"numpy", "scipy", "joblib", "threadpoolctl", *HEAVY}, top & {"numpy", "scipy", *HEAVY}
    assert "importlib.metadata" not in modules
