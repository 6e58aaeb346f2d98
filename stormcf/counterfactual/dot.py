"""Graphviz drawing of counterfactual strategies (DOT, written with pydot), after seed 000's Fig. 5.

Only the neighbourhood of the changes is drawn: the states where some counterfactual differs from σ, and the states
their choices lead to. A changed state is a table of its actions with their probabilities under σ and under each
counterfactual σ* (changed ones in blue); an arrow from it to a successor carries the probability of that step under
σ and under σ* (Σ_a σ(a)·P(s, a, s'), blue where it changed). A legend says so, and what was left out.

At real sizes (dozens of changed states, states with dozens of successors) everything would be a tangle, so the
drawing is bounded: the :data:`MAX_CHANGED` states with the largest change (the title says how many there are in
all), and for each the :data:`MAX_SUCCESSORS` successors whose step probability changed most, the others merged into
one node ("12 other states") whose arrow carries their summed probabilities. The changed states and the states they
lead to are two clusters. Where the drawn states differ in exactly two integer variables (a grid, such as
FrozenLake's x and y), they are placed on that grid instead: one row per value of the second variable, one column per
value of the first, with the values as row and column headings.
"""
from __future__ import annotations

import html
import os
import shutil
from pathlib import Path
from typing import Sequence, cast

import numpy as np
import pydot

from ..distance import CHANGE_TOLERANCE
from ..errors import OutputError
from ..report import atomic_output, write_text
from .result import CounterfactualResult, short_number

#: a grid layout is used up to this many cells (rows x columns); larger boxes get the default layout
MAX_GRID_CELLS = 400
#: changed states drawn (the largest changes first) and successors drawn per changed state (the largest changes of
#: the step probability first; the others are merged into one node)
MAX_CHANGED, MAX_SUCCESSORS = 12, 6
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


def write_drawing(results: CounterfactualResult | Sequence[CounterfactualResult], out: str | os.PathLike,
                  max_changed: int | None = MAX_CHANGED) -> str:
    """Write the drawing (of at most ``max_changed`` changed states) to ``out`` (atomically): rendered by Graphviz
    for .png/.svg/.pdf, else as DOT text. Returns the format written."""
    fmt, graph = drawing_format(out), counterfactual_graph(results, max_changed)
    if fmt == "dot":
        write_text(graph.to_string(), out)
    else:
        image = cast(bytes, graph.create(prog="dot", format=fmt))     # pydot annotates its bytes as str
        with atomic_output(out) as tmp:
            Path(tmp).write_bytes(image)
    return fmt


def to_dot(results: CounterfactualResult | Sequence[CounterfactualResult], max_changed: int | None = MAX_CHANGED,
           max_successors: int | None = MAX_SUCCESSORS) -> str:
    """The DOT text for one result (with its diverse counterfactuals) or a list of results on one problem."""
    return counterfactual_graph(results, max_changed, max_successors).to_string()


