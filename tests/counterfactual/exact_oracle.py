"""An exact oracle for counterfactual strategies on random MDPs (tests/random_models.py), independent of stormcf and
Storm: values of memoryless strategies by graph analysis and Gaussian elimination over Python fractions, optima by
brute force over the memoryless deterministic strategies (they are optimal for reachability and expected total
rewards), and the end components a bound's soundness depends on. Targets need not be absorbing: a path formula is
decided when it first reaches φ (or ¬ψ ∧ ¬φ)."""
from __future__ import annotations

import itertools
from fractions import Fraction

import stormcf

from random_models import RandomMDP, _solve_fractions

INF = float("inf")


class Oracle:
    """The exact values of one random MDP with the target "goal" (φ) and, for until, ψ = ``constraint``."""

    def __init__(self, mdp: RandomMDP, constraint: set[int] | None = None) -> None:
        self.mdp, self.n = mdp, mdp.n
        self.goal = set(mdp.goal)
        self.constraint = set(range(mdp.n)) if constraint is None else set(constraint)
        self.stop = self.goal | (set(range(self.n)) - self.constraint)     # where ψ U φ is decided

    # ------------------------------------------------------------------------------------------- strategies
    def deterministic(self):
        """Every memoryless deterministic strategy, as {state: {action: 1}}."""
        states = sorted(self.mdp.actions)
        for picks in itertools.product(*(sorted(self.mdp.actions[s]) for s in states)):
            yield {s: {a: Fraction(1)} for s, a in zip(states, picks)}

    def chain(self, strategy: dict[int, dict[str, Fraction]]):
        """Transition rows and rewards of the induced DTMC, with the states of :attr:`stop` absorbing."""
        P = [[Fraction(0)] * self.n for _ in range(self.n)]
        r = [Fraction(0)] * self.n
        for s, acts in self.mdp.actions.items():
            if s in self.stop:
                P[s][s] = Fraction(1)
                continue
            for a, w in strategy[s].items():
                for t, p in acts[a].items():
                    P[s][t] += w * p
                r[s] += w * self.mdp.reward[s][a]
        return P, r

    # ------------------------------------------------------------------------------------------- values
    def reach(self, strategy) -> list[Fraction]:
        """P(ψ U φ) in every state."""
        P, _ = self.chain(strategy)
        can = _backward(P, self.goal)
        rest = sorted(can - self.goal)
        x = [Fraction(1) if s in self.goal else Fraction(0) for s in range(self.n)]
        if rest:
            A = [[(1 if i == j else 0) - P[s][t] for j, t in enumerate(rest)] for i, s in enumerate(rest)]
            b = [sum((P[s][g] for g in self.goal), Fraction(0)) for s in rest]
            for s, v in zip(rest, _solve_fractions(A, b)):
                x[s] = v
        return x

    def reward(self, strategy) -> Fraction | float:
        """E[reward until φ] from s=0, infinite when φ is reached with probability < 1 (Storm's convention)."""
        P, r = self.chain(strategy)
        if 0 in self.goal:
            return Fraction(0)
        reached = _forward(P, 0, self.goal)
        if not reached <= _backward(P, self.goal):
            return INF
        rest = sorted(reached - self.goal)
        A = [[(1 if i == j else 0) - P[s][t] for j, t in enumerate(rest)] for i, s in enumerate(rest)]
        return _solve_fractions(A, [r[s] for s in rest])[rest.index(0)]

    def value(self, kind: str, strategy) -> Fraction | float:
        return self.reward(strategy) if kind == "reward" else self.reach(strategy)[0]

    def optimum(self, kind: str, direction: str) -> Fraction | float:
        values = [self.value(kind, d) for d in self.deterministic()]
        return min(values) if direction == "min" else max(values)

    def least_d0(self, kind: str, sigma, meets) -> int | None:
        """The fewest states whose switch to one action each (the others keep ``sigma``) makes ``meets(value)``
        true, by brute force (for one bound, a deterministic switch is optimal for a fixed set of changed states);
        None if no set does."""
        decision = [s for s in sorted(self.mdp.actions) if len(self.mdp.actions[s]) > 1]
        for size in range(len(decision) + 1):
            for states in itertools.combinations(decision, size):
                for picks in itertools.product(*(sorted(self.mdp.actions[s]) for s in states)):
                    strategy = {**sigma, **{s: {a: Fraction(1)} for s, a in zip(states, picks)}}
                    if meets(self.value(kind, strategy)):
                        return size
        return None

    # ------------------------------------------------------------------------------------------- soundness
    def best_reach(self) -> list[Fraction]:
        """Pmax(ψ U φ) in every state (a deterministic strategy is optimal in all states at once)."""
        return [max(column) for column in zip(*(self.reach(d) for d in self.deterministic()))]

    def ends_surely(self) -> bool:
        """Whether every strategy reaches φ or a state where ψ U φ has become impossible (Pmax = 0) almost surely
        from s=0 (a lower probability bound is sound, stormcf's condition)."""
        best = self.best_reach()
        done = self.goal | {s for s in range(self.n) if best[s] == 0}
        for d in self.deterministic():
            P, _ = self.chain(d)
            if not _forward(P, 0, done) <= _backward(P, done):
                return False
        return True

    def reaches_surely(self) -> bool:
        """Whether every strategy reaches φ almost surely from s=0."""
        return all(self.reach(d)[0] == 1 for d in self.deterministic())

    def zero_reward_end_component(self) -> bool:
        """Whether a strategy can, from s=0, stay forever in states from which φ can still be reached surely,
        earning nothing and never reaching φ: some deterministic strategy that never enters a state of Pmax(F φ)
        < 1 has a bottom strongly connected component outside φ whose choices earn nothing."""
        sure = {s for s, p in enumerate(self.best_reach()) if p == 1}
        if 0 not in sure or 0 in self.goal:
            return False
        for d in self.deterministic():
            if any(s not in self.goal and s in sure and not set(self.mdp.actions[s][a]) <= sure
                   for s, acts in d.items() for a in acts):
                continue                                    # enters a state where the reward is infinite
            P, r = self.chain(d)
            reached = _forward(P, 0, self.goal)
            for s in reached - self.goal:                 # s in a bottom SCC: it can come back from everywhere
                closed = _forward(P, s, set())
                if closed <= _backward(P, {s}) and not closed & self.goal and all(r[t] == 0 for t in closed):
                    return True
        return False


