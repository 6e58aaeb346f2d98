#!/usr/bin/env python3
"""Benchmark: the small programmes solved in this process, through the one solver layer (``stormcf.solvers.solve``)
beside the direct ``scipy.optimize`` calls they replaced (issue 38), and on each installed solver.

The hot paths are many tiny programmes in a row: ``setcover-evaluate --certify lp`` certifies every agent with one
LP, the ``milp`` engine solves several MILPs per agent, ``icfmdp --bounds lp`` solves two LPs per transition and
step, ``recourse --storm-front`` one feasibility LP per plan. Per programme kind, CPU milliseconds per programme
(this process and the child processes it waited for), wall milliseconds beside, the load average at the start and
the end of the run:

- ``scipy`` (before): the programme given to ``scipy.optimize.linprog`` / ``milp`` as the code did before issue 38
  (HiGHS bundled with scipy, in this process);
- ``auto`` (now): the public function of the analysis (``lp_bound``, the covering MILP, ``pair_bounds``,
  ``inside``) with the default solver (HiGHS in this process: highspy, else scipy's HiGHS);
- ``highs``, ``scip``, ``gurobi``: the same function with ``--solver`` set (SCIP solves LPs in this process and MILPs
  in a child process; each only when installed).

Every column's objective values are compared with the ``scipy`` column (largest absolute difference printed).

    python scripts/bench_solvers.py              # 200 agents of n = 20, 100 actions; 300 pair LPs; 200 points
    python scripts/bench_solvers.py --quick      # 10 agents, 10 pair LPs, 10 points (seconds; the CI smoke test)
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import numpy as np
from _measure import Timing, load_average, machine, timed

SOLVERS = ("highs", "scip", "gurobi")


def setcover_problems(agents: int) -> list:
    from stormcf.setcover.data import agent_pool, paper_instance
    from stormcf.setcover.problem import SetCoverProblem
    instance = paper_instance(20, seed=0)
    problems = [SetCoverProblem(instance, x) for x in agent_pool(instance, 4 * agents, 0.68, 1)]
    return [p for p in problems if not p.positive][:agents]


def scipy_lp_bound(problem) -> float:
    """``lp_bound`` before issue 38."""
    from scipy.optimize import linprog
    res = linprog(problem.instance.expected_costs, A_ub=-problem.coverage().T.astype(float),
                  b_ub=-problem.deficit().astype(float),
                  bounds=list(zip(np.zeros(problem.instance.n_actions), problem.available.astype(float))),
                  method="highs")
    return float(res.fun) if res.status == 0 else np.inf


def scipy_covering_milp(problem) -> float:
    """The first MILP of the ``milp`` engine before issue 38."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    from stormcf.setcover.engines import repeat_bounds
    n = problem.instance.n_actions
    cons = [LinearConstraint(problem.coverage().T.astype(float), lb=problem.deficit().astype(float), ub=np.inf)]
    res = milp(problem.instance.expected_costs, constraints=cons, integrality=np.ones(n),
               bounds=Bounds(np.zeros(n), repeat_bounds(problem).astype(float)), options={"mip_rel_gap": 1e-10})
    return float(res.fun) if res.status == 0 else np.inf


def covering_milp(problem, solver: str) -> float:
    from stormcf.setcover.engines import covering_programme
    from stormcf.solvers import solve
    out = solve(covering_programme(problem), solver).proven("the covering MILP")
    return out.objective if out.optimal else np.inf