def counterfactual_graph(results: CounterfactualResult | Sequence[CounterfactualResult],
                         max_changed: int | None = MAX_CHANGED,
                         max_successors: int | None = MAX_SUCCESSORS) -> pydot.Dot:
    """The drawing as a :class:`pydot.Dot` graph (``to_string()`` is the DOT text; ``write_png`` renders it with
    Graphviz): at most ``max_changed`` changed states, each with at most ``max_successors`` successors drawn one
    by one (None: all; module docstring)."""
    if isinstance(results, CounterfactualResult):
        results = [results, *results.diverse]
    results = [r for r in results if r.strategy is not None]
    graph = pydot.Dot("counterfactual", graph_type="digraph", rankdir="LR", fontname="Helvetica", labelloc="t",
                      nodesep="0.4", ranksep="0.9", newrank="true")
    graph.set_node_defaults(fontname="Helvetica", fontsize="11")
    graph.set_edge_defaults(fontname="Helvetica", fontsize="10")
    if not results:
        graph.set("label", "no counterfactual strategy to draw")
        return graph
    problem = results[0].problem
    m, sigma = problem.model, problem.strategy.probabilities
    strategies = [r.strategy.probabilities for r in results if r.strategy is not None]     # all of them
    steps = [_step_matrix(m, sigma)] + [_step_matrix(m, p) for p in strategies]
    changed = _largest_changes(m, sigma, strategies)
    shown = changed[:max_changed] if max_changed is not None else changed
    successors = {s: _successors(s, steps, max_successors) for s in shown}
    drawn = sorted(set(shown).union(*(set(kept) for kept, _ in successors.values())))
    names = _column_names(len(results))
    graph.set("label", _title(results, names, len(shown), len(changed)))
    nodes = {s: _state_node(m, s, s in successors, problem.target[s], sigma, strategies, names,
                            [float(step[s, s]) for step in steps]) for s in drawn}
    merged = {s: _merged_node(s, len(rest)) for s, (_, rest) in successors.items() if rest}
    grid = _grid(m, drawn)
    if grid is None:
        _add_clusters(graph, [nodes[s] for s in shown], [nodes[s] for s in drawn if s not in successors]
                      + list(merged.values()))
    else:
        for node in [*nodes.values(), *merged.values()]:
            graph.add_node(node)
    for s, (kept, rest) in successors.items():
        for t in kept:
            graph.add_edge(_step_edge(f"s{s}", f"s{t}", [float(step[s, t]) for step in steps]))
        if rest:
            graph.add_edge(_step_edge(f"s{s}", merged[s].get_name(),
                                      [float(step[s, rest].sum()) for step in steps]))
    legend = _legend(names, max_changed, max_successors)
    graph.add_node(legend)
    if grid is not None:
        _place_on_grid(graph, m, drawn, legend, grid, merged)
    return graph


def _largest_changes(m, sigma: np.ndarray, strategies: Sequence[np.ndarray]) -> list[int]:
    """The changed states, the largest change of an action's probability (in any counterfactual) first."""
    change = np.zeros(m.n_choices)
    for probabilities in strategies:
        change = np.maximum(change, np.abs(probabilities - sigma))
    per_state = np.zeros(m.n_states)
    np.maximum.at(per_state, m.state_of_choice, change)
    changed = np.flatnonzero(per_state > CHANGE_TOLERANCE)
    return [int(s) for s in changed[np.argsort(-per_state[changed], kind="stable")]]


def _successors(s: int, steps: Sequence, limit: int | None) -> tuple[list[int], list[int]]:
    """The successors of ``s`` (itself left out: staying is a row of its table) drawn one by one, and the rest
    (merged into one node): all of them when there are at most ``limit`` (None: no limit), else the ``limit`` whose
    step probability changed most (then the most likely)."""
    targets = sorted(set().union(*(set(step[s].indices.tolist()) for step in steps)) - {s})
    if limit is None or len(targets) <= limit:
        return targets, []
    values = np.array([[float(step[s, t]) for step in steps] for t in targets])
    change = np.round(np.abs(values[:, 1:] - values[:, :1]).max(axis=1), 12)
    order = np.lexsort((-values.max(axis=1), -change))
    return sorted(targets[i] for i in order[:limit]), sorted(targets[i] for i in order[limit:])


def _add_clusters(graph: pydot.Dot, changed: Sequence[pydot.Node], others: Sequence[pydot.Node]) -> None:
    """The changed states in one cluster, the states they lead to in another."""
    for name, label, nodes in (("changed", "changed states", changed),
                               ("reached", "the states their actions lead to", others)):
        if nodes:
            cluster = pydot.Cluster(name, label=label, style="rounded,dashed", color="gray70", fontcolor="gray40",
                                    labeljust="l")
            for node in nodes:
                cluster.add_node(node)
            graph.add_subgraph(cluster)          # type: ignore[arg-type] # pydot: a Cluster is a subgraph


