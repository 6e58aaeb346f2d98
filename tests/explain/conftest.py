"""Fixtures and independent oracles for the k-change explanation tests."""
from pathlib import Path

import numpy as np
import pytest

import stormcf
from stormcf.counterfactual_mdp import gumbel
from stormcf.counterfactual_mdp import evaluate, sample_paths
from stormcf.explain import ExplanationProblem, unrolled_model
from stormcf.explain.synthetic import synthetic_prism


@pytest.fixture(scope="session")
def treat():
    model = stormcf.load_model(stormcf.example_path("treat.prism"))
    return stormcf.ObservedPath.load(model, stormcf.example_path("treat.path.json"))


@pytest.fixture(scope="session")
def adaptive():
    model = stormcf.load_model(stormcf.example_path("adaptive.prism"))
    return stormcf.ObservedPath.load(model, stormcf.example_path("adaptive.path.json"))


def load_synthetic(folder: Path, P: np.ndarray, initial: int = 0, name: str = "synthetic") -> stormcf.ExplicitModel:
    """A synthetic MDP (P[a, s, s']) written as PRISM and built by Storm."""
    file = folder / f"{name}_{initial}.prism"
    file.write_text(synthetic_prism(P, initial))
    return stormcf.load_model(file)


def synthetic_path(model, states, actions, names=None) -> stormcf.ObservedPath:
    names = names or [f"a{a}" for a in range(int(max(actions)) + 1)]
    return stormcf.ObservedPath.from_dict(
        model, {"steps": [{"state": {"s": int(s)}, "action": names[int(a)]} for s, a in zip(states, actions)]})


def expectimax(path: stormcf.ObservedPath, reward: str, k: int, minimize: bool = False) -> float:
    """Oracle: h(s_0, T, k) by plain recursion over (t, s, l), without memoisation and without stormcf.explain:
    counterfactual rows straight from stormcf.gumbel for every choice; a change is an action name different from
    the observed one in a state with two or more choices; no allowed option gives -inf (+inf when minimizing)."""
    m = path.model
    R = m.step_rewards(reward)
    sign = -1.0 if minimize else 1.0
    rows = [gumbel.counterfactual_transitions(m, int(path.choices[t]), int(path.states[t + 1])).toarray()
            for t in range(path.T - 1)]
    for t in range(path.T - 1):            # the observed pair reproduces the observation
        rows[t][path.choices[t]] = np.eye(m.n_states)[path.states[t + 1]]
    observed = path.actions

    def h(t: int, s: int, l: int) -> float:
        best = -np.inf
        for row in m.choices(s):
            change = m.action(row) != observed[t] and len(m.choices(s)) > 1
            if l + change > k:
                continue
            value = sign * R[row]
            if t < path.T - 1:
                for s2 in np.flatnonzero(rows[t][row]):
                    value += rows[t][row, s2] * h(t + 1, int(s2), l + change)
            best = max(best, value)
        return best

    return sign * h(0, int(path.states[0]), 0)


def problem(path, reward, k, minimize=False, **kw) -> ExplanationProblem:
    return ExplanationProblem(path, reward, k=k, optimization="min" if minimize else "max", **kw)


def sample(policy, k, n, seed):
    """Algorithm 1: n counterfactual paths of the policy with budget k, seeded."""
    return sample_paths(policy.cfmdp, policy, n, np.random.default_rng(seed), k)


def storm_optimum(prob, cf, k) -> float:
    """Storm's optimum of the unrolled (t, s, l) model of budget k."""
    return unrolled_model(prob, cf, k).optimum(prob.optimization, "pessimistic").value


def storm_policy_value(prob, cf, k, weights) -> float:
    """Storm's value of a policy given by its weights on the unrolled model of budget k."""
    return unrolled_model(prob, cf, k).policy_value(weights, prob.optimization, "pessimistic").value


def exact_value(prob, cf, k, weights) -> float:
    """The exact value of a policy given by its weights, by backward recursion."""
    return evaluate(cf, prob.step_rewards, weights, k, prob.optimization)
