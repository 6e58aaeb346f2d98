"""What a run has proven: the Storm-checked candidates (upper bounds) and the valid lower bounds of every stage.

A counterfactual run chains several solves (the exact d∞ bisection, the d0 MILP, the MIQCQP, local search). Each
may find strategies and may prove a lower bound on its own objective. This module keeps both, and derives the
status from them alone, never from a solver's word:

- a **candidate** is a strategy Storm checked on its induced DTMC (and, with ``exact``, in rational arithmetic);
  its distance d(σ, σ*) is an upper bound on the optimum;
- a **lower bound** is kept only when the solve that produced it is a relaxation of the problem (the bound γ
  itself, never γ minus a safety margin; solver tolerances only relax it further) and it does not exceed the
  distance of a checked candidate (a solver whose "proven" bound beats a strategy Storm accepted is wrong, and its
  claim is dropped with a note);
- the weighted lower bound combines the norms' bounds, each raised by what the others imply (``Norm.implied``:
  d1 = (1/|S|) Σ Δ_s >= d∞/|S|, d∞ >= d1, d0 >= 1 once something must change), e.g. d = r0·d0 + r1·d1 + r∞·d∞ >=
  r0·d0* + (r∞ + r1/|S|)·d∞*, next to a bound the MIQCQP proves for d itself;
- the status is ``optimal`` when the best candidate is within :data:`GAP` (relative) of the lower bound, else
  ``suboptimal`` with the gap.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..distance import NORMS, StrategyDistance, Weights
from ..strategy import Strategy
from ..verify import Check

#: relative gap at which a candidate counts as optimal (Gurobi's default MIP gap, as in the paper)
GAP = 1e-4
#: relative tolerance of the cross-check "a proven lower bound does not exceed a checked candidate's distance"
CROSS_CHECK_TOLERANCE = 1e-6


@dataclass(eq=False)
class Candidate:
    """A strategy (``probs``: the probability of every choice of the model) checked by Storm against every bound.

    ``check``: Storm's check of each bound (one :class:`~stormcf.verify.Check`, or a list with one per bound);
    ``exact``: the same in rational arithmetic, when asked."""

    probs: np.ndarray
    source: str
    strategy: Strategy
    check: list[Check]             # one Check is read as [check] (__post_init__)
    exact: list[Check] | None
    distance: StrategyDistance
    weighted: float

    def __post_init__(self) -> None:
        self.check = _listed(self.check)
        self.exact = None if self.exact is None else _listed(self.exact)

    @property
    def verification(self) -> Check:
        """Storm's check of the first bound."""
        return self.check[0]

    @property
    def valid(self) -> bool:
        return all(bool(c.holds) for c in self.check) and (self.exact is None or all(bool(c.holds)
                                                                                     for c in self.exact))

    @property
    def checks(self) -> list[Check]:
        return list(self.check) + list(self.exact or [])


def _listed(check: Check | list[Check]) -> list[Check]:
    return list(check) if isinstance(check, (list, tuple)) else [check]


@dataclass
class LowerBound:
    """A proven lower bound on one objective (a norm's key such as ``"d0"``, or ``"weighted"``) and who proved it."""

    value: float
    source: str


@dataclass(eq=False)
class Certificate:
    """The candidates and lower bounds of a run (see the module docstring)."""

    weights: Weights
    n_decision: int
    candidates: list[Candidate] = field(default_factory=list)
    bounds: dict[str, LowerBound] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------------------------------- candidates
    def add(self, candidate: Candidate) -> None:
        if candidate.valid:
            self.candidates.append(candidate)

    @property
    def best(self) -> Candidate | None:
        """The checked candidate with the least weighted distance (ties: the smaller d∞)."""
        if not self.candidates:
            return None
        return min(self.candidates, key=lambda c: (c.weighted, c.distance.dinf))

    def best_by(self, norm: str) -> Candidate | None:
        """The checked candidate with the least value of the norm ``norm`` (a key of
        :data:`~stormcf.distance.NORMS`)."""
        if not self.candidates:
            return None
        return min(self.candidates, key=lambda c: (c.distance[norm], c.weighted))

    # ------------------------------------------------------------------------------------------- bounds
    def prove(self, norm: str, value: float | None, source: str) -> bool:
        """Record a lower bound on ``norm`` proven by ``source`` (kept if it improves the known one and agrees with
        every checked candidate); returns whether it agrees."""
        if value is None or not math.isfinite(value):
            return True
        best = self._best_value(norm)
        if best is not None and value > best * (1 + CROSS_CHECK_TOLERANCE) + 1e-9:
            self.notes.append(f"{source} claims that no valid strategy has {_NAMES[norm]} below {value:.6g}, but "
                              f"Storm accepted one with {best:.6g}: the claim is wrong and ignored")
            return False
        if norm not in self.bounds or value > self.bounds[norm].value:
            self.bounds[norm] = LowerBound(value, source)
        return True

    def _best_value(self, norm: str) -> float | None:
        if not self.candidates:
            return None
        best = self.best if norm == "weighted" else self.best_by(norm)
        assert best is not None                 # there are candidates
        return best.weighted if norm == "weighted" else float(best.distance[norm])

    def bound(self, norm: str) -> float:
        return self.bounds[norm].value if norm in self.bounds else 0.0

    def norm_bounds(self) -> dict[str, float]:
        """The proven lower bound of every norm, raised by what the other norms' bounds imply."""
        proven = {k: self.bound(k) for k in NORMS}
        return {k: n.implied(proven, self.n_decision) for k, n in NORMS.items()}

    @property
    def lower(self) -> float:
        """The best proven lower bound on the weighted distance."""
        return max(self.weights.combine(self.norm_bounds()), self.bound("weighted"))

    def lower_source(self) -> str:
        """The stages whose proven bounds make :attr:`lower` (``""`` when nothing is proven)."""
        if "weighted" in self.bounds and self.bound("weighted") >= self.weights.combine(self.norm_bounds()):
            return self.bounds["weighted"].source
        sources = [self.bounds[k].source for k in NORMS if k in self.bounds and self.bounds[k].value > 0]
        return " and ".join(dict.fromkeys(sources))

    def gap(self, candidate: Candidate | None = None) -> float | None:
        """(d - lower) / d of ``candidate`` (default: the best), 0 when d = 0."""
        c = candidate or self.best
        if c is None:
            return None
        return max(0.0, c.weighted - self.lower) / c.weighted if c.weighted > 0 else 0.0

    @property
    def optimal(self) -> bool:
        gap = self.gap()
        return gap is not None and gap <= GAP

    def stages(self) -> dict[str, dict]:
        """The best checked candidate of every source (stage): ``{source: {d, <every norm>}}``, for JSON."""
        out: dict[str, dict] = {}
        for c in sorted(self.candidates, key=lambda c: (c.weighted, c.distance.dinf), reverse=True):
            out[c.source] = {"d": c.weighted, **{k: c.distance[k] for k in NORMS}}
        return out

    def lower_sources(self) -> dict[str, dict]:
        """The proven bounds for JSON: ``{norm: {value, source}}``."""
        return {k: {"value": b.value, "source": b.source} for k, b in self.bounds.items()}


_NAMES = {**{k: n.symbol for k, n in NORMS.items()}, "weighted": "d"}
