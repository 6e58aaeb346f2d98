"""``stormcf recourse`` on hostile models, options and caches: NaN and infinite costs refused, options of one front
refused with the other, a grid the plan MDP cannot hold refused before it is allocated."""
import pytest

from .hostile import LOAN, Case, write

#: a 3-state model whose cost reward is ``REWARD`` (s=0 in the initial state)
MODEL = """mdp
module m
  s : [0..2] init 0;
  [go] s<2 -> (s'=2);
  [stay] s=2 -> true;
endmodule
label "accept" = s=2;
rewards "cost"
  [go] true : REWARD;
endrewards
"""
GA = ("--generations", "2", "--offspring", "8", "--mutants", "2")


def prism(reward):
    return lambda d: ["recourse", write(d, "m.prism", MODEL.replace("REWARD", reward)), "--target", "accept", "--cost",
                      "cost", *GA]


def german(*args):
    return lambda d: ["recourse", "--dataset", "german", *GA, *args]


CASES = [
    Case("a cost of 1", prism("1"), 0, "least cost: 1"),
    Case("a NaN cost (s/s at s=0)", prism("s/s"), 2, 'reward model "cost" is nan at action \'go\' in state s=0'),
    Case("an infinite cost (1/s at s=0)", prism("1/s"), 2, 'reward model "cost" is inf'),
    Case("a constant 0/0 cost (Storm: SIGFPE)", prism("0/0"), 2, "m.prism:9: division by zero"),
    Case("a negative cost", prism("-1"), 2, "negative rewards"),
    Case("--target with --dataset", german("--target", "accept"), 2, "--target applies to the PRISM front"),
    Case("--cost and --threshold with --dataset", german("--cost", "c", "--threshold", "0.5"), 2,
         "--cost, --threshold apply to the PRISM front"),
    Case("--grid with a model", lambda d: prism("1")(d) + ["--grid", "5"], 2, "--grid applies to the data sets"),
    Case("--grid 1", german("--grid", "1"), 2, "a value grid needs at least 2 points"),
    Case("--grid 10000000", german("--grid", "10000000"), 2, "states in its first step alone; at most 2,000,000"),
    Case("--grid 2000 (the plan MDP's second step)", german("--grid", "2000"), 2,
         "step 2 of the plan MDP has 36,562,268"),
    Case("a cache that cannot be written", german("--no-exact"), 0, "BRKGA",
         env=lambda d: {"STORMCF_CACHE": str(write(d, "file", "not a directory") / "cache")}),
    Case("--json onto the model", lambda d: ["recourse", write(d, "m.prism", open(LOAN).read()), "--target", "x",
                                             "--cost", "y", "--json", "m.prism"], 2, "is also the input MODEL"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_recourse(case, hostile):
    hostile(case)
