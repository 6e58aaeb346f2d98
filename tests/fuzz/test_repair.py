"""``stormcf repair`` on hostile models, valuations, regions and bounds: one line, exit code 2."""
import pytest

import stormcf
from stormcf.storm import stormpy_example

from .hostile import LOAN, Case, write

DIE = str(stormcf.example_path("die.pm"))
COIN = str(stormpy_example("pmdp", "coin2_2.pm"))
BRP = str(stormpy_example("pdtmc", "brp16_2.pm"))
BOUND = 'P>=0.2 [F "one"]'


def repair(*args, model=DIE):
    return lambda d: ["repair", model, "-p", BOUND, *args]


def chain(expression: str):
    """A one-state choice whose probability is ``expression`` of the parameters p and q."""
    return lambda d: ["repair", write(d, "m.pm", f"""dtmc
const double p;
const double q;
module m
  s : [0..2] init 0;
  [] s=0 -> {expression} : (s'=1) + 1-({expression}) : (s'=2);
  [] s>0 -> true;
endmodule
label "one" = s=1;
"""), "-p", BOUND, "--nominal", "p=0.3,q=0.5"]


CASES = [
    Case("a model without parameters", lambda d: ["repair", LOAN, "-p", 'P<=0.2 [F "rejected"]', "--nominal",
                                                   "p=0.5"], 2, "the model has no parameters"),
    Case("a parameter that is not in the model", repair("--nominal", "p=0.3,q=0.5,r=0.1"), 2,
         "r is not a parameter of"),
    Case("a parameter without a nominal value", repair("--nominal", "p=0.3"), 2, "gives no value to q"),
    Case("a nominal value that is no number", repair("--nominal", "p=abc,q=0.5"), 2, "expected a number"),
    Case("a nominal valuation outside the region", repair("--nominal", "p=0.3,q=0.5", "--region", "0.5<=p<=0.9"),
         2, "is outside the region"),
    Case("a region that is not LO<=NAME<=HI", repair("--nominal", "p=0.3,q=0.5", "--region", "p in 0.1..0.5"), 2,
         "expected LO<=NAME<=HI"),
    Case("an empty interval", repair("--nominal", "p=0.3,q=0.5", "--region", "0.3<=p<=0.3"), 2,
         "is empty or a single value"),
    Case("a region where an MDP's graph changes",
         lambda d: ["repair", COIN, "-p", 'P>=0.4 [F "finished"]', "--nominal", "p1=0.5,p2=0.5", "--region",
                    "0<=p1<=1"], 2, "the model's graph changes in the region"),
    Case("min of a parameter (not a rational function)", chain("min(p,0.5)"), 2, "not a rational function"),
    Case("a parameter in a denominator", chain("p/(p+q)"), 2, "has parameters in its denominator"),
    Case("a bound without a bound", repair("--nominal", "p=0.3,q=0.5", "-p", 'P=? [F "one"]'), 2,
         "needs a bound on a probability or an expected reward"),
    Case("no bound", lambda d: ["repair", DIE, "--nominal", "p=0.3,q=0.5"], 2, "give the bounds to meet"),
    Case("no nominal valuation", repair(), 2, "give the parameters' values today"),
    Case("a strategy on a DTMC", lambda d: ["repair", DIE, "-p", BOUND, "--nominal", "p=0.3,q=0.5", "-s",
                                            write(d, "s.json", '{"states": [], "default": "uniform"}')], 2,
         "a strategy applies to an MDP"),
    Case("an undefined integer constant", lambda d: ["repair", write(d, "n.pm", """dtmc
const int N;
const double p;
module m
  s : [0..N] init 0;
  [] s<N -> p : (s'=s+1) + 1-p : (s'=0);
  [] s=N -> true;
endmodule
label "one" = s=N;
"""), "-p", BOUND, "--nominal", "p=0.5"], 2, "are not of type double"),
    Case("a constant the bounds do not depend on", lambda d: ["repair", BRP, "-p", "P<=0.01 [F s=5]", "--nominal",
                                                              "pL=0.8,pK=0.9"], 2,
         "the bounds do not depend on TOMsg, TOAck"),
    Case("a DRN file", lambda d: ["repair", str(stormpy_example("pdtmc", "die.drn")), "-p", BOUND, "--nominal",
                                  "p=0.5"], 2, "a parametric model is a PRISM program"),
    Case("--plot with --instances", lambda d: ["repair", DIE, "-p", BOUND, "--instances",
                                               write(d, "i.jsonl", '{"nominal": {"p": 0.3, "q": 0.5}}\n'),
                                               "--plot", "x.png"], 2, "--plot draws one answer"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_repair(case, hostile):
    hostile(case)
