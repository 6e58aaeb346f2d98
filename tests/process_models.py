"""scripts/process_mdp.py's generator of process-mining-like MDPs, loaded from the script as it is (scripts/ is not a
package), for the tests that use its models."""
from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "process_mdp.py"


def process_mdp(n_states: int, seed: int, **options):
    """``process_mdp(n_states, seed=seed, **options)`` of the script (an :class:`stormcf.ExplicitModel`)."""
    spec = importlib.util.spec_from_file_location("process_mdp", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.process_mdp(n_states, seed=seed, **options)
