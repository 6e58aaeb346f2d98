"""MDPs given as dense arrays P[s, a, s'] (as in the authors' Python environments), turned into explicit models."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import ModelError, PathError
from ..model import ExplicitModel, RewardModel
from ..paths import ObservedPath


def mdp_from_arrays(P: np.ndarray, choice_rewards: np.ndarray | None = None, state_rewards: np.ndarray | None = None,
                    initial_state: int = 0, action_names: Sequence[str] | None = None,
                    labels: dict[str, np.ndarray] | None = None, source: str = "<arrays>") -> ExplicitModel:
    """An MDP with every action enabled in every state: choice (s, a) is row ``s * A + a``, so the entries of the
    transition matrix come in ``numpy.nonzero(P)`` order. States get the variable ``s`` (= index); actions are named
    ``a0, a1, ...`` unless ``action_names`` is given. Rewards form the reward model ``"r"``."""
    P = np.asarray(P, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ModelError(f"{source}: expected P[s, a, s'] of shape (S, A, S), got {P.shape}")
    S, A, _ = P.shape
    names = tuple(action_names) if action_names is not None else tuple(f"a{a}" for a in range(A))
    rewards = {}
    if choice_rewards is not None or state_rewards is not None:
        rewards["r"] = RewardModel("r", state=state_rewards,
                                   choice=None if choice_rewards is None else np.asarray(choice_rewards).reshape(S * A))
    return ExplicitModel(transitions=sp.csr_matrix(P.reshape(S * A, S)), row_groups=np.arange(0, S * A + 1, A),
                         choice_actions=np.tile(np.arange(A), S), action_names=names, labels=labels or {},
                         valuations={"s": np.arange(S)}, rewards=rewards, initial_state=initial_state,
                         source=source)


def path_from_arrays(model: ExplicitModel, states: np.ndarray, actions: np.ndarray,
                     next_states: np.ndarray) -> ObservedPath:
    """The observed path (s_t, a_t) -> s_{t+1} of a model built by :func:`mdp_from_arrays` (action indices)."""
    states, actions, next_states = (np.asarray(x, dtype=np.int64) for x in (states, actions, next_states))
    if np.any(next_states[:-1] != states[1:]):
        t = int(np.flatnonzero(next_states[:-1] != states[1:])[0])
        raise PathError(f"step {t}: next state {next_states[t]} is not the state {states[t + 1]} of step {t + 1}")
    return ObservedPath(model, states, model.row_groups[states] + actions, int(next_states[-1]))
