"""strategy --dot: the drawing shows the changed states (tables of σ and σ*) and the steps they take, with Storm's
model's probabilities; a grid model is drawn on its grid; a legend explains it; .png/.svg/.pdf are rendered."""
import shutil
import struct

import numpy as np
import pydot
import pytest

import stormcf
from stormcf.counterfactual import CounterfactualProblem, diverse_counterfactuals, solve_counterfactual
from stormcf.counterfactual.dot import (GRID_STEP, MAX_CHANGED, MAX_SUCCESSORS, counterfactual_graph, to_dot,
                                        write_drawing)

BAD = 'P<=0.2 [F "rejected"]'
#: pydot's parser (used here to read the DOT back) calls pyparsing's old names
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def parsed(result) -> pydot.Dot:
    graphs = pydot.graph_from_dot_data(to_dot(result))
    assert graphs and len(graphs) == 1                                   # the text is valid DOT
    return graphs[0]


def nodes(graph: pydot.Dot) -> dict[str, pydot.Node]:
    """Every node of the drawing by name, those of its clusters included."""
    found = {n.get_name(): n for n in graph.get_nodes()}
    for cluster in graph.get_subgraphs():
        found.update(nodes(cluster))
    return found


def step_probability(model, probabilities: np.ndarray, s: int, t: int) -> float:
    rows = np.array(list(model.choices(s)))
    return float(sum(probabilities[r] * model.transitions[r, t] for r in rows))


def test_loan_drawing_is_the_changed_state_and_its_steps(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD))
    m, graph = impatient.model, parsed(r)
    rework, rejected, resubmit = (m.state_index({"s": v}) for v in (5, 8, 6))
    states = {name for name in nodes(graph) if name.startswith("s")}
    assert states == {f"s{rework}", f"s{rejected}", f"s{resubmit}"}           # only the neighbourhood
    clusters = {c.get_name(): set(nodes(c)) for c in graph.get_subgraphs()}
    assert clusters == {"cluster_changed": {f"s{rework}"}, "cluster_reached": {f"s{rejected}", f"s{resubmit}"}}
    table = nodes(graph)[f"s{rework}"].get("label")
    assert "<b>σ</b>" in table and "<b>σ*</b>" in table and "0.8553" in table and "0.1447" in table
    labels = {(e.get_source(), e.get_destination()): e.get("label").strip('"') for e in graph.get_edges()}
    for t in (rejected, resubmit):
        before = step_probability(m, impatient.probabilities, rework, t)
        after = step_probability(m, r.strategy.probabilities, rework, t)
        shown = [float(x) for x in labels[f"s{rework}", f"s{t}"].split(" → ")]
        assert shown == pytest.approx([before, after], abs=5e-5) and before != pytest.approx(after)
    assert "σ: the given strategy" in nodes(graph)["legend"].get("label")
    assert "P<=1/5" in graph.get_label() and "0.411" in graph.get_label()


def test_diverse_counterfactuals_are_columns(impatient):
    r = diverse_counterfactuals(CounterfactualProblem(impatient, BAD), 2, solver="scip")
    graph = parsed(r)
    tables = [n.get("label") for name, n in nodes(graph).items() if "<table" in (n.get("label") or "")
              and name != "legend"]
    assert tables and all("σ*₁" in t and "σ*₂" in t for t in tables)
    changed = {c["name"] for result in (r, *r.diverse) for c in result.changes()}
    assert len(tables) == len(changed)


def test_frozenlake_is_drawn_on_its_grid():
    model = stormcf.load_model(stormcf.example_path("frozenlake4.prism"))
    r = solve_counterfactual(CounterfactualProblem(stormcf.Strategy.uniform(model), 'P<=0.8 [F "hole"]',
                                                   weights="0,0,1"))
    graph = counterfactual_graph(r)
    assert graph.get("layout") == "neato"
    for node in graph.get_nodes():
        name = node.get_name()
        if name.startswith("s") and name[1:].isdigit():
            v = model.valuation(int(name[1:]))
            assert node.get("pos") == f"{v['x'] * GRID_STEP[0]:.2f},{-v['y'] * GRID_STEP[1]:.2f}!"
    assert {n.get("label") for n in graph.get_nodes() if n.get_name().startswith("col")} >= {"x=0", "x=3"}
    edges = graph.get_edges()
    assert edges and all(e.get_source() != e.get_destination() for e in edges)       # staying is a table row


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_strategy_dot_renders_images_and_says_where(cli, tmp_path):
    loan, impatient = stormcf.example_path("loan.prism"), stormcf.example_path("loan.impatient.json")
    for name, magic in (("cf.png", b"\x89PNG"), ("cf.svg", b"<?xml"), ("cf.dot", b"digraph")):
        code, out, err = cli("strategy", loan, "-s", impatient, "-p", BAD, "--dot", tmp_path / name)
        assert code == 0, err
        assert f"drawing written to {tmp_path / name}" in out
        assert (tmp_path / name).read_bytes().lstrip()[:len(magic)] == magic


@pytest.fixture(scope="module")
def sepsis_counterfactual():
    """303 of 636 sepsis states change (d∞), each with up to ~80 successors: a drawing of everything is a tangle."""
    model = stormcf.load_model(stormcf.example_path("sepsis.prism"))
    return solve_counterfactual(CounterfactualProblem(stormcf.Strategy.uniform(model), 'P<=0.979 [F "dead"]',
                                                      weights="0,0,1"))


def test_large_changes_are_drawn_bounded_and_clustered(sepsis_counterfactual):
    r = sepsis_counterfactual
    graph = counterfactual_graph(r)
    changed, reached = (set(nodes(c)) for c in graph.get_subgraphs())
    assert len(r.changes()) == 303 and len(changed) == MAX_CHANGED
    assert "the 12 of 303 changed states with the largest changes" in graph.get_label()
    largest = sorted(r.distance.per_state, reverse=True)[MAX_CHANGED - 1]
    assert all(r.distance.per_state[int(name[1:])] >= largest - 1e-12 for name in changed)
    for name in changed:
        out = [e for e in graph.get_edges() if e.get_source() == name]
        assert len(out) <= MAX_SUCCESSORS + 1 and any(e.get_destination() == f"more{name[1:]}" for e in out)
    assert {f"more{name[1:]}" for name in changed} <= reached
    assert len(nodes(counterfactual_graph(r, max_changed=None))) > 303          # 0 / None: every changed state


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_large_drawing_renders(sepsis_counterfactual, tmp_path):
    """Graphviz renders the bounded drawing of 303 changed states in seconds (everything: 636 states and 27,361
    arrows, which it does not finish)."""
    out = tmp_path / "sepsis.png"
    write_drawing(sepsis_counterfactual, out)
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert out.read_bytes()[:4] == b"\x89PNG" and width < 10_000 and height < 10_000
