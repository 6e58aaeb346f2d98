"""The learned MDP as a PRISM program and as a DRN file, written by stormcf (not by AALpy's exporter).

PRISM (one module, one command per state and action)::

    mdp
    module learned
      s : [0..8] init 0;      // the learned state
      o : [0..9] init 7;      // its output: the observation (and whether it was the last event of a case)
      [Apply] s=0 -> 19/20 : (s'=1) & (o'=0) + 1/20 : (s'=2) & (o'=3);
      ...
    endmodule
    label "Rejected" = o=5 | o=9;
    rewards "steps" [Apply] true : 1; ... endrewards

Probabilities are the exact frequencies n(s, a, s') / n(s, a) of the log as fractions, so Storm's exact mode
(``--exact``) is exact with respect to the log. States without a successor in the log have no command: Storm adds
a self-loop (and its label ``deadlock``), as for ``prism_models/loan.prism``. The DRN file has the same states (in
the same order), choices, labels and rewards; the self-loop of such a state is written as an unlabelled choice.
DRN files carry no state valuations: strategy files refer to the PRISM model.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .alergia import Automaton


@dataclass(frozen=True, eq=False)
class Naming:
    """What the writers need besides the automaton: identifiers and labels by code."""

    actions: list[str]                   # action code -> PRISM identifier
    outputs: list[str]                   # output code -> comment text (the original observation, "(last event)")
    labels: dict[str, list[int]]         # label -> output codes
    rewards: dict[str, dict[int, Fraction]]   # reward model -> action code -> reward
    header: list[str]                    # comment lines


def frequencies(a: Automaton) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator of P(t | s, a) = n(s, a, t) / n(s, a) for every edge, in lowest terms."""
    key = a.source * (a.action.max(initial=0) + 1) + a.action
    _, inverse = np.unique(key, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=a.count).astype(np.int64)[inverse.ravel()]
    g = np.gcd(a.count, totals)
    return a.count // g, totals // g


def _fraction(num: int, den: int) -> str:
    return str(num) if den == 1 else f"{num}/{den}"


def _choices(a: Automaton):
    """(state, action, edge range) of every choice, in edge order."""
    key = np.stack([a.source, a.action])
    starts = np.flatnonzero(np.r_[True, np.any(key[:, 1:] != key[:, :-1], axis=0)]) if a.source.size else np.zeros(0, int)
    ends = np.r_[starts[1:], a.source.size]
    return zip(a.source[starts].tolist(), a.action[starts].tolist(), starts.tolist(), ends.tolist())


def prism_text(a: Automaton, naming: Naming) -> str:
    num, den = frequencies(a)
    outputs = a.outputs.tolist()
    target, num, den = a.target.tolist(), num.tolist(), den.tolist()
    lines = [f"// {h}" for h in naming.header]
    lines += ["//", "// o = output of the state:"]
    lines += [f"//   o={k}: {text}" for k, text in enumerate(naming.outputs)]
    lines += ["", "mdp", "", "module learned",
              f"  s : [0..{max(a.n_states - 1, 1)}] init 0;",
              f"  o : [0..{max(len(naming.outputs) - 1, 1)}] init {outputs[0]};", ""]
    for s, act, lo, hi in _choices(a):
        updates = " + ".join(f"{_fraction(num[k], den[k])} : (s'={target[k]}) & (o'={outputs[target[k]]})"
                             for k in range(lo, hi))
        lines.append(f"  [{naming.actions[act]}] s={s} -> {updates};")
    lines += ["endmodule", ""]
    for name, codes in naming.labels.items():
        lines.append(f'label "{name}" = ' + " | ".join(f"o={c}" for c in codes) + ";")
    for name, rewards in naming.rewards.items():
        lines += ["", f'rewards "{name}"']
        items = [f"  [{naming.actions[act]}] true : {_fraction(r.numerator, r.denominator)};"
                 for act, r in sorted(rewards.items()) if r != 0]
        lines += items or ["  true : 0;"]          # PRISM has no empty reward structure
        lines.append("endrewards")
    return "\n".join(lines) + "\n"


def drn_text(a: Automaton, naming: Naming) -> str:
    num, den = frequencies(a)
    target, num, den = a.target.tolist(), num.tolist(), den.tolist()
    names = list(naming.rewards)
    by_state: dict[int, list] = {}
    for s, act, lo, hi in _choices(a):
        by_state.setdefault(s, []).append((act, lo, hi))
    labels_of_output: dict[int, list[str]] = {}
    for name, codes in naming.labels.items():
        for c in codes:
            labels_of_output.setdefault(c, []).append(name)
    state_labels = [labels_of_output.get(o, []) for o in a.outputs.tolist()]
    n_choices = sum(len(by_state.get(s, [None])) for s in range(a.n_states))
    zero = "[" + ", ".join("0" for _ in names) + "]" if names else ""
    lines = [f"// {h}" for h in naming.header]
    lines += ["@type: MDP", "@parameters", "", "@reward_models", " ".join(names), "@nr_states", str(a.n_states),
              "@nr_choices", str(n_choices), "@model"]
    for s in range(a.n_states):
        choices = by_state.get(s)
        labels = state_labels[s] + ([] if choices else ["deadlock"])
        lines.append(f"state {s} {zero}{' init' if s == 0 else ''}" + "".join(f" {l}" for l in labels))
        if not choices:
            lines += [f"\taction __NOLABEL__ {zero}", f"\t\t{s} : 1"]
            continue
        for act, lo, hi in choices:
            rewards = ("[" + ", ".join(_fraction(naming.rewards[n].get(act, Fraction(0)).numerator,
                                                 naming.rewards[n].get(act, Fraction(0)).denominator)
                                       for n in names) + "]") if names else ""
            lines.append(f"\taction {naming.actions[act]} {rewards}")
            lines += [f"\t\t{target[k]} : {_fraction(num[k], den[k])}" for k in range(lo, hi)]
    return "\n".join(lines) + "\n"