def _step_matrix(m, probabilities: np.ndarray):
    """The state-to-state step probabilities Σ_a π(a)·P(s, a, ·) of a memoryless strategy π (CSR, states x states)."""
    from scipy.sparse import csr_matrix
    weights = csr_matrix((probabilities, (m.state_of_choice, np.arange(m.n_choices))), shape=(m.n_states, m.n_choices))
    return (weights @ m.transitions).tocsr()


def _column_names(count: int) -> list[str]:
    return ["σ*"] if count == 1 else [f"σ*{str(k).translate(_SUBSCRIPTS)}" for k in range(1, count + 1)]


def _title(results: Sequence[CounterfactualResult], names: Sequence[str], shown: int, changed: int) -> str:
    first = results[0]
    values = ", ".join(f"{name} {short_number(r.probability)}" for name, r in zip(names, results)
                       if r.probability is not None)
    title = (f"{first.problem.property.text}: σ gives {short_number(first.initial.value)}, {values} (Storm)"
             if first.initial is not None else first.problem.property.text)
    if shown < changed:
        title += f"\nthe {shown} of {changed} changed states with the largest changes"
    return title


def _state_node(m, s: int, is_changed: bool, is_target: bool, sigma: np.ndarray, strategies: Sequence[np.ndarray],
                names: Sequence[str], stay: Sequence[float]) -> pydot.Node:
    """A state: a changed one is a table of its actions' probabilities under σ and each σ* (and of staying in it,
    where it can), any other an ellipse (with a double outline in the target)."""
    name = html.escape(m.state_name(s)) + (" (start)" if s == m.initial_state else "")
    if not is_changed:
        return pydot.Node(f"s{s}", label=f"<{name}>", shape="ellipse", peripheries="2" if is_target else "1",
                          style="filled" if is_target else "solid", fillcolor=TARGET_FILL,
                          penwidth="2" if s == m.initial_state else "1")
    header = "".join(f"<td><b>{n}</b></td>" for n in ["action", "σ", *names])
    rows = []
    for r, action in zip(m.choices(s), m.enabled_actions(s)):
        cells = [f"<td align='left'>{html.escape(action)}</td>", f"<td>{short_number(float(sigma[r]))}</td>"]
        cells += [_cell(float(p[r]), abs(float(p[r]) - float(sigma[r])) > CHANGE_TOLERANCE) for p in strategies]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    if any(stay):
        cells = [_cell(v, abs(v - stay[0]) > CHANGE_TOLERANCE) for v in stay[1:]]
        stay_cell = f"<td><i>{short_number(stay[0])}</i></td>"
        rows.append(f"<tr><td align='left'><i>stay</i></td>{stay_cell}{''.join(cells)}</tr>")
    table = (f"<table border='{2 if s == m.initial_state else 1}' cellborder='1' cellspacing='0' cellpadding='3' "
             f"bgcolor='{STATE_FILL}'><tr><td colspan='{len(strategies) + 2}'><b>{name}</b></td></tr>"
             f"<tr>{header}</tr>{''.join(rows)}</table>")
    return pydot.Node(f"s{s}", label=f"<{table}>", shape="plain")


def _cell(value: float, changed: bool) -> str:
    text = short_number(value)
    return f"<td><font color='{CHANGED}'><b>{text}</b></font></td>" if changed else f"<td>{text}</td>"


def _merged_node(s: int, count: int) -> pydot.Node:
    """The successors of ``s`` not drawn one by one."""
    return pydot.Node(f"more{s}", label=f"{count} other states", shape="box", style="dashed,rounded",
                      color=UNCHANGED, fontcolor="gray40")


def _step_edge(source: str, target: str, values: Sequence[float]) -> pydot.Edge:
    """A step: σ's probability, then each counterfactual's (blue when one differs)."""
    before, after = values[0], values[1:]
    moved = any(abs(v - before) > CHANGE_TOLERANCE for v in after)
    label = f"{short_number(before)} → {' / '.join(short_number(v) for v in after)}" if moved else short_number(before)
    return pydot.Edge(source, target, label=label, color=CHANGED if moved else UNCHANGED,
                      fontcolor=CHANGED if moved else UNCHANGED, penwidth="2" if moved else "1")