def strategy_of(mdp: RandomMDP, model, strategy) -> dict[int, dict[str, Fraction]]:
    """A stormcf strategy in exact arithmetic, as Storm's exact check reads it: every probability the shortest
    decimal that prints it, the largest of each state absorbing the rounding; states Storm did not build keep the
    random model's own strategy."""
    out = {}
    for s, acts in mdp.actions.items():
        try:
            state = model.state_index({"s": s})
        except stormcf.StateError:                          # not built by Storm (unreachable)
            out[s] = mdp.strategy[s]
            continue
        row = {a: model.choice_of(state, a) for a in acts}
        probs = {a: Fraction(repr(float(strategy.probabilities[row[a]]))) for a in acts}
        top = max(acts, key=lambda a: (probs[a], -row[a]))   # the first of the largest
        probs[top] = 1 - sum(p for a, p in probs.items() if a != top)
        out[s] = probs
    return out


def _forward(P, start: int, stop: set[int]) -> set[int]:
    """The states reached from ``start`` without leaving the states of ``stop``."""
    seen, todo = {start}, [start]
    while todo:
        s = todo.pop()
        if s in stop:
            continue
        for t, p in enumerate(P[s]):
            if p and t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def _backward(P, targets: set[int]) -> set[int]:
    """The states with a path to ``targets``."""
    can = set(targets)
    changed = True
    while changed:
        changed = False
        for s in range(len(P)):
            if s not in can and any(P[s][t] for t in can):
                can.add(s)
                changed = True
    return can
