"""Graphviz drawing of counterfactual strategies (DOT, written with pydot), after seed 000's Fig. 5.

Only the neighbourhood of the changes is drawn: every state where some counterfactual differs from σ, and the states
its choices lead to. A changed state is a table of its actions with their probabilities under σ and under each
counterfactual σ* (changed ones in blue); an arrow from it to a successor carries the probability of that step under
σ and under σ* (Σ_a σ(a)·P(s, a, s'), blue where it changed). A legend says so. Where the drawn states differ in
exactly two integer variables (a grid, such as FrozenLake's x and y), they are placed on that grid: one row per
value of the second variable, one column per value of the first, with the values as row and column headings.
"""
from __future__ import annotations

import html
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np
import pydot

from ..distance import CHANGE_TOLERANCE
from ..errors import OutputError
from ..report import atomic_output, write_text
from .result import CounterfactualResult, _number

#: a grid layout is used up to this many cells (rows x columns); larger boxes get the default layout
MAX_GRID_CELLS = 400
#: inches between the columns and between the rows of a grid
GRID_STEP = (3.8, 2.9)
CHANGED, UNCHANGED, STATE_FILL, TARGET_FILL = "blue", "gray55", "lightblue", "mistyrose"
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


#: file extensions that ``write_drawing`` renders with Graphviz's ``dot`` program; any other name gets the DOT text
RENDERED_FORMATS = ("png", "svg", "pdf")


def drawing_format(out: str | os.PathLike) -> str:
    """What ``write_drawing`` writes to ``out``: ``png``, ``svg`` or ``pdf`` (rendered by Graphviz, which must be
    installed: else :class:`~stormcf.errors.OutputError`, before any work) or ``dot`` (the DOT text)."""
    fmt = Path(out).suffix.lower().lstrip(".")
    if fmt not in RENDERED_FORMATS:
        return "dot"
    if shutil.which("dot") is None:
        raise OutputError(f"{out}: drawing a .{fmt} needs Graphviz's dot program (install graphviz), or write the "
                          "DOT text to a .dot file")
    return fmt


def write_drawing(results: CounterfactualResult | Sequence[CounterfactualResult], out: str | os.PathLike) -> str:
    """Write the drawing to ``out`` (atomically): rendered by Graphviz for .png/.svg/.pdf, else as DOT text.
    Returns the format written."""
    fmt, graph = drawing_format(out), counterfactual_graph(results)
    if fmt == "dot":
        write_text(graph.to_string(), out)
    else:
        image = graph.create(prog="dot", format=fmt)
        with atomic_output(out) as tmp:
            Path(tmp).write_bytes(image)
    return fmt


def to_dot(results: CounterfactualResult | Sequence[CounterfactualResult]) -> str:
    """The DOT text for one result (with its diverse counterfactuals) or a list of results on one problem."""
    return counterfactual_graph(results).to_string()


