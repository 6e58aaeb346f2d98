"""The result of ``stormcf learn``: the learned MDP (as Storm built it), the users' strategy, the log's coverage."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..model import ExplicitModel
from ..report import Report
from ..strategy import Strategy
from ..verify import Check
from .alergia import Automaton
from .coverage import THIN, Coverage
from .problem import LearnProblem


@dataclass(frozen=True, eq=False)
class LearnResult(Report):
    """What :func:`~stormcf.learn.learn_mdp` learned.

    ``model`` is the MDP as Storm built it from the written file (states named by the valuation ``s`` = learned
    state, ``o`` = its output); ``strategy`` the users' strategy on it; ``prism`` (and ``drn``) the written text.
    """

    command = "learn"

    problem: LearnProblem
    automaton: Automaton
    model: ExplicitModel
    strategy: Strategy
    coverage: Coverage
    checks: Sequence[Check]
    timings: dict[str, float]
    prism: str
    drn: str | None = None

    status = "ok"

    @property
    def max_out_degree(self) -> int:
        """The largest number of transitions leaving a state, over all its actions (seed 000's Table 4)."""
        m = self.model
        per_choice = np.diff(m.transitions.indptr)
        return int(np.bincount(m.state_of_choice, weights=per_choice, minlength=m.n_states).max())

    @property
    def notes(self) -> Sequence[str]:
        out = []
        c = self.coverage
        if c.open_ends:
            out.append(f"{c.open_ends} of {c.cases} cases end in a state the learned MDP continues from "
                       f"(IOAlergia ignores where cases stop)")
        if c.choices_thin:
            out.append(f"{c.choices_thin} of {c.choices} learned (state, action) frequencies rest on fewer than "
                       f"{THIN} log steps")
        if self.problem.laplace:
            out.append(f"the strategy is Laplace-smoothed with pseudo-count {self.problem.laplace:g}")
        return out

    def payload(self) -> dict[str, Any]:
        p = self.problem
        m = self.model
        return {
            "log": p.log.summary(),
            "learning": {"algorithm": "IOAlergia", "learner": p.learner, "alpha": p.alpha_value,
                         "alpha_given": p.alpha, "laplace": p.laplace},
            "learned": {"states": m.n_states, "choices": m.n_choices, "transitions": m.n_transitions,
                        "max_out_degree": self.max_out_degree, "decision_states": int(m.decision_states.sum()),
                        "deadlock_states": int(np.sum(m.labels["deadlock"])) if "deadlock" in m.labels else 0},
            "coverage": self.coverage.to_dict(),
            "names": {"actions": dict(p.action_ids), "observations": dict(p.observation_ids),
                      "labels": {k: list(v) for k, v in p.labels.items()}, "final_only": sorted(p.final_only)},
            "reward_models": sorted(m.rewards),
            "files": {"model": _str(p.model_path), "strategy": _str(p.strategy_path), "drn": _str(p.drn_path)},
        }

    def text(self) -> str:
        p, m, c = self.problem, self.model, self.coverage
        log = p.log
        lines = [f"{log.source}: {log.n_cases} cases, {log.events} events ({log.form} form): "
                 f"{len(log.actions)} actions, {len(log.observations)} observations"]
        implicit = ", ".join(f"{v} {k}" for k, v in log.implicit.items() if v)
        if implicit:
            lines.append(f"  implicit events added: {implicit}")
        lines.append(f"learned by IOAlergia (α = {p.alpha_value:g}, {p.learner}'s implementation): {m.n_states} "
                     f"states, {m.n_choices} choices, {m.n_transitions} transitions, max out-degree "
                     f"{self.max_out_degree}, {int(m.decision_states.sum())} decision states")
        where = p.model_path if p.model_path is not None else "(not saved)"
        lines.append(f"  written to {where} with exact frequencies; built by Storm from that file")
        if p.drn_path is not None:
            lines.append(f"  also written to {p.drn_path} (DRN), built by Storm: the same model")
        lines.append(f"coverage: all {c.cases_replayed} cases are paths of the learned MDP; choice frequencies rest "
                     f"on {c.support_min} to {c.support_max} log steps (median {c.support_median:g})")
        lines += [f"  note: {n}" for n in self.notes]
        renamed = {**{k: v for k, v in p.action_ids.items() if k != v},
                   **{k: v for k, v in p.observation_ids.items() if k != v}}
        if renamed:
            shown = ", ".join(f"'{k}' -> {v}" for k, v in list(renamed.items())[:8])
            lines.append(f"renamed for PRISM: {shown}" + (" ..." if len(renamed) > 8 else ""))
        labels = ", ".join(f"{k} = {' | '.join(v)}" + (" (last event)" if k in p.final_only else "")
                           for k, v in p.labels.items())
        lines.append("labels: one per observation" + (f"; {labels}" if labels else ""))
        lines.append("reward models: " + ", ".join(f'"{r}"' for r in sorted(m.rewards)))
        smoothing = f" (Laplace pseudo-count {p.laplace:g})" if p.laplace else ""
        target = f" written to {p.strategy_path}" if p.strategy_path is not None else ""
        lines.append(f"users' strategy: the empirical frequency of each action in each of the "
                     f"{int(m.decision_states.sum())} decision states{smoothing}{target}")
        for check in self.checks:
            lines.append(f"  {check} under the users' strategy ({check.method})")
        return "\n".join(lines)


def _str(path) -> str | None:
    return None if path is None else str(path)
