"""What a stage of a counterfactual run (:mod:`.stages`, :mod:`.descent`) needs from the run: the protocols the run
of :mod:`.solve` implements, one bound at a time or the whole problem."""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from .certify import Candidate, Certificate
from .preanalysis import Encoding, Region


class BoundContext(Protocol):
    """What a stage of one bound needs from the run."""

    enc: Encoding
    gamma: float
    certificate: Certificate
    sizes: dict
    label: str              # "" for a single bound, " [bound k]" with several

    def accept(self, policy: np.ndarray, source: str) -> Candidate | None:
        """Storm's verdict on a policy over the encoding's rows: a candidate when it meets this bound (and a
        candidate of the run when it meets every bound), else None."""

    def start(self, norm: str | None = None) -> np.ndarray | None:
        """The best checked candidate (by ``norm``, or weighted) over the encoding's rows, or None."""

    def note(self, text: str) -> None:
        """A remark for the result's notes."""


class RunContext(Protocol):
    """What a stage of the whole problem needs from the run."""

    region: Region
    encodings: Sequence[Encoding]
    gammas: Sequence[float]
    sigma: np.ndarray
    certificate: Certificate
    sizes: dict

    def accept_strategy(self, probs: np.ndarray, source: str) -> Candidate | None:
        """Storm's verdict on a strategy (probabilities of every choice): a candidate when it meets every bound."""

    def box_values(self) -> list[np.ndarray | None] | None:
        """Per bound, σ's values where they may lower the value boxes of the MIQCQP (or None)."""

    def note(self, text: str) -> None:
        """A remark for the result's notes."""
