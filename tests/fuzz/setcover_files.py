"""Tiny set-cover instances and labelled data sets, valid and hostile, for the set-cover tables."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

#: f0..f2 with thresholds 1; a0..a2 provide one feature each (cost 1), a3 all three (cost 2.5)
INSTANCE = {"features": ["f0", "f1", "f2"], "thresholds": [1, 1, 1],
            "actions": [{"name": "a0", "effect": [1, 0, 0], "cost": 1.0},
                        {"name": "a1", "effect": [0, 1, 0], "cost": 1.0},
                        {"name": "a2", "effect": [0, 0, 1], "cost": 1.0},
                        {"name": "a3", "effect": [1, 1, 1], "cost": 2.5}]}
#: the 7 negative agents of INSTANCE with their unique optimal CFEs (checked by test_setcover_data's test)
AGENTS = [([0, 1, 1], (0,), 1.0), ([1, 0, 1], (1,), 1.0), ([1, 1, 0], (2,), 1.0), ([0, 0, 1], (0, 1), 2.0),
          ([0, 1, 0], (0, 2), 2.0), ([1, 0, 0], (1, 2), 2.0), ([0, 0, 0], (3,), 2.5)]


def instance_file(folder: Path, name: str = "inst.json", **changes) -> Path:
    path = folder / name
    path.write_text(json.dumps({**INSTANCE, **changes}))
    return path


def data_arrays() -> dict[str, np.ndarray]:
    """The arrays of a valid labelled data set (as setcover-data writes them)."""
    X = np.array([a for a, _, _ in AGENTS], dtype=np.int8)
    actions = np.full((len(AGENTS), 2), -1, dtype=np.int16)
    for k, (_, cfe, _) in enumerate(AGENTS):
        actions[k, :len(cfe)] = cfe
    return {"X": X, "actions": actions, "cost": np.array([c for _, _, c in AGENTS]),
            "instance": np.array(json.dumps(INSTANCE)), "info": np.array(json.dumps({"method": "hand"}))}


def data_file(folder: Path, name: str = "data.npz", drop: tuple[str, ...] = (), **changes) -> Path:
    """A labelled data set with some arrays changed or dropped."""
    arrays = {**data_arrays(), **changes}
    path = folder / name
    np.savez(path, **{k: v for k, v in arrays.items() if k not in drop})
    return path


def truncated(folder: Path) -> Path:
    whole = data_file(folder, "whole.npz").read_bytes()
    path = folder / "truncated.npz"
    path.write_bytes(whole[:len(whole) // 2])
    return path


def giant_header(folder: Path) -> Path:
    """An .npz whose X claims 10^13 int64 entries in its header (and holds none): read sizes before allocating."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False,
                                                  "shape": (10 ** 13,)})
    path = folder / "giant.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("X.npy", header.getvalue())          # the magic string and the header, no data
    return path


def pickled(folder: Path) -> Path:
    """An .npz holding an object array (a pickle): never loaded."""
    path = folder / "pickled.npz"
    np.savez(path, **{**data_arrays(), "X": np.array([{"a": 1}], dtype=object)})
    return path