def counterfactual_graph(results: CounterfactualResult | Sequence[CounterfactualResult]) -> pydot.Dot:
    """The drawing as a :class:`pydot.Dot` graph (``to_string()`` is the DOT text; ``write_png`` renders it with
    Graphviz)."""
    if isinstance(results, CounterfactualResult):
        results = [results, *results.diverse]
    results = [r for r in results if r.strategy is not None]
    graph = pydot.Dot("counterfactual", graph_type="digraph", rankdir="LR", fontname="Helvetica", labelloc="t",
                      nodesep="0.4", ranksep="0.9")
    graph.set_node_defaults(fontname="Helvetica", fontsize="11")
    graph.set_edge_defaults(fontname="Helvetica", fontsize="10")
    if not results:
        graph.set_label("no counterfactual strategy to draw")
        return graph
    problem = results[0].problem
    m = problem.model
    sigma = problem.strategy.probabilities
    strategies = [r.strategy.probabilities for r in results]
    changed_rows = np.zeros(m.n_choices, dtype=bool)
    for probabilities in strategies:
        changed_rows |= np.abs(probabilities - sigma) > CHANGE_TOLERANCE
    changed = np.unique(m.state_of_choice[changed_rows])
    steps = [_step_matrix(m, sigma)] + [_step_matrix(m, p) for p in strategies]
    successors = {int(s): sorted(set().union(*(set(step[s].indices.tolist()) for step in steps))) for s in changed}
    drawn = sorted(set(changed.tolist()).union(*successors.values()))
    names = _column_names(len(results))
    graph.set_label(_title(results, names))
    for s in drawn:
        stay = [float(step[s, s]) for step in steps]
        graph.add_node(_state_node(m, s, s in successors, problem.target[s], sigma, strategies, names, stay))
    for s, targets in successors.items():
        for t in targets:
            if t != s:                                   # staying is a row of the state's table
                graph.add_edge(_step_edge(s, t, [float(step[s, t]) for step in steps]))
    legend = _legend(names)
    graph.add_node(legend)
    _place_on_grid(graph, m, drawn, legend)
    return graph


def _step_matrix(m, probabilities: np.ndarray):
    """The state-to-state step probabilities Σ_a π(a)·P(s, a, ·) of a memoryless strategy π (CSR, states x states)."""
    from scipy.sparse import csr_matrix
    weights = csr_matrix((probabilities, (m.state_of_choice, np.arange(m.n_choices))), shape=(m.n_states, m.n_choices))
    return (weights @ m.transitions).tocsr()


def _column_names(count: int) -> list[str]:
    return ["σ*"] if count == 1 else [f"σ*{str(k).translate(_SUBSCRIPTS)}" for k in range(1, count + 1)]


def _title(results: Sequence[CounterfactualResult], names: Sequence[str]) -> str:
    first = results[0]
    values = ", ".join(f"{name} {_number(r.probability)}" for name, r in zip(names, results)
                       if r.probability is not None)
    return (f"{first.problem.property.text}: σ gives {_number(first.initial.value)}, {values} (Storm)"
            if first.initial is not None else first.problem.property.text)


def _state_node(m, s: int, is_changed: bool, is_target: bool, sigma: np.ndarray, strategies: Sequence[np.ndarray],
                names: Sequence[str], stay: Sequence[float]) -> pydot.Node:
    """A state: a changed one is a table of its actions' probabilities under σ and each σ* (and of staying in it,
    where it can), any other an ellipse (a double circle in the target)."""
    name = html.escape(m.state_name(s)) + (" (start)" if s == m.initial_state else "")
    if not is_changed:
        return pydot.Node(f"s{s}", label=f"<{name}>", shape="doublecircle" if is_target else "ellipse",
                          style="filled" if is_target else "solid", fillcolor=TARGET_FILL,
                          penwidth="2" if s == m.initial_state else "1")
    header = "".join(f"<td><b>{n}</b></td>" for n in ["action", "σ", *names])
    rows = []
    for r in m.choices(s):
        cells = [f"<td align='left'>{html.escape(m.choice_name(r))}</td>", f"<td>{_number(float(sigma[r]))}</td>"]
        cells += [_cell(float(p[r]), abs(float(p[r]) - float(sigma[r])) > CHANGE_TOLERANCE) for p in strategies]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    if any(stay):
        cells = [_cell(v, abs(v - stay[0]) > CHANGE_TOLERANCE) for v in stay[1:]]
        rows.append(f"<tr><td align='left'><i>stay</i></td><td><i>{_number(stay[0])}</i></td>{''.join(cells)}</tr>")
    table = (f"<table border='{2 if s == m.initial_state else 1}' cellborder='1' cellspacing='0' cellpadding='3' "
             f"bgcolor='{STATE_FILL}'><tr><td colspan='{len(strategies) + 2}'><b>{name}</b></td></tr>"
             f"<tr>{header}</tr>{''.join(rows)}</table>")
    return pydot.Node(f"s{s}", label=f"<{table}>", shape="plain")


