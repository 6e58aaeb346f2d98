"""stormcf's imports read from its source with ``ast`` (tests/test_imports.py): which of its own modules each module
imports when it runs, module level or inside a function, and which names it takes from them.

An import inside ``if TYPE_CHECKING:`` is left out (it never runs). An import of a package's lazy export
(``from ..setcover import train``, :mod:`stormcf._lazy`) imports the submodule the name lives in; importing
``a.b.c`` runs the packages ``a`` and ``a.b`` first, except the packages the importer is in (they are running).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1] / "stormcf"
#: the comment that marks an import closing a cycle on purpose (on its line or in the comment right above it),
#: followed by the reason
DELIBERATE = "# import cycle:"


@dataclass(frozen=True)
class Import:
    """One import statement of ``importer`` that runs the stormcf module ``target``."""

    importer: str
    target: str
    line: int
    deliberate: bool            # marked with DELIBERATE

    def __str__(self) -> str:
        return f"{self.importer} -> {self.target} ({where(self.importer)}:{self.line})"


@cache
def modules() -> dict[str, Path]:
    """Every module of stormcf by its dotted name (a package by its own name), with its file."""
    found = {}
    for file in sorted(ROOT.rglob("*.py")):
        parts = file.relative_to(ROOT.parent).with_suffix("").parts
        if "prism_models" in parts:
            continue
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return found


def where(module: str) -> str:
    return modules()[module].relative_to(ROOT.parent).as_posix()


def is_package(module: str) -> bool:
    return modules()[module].name == "__init__.py"


@cache
def tree(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text(encoding="utf-8"))


def absolute(package: str, name: str, level: int) -> str:
    """The absolute name of ``name`` imported ``level`` dots up from ``package`` (level 0: already absolute)."""
    if not level:
        return name
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([name] if name else []))


@cache
def exports(package: str) -> dict[str, str]:
    """A package's lazy exports (its ``_EXPORTS`` table): public name -> the module it lives in."""
    table: dict[str, str] = {}
    for node in tree(package).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            assert isinstance(node.value, ast.Dict), package
            for key, value in zip(node.value.keys, node.value.values):
                if key is None:                                 # **dict.fromkeys([names], module)
                    assert isinstance(value, ast.Call), package
                    names, module = (ast.literal_eval(arg) for arg in value.args)
                else:
                    names, module = [ast.literal_eval(key)], ast.literal_eval(value)
                for name in names:
                    table[name] = absolute(package, module.lstrip("."), len(module) - len(module.lstrip(".")))
    return table


def statements(body: list[ast.stmt], typing: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that may run, at any depth, and with ``typing`` those of ``if TYPE_CHECKING:``."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) and not typing:
            yield from statements(node.orelse, typing)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from statements([child], typing)
                elif isinstance(child, ast.excepthandler):
                    yield from statements(child.body, typing)


def taken(module: str, typing: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, str, str | None]]:
    """Per import statement of ``module`` (with ``typing``, also those for the type checker only), each stormcf
    module it names and the name taken from it (None for a module imported as such)."""
    package = module if is_package(module) else module.rsplit(".", 1)[0]
    for node in statements(tree(module).body, typing):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules():
                    yield node, alias.name, None
            continue
        source = absolute(package, node.module or "", node.level)
        if source not in modules():
            continue
        for alias in node.names:
            yield node, source, alias.name


def imports(module: str) -> list[Import]:
    """The stormcf modules each import statement of ``module`` runs."""
    lines = modules()[module].read_text(encoding="utf-8").splitlines()
    found: dict[tuple[str, int], Import] = {}

    def marked(line: int) -> bool:
        above = line - 1
        while above > 0 and lines[above - 1].lstrip().startswith("#"):
            above -= 1
        return any(DELIBERATE in text for text in lines[above:line])

    def run(target: str, node: ast.stmt) -> None:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            ran = ".".join(parts[:i])
            if ran in modules() and ran != module and not module.startswith(ran + "."):
                found[ran, node.lineno] = Import(module, ran, node.lineno, marked(node.lineno))

    for node, source, name in taken(module):
        run(source, node)
        if name is None:
            continue
        if f"{source}.{name}" in modules():
            run(f"{source}.{name}", node)
        elif is_package(source) and name in exports(source):
            run(exports(source)[name], node)
        elif module.startswith(source + "."):        # a name its own package's __init__ defines
            found[source, node.lineno] = Import(module, source, node.lineno, marked(node.lineno))
    return list(found.values())


def cycles(deliberate: bool = False) -> list[list[Import]]:
    """The import cycles of stormcf, one cycle per strongly connected component of the import graph (its edges: the
    imports, without those marked DELIBERATE unless ``deliberate``)."""
    edges = {m: [i for i in imports(m) if deliberate or not i.deliberate] for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(v: str) -> None:                                  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for edge in edges[v]:
            w = edge.target
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while not component or w != v:
                w = stack.pop()
                component.add(w)
            if len(component) > 1:
                components.append(component)

    for v in modules():
        if v not in index:
            visit(v)
    return [sorted((i for m in c for i in edges[m] if i.target in c), key=str) for c in components]


def private_names() -> list[str]:
    """Every use of a stormcf module's underscore name from another module: ``from .x import _name`` and
    ``x._name`` with ``x`` a stormcf module imported as such."""
    found = []
    for module in modules():
        bound: dict[str, str] = {}
        for node, source, name in taken(module, typing=True):
            if name is None:
                alias = next(a for a in node.names if a.name == source)
                if alias.asname:
                    bound[alias.asname] = source
            elif f"{source}.{name}" in modules():
                bound[next(a.asname or a.name for a in node.names if a.name == name)] = f"{source}.{name}"
            elif private(name) and source != module:
                found.append(f"{where(module)}:{node.lineno} imports {name} from {source}")
        for node in ast.walk(tree(module)):
            if (isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in bound):
                found.append(f"{where(module)}:{node.lineno} uses {bound[node.value.id]}.{node.attr}")
    return found


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
