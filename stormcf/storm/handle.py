"""What stormcf keeps of a model Storm built, and small helpers shared by the bridge modules."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(eq=False)
class StormHandle:
    """What stormcf keeps of a model Storm built: the symbolic description, the sparse model and its properties."""

    description: Any                    # stormpy PrismProgram / JaniModel, or None (DRN, arrays)
    model: Any                          # stormpy sparse model (double)
    properties: list = field(default_factory=list)
    exact_model: Any = None             # the stormpy.Rational build, on demand
    exact_values: tuple | None = None   # its transition probabilities as Fractions
    _fresh_label: int = 0


def _storm_message(text: str) -> str:
    """Storm's message without the exception class prefix, on one line."""
    text = re.sub(r"^\w+(Exception|Error): ", "", str(text).strip())
    return " ".join(text.split())


def _mask(bitvector, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[np.fromiter(iter(bitvector), dtype=np.int64)] = True
    return mask

