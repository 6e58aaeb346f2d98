"""What Storm cannot take: inputs on which Storm's parser or checker kills the process by a signal, refused first.

Storm 2.0.0 (through stormpy 2.0.0; ``docs/storm-upstream.md`` has the reports) dies on some inputs instead of raising
an error, taking stormcf's process with it:

- **division by a constant zero** (SIGFPE): the PRISM parser simplifies constant subexpressions with native integer
  division, so ``const int z = 1/0;`` (used anywhere), ``0/0``, ``mod(3, 0)``, ``1/(1-1)`` in a guard or a label kill
  it; so do a double constant given as ``--constants p=1/0`` or ``p=0/0`` (GMP's rational division) and a step
  bound ``F<=1/0`` of a property;
- **deep nesting** (SIGSEGV, a stack overflow): expressions nested about 1,600 parentheses deep in a model or a
  property, and properties chaining about 5,000 operators.

So every model text, constant value and property is scanned here before Storm sees it: a division (``/``, ``mod``)
whose divisor is a constant expression equal to zero is refused with the file, the line and the constant it is in
(PRISM itself rejects these models too); nesting deeper than :data:`MAX_NESTING` and properties with more than
:data:`MAX_OPERATORS` operators are refused with the numbers. The scan is conservative: it refuses a division only
when the divisor certainly evaluates to zero (numbers and constants, ``+ - * /``, ``min``, ``max``, ``floor``,
``ceil``, ``pow``, ``mod``, parentheses); anything else is left to Storm.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Mapping, Sequence, cast

from ..errors import ConstantsError, ModelError, PropertyError, StormcfError

#: the deepest nesting of parentheses/brackets accepted in a model file or a property (Storm's parser overflows
#: its stack at about 1,600 levels with the default 8 MiB stack)
MAX_NESTING = 500
#: the most Boolean and arithmetic operators accepted in one property (a chain ``a & b & ...`` is a formula tree as
#: deep as it is long; Storm's checker overflows its stack at about 5,000)
MAX_OPERATORS = 1000

_TOKEN = re.compile(r"""
    (?P<space>\s+) | (?P<comment>//[^\n]*) | (?P<string>"[^"\n]*"?)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*'?)
  | (?P<op><=>|=>|<=|>=|!=|->|\.\.|[-+*/()\[\]{},;:?&|!=<>])
  | (?P<other>.)""", re.VERBOSE)
#: the operators whose chains make Storm's formula trees deep (comparisons end a chain)
_CHAINING = {"<=>", "=>", "&", "|", "+", "-", "*", "/"}
_OPENING, _CLOSING = "([{", ")]}"


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    line: int


def tokens(text: str, line: int = 1) -> list[Token]:
    """PRISM's tokens of ``text`` (comments and white space dropped), each with its line number (``text`` starting
    on line ``line``)."""
    out = []
    for m in _TOKEN.finditer(text):
        kind = cast(str, m.lastgroup)                   # every alternative of _TOKEN is a named group
        if kind not in ("space", "comment"):
            out.append(Token(kind, m.group(), line))
        line += m.group().count("\n")
    return out


def check_nesting(toks: Sequence[Token], what: str, error: type[StormcfError] = ModelError,
                  with_line: bool = True) -> None:
    """Refuse nesting deeper than :data:`MAX_NESTING` (``what`` names the text: a file, with the line of the deepest
    point, or a property)."""
    depth = deepest = 0
    line = 1
    for tok in toks:
        if tok.text in _OPENING and tok.kind == "op":
            depth += 1
            if depth > deepest:
                deepest, line = depth, tok.line
        elif tok.text in _CLOSING and tok.kind == "op":
            depth = max(depth - 1, 0)
    if deepest > MAX_NESTING:
        where = f"{what}:{line}" if with_line else what
        raise error(f"{where}: expression nested {deepest} deep; stormcf accepts at most {MAX_NESTING} levels (Storm's "
                    "parser crashes at about 1,600)")


# ================================================================================================ constant values
Value = Fraction | bool | None           # None: not a constant (a variable, a label, something the scan skips)


class _Unknown(Exception):
    """The scan cannot evaluate (or parse) this part: leave it to Storm."""


#: binary operators by precedence (PRISM's: ``<=>`` binds weakest, ``* /`` strongest; ``!`` between & and the
#: comparisons, ``?:`` below all)
_PRECEDENCE = {"<=>": 1, "=>": 2, "|": 3, "&": 4, "=": 6, "!=": 6, "<": 6, "<=": 6, ">": 6, ">=": 6, "+": 7, "-": 7,
               "*": 8, "/": 8}
_NOT = 5


class _Expression:
    """A precedence-climbing parser and evaluator of PRISM expressions over constants, reporting every division by
    zero it meets to ``zero(token)``."""

    def __init__(self, toks: Sequence[Token], start: int, constants: Mapping[str, Value],
                 zero: Callable[[Token], None]):
        self.toks, self.pos, self.constants, self.zero = toks, start, constants, zero

    def peek(self) -> str | None:
        return self.toks[self.pos].text if self.pos < len(self.toks) else None

    def take(self, expected: str | None = None) -> Token:
        if self.pos >= len(self.toks) or (expected is not None and self.toks[self.pos].text != expected):
            raise _Unknown()
        self.pos += 1
        return self.toks[self.pos - 1]

    def expression(self) -> Value:
        condition = self.binary(1)
        if self.peek() == "?":
            self.take()
            then = self.expression()
            self.take(":")
            other = self.expression()
            return None if condition is None else (then if condition else other)
        return condition

    def binary(self, weakest: int) -> Value:
        """Operators binding at least as strongly as ``weakest``, left-associative."""
        if self.peek() == "!" and weakest <= _NOT:
            self.take()
            value = self.binary(_NOT)
            left: Value = None if value is None else not value
        else:
            left = self.unary()
        while (op := self.peek()) in _PRECEDENCE and _PRECEDENCE[op] >= weakest:
            token = self.take()
            left = _apply(token, left, self.binary(_PRECEDENCE[op] + 1), self.zero)
        return left

    def unary(self) -> Value:
        negate = False
        while self.peek() == "-":
            self.take()
            negate = not negate
        value = self.primary()
        if negate:
            return None if value is None or isinstance(value, bool) else -value
        return value

    def primary(self) -> Value:
        tok = self.take()
        if tok.kind == "number":
            return Fraction(tok.text)
        if tok.text == "(":
            value = self.expression()
            self.take(")")
            return value
        if tok.kind != "name":
            raise _Unknown()
        if tok.text in ("true", "false"):
            return tok.text == "true"
        if self.peek() == "(":
            self.take()
            args = [self.expression()]
            while self.peek() == ",":
                self.take()
                args.append(self.expression())
            self.take(")")
            return _function(tok, args, self.zero)
        return self.constants.get(tok.text)


def _apply(op: Token, left: Value, right: Value, zero: Callable[[Token], None]) -> Value:
    if op.text == "/" and right is not None and not isinstance(right, bool) and right == 0:
        zero(op)
        return None
    if left is None or right is None:
        return None
    operations: dict[str, Callable[[], Value]] = {
        "+": lambda: Fraction(left + right), "-": lambda: Fraction(left - right), "*": lambda: Fraction(left * right),
        "/": lambda: Fraction(left) / right, "=": lambda: left == right, "!=": lambda: left != right,
        "<": lambda: left < right, "<=": lambda: left <= right, ">": lambda: left > right,
        ">=": lambda: left >= right, "&": lambda: bool(left) and bool(right),
        "|": lambda: bool(left) or bool(right), "=>": lambda: (not left) or bool(right),
        "<=>": lambda: bool(left) == bool(right)}
    try:
        return operations[op.text]()
    except (TypeError, ZeroDivisionError, OverflowError):
        return None


def _function(name: Token, args: list[Value], zero: Callable[[Token], None]) -> Value:
    if name.text == "mod" and len(args) == 2 and args[1] is not None and not isinstance(args[1], bool) \
            and args[1] == 0:
        zero(name)
        return None
    numbers = [a for a in args if a is not None and not isinstance(a, bool)]
    if len(numbers) < len(args):
        return None
    try:
        if name.text in ("min", "max") and numbers:
            return (min if name.text == "min" else max)(numbers)
        if name.text in ("floor", "ceil") and len(numbers) == 1:
            return Fraction((numbers[0].__floor__ if name.text == "floor" else numbers[0].__ceil__)())
        if name.text == "mod" and len(numbers) == 2:
            return Fraction(numbers[0] % numbers[1])
        if name.text == "pow" and len(numbers) == 2 and numbers[1].denominator == 1 and abs(numbers[1]) <= 64:
            return Fraction(numbers[0]) ** int(numbers[1])
    except (ZeroDivisionError, OverflowError, ValueError):
        return None
    return None


def evaluate(toks: Sequence[Token], constants: Mapping[str, Value], zero: Callable[[Token], None]) -> Value:
    """The value of a whole expression over constants (None where the scan cannot tell)."""
    parser = _Expression(toks, 0, constants, zero)
    try:
        value = parser.expression()
    except (_Unknown, RecursionError):
        return None
    return value if parser.pos == len(toks) else None


def _scan_divisions(toks: Sequence[Token], constants: Mapping[str, Value], zero: Callable[[Token], None],
                    first_only: bool = False) -> None:
    """Report every ``/`` and ``mod(a, b)`` of ``toks`` (``first_only``: the one ``toks`` starts with) whose divisor
    is certainly zero (the divisor is the operand right of ``/``: a number, a constant, a function call or a
    parenthesised expression, with unary minus)."""
    for k, tok in enumerate(toks[:1] if first_only else toks):
        if tok.kind != "op" and not (tok.kind == "name" and tok.text == "mod"):
            continue
        if tok.text == "/":
            parser = _Expression(toks, k + 1, constants, lambda _: None)
            try:
                divisor = parser.unary()
            except (_Unknown, RecursionError):
                continue
            if divisor is not None and not isinstance(divisor, bool) and divisor == 0:
                zero(tok)
        elif tok.text == "mod" and k + 1 < len(toks) and toks[k + 1].text == "(":
            parser = _Expression(toks, k, constants, lambda _: None)
            try:
                parser.primary()
            except (_Unknown, RecursionError):
                continue
            _function(tok, [None, _mod_divisor(toks, k, constants)], zero)


def _mod_divisor(toks: Sequence[Token], k: int, constants: Mapping[str, Value]) -> Value:
    """The second argument of ``mod(`` at ``toks[k]`` (None if it is not a constant)."""
    parser = _Expression(toks, k + 2, constants, lambda _: None)
    try:
        parser.expression()
        parser.take(",")
        return parser.expression()
    except (_Unknown, RecursionError):
        return None


# ================================================================================================ entry points
@dataclass(frozen=True)
class Definition:
    """A ``const`` declaration of a PRISM file: its name, its tokens ``toks[start:end]`` (the value) or None."""

    name: str
    line: int
    value: tuple[Token, ...] | None


def constant_definitions(toks: Sequence[Token]) -> list[Definition]:
    """The ``const [int|double|bool] NAME [= VALUE];`` declarations of a PRISM token list, in order."""
    out = []
    k = 0
    while k < len(toks):
        if toks[k].text in ("const", "formula") and toks[k].kind == "name":
            j = k + 1
            if j < len(toks) and toks[j].text in ("int", "double", "bool"):
                j += 1
            if j < len(toks) and toks[j].kind == "name":
                name, end = toks[j], j + 1
                while end < len(toks) and toks[end].text != ";":
                    end += 1
                value = tuple(toks[j + 2:end]) if j + 1 < len(toks) and toks[j + 1].text == "=" else None
                out.append(Definition(name.text, name.line, value))
                k = end
        k += 1
    return out


_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r'"[^"\n]*"')
#: a ``/`` whose divisor is a number literal other than zero (the common ``1/3``): nothing to evaluate
_SAFE_DIVISION = re.compile(r"/\s*(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DIVISION = re.compile(r"/|\bmod\s*\(")
_DEFINITION = re.compile(r"\b(?:const|formula)\b[^;]*;")


def check_model_text(text: str, where: str, given: Mapping[str, str] | None = None) -> None:
    """Refuse a PRISM model text (``where``: its file name) that Storm's parser would crash on: nesting deeper than
    :data:`MAX_NESTING`, a division by a constant zero (naming the line and the constant it is in). ``given``: the
    values of undefined constants (``--constants``) as texts.

    Fast on large generated files: only the constant definitions and the statements around a division are
    tokenized (a division by a number literal other than 0 is skipped by a regular expression)."""
    code = _STRING.sub(lambda m: " " * len(m.group()), _COMMENT.sub("", text))
    _check_depth(code, where)
    constants = given_constants(given or {}, where)
    owner: dict[int, str] = {}                          # line -> the constant defined there
    newlines = [m.start() for m in re.finditer("\n", code)]

    def line_of(position: int) -> int:
        return bisect.bisect_left(newlines, position) + 1
    for match in _DEFINITION.finditer(code):
        line = line_of(match.start())
        for definition in constant_definitions(tokens(match.group(), line)):
            owner[definition.line] = definition.name
            if definition.value is None:
                continue

            def zero(tok: Token, name: str = definition.name) -> None:
                raise ModelError(f"{where}:{tok.line}: division by zero in the constant {name} "
                                 f"({_excerpt(text, tok.line)})")
            constants[definition.name] = evaluate(definition.value, constants, zero)

    def zero_anywhere(tok: Token) -> None:
        inside = f" in the constant {owner[tok.line]}" if tok.line in owner else ""
        raise ModelError(f"{where}:{tok.line}: division by zero{inside} ({_excerpt(text, tok.line)})")
    for match in _DIVISION.finditer(code):
        if match.group() == "/" and (safe := _SAFE_DIVISION.match(code, match.start())) and \
                not _is_zero(safe.group()[1:]):
            continue
        end = code.find(";", match.start())
        _scan_divisions(tokens(code[match.start():end if end >= 0 else len(code)], line_of(match.start())),
                        constants, zero_anywhere, first_only=True)


def _is_zero(number: str) -> bool:
    return Fraction(number.strip()) == 0


def _check_depth(code: str, where: str) -> None:
    """:func:`check_nesting` of a whole text, by a vectorised count (tokens only where the text is too deep). A text
    with at most MAX_NESTING opening brackets cannot be deeper (a small model: no numpy for ``info``)."""
    if sum(map(code.count, _OPENING)) <= MAX_NESTING:
        return
    import numpy as np
    data = np.frombuffer(code.encode("utf-8", "replace"), dtype=np.uint8)
    opening, closing = np.frombuffer(_OPENING.encode(), np.uint8), np.frombuffer(_CLOSING.encode(), np.uint8)
    step = np.isin(data, opening).astype(np.int32) - np.isin(data, closing).astype(np.int32)
    if step.size and int(np.cumsum(step).max()) > MAX_NESTING:
        check_nesting(tokens(code), where)


def given_constants(given: Mapping[str, str], where: str) -> dict[str, Value]:
    """The values of constants given as texts (``--constants p=1/2``); a division by zero in one is refused."""
    out: dict[str, Value] = {}
    for name, value in given.items():
        def zero(tok: Token, name: str = name, value: str = value) -> None:
            raise ConstantsError(f"{where}: division by zero in the value of the constant {name} ({name}={value})")
        toks = tokens(value)
        check_nesting(toks, f"{where}: the value of {name}", ConstantsError, with_line=False)
        out[name] = evaluate(toks, {}, zero)
        _scan_divisions(toks, out, zero)
    return out


def split_constants(text: str) -> dict[str, str]:
    """``"N=3,p=1/2"`` as {name: value text} (commas inside parentheses belong to the value, e.g. ``min(1,2)``).
    Malformed parts are left out: Storm reports them."""
    out, depth, start = {}, 0, 0
    for k, ch in enumerate(text + ","):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth <= 0:
            name, sep, value = text[start:k].partition("=")
            if sep and name.strip():
                out[name.strip()] = value.strip()
            start = k + 1
    return out


def check_property_text(text: str, constants: Mapping[str, Value] | None = None) -> None:
    """Refuse a property Storm would crash on: nesting deeper than :data:`MAX_NESTING`, more than
    :data:`MAX_OPERATORS` Boolean and arithmetic operators, a division by a constant zero (``constants``: the model's
    values)."""
    _check_formula(text, f"property '{shortened(text)}'", constants)


def check_expression_text(text: str, constants: Mapping[str, Value] | None = None) -> None:
    """:func:`check_property_text` for a PRISM expression (e.g. the states a counterfactual may change)."""
    _check_formula(text, f"expression '{shortened(text)}'", constants)


def _check_formula(text: str, what: str, constants: Mapping[str, Value] | None) -> None:
    toks = tokens(text)
    check_nesting(toks, what, PropertyError, with_line=False)
    operators = sum(1 for t in toks if t.kind == "op" and t.text in _CHAINING)
    if operators > MAX_OPERATORS:
        raise PropertyError(f"{what} chains {operators} operators; stormcf accepts at most {MAX_OPERATORS} (Storm's "
                            "checker crashes at about 5,000)")

    def zero(tok: Token) -> None:
        raise PropertyError(f"division by zero in {what}")
    _scan_divisions(toks, constants or {}, zero)


def _excerpt(text: str, line: int, width: int = 80) -> str:
    lines = text.splitlines()
    return shortened(lines[line - 1].strip() if 0 < line <= len(lines) else "", width)


def shortened(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters (``...`` and the length where cut), for one-line messages."""
    return text if len(text) <= width else f"{text[:width - 20]}... ({len(text)} characters)"
