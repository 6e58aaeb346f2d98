"""IOAlergia (Mao et al. 2016): learning an MDP from traces by state merging, as AALpy 2.0 implements it, fast.

Traces are o_0 (a_1, o_1) (a_2, o_2) ... with one common initial output o_0. The **frequency prefix tree** (FPTA)
has one node per distinct trace prefix; node q has the output of its last step and the counts n(q, a, o) of the
traces that continue from q with (a, o); n(q, a) = Σ_o n(q, a, o).

The red-blue loop (AALpy's ``Alergia.run``): red = {root}; repeatedly take the blue node b (a successor of a red
node that is not red) with the least prefix in the order (length, prefix); merge it into the first red node r
(in the same order) that is **compatible** with b, or else make b red. Merging redirects the edge into b to r and
folds b's subtree into r's (adding counts). Compatibility, as in AALpy, is a property of the two FPTA subtrees
with their *original* counts:

    compatible(r, b) = output(r) = output(b) and (r or b has no successor or
                       (for every action a of both: no Hoeffding difference between n(r, a, ·) and n(b, a, ·),
                        and compatible(r', b') for every common successor (a, o)))

    Hoeffding difference:  |n(r,a,o)/n1 − n(b,a,o)/n2| > (√(1/n1) + √(1/n2)) · √(½ ln(2/α))  for some o,
                           n1 = n(r, a), n2 = n(b, a)

α is the compatibility parameter (AALpy's ``eps``; ``"auto"`` is 10 / number of steps, as there). The learned MDP
has the red nodes as states (numbered in the (length, prefix) order, as AALpy's ``q0, q1, ...``) and the exact
frequencies P(s' | s, a) = n(s, a, o) / n(s, a) of the merged counts.

Why it is fast: the FPTA is built level by level with numpy; the order of prefixes is the order of node numbers,
so blue nodes come from a heap and red nodes are appended; reds are kept per output, so a blue node is tested only
against reds of its output; and the Hoeffding bound only falls below 1 (only then can it tell two nodes apart) when
both nodes are passed by enough traces: a pair whose counts c_r, c_b give (√(1/c_r) + √(1/c_b))·√(½ ln(2/α)) >= 1
is compatible with its whole subtree, since counts never grow along a path.

:func:`aalpy_ioalergia` runs AALpy's own implementation on the same traces and reads its merged counts; the tests
compare the two on small logs (identical automata).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from ..deadline import Deadline
from ..errors import LearnError


@dataclass(frozen=True, eq=False)
class Traces:
    """The learner's input: every trace starts with output ``initial``; trace c has the steps
    ``offsets[c]:offsets[c+1]`` with input codes ``inputs`` and output codes ``outputs``. The order of the codes
    decides the (length, prefix) order of the red-blue loop; AALpy, given the same codes, uses the same order."""

    initial: int
    offsets: np.ndarray
    inputs: np.ndarray
    outputs: np.ndarray
    n_inputs: int
    n_outputs: int

    @property
    def n_steps(self) -> int:
        return int(self.offsets[-1])


@dataclass(frozen=True, eq=False)
class Automaton:
    """A learned MDP with counts: state ``s`` has output ``outputs[s]``; the edges (``source``, ``action``,
    ``target``, ``count``) are sorted by source, action and target; state 0 is initial. P(t | s, a) is ``count``
    divided by the sum of the counts of (s, a)."""

    outputs: np.ndarray
    source: np.ndarray
    action: np.ndarray
    target: np.ndarray
    count: np.ndarray

    @property
    def n_states(self) -> int:
        return int(self.outputs.size)

    def same_as(self, other: "Automaton") -> bool:
        return all(np.array_equal(getattr(self, k), getattr(other, k))
                   for k in ("outputs", "source", "action", "target", "count"))


def resolve_alpha(alpha: float | str, n_steps: int) -> float:
    """α as a number: ``"auto"`` is 10 / (number of steps), as in AALpy; numbers must lie in (0, 2]."""
    if alpha == "auto":
        if n_steps == 0:
            raise LearnError("alpha 'auto' needs a log with at least one step")
        alpha = 10 / n_steps
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 2:
        raise LearnError(f"the compatibility parameter alpha must lie in (0, 2] or be 'auto', got {alpha!r}")
    return float(alpha)


# ================================================================================================ the FPTA
@dataclass(frozen=True, eq=False)
class _Fpta:
    """Nodes in (length, prefix) order; node 0 is the root. The children of node q are the nodes
    ``first[q]:last[q]`` (sorted by symbol = input · n_outputs + output); ``arrival[first[q]:last[q]]`` are the same
    nodes in the order the traces first reach them (the order of AALpy's child dictionaries, which decides how
    folds through loops pair up nodes)."""

    symbol: np.ndarray
    count: np.ndarray
    output: np.ndarray
    first: np.ndarray
    last: np.ndarray
    arrival: np.ndarray


def _fpta(t: Traces) -> _Fpta:
    lengths = np.diff(t.offsets)
    symbols = t.inputs.astype(np.int64) * t.n_outputs + t.outputs
    n_symbols = t.n_inputs * t.n_outputs
    parent, symbol, count, first_trace = [np.array([-1])], [np.array([-1])], [np.array([lengths.size])], [np.array([0])]
    at = np.zeros(lengths.size, dtype=np.int64)          # the node every trace has reached
    alive = np.arange(lengths.size)
    n = 1
    for depth in range(int(lengths.max(initial=0))):
        alive = alive[lengths[alive] > depth]
        keys = at[alive] * n_symbols + symbols[t.offsets[alive] + depth]
        unique, index, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        parent.append(unique // n_symbols)
        symbol.append(unique % n_symbols)
        count.append(counts)
        first_trace.append(alive[index])
        at[alive] = n + inverse.ravel()
        n += unique.size
    parent_all = np.concatenate(parent)
    symbol_all = np.concatenate(symbol)
    output = np.where(symbol_all >= 0, symbol_all % t.n_outputs, t.initial)
    nodes = np.arange(n)
    arrival = np.concatenate([[0], 1 + np.lexsort((np.concatenate(first_trace)[1:], parent_all[1:]))])
    return _Fpta(symbol_all, np.concatenate(count), output, np.searchsorted(parent_all[1:], nodes, "left") + 1,
                 np.searchsorted(parent_all[1:], nodes, "right") + 1, arrival)


# ================================================================================================ the learner
def ioalergia(traces: Traces, alpha: float | str = 0.05, deadline: Deadline | None = None) -> Automaton:
    """IOAlergia with compatibility parameter α (module docs); the result equals AALpy's ``run_Alergia(data,
    'mdp', eps=α)`` state by state and count by count. ``deadline`` (default: none) bounds the merging."""
    return _RedBlue(_fpta(traces), traces.n_outputs, resolve_alpha(alpha, traces.n_steps)).run(
        deadline if deadline is not None else Deadline(None))


class _RedBlue:
    def __init__(self, fpta: _Fpta, n_outputs: int, alpha: float) -> None:
        self.n_outputs = n_outputs
        self.log_term = math.sqrt(0.5 * math.log(2 / alpha))
        # plain Python lists: the merging loop reads single entries
        self.symbol = fpta.symbol.tolist()
        self.count = fpta.count.tolist()
        self.output = fpta.output.tolist()
        self.first = fpta.first.tolist()
        self.last = fpta.last.tolist()
        self.arrival = fpta.arrival.tolist()
        self.children: dict[int, dict[int, int]] = {}     # current successors of the nodes changed by merging
        self.frequency: dict[int, dict[int, int]] = {}    # current counts n(q, a, o) of those nodes
        self.reds: dict[int, list[int]] = {}              # output -> red nodes in (length, prefix) order
        self.red: set[int] = set()
        self.holder: dict[int, int] = {}                  # blue node -> the red node it is a successor of
        self.blue: list[int] = []                         # heap of blue nodes

    # ------------------------------------------------------------------------------------------ the loop
    def run(self, deadline: Deadline) -> Automaton:
        self._make_red(0)
        while self.blue:
            if len(self.red) % 256 == 0:
                deadline.check("IOAlergia's merging")
            b = heapq.heappop(self.blue)
            parent = self.holder.pop(b)
            for r in self.reds.get(self.output[b], ()):
                if self._compatible(r, b):
                    self._merge(r, b, parent)
                    break
            else:
                self._make_red(b)
        return self._automaton(sorted(self.red))

    def _make_red(self, q: int) -> None:
        self.reds.setdefault(self.output[q], []).append(q)
        self.red.add(q)
        for c in self._kids(q).values():
            self._make_blue(c, q)

    def _make_blue(self, q: int, holder: int) -> None:
        self.holder[q] = holder
        heapq.heappush(self.blue, q)

    def _kids(self, q: int) -> dict[int, int]:
        """The current successors of q (symbol -> node, in arrival order), made mutable."""
        kids = self.children.get(q)
        if kids is None:
            order = self.arrival[self.first[q]:self.last[q]]
            kids = self.children[q] = {self.symbol[c]: c for c in order}
            self.frequency[q] = {self.symbol[c]: self.count[c] for c in order}
        return kids

    def _current(self, q: int) -> list[tuple[int, int, int]]:
        """(symbol, successor, count) of q as they are now, in arrival order, without making them mutable."""
        kids = self.children.get(q)
        if kids is None:
            return [(self.symbol[c], c, self.count[c]) for c in self.arrival[self.first[q]:self.last[q]]]
        f = self.frequency[q]
        return [(sym, c, f[sym]) for sym, c in kids.items()]

    def _merge(self, r: int, b: int, parent: int) -> None:
        """Redirect the edge parent -> b to r and fold b's subtree into r's: AALpy's ``merge`` and its recursive
        ``fold``, depth first in arrival order (through loops of the merged automaton the order decides which
        nodes pair up), with an explicit stack instead of recursion."""
        self._kids(parent)[self.symbol[b]] = r
        stack = [(r, iter(self._current(b)))]
        while stack:
            x, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                stack.pop()
                continue
            sym, child, n = step
            kx = self._kids(x)
            if sym in kx:
                self.frequency[x][sym] += n
                stack.append((kx[sym], iter(self._current(child))))
            else:
                kx[sym] = child
                self.frequency[x][sym] = n
                if x in self.red:
                    self._make_blue(child, x)

    # ------------------------------------------------------------------------------------------ compatibility
    def _compatible(self, r: int, b: int) -> bool:
        """compatible(r, b) on the original FPTA counts (module docs); outputs are equal here."""
        stack = [(r, b)]
        first, last, symbol = self.first, self.last, self.symbol
        while stack:
            x, y = stack.pop()
            if first[x] == last[x] or first[y] == last[y] or self._indistinguishable(self.count[x], self.count[y]):
                continue
            if self._different(x, y):
                return False
            # common successors (a, o): both child ranges are sorted by symbol
            i, j, i_end, j_end = first[x], first[y], last[x], last[y]
            while i < i_end and j < j_end:
                si, sj = symbol[i], symbol[j]
                if si == sj:
                    stack.append((i, j))
                    i += 1
                    j += 1
                elif si < sj:
                    i += 1
                else:
                    j += 1
        return True

    def _bound(self, n1: int, n2: int) -> float:
        return (math.sqrt(1 / n1) + math.sqrt(1 / n2)) * self.log_term

    def _indistinguishable(self, c1: int, c2: int) -> bool:
        """No Hoeffding test below nodes passed by c1 and c2 traces can fail: the bound is >= 1 there."""
        return self._bound(c1, c2) >= 1

    def _different(self, x: int, y: int) -> bool:
        """Whether some common action a has n(x, a, ·) and n(y, a, ·) differ by more than the Hoeffding bound."""
        ax, ay = self._by_action(x), self._by_action(y)
        for a in ax.keys() & ay.keys():
            (n1, fx), (n2, fy) = ax[a], ay[a]
            bound = self._bound(n1, n2)
            if bound >= 1:
                continue
            for o in fx.keys() | fy.keys():
                if abs(fx.get(o, 0) / n1 - fy.get(o, 0) / n2) > bound:
                    return True
        return False

    def _by_action(self, q: int) -> dict[int, tuple[int, dict[int, int]]]:
        """a -> (n(q, a), {o: n(q, a, o)}) with the original counts."""
        out: dict[int, tuple[int, dict[int, int]]] = {}
        for c in range(self.first[q], self.last[q]):
            a, o = divmod(self.symbol[c], self.n_outputs)
            n, f = out.get(a, (0, {}))
            f[o] = self.count[c]
            out[a] = (n + self.count[c], f)
        return out

    # ------------------------------------------------------------------------------------------ result
    def _automaton(self, reds: list[int]) -> Automaton:
        index = {q: s for s, q in enumerate(reds)}
        source, action, target, count = [], [], [], []
        for q in reds:
            for sym, child, n in sorted(self._current(q)):
                source.append(index[q])
                action.append(sym // self.n_outputs)
                target.append(index[child])
                count.append(n)
        arrays = [np.array(v, dtype=np.int64) for v in (source, action, target, count)]
        order = np.lexsort((arrays[2], arrays[1], arrays[0]))
        return Automaton(np.array([self.output[q] for q in reds], dtype=np.int64), *(v[order] for v in arrays))


# ================================================================================================ AALpy
def aalpy_ioalergia(traces: Traces, alpha: float | str = 0.05, deadline: Deadline | None = None) -> Automaton:
    """AALpy's own IOAlergia (``aalpy.learning_algs.stochastic_passive.Alergia``) on the same traces, read back as
    counts: the red nodes' merged frequencies, states numbered as AALpy's ``q0, q1, ...``. AALpy's loop cannot be
    stopped: ``deadline`` is checked after it (the command's outer limit bounds it)."""
    from aalpy.learning_algs.stochastic_passive.Alergia import Alergia

    alpha = resolve_alpha(alpha, traces.n_steps)
    o, a, off = traces.outputs.tolist(), traces.inputs.tolist(), traces.offsets.tolist()
    data = [[traces.initial] + list(zip(a[off[c]:off[c + 1]], o[off[c]:off[c + 1]])) for c in range(len(off) - 1)]
    learner = Alergia(data, automaton_type="mdp", eps=alpha)
    learner.run()
    if deadline is not None:
        deadline.check("AALpy's IOAlergia")
    nodes, todo, seen = [], [learner.fpta], {id(learner.fpta)}
    while todo:
        q = todo.pop()
        nodes.append(q)
        for child in q.children.values():
            if id(child) not in seen:
                seen.add(id(child))
                todo.append(child)
    index = {id(q): int(q.state_id[1:]) for q in nodes}
    outputs = np.zeros(len(nodes), dtype=np.int64)
    edges = []
    for q in nodes:
        outputs[index[id(q)]] = q.output
        edges += [(index[id(q)], key[0], index[id(child)], q.input_frequency[key]) for key, child in q.children.items()]
    source, action, target, count = (np.array(v, dtype=np.int64) for v in zip(*edges)) if edges else \
        (np.zeros(0, dtype=np.int64),) * 4
    order = np.lexsort((target, action, source))
    return Automaton(outputs, source[order], action[order], target[order], count[order])
