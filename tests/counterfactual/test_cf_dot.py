"""strategy --dot: the drawing shows the changed states (tables of σ and σ*) and the steps they take, with Storm's
model's probabilities; a grid model is drawn on its grid; a legend explains it; .png/.svg/.pdf are rendered."""
import shutil

import numpy as np
import pydot
import pytest

import stormcf
from stormcf.counterfactual import CounterfactualProblem, diverse_counterfactuals, solve_counterfactual
from stormcf.counterfactual.dot import GRID_STEP, counterfactual_graph, to_dot

BAD = 'P<=0.2 [F "rejected"]'
#: pydot's parser (used here to read the DOT back) calls pyparsing's old names
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def parsed(result) -> pydot.Dot:
    graphs = pydot.graph_from_dot_data(to_dot(result))
    assert graphs and len(graphs) == 1                                   # the text is valid DOT
    return graphs[0]


def step_probability(model, probabilities: np.ndarray, s: int, t: int) -> float:
    rows = np.array(list(model.choices(s)))
    return float(sum(probabilities[r] * model.transitions[r, t] for r in rows))


def test_loan_drawing_is_the_changed_state_and_its_steps(impatient):
    r = solve_counterfactual(CounterfactualProblem(impatient, BAD))
    m, graph = impatient.model, parsed(r)
    rework, rejected, resubmit = (m.state_index({"s": v}) for v in (5, 8, 6))
    states = {n.get_name() for n in graph.get_nodes() if n.get_name().startswith("s")}
    assert states == {f"s{rework}", f"s{rejected}", f"s{resubmit}"}           # only the neighbourhood
    table = graph.get_node(f"s{rework}")[0].get("label")
    assert "<b>σ</b>" in table and "<b>σ*</b>" in table and "0.8553" in table and "0.1447" in table
    labels = {(e.get_source(), e.get_destination()): e.get("label").strip('"') for e in graph.get_edges()}
    for t in (rejected, resubmit):
        before = step_probability(m, impatient.probabilities, rework, t)
        after = step_probability(m, r.strategy.probabilities, rework, t)
        shown = [float(x) for x in labels[f"s{rework}", f"s{t}"].split(" → ")]
        assert shown == pytest.approx([before, after], abs=5e-5) and before != pytest.approx(after)
    assert graph.get_node("legend") and "σ: the given strategy" in graph.get_node("legend")[0].get("label")
    assert "P<=1/5" in graph.get_label() and "0.411" in graph.get_label()


def test_diverse_counterfactuals_are_columns(impatient):
    r = diverse_counterfactuals(CounterfactualProblem(impatient, BAD), 2, solver="scip")
    graph = parsed(r)
    tables = [n.get("label") for n in graph.get_nodes() if "<table" in (n.get("label") or "")
              and n.get_name() != "legend"]
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
