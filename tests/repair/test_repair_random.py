"""``repair`` on small random parametric chains (hypothesis) against brute force: every state moves to one of two
successors with a probability p, 1-p, q, 1-q or a constant; the oracle solves the chain's linear equations with numpy
at every valuation of a grid. The answer meets the bound by the oracle, is as close as the grid's best valuation,
and no grid valuation closer than the proven lower bound meets it; a region proven infeasible has no feasible grid
valuation."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stormcf.repair import RepairProblem, load_parametric, solve_repair

from repair_oracles import grid_optimum, infeasible_closer_than

EXPRESSIONS = ("p", "1-p", "q", "1-q", "3/10", "7/10")


@dataclass(frozen=True)
class Chain:
    """States 0..n-1 move; n is "goal" and n+1 "fail" (absorbing). State s moves to ``first[s]`` with probability
    ``expression[s]`` and to ``second[s]`` otherwise."""

    n: int
    expression: tuple[str, ...]
    first: tuple[int, ...]
    second: tuple[int, ...]

    @property
    def parameters(self) -> list[str]:
        return [x for x in ("p", "q") if any(x in e for e in self.expression)]

    def prism(self) -> str:
        lines = ["dtmc", *[f"const double {x};" for x in self.parameters], "module chain",
                 f"  s : [0..{self.n + 1}] init 0;"]
        for s in range(self.n):
            e = self.expression[s]
            lines.append(f"  [] s={s} -> {e} : (s'={self.first[s]}) + 1-({e}) : (s'={self.second[s]});")
        lines += [f"  [] s>={self.n} -> true;", "endmodule", f'label "goal" = s={self.n};']
        return "\n".join(lines) + "\n"

    def value(self, valuation: dict[str, float]) -> float:
        """P(F "goal") from state 0 (numpy: the linear equations on the states that can reach the goal)."""
        n = self.n + 2
        P = np.zeros((n, n))
        for s in range(self.n):
            x = eval(self.expression[s].replace("/", "./"), {}, dict(valuation))   # noqa: S307 - our own texts
            P[s, self.first[s]] += x
            P[s, self.second[s]] += 1 - x
        reach = {self.n}
        while True:
            more = {s for s in range(self.n) if s not in reach and (self.first[s] in reach or self.second[s] in reach)}
            if not more:
                break
            reach |= more
        maybe = sorted(reach - {self.n})
        if 0 not in maybe:
            return 0.0
        A = np.eye(len(maybe)) - P[np.ix_(maybe, maybe)]
        return float(np.linalg.solve(A, P[maybe, self.n])[maybe.index(0)])


@st.composite
def chains(draw) -> Chain:
    n = draw(st.integers(2, 4))
    expression = tuple(draw(st.sampled_from(EXPRESSIONS)) for _ in range(n))
    first = tuple(draw(st.integers(0, n + 1)) for _ in range(n))
    second = tuple(draw(st.integers(0, n + 1).filter(lambda t, f=f: t != f)) for f in first)
    return Chain(n, expression, first, second)


@settings(max_examples=8)
@given(chains(), st.sampled_from([0.3, 0.5, 0.7]), st.sampled_from([0.4, 0.6]),
       st.sampled_from([0.03, 0.1, 0.25]), st.sampled_from(["linf", "l1", "l2"]))
def test_random_chains_against_brute_force(tmp_path_factory, chain, p0, q0, delta, norm):
    assume(chain.parameters)
    nominal = {"p": p0, "q": q0}
    v0 = chain.value(nominal)
    assume(0.05 < v0 < 0.95)
    upper = v0 - delta > 0
    b = round(v0 - delta, 2) if upper else round(v0 + delta, 2)
    assume(b < v0 if upper else b > v0)
    bound = f'P{"<=" if upper else ">="}{b} [F "goal"]'
    file = tmp_path_factory.mktemp("chain") / "chain.pm"
    file.write_text(chain.prism())
    model = load_parametric(file)
    names = list(model.build([bound]).parameters)      # a parameter of unreachable states only is none of theirs
    unused = [x for x in chain.parameters if x not in names]
    if unused:
        model = load_parametric(file, ",".join(f"{x}={nominal[x]}" for x in unused))
    problem = RepairProblem(model, [bound], {x: nominal[x] for x in names}, norm=norm)
    result = solve_repair(problem, time_limit=60)

    def feasible(point) -> bool:
        value = chain.value({**nominal, **dict(zip(names, point))})
        return value <= b + 1e-9 if upper else value >= b - 1e-9

    x0 = [nominal[x] for x in names]
    lo, hi = [float(x) for x in problem.box.lo], [float(x) for x in problem.box.hi]
    if result.status == "infeasible":
        assert grid_optimum(feasible, x0, lo, hi, norm, points=41, resolution=1e-2) is None
        return
    assert result.status == "optimal", result.text()
    assert feasible([float(x) for x in result.answer.point])
    oracle = grid_optimum(feasible, x0, lo, hi, norm, resolution=2.5e-5)
    assert oracle is not None and result.distance <= oracle[0] + 1e-4
    assert infeasible_closer_than(feasible, x0, lo, hi, norm, result.lower_bound - 1e-9)
    assert all(c.holds and c.exact is not None for c in result.answer_checks)
    assert Fraction(result.to_dict()["distance_exact"] or 0) >= 0
