"""Observed paths for the path commands' tables."""
from __future__ import annotations

import json
from pathlib import Path

from .hostile import write


def long_grid_path(folder: Path, steps: int = 20_000) -> Path:
    """A path of the gridworld (p=0.4) that stays ``steps`` steps in its initial state x=0, y=0 by "up" (which
    stays there with probability 0.6): a valid path, written directly."""
    step = {"state": {"x": 0, "y": 0}, "action": "up"}
    return write(folder, "long.json", json.dumps({"steps": [step] * steps, "final_state": {"x": 0, "y": 0}}))
