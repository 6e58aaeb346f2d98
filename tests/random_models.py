"""Random small MDPs written as PRISM files (so Storm builds them), with an independent description kept in Python.

Probabilities are fractions w_i / W of small integers, written as such in PRISM, so Storm's rational build and the
Python `fractions` oracle see the same exact numbers. Strategies use two-digit decimals that sum to exactly 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from hypothesis import strategies as st


@dataclass
class RandomMDP:
    n: int                                           # states s = 0..n-1, initial 0
    actions: dict[int, dict[str, dict[int, Fraction]]]   # s -> action -> successor -> probability
    goal: set[int]
    reward: dict[int, dict[str, int]]                # s -> action -> state-action reward
    strategy: dict[int, dict[str, Fraction]]         # s -> action -> probability

    def prism(self) -> str:
        lines = ["mdp", "module m", f"  s : [0..{self.n - 1}] init 0;"]
        for s, acts in self.actions.items():
            for a, succ in acts.items():
                upd = " + ".join(f"{p.numerator}/{p.denominator} : (s'={t})" for t, p in succ.items())
                lines.append(f"  [{a}] s={s} -> {upd};")
        lines.append("endmodule")
        goal = " | ".join(f"s={g}" for g in sorted(self.goal)) or "false"
        lines.append(f'label "goal" = {goal};')
        lines.append('rewards "r"')
        for s, acts in self.reward.items():
            for a, r in acts.items():
                lines.append(f"  [{a}] s={s} : {r};")
        lines.append("endrewards")
        return "\n".join(lines) + "\n"

    def write(self, folder: Path) -> Path:
        path = folder / "random.prism"
        path.write_text(self.prism())
        return path

    def strategy_json(self) -> dict:
        """The strategy in stormcf's JSON format, for the states Storm builds (reachable from s=0)."""
        graph = [[0] * self.n for _ in range(self.n)]
        for s, acts in self.actions.items():
            for succ in acts.values():
                for t in succ:
                    graph[s][t] = 1
        built = self.reachable(graph)
        return {"states": [{"state": {"s": s}, "actions": {a: float(p) for a, p in d.items()}}
                           for s, d in self.strategy.items() if s in built], "default": "error"}

    # ---------------------------------------------------------------- independent oracles (no stormcf, no Storm)
    def induced(self, exact: bool):
        one = Fraction(1) if exact else 1.0
        P = [[0 * one] * self.n for _ in range(self.n)]
        r = [0 * one] * self.n
        for s, acts in self.actions.items():
            for a, succ in acts.items():
                w = self.strategy[s][a] if exact else float(self.strategy[s][a])
                for t, p in succ.items():
                    P[s][t] += w * (p if exact else float(p))
                r[s] += w * self.reward[s][a]
        return P, r

    def reachable(self, P) -> set[int]:
        seen, todo = {0}, [0]
        while todo:
            s = todo.pop()
            for t in range(self.n):
                if P[s][t] != 0 and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    def reach_probability(self, exact: bool, avoid: set[int] = frozenset()):
        """P(F goal) from s=0 in the induced DTMC: graph precomputation + linear solve (numpy or fractions);
        with ``avoid``, P(¬avoid U goal): the states of ``avoid`` that are not goals are absorbing failures."""
        P, _ = self.induced(exact)
        for s in set(avoid) - self.goal:
            P[s] = [0 * P[s][0]] * self.n
        can = self.can_reach(P, self.goal)
        maybe = sorted(can - self.goal)
        if 0 in self.goal:
            return Fraction(1) if exact else 1.0
        if 0 not in maybe:
            return Fraction(0) if exact else 0.0
        idx = {s: i for i, s in enumerate(maybe)}
        A = [[(1 if i == j else 0) - P[s][t] for j, t in enumerate(maybe)] for i, s in enumerate(maybe)]
        b = [sum((P[s][g] for g in self.goal), 0 * P[s][s]) for s in maybe]
        if exact:
            x = _solve_fractions(A, b)
        else:
            x = np.linalg.solve(np.array(A, dtype=float), np.array(b, dtype=float))
        return x[idx[0]]

    def can_reach(self, P, targets) -> set[int]:
        """The states with a path to ``targets`` in the transition rows ``P`` (a backward fixed point)."""
        can = set(targets)
        changed = True
        while changed:
            changed = False
            for s in range(self.n):
                if s not in can and any(P[s][t] != 0 for t in can):
                    can.add(s)
                    changed = True
        return can

    def expected_reward(self, exact: bool = False):
        """E[total reward until goal] from s=0 in the induced DTMC, infinite (Storm's convention) when goal is
        reached with probability < 1: almost-sure reachability on the graph, then one linear solve."""
        P, r = self.induced(exact)
        if 0 in self.goal:
            return 0.0
        for g in self.goal:                        # the count stops at the goal
            P[g] = [0 * P[g][0]] * self.n
        reach = self.reachable(P)
        can = self.can_reach(P, self.goal)
        if any(s not in can for s in reach):       # a reachable state that cannot reach the goal
            return float("inf")
        maybe = sorted(reach - self.goal)
        idx = {s: i for i, s in enumerate(maybe)}
        A = [[(1 if i == j else 0) - P[s][t] for j, t in enumerate(maybe)] for i, s in enumerate(maybe)]
        x = np.linalg.solve(np.array(A, dtype=float), np.array([r[s] for s in maybe], dtype=float))
        return float(x[idx[0]])

    def bounded_reach(self, steps: int, exact: bool):
        P, _ = self.induced(exact)
        one = Fraction(1) if exact else 1.0
        v = [one if s in self.goal else 0 * one for s in range(self.n)]
        for _ in range(steps):
            v = [one if s in self.goal else sum((P[s][t] * v[t] for t in range(self.n)), 0 * one)
                 for s in range(self.n)]
        return v[0]

    def cumulative_reward(self, steps: int, exact: bool):
        P, r = self.induced(exact)
        one = Fraction(1) if exact else 1.0
        v = [0 * one] * self.n
        for _ in range(steps):
            v = [r[s] + sum((P[s][t] * v[t] for t in range(self.n)), 0 * one) for s in range(self.n)]
        return v[0]


def _solve_fractions(A, b):
    n = len(b)
    M = [list(row) + [bi] for row, bi in zip(A, b)]
    for c in range(n):
        p = next(r for r in range(c, n) if M[r][c] != 0)
        M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [M[i][n] / M[i][i] for i in range(n)]


@st.composite
def random_mdps(draw, max_states: int = 8, max_actions: int = 3) -> RandomMDP:
    n = draw(st.integers(2, max_states))
    names = ["a", "b", "c"][:max_actions]
    actions, reward, strategy = {}, {}, {}
    for s in range(n):
        k = draw(st.integers(1, max_actions))
        acts = {}
        for a in names[:k]:
            support = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=min(n, 4), unique=True))
            weights = [draw(st.integers(1, 9)) for _ in support]
            total = sum(weights)
            acts[a] = {t: Fraction(w, total) for t, w in zip(support, weights)}
        actions[s] = acts
        reward[s] = {a: draw(st.integers(0, 5)) for a in acts}
        cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=k - 1, max_size=k - 1)))
        parts = np.diff([0, *cuts, 100])
        strategy[s] = {a: Fraction(int(p), 100) for a, p in zip(acts, parts)}
    goal = set(draw(st.lists(st.integers(1, n - 1), max_size=2, unique=True)))
    return RandomMDP(n, actions, goal, reward, strategy)