def _grid(m, drawn: Sequence[int]) -> tuple[str, str, list[int], list[int]] | None:
    """The two integer variables in which the drawn states differ (column, row) and their values, when there are
    exactly two and the grid is small; else None."""
    varying = [v for v in m.variables if len(set(m.valuations[v][drawn].tolist())) > 1]
    if len(varying) != 2 or not all(np.issubdtype(m.valuations[v].dtype, np.integer) for v in varying):
        return None
    column, row = varying
    xs, ys = (sorted(set(m.valuations[v][drawn].tolist())) for v in (column, row))
    if (xs[-1] - xs[0] + 1) * (ys[-1] - ys[0] + 1) > MAX_GRID_CELLS:
        return None
    return column, row, xs, ys


def _place_on_grid(graph: pydot.Dot, m, drawn: Sequence[int], legend: pydot.Node,
                   grid: tuple[str, str, list[int], list[int]], merged: dict[int, pydot.Node]) -> None:
    """Pin the drawn states to their grid (:func:`_grid`), with the values as row and column headings, merged
    successors below their state and the legend below all; Graphviz then lays out only the arrows
    (``layout=neato``, which ``dot -Tpng`` honours too)."""
    column, row, xs, ys = grid
    graph.set("layout", "neato")
    graph.set("splines", "true")
    graph.set("overlap", "true")

    def pos(x: float, y: float) -> str:                  # inches; the first row at the top
        return f"{(x - xs[0]) * GRID_STEP[0]:.2f},{-(y - ys[0]) * GRID_STEP[1]:.2f}!"
    for s in drawn:
        graph.get_node(f"s{s}")[0].set("pos", pos(int(m.valuations[column][s]), int(m.valuations[row][s])))
    for s, node in merged.items():
        node.set("pos", pos(int(m.valuations[column][s]) + 0.3, int(m.valuations[row][s]) + 0.45))
    for x in xs:
        graph.add_node(pydot.Node(f"col{x}", label=f"{column}={x}", shape="none", fontcolor="gray40",
                                  pos=pos(x, ys[0] - 0.55)))
    for y in ys:
        graph.add_node(pydot.Node(f"row{y}", label=f"{row}={y}", shape="none", fontcolor="gray40",
                                  pos=pos(xs[0] - 0.6, y)))
    legend.set("pos", pos((xs[0] + xs[-1]) / 2, ys[-1] + 0.75))


def _legend(names: Sequence[str], max_changed: int | None, max_successors: int | None) -> pydot.Node:
    shown = " / ".join(names)
    rows = [
        "σ: the given strategy; " + ("σ*: the counterfactual strategy" if len(names) == 1
                                     else f"{shown}: the diverse counterfactual strategies, in order"),
        f"table: a changed state, each action's probability under σ and {shown} (<font color='{CHANGED}'>blue</font>:"
        " changed)",
        f"<font color='{CHANGED}'>p → q</font>: the probability of that step under σ and {shown}; gray: unchanged",
        "<i>stay</i>: the probability of staying in the state; double outline: a state of the property's target;"
        " (start): the initial state",
        "drawn: the changed states" + (f" (at most {max_changed}, the largest changes first)" if max_changed else "")
        + " and the states their actions lead to"
        + (f" (at most {max_successors} each, the largest changes first; the others as one box)"
           if max_successors is not None else ""),
    ]
    table = ("<table border='1' style='rounded' color='gray70' cellborder='0' cellspacing='0' cellpadding='3'>"
             "<tr><td align='left'><b>legend</b></td></tr>"
             + "".join(f"<tr><td align='left'>{row}</td></tr>" for row in rows) + "</table>")
    return pydot.Node("legend", label=f"<{table}>", shape="plain", fontsize="10")
