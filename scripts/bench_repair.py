#!/usr/bin/env python3
"""Counterfactual models (issue 33): ``repair`` beside Storm's own feasibility search and a grid search, on
stormpy's parametric examples scaled up (BRP with N chunks, crowds), side by side in one run.

For each model (two parameters), the bound is P(bad) <= a tenth of its value at the nominal valuation, and

- ``repair``: the closest valuation (l∞ and l2) with its proof: status, distance, proven lower bound, gap, CPU
  seconds (this process and its Storm children) and wall seconds, and the time to the proven optimum;
- ``Storm feasibility``: Storm's own search for *some* valuation that meets the bound (gradient descent): its
  distance to the nominal valuation and its time;
- ``grid``: the closest valuation of a G x G grid over the region whose Storm value (the solution function's value,
  computed by Storm's instantiation checker: state elimination does not finish at these sizes) meets the bound.

Every row has its CPU seconds (this process and its Storm children), its wall seconds and the load average at its
start and end.

    nice -n 10 python scripts/bench_repair.py             # BRP N = 256, 512, 1024 (up to 149,517 states), crowds
    python scripts/bench_repair.py --quick                # brp16_2, crowds3_5, l∞ only, 11 x 11 grids (a smoke test)
"""
from __future__ import annotations

import argparse
import re
import tempfile
from fractions import Fraction
from pathlib import Path

from _measure import Timing, machine, timed

from stormcf.errors import TimeLimitReached
from stormcf.repair import RepairProblem, load_parametric, solve_repair
from stormcf.storm import stormpy_example


def scaled(folder: Path, name: str, constants: dict[str, int]) -> Path:
    """A copy of stormpy's parametric example ``name`` with its defined integer constants set to ``constants``."""
    text = stormpy_example("pdtmc", name).read_text()
    for constant, value in constants.items():
        text, found = re.subn(rf"const int {constant} *= *\d+;", f"const int {constant} = {value};", text)
        assert found == 1, (name, constant)
    path = folder / f"{Path(name).stem}_{'_'.join(str(v) for v in constants.values())}.pm"
    path.write_text(text)
    return path


def models(folder: Path, quick: bool):
    """(label, file, -c constants, nominal, bad)"""
    brp = ("TOMsg=0,TOAck=0", "pL=0.8,pK=0.9", "s=5")
    crowds = (None, "PF=0.8,badC=0.1", '"observe0Greater1"')
    if quick:
        yield "brp N=16", stormpy_example("pdtmc", "brp16_2.pm"), *brp
        yield "crowds 3/5", stormpy_example("pdtmc", "crowds3_5.pm"), *crowds
        return
    for n, retries in ((256, 4), (512, 6), (1024, 10)):
        yield f"brp N={n} MAX={retries}", scaled(folder, "brp16_2.pm", {"N": n, "MAX": retries}), *brp
    yield "crowds 10/5", scaled(folder, "crowds3_5.pm", {"CrowdSize": 10, "TotalRuns": 5}), *crowds


def bound_of(model, nominal: str, bad: str) -> str:
    """P<=b [F bad] with b a tenth of Storm's value at the nominal valuation (two significant digits)."""
    problem = RepairProblem(model, [f"P<=1 [F {bad}]"], nominal)
    value = float(problem.search_build.values(problem.valuation(problem.point))[0])
    problem.search_build.close()
    return f"P<={float(f'{value / 10:.2g}')} [F {bad}]", problem


def ours(model, bound: str, nominal: str, norm: str, limit: float) -> dict:
    r = None
    with timed() as timing:
        try:
            r = solve_repair(RepairProblem(model, [bound], nominal, norm=norm), time_limit=limit)
        except TimeLimitReached:
            pass
    if r is None:
        return {"method": f"repair ({norm})", "status": "timeout", "d": None, "lower": None, "timing": timing,
                "boxes": None}
    return {"method": f"repair ({norm})", "status": r.status, "d": r.distance, "lower": r.lower_bound,
            "timing": timing, "boxes": r.outcome.counts.get("boxes") if r.outcome else None}


def feasibility(problem: RepairProblem) -> dict:
    """Storm's gradient-descent feasibility search over the region: some valuation, its l∞ distance."""
    build = problem.search_build
    with timed() as timing:
        verdict, witness = build.feasible(0, problem.valuation(problem.box.lo), problem.valuation(problem.box.hi),
                                          "gradient descent")
    d = None if witness is None else problem.distance.between(problem.point,
                                                             tuple(witness[n] for n in problem.parameters))
    return {"method": "Storm feasibility (GD)", "status": verdict, "d": d, "lower": None, "timing": timing,
            "boxes": None}


def grid(problem: RepairProblem, points: int) -> dict:
    """The closest valuation of a points x points grid over the region whose Storm value meets the bound (l∞)."""
    build, prop = problem.search_build, problem.properties[0]
    lo, hi = problem.box.lo, problem.box.hi
    axes = [[a + (b - a) * Fraction(j, points - 1) for j in range(points)] for a, b in zip(lo, hi)]
    best = None
    with timed() as timing:
        try:
            for x in axes[0]:
                for y in axes[1]:
                    d = problem.distance.between(problem.point, (x, y))
                    if (best is None or d < best) and prop.satisfied_by(build.values(problem.valuation((x, y)))[0]):
                        best = d
        finally:
            build.close()
    return {"method": f"grid {points}x{points} (l∞)", "status": "feasible" if best is not None else "none",
            "d": best, "lower": None, "timing": timing, "boxes": None}


def cell(x, fmt: str = ".6g") -> str:
    return "-" if x is None else format(x, fmt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="brp16_2 and crowds3_5, l∞ only, small grids")
    parser.add_argument("--limit", type=float, default=300.0, help="repair's time limit per run (default 300 s)")
    parser.add_argument("--grid", type=int, default=21, help="grid points per parameter (default 21)")
    args = parser.parse_args()
    limit, points, norms = (10.0, 11, ("linf",)) if args.quick else (args.limit, args.grid, ("linf", "l2"))
    print(f"{machine()}\n")
    print("| model | states | transitions | bound | method | status | distance | lower bound | gap | boxes | CPU s | "
          "wall s | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for label, file, constants, nominal, bad in models(Path(folder), args.quick):
            with timed() as loading:
                model = load_parametric(file, constants, shown_as=Path(file).name)
                bound, problem = bound_of(model, nominal, bad)
            build = problem.search_build
            head = f"| {label} | {build.n_states:,} | {build.n_transitions:,} | `{bound}` "
            print(f"{head}| (parametric build and nominal model) | | | | | | | {_cells(loading)}", flush=True)
            problem = RepairProblem(model, [bound], nominal)
            rows = [ours(model, bound, nominal, norm, limit) for norm in norms]
            rows += [feasibility(problem), grid(problem, points)]
            for row in rows:
                gap = (row["d"] - row["lower"]) if row["d"] is not None and row["lower"] is not None else None
                print(f"{head}| {row['method']} | {row['status']} | {cell(row['d'])} | {cell(row['lower'])} | "
                      f"{cell(gap, '.2g')} | {cell(row['boxes'], 'd')} | {_cells(row['timing'])}", flush=True)


def _cells(timing: Timing) -> str:
    return f"{timing.cpu:.1f} | {timing.wall:.1f} | {timing.loads} |"


if __name__ == "__main__":
    main()
