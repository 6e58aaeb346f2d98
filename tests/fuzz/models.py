"""Tiny hostile model files, shared by the tables of the commands that read a model."""
from __future__ import annotations

from pathlib import Path

from .hostile import write

DTMC_P = """dtmc
const double p;
module m
  s : [0..1] init 0;
  [] s=0 -> p : (s'=1) + (1-p) : (s'=0);
  [] s=1 -> true;
endmodule
label "done" = s=1;
"""


def int_division(folder: Path) -> Path:
    """An integer constant 1/0 used in a guard (Storm: SIGFPE in the parser)."""
    return write(folder, "div.prism", "mdp\nconst int z = 1/0;\nmodule m\n  s : [0..2] init 0;\n"
                                      "  [a] s<z -> (s'=s+1);\nendmodule\n")


def double_division(folder: Path) -> Path:
    """A double constant 0/0 used as a probability (Storm: SIGFPE in the parser)."""
    return write(folder, "div2.prism", DTMC_P.replace("const double p;", "const double p = 0/0;"))


def mod_zero(folder: Path) -> Path:
    return write(folder, "mod.prism", "dtmc\nconst int k = mod(3, 0);\nmodule m\n  s : [0..2] init 0;\n"
                                      "  [] s<k -> (s'=s+1);\nendmodule\n")


def guard_division(folder: Path) -> Path:
    """A literal division by (1-1) in a guard, no constant."""
    return write(folder, "guard.prism", "dtmc\nmodule m\n  s : [0..2] init 0;\n  [] 1/(1-1)>1 -> (s'=min(s+1,2));\n"
                                        "endmodule\n")


def undefined_p(folder: Path) -> Path:
    """A double constant left undefined (given by --constants)."""
    return write(folder, "p.prism", DTMC_P)


def declared(folder: Path, declaration: str, used: bool = False) -> Path:
    """A DTMC whose variable ``s`` is declared as ``declaration`` (``s : [5..1] init 5;``), on line 4; ``used``: a
    command assigns it (Storm turns a variable no command assigns into a constant)."""
    update = "(s'=s)" if used else "true"
    return write(folder, "decl.prism", f"dtmc\nconst int N = 2;\nmodule m\n  {declaration}\n  [] true -> {update};\n"
                                       "endmodule\n")


def nested(folder: Path, depth: int = 3000) -> Path:
    """A guard nested ``depth`` parentheses deep (Storm: SIGSEGV from 1,600 on)."""
    guard = "s"
    for _ in range(depth):
        guard = f"({guard}+1)"
    return write(folder, "deep.prism", f"dtmc\nmodule m\n  s : [0..1] init 0;\n  [] {guard}>0 -> 1 : (s'=1);\n"
                                       "endmodule\n")


def conjuncts(n: int, atom: str = '"rejected"') -> str:
    return " & ".join([atom] * n)


def nested_formula(depth: int, atom: str = '"rejected"') -> str:
    return "(" * depth + atom + ")" * depth