def _cell(value: float, changed: bool) -> str:
    text = _number(value)
    return f"<td><font color='{CHANGED}'><b>{text}</b></font></td>" if changed else f"<td>{text}</td>"


def _step_edge(s: int, t: int, values: Sequence[float]) -> pydot.Edge:
    """The step s -> t: σ's probability, then each counterfactual's (blue when one differs)."""
    before, after = values[0], values[1:]
    moved = any(abs(v - before) > CHANGE_TOLERANCE for v in after)
    label = f"{_number(before)} → {' / '.join(_number(v) for v in after)}" if moved else _number(before)
    return pydot.Edge(f"s{s}", f"s{t}", label=label, color=CHANGED if moved else UNCHANGED,
                      fontcolor=CHANGED if moved else UNCHANGED, penwidth="2" if moved else "1")


def _place_on_grid(graph: pydot.Dot, m, drawn: Sequence[int], legend: pydot.Node) -> bool:
    """Pin the drawn states to the grid of the two integer variables in which they differ (if there are exactly two
    and the grid is small), with the values as row and column headings and the legend below; Graphviz then lays out
    only the arrows (``layout=neato``, which ``dot -Tpng`` honours too). Returns whether it did."""
    varying = [v for v in m.variables if len(set(m.valuations[v][drawn].tolist())) > 1]
    if len(varying) != 2 or not all(np.issubdtype(m.valuations[v].dtype, np.integer) for v in varying):
        return False
    column, row = varying
    xs, ys = (sorted(set(m.valuations[v][drawn].tolist())) for v in (column, row))
    if (xs[-1] - xs[0] + 1) * (ys[-1] - ys[0] + 1) > MAX_GRID_CELLS:
        return False
    graph.set("layout", "neato")
    graph.set("splines", "curved")
    graph.set("overlap", "true")

    def pos(x: float, y: float) -> str:                  # inches; the first row at the top
        return f"{(x - xs[0]) * GRID_STEP[0]:.2f},{-(y - ys[0]) * GRID_STEP[1]:.2f}!"
    for s in drawn:
        graph.get_node(f"s{s}")[0].set("pos", pos(int(m.valuations[column][s]), int(m.valuations[row][s])))
    for x in xs:
        graph.add_node(pydot.Node(f"col{x}", label=f"{column}={x}", shape="none", fontcolor="gray40",
                                  pos=pos(x, ys[0] - 0.55)))
    for y in ys:
        graph.add_node(pydot.Node(f"row{y}", label=f"{row}={y}", shape="none", fontcolor="gray40",
                                  pos=pos(xs[0] - 0.6, y)))
    legend.set("pos", pos((xs[0] + xs[-1]) / 2, ys[-1] + 0.75))
    return True


def _legend(names: Sequence[str]) -> pydot.Node:
    shown = " / ".join(names)
    rows = [
        "σ: the given strategy; " + ("σ*: the counterfactual strategy" if len(names) == 1
                                     else f"{shown}: the diverse counterfactual strategies, in order"),
        f"table: a changed state, each action's probability under σ and {shown} (<font color='{CHANGED}'>blue</font>:"
        " changed)",
        f"<font color='{CHANGED}'>p → q</font>: the probability of that step under σ and {shown}; gray: unchanged",
        "<i>stay</i>: the probability of staying in the state; double circle: a state of the property's target;"
        " (start): the initial state",
        "drawn: the changed states and the states their actions lead to",
    ]
    table = ("<table border='1' style='rounded' color='gray70' cellborder='0' cellspacing='0' cellpadding='3'>"
             "<tr><td align='left'><b>legend</b></td></tr>"
             + "".join(f"<tr><td align='left'>{row}</td></tr>" for row in rows) + "</table>")
    return pydot.Node("legend", label=f"<{table}>", shape="plain", fontsize="10")
