"""Graphviz drawing of counterfactual strategies, in the style of seed 000's Fig. 5.

Only states near a change are drawn: every state where some counterfactual differs from σ, plus its
predecessors and successors. Each choice is a small point between its state and its successors, labelled with its
action name and probabilities (σ → σ*). The first counterfactual's changed actions are blue, the second's dashed,
further ones bold.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..distance import CHANGE_TOLERANCE
from ..reachability import state_graph
from .result import CounterfactualResult, _number

#: edge attributes marking the choices changed by the 1st, 2nd, 3rd+ counterfactual (merged when several apply)
_MARKS = ({"color": '"blue"', "fontcolor": '"blue"', "penwidth": "2"}, {"style": '"dashed"', "penwidth": "2"},
          {"style": '"bold"', "penwidth": "3"})


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(results: CounterfactualResult | Sequence[CounterfactualResult]) -> str:
    """The DOT text for one result (with its diverse counterfactuals) or a list of results."""
    if isinstance(results, CounterfactualResult):
        results = [results, *results.diverse]
    results = [r for r in results if r.strategy is not None]
    lines = ["digraph counterfactual {", "  rankdir=LR;", '  node [shape=ellipse, fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    if not results:
        return "\n".join(lines + ["}"]) + "\n"
    problem = results[0].problem
    m, sigma = problem.model, problem.strategy.probabilities
    changed_rows = [np.abs(r.strategy.probabilities - sigma) > CHANGE_TOLERANCE for r in results]
    centre = np.zeros(m.n_states, dtype=bool)
    for rows in changed_rows:
        centre[m.state_of_choice[rows]] = True
    graph = state_graph(m)
    near = centre | (graph @ centre.astype(float) > 0) | (graph.T @ centre.astype(float) > 0)
    target = problem.target
    for s in np.flatnonzero(near):
        attrs = ["style=filled", 'fillcolor="lightblue"'] if centre[s] else []
        if target[s]:
            attrs.append("shape=doublecircle")
        if s == m.initial_state:
            attrs.append("penwidth=2")
        lines.append(f"  s{s} [label={_quote(m.state_name(int(s)))}{', ' if attrs else ''}{', '.join(attrs)}];")
    P = m.transitions
    for s in np.flatnonzero(near & centre):
        for r in m.choices(int(s)):
            marks = [_MARKS[min(k, len(_MARKS) - 1)] for k, rows in enumerate(changed_rows) if rows[r]]
            probs = " / ".join(_number(float(res.strategy.probabilities[r])) for res in results)
            label = f"{m.choice_name(r)}: {_number(float(sigma[r]))}"
            if marks:
                label += f" → {probs}"
            attrs = {"color": '"gray40"'} if not marks else {k: v for mark in marks for k, v in mark.items()}
            style = ", ".join(f"{k}={v}" for k, v in attrs.items())
            lines.append(f'  c{r} [shape=point, width=0.08];')
            lines.append(f"  s{s} -> c{r} [label={_quote(label)}, arrowhead=none, {style}];")
            for k in range(P.indptr[r], P.indptr[r + 1]):
                t = int(P.indices[k])
                if near[t]:
                    lines.append(f'  c{r} -> s{t} [label="{_number(float(P.data[k]))}", {style}];')
    for s in np.flatnonzero(near & ~centre):
        for t in np.flatnonzero(graph[s].toarray().ravel() > 0):
            if near[t] and t != s:
                lines.append(f'  s{s} -> s{t} [color="gray70"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