def pair_cases(count: int, states: int = 6, seed: int = 0) -> list:
    """Random (o, k, p) of the interval counterfactual bounds: the observed distribution, its successor, another."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        o, p = (rng.dirichlet(np.ones(states)) * (rng.random(states) < 0.7) for _ in range(2))
        o[0] += 0.1
        p[0] += 0.1
        cases.append((o / o.sum(), 0, p / p.sum()))
    return cases


def scipy_pair_bounds(o, k, p) -> np.ndarray:
    """``pair_bounds`` (assumptions none) before issue 38: its LPs."""
    from scipy.optimize import linprog
    O, C = np.flatnonzero(o > 0), np.flatnonzero(p > 0)
    A_eq = np.vstack([np.kron(np.eye(O.size), np.ones(C.size)), np.kron(np.ones(O.size), np.eye(C.size))])
    b_eq = np.concatenate([o[O], p[C]])
    values = []
    for c in range(C.size):
        cost = np.zeros(O.size * C.size)
        cost[c] = 1.0                                   # θ(O[0] = k, C[c])
        values += [linprog(cost, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs").fun,
                   -linprog(-cost, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs").fun]
    return np.array(values) / o[k]


def pair_bounds(o, k, p, solver: str) -> np.ndarray:
    from stormcf.icfmdp.lp import pair_bounds as bounds
    lb, ub = bounds(o, k, p, "none", solver)
    C = np.flatnonzero(p > 0)
    return np.column_stack([lb[C], ub[C]]).ravel()


def hull_cases(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A convex front of 8 vertices (cost, Gower) and points around it."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 8)
    vertices = np.column_stack([t, (1 - t) ** 2])
    return vertices, rng.random((count, 2)) * 1.2 - 0.1


def scipy_inside(point, vertices) -> float:
    """``inside`` before issue 38, for one point."""
    from scipy.optimize import linprog
    k = len(vertices)
    res = linprog(np.zeros(k), A_ub=vertices.T, b_ub=point + 1e-9, A_eq=np.ones((1, k)), b_eq=[1.0], method="highs")
    return float(res.status == 0)


def inside(point, vertices, solver: str) -> float:
    from stormcf.recourse.exact import inside as test
    return float(test(point[None, :], vertices, 1e-9, solver)[0])


def per_case(function: Callable, cases: Sequence) -> tuple[Timing, np.ndarray]:
    """CPU and wall milliseconds per case (after one warm-up call; SCIP's child processes included) and the
    values."""
    function(cases[0])
    with timed() as timing:
        values = [np.atleast_1d(function(case)) for case in cases]
    return Timing(1e3 * timing.cpu / len(cases), 1e3 * timing.wall / len(cases), timing.load), np.concatenate(values)


def row(name: str, cases: Sequence, before: Callable, now: Callable[[object, str], object]) -> list[str]:
    from stormcf.solvers import available
    ms, reference = per_case(before, cases)
    cells = [name, str(len(cases)), f"{ms.cpu:.2f} ({ms.wall:.2f})"]
    differences = []
    for solver in ("auto",) + SOLVERS:
        if not available(solver if solver != "auto" else "highs"):
            cells.append("-")
            continue
        solver_ms, values = per_case(lambda case, solver=solver: now(case, solver), cases)
        finite = np.isfinite(reference)
        if not np.array_equal(finite, np.isfinite(values)):
            raise SystemExit(f"{name}: {solver} disagrees with scipy on which programmes are feasible")
        differences.append(float(np.max(np.abs(values[finite] - reference[finite]), initial=0.0)))
        cells.append(f"{solver_ms.cpu:.2f} ({solver_ms.wall:.2f})"
                     + (f" {solver_ms.cpu / ms.cpu:.2f}x" if solver == "auto" else ""))
    return cells + [f"{max(differences):.1e}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=200, help="set-cover agents (default 200)")
    parser.add_argument("--pairs", type=int, default=300, help="interval-bound pairs (default 300)")
    parser.add_argument("--points", type=int, default=200, help="achievable-set points (default 200)")
    parser.add_argument("--quick", action="store_true", help="10 of each: a smoke run in seconds")
    args = parser.parse_args()
    if args.quick:
        args.agents = args.pairs = args.points = 10
    from stormcf.setcover.engines import lp_bound
    start = machine()
    problems = setcover_problems(args.agents)
    vertices, points = hull_cases(args.points)
    rows = [row("set-cover LP bound", problems, scipy_lp_bound, lambda p, s: lp_bound(p, s)),
            row("set-cover MILP", problems, scipy_covering_milp, covering_milp),
            row("icfmdp pair LPs", pair_cases(args.pairs), lambda c: scipy_pair_bounds(*c),
                lambda c, s: pair_bounds(*c, s)),
            row("recourse hull LP", list(points), lambda q: scipy_inside(q, vertices),
                lambda q, s: inside(q, vertices, s))]
    head = ["programmes", "count", "scipy ms", "auto ms, ratio (CPU)", "highs ms", "scip ms", "gurobi ms",
            "max |diff|"]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    print(f"CPU milliseconds per call (one programme; a pair's LPs), with the child processes SCIP runs MILPs in; "
          f"wall milliseconds in parentheses; at the start {start}, at the end load average {load_average():.2f}")
    for r in [head] + rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(r, widths)))


if __name__ == "__main__":
    main()
