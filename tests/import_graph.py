"""msinspect's modules and which of them each one imports, read from the source with ``ast``: the
graph the layer tests (``tests/test_layers.py``, ``tests/test_checkout_and_imports.py``) check.

Module ``a`` imports module ``b`` (an edge ``a -> b``, with the line) where ``a`` names ``b``
- in an import statement anywhere in it: at module level, in a function, and, with ``typed``,
  under ``if TYPE_CHECKING:``;
- in a string: a table of what is imported on first use (a package's ``_LAZY``, the CLI's
  ``COMMANDS``: ``"msinspect.cli.parse_cmd:parse"``), a package named for its resources;
- in an f-string that ``import_module`` / ``__import__`` is given: ``f"{__name__}.{name}"`` names
  every module of the package, and ``f"msinspect.analysis.{module}"`` in a function the module
  each call of that function in the file passes as ``module``.

``from p import x`` names ``p.x`` where that is a module, else ``p``, or the module that ``p``'s
``_LAZY`` table takes ``x`` from. ``import a.b.c`` names ``a.b.c`` alone: Python runs the package
``a.b``'s ``__init__`` first, but a package is the front of its modules, not what they depend on.
"""
from __future__ import annotations

import ast
import importlib
from functools import lru_cache
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
IMPORTERS = ("import_module", "__import__")


@lru_cache(maxsize=None)
def sources(root: Path = ROOT) -> dict[str, tuple[Path, ast.Module]]:
    """Every module of the package under ``root`` by its dotted name (a package by its own): its
    file and tree."""
    out = {}
    for path in sorted((root / "msinspect").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        out[name] = (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return out


def _type_checking(test: ast.expr) -> bool:
    return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"


Walked = tuple[list[tuple[ast.Import | ast.ImportFrom, bool]], list[ast.Constant], list[ast.Call]]


@lru_cache(maxsize=None)
def _walked(tree: ast.Module) -> Walked:
    """One walk of a module: its import statements, each with whether it is for type checkers only
    (under ``if TYPE_CHECKING:``), its strings naming an msinspect module, and its calls that
    import a name built by an f-string."""
    typed_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _type_checking(node.test)
                  for statement in node.body for n in ast.walk(statement)}
    imports, strings, calls = [], [], []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append((node, id(node) in typed_only))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("msinspect."):
            strings.append(node)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.JoinedStr)
              and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in IMPORTERS):
            calls.append(node)
    return imports, strings, calls


@lru_cache(maxsize=None)
def _lazy(package: str) -> dict[str, str]:
    """Name -> module of what ``package`` exports on first use (its ``_LAZY`` table, read from the
    package as imported: the tables are built by comprehensions); {} without."""
    path, _ = sources().get(package, (None, None))
    lazy = path is not None and "_LAZY" in path.read_text(encoding="utf-8")
    table = getattr(importlib.import_module(package), "_LAZY", {}) if lazy else {}
    return {name: module for name, (module, _) in table.items()}


def _named(name: str, node: ast.Import | ast.ImportFrom, modules) -> set[str]:
    """The modules one import statement of module ``name`` names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    base = node.module
    if node.level:  # from .report import ...
        path, _ = modules[name]
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(package[:len(package) + 1 - node.level] + ([node.module] if node.module else []))
    out = set()
    for alias in node.names:
        if f"{base}.{alias.name}" in modules:
            out.add(f"{base}.{alias.name}")
        else:
            out.add(_lazy(base).get(alias.name, base) if base in modules else base)
    return out


def _built(name: str, tree: ast.Module, modules) -> dict[str, int]:
    """The modules that ``import_module`` / ``__import__`` calls of module ``name`` build from an
    f-string, with the line of the call."""
    calls = _walked(tree)[2]
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)} if calls else {}
    out: dict[str, int] = {}
    for call in calls:
        *head, last = call.args[0].values
        prefix = "".join(name if getattr(getattr(part, "value", None), "id", None) == "__name__"
                         else str(getattr(part, "value", "")) for part in head)
        package = prefix.removesuffix(".")
        if not (prefix.endswith(".") and package in modules and isinstance(last, ast.FormattedValue)):
            continue
        function = call
        while function in parents and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = parents[function]
        variable = getattr(last.value, "id", None)
        params = [a.arg for a in function.args.args] if isinstance(function, ast.FunctionDef) else []
        if variable in params:  # the module each call of the function passes
            at = params.index(variable)
            for use in ast.walk(tree):
                if isinstance(use, ast.Call) and getattr(use.func, "id", None) == function.name:
                    given = [k.value for k in use.keywords if k.arg == variable] or use.args[at:at + 1]
                    if given and isinstance(given[0], ast.Constant) and f"{package}.{given[0].value}" in modules:
                        out[f"{package}.{given[0].value}"] = use.lineno
        else:  # a loop over names: every module of the package
            out |= {m: call.lineno for m in modules if m.rpartition(".")[0] == package}
    return out


@lru_cache(maxsize=None)
def import_graph(typed: bool = False, root: Path = ROOT) -> nx.DiGraph:
    """Module -> the msinspect modules it imports (every module a node), each edge with the
    ``line`` of its first import; frozen (one graph serves every test). ``typed``: with the imports
    under ``if TYPE_CHECKING:``; ``root``: the checkout (a copy) whose ``msinspect/`` is read."""
    modules = sources(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, (_, tree) in modules.items():
        imports, strings, _ = _walked(tree)
        named: dict[str, int] = {}
        for node, typed_only in imports:
            for module in _named(name, node, modules) if typed or not typed_only else ():
                named.setdefault(module, node.lineno)
        for node in strings:
            named.setdefault(node.value.split(":")[0], node.lineno)
        for module, line in _built(name, tree, modules).items():
            named.setdefault(module, line)
        graph.add_edges_from((name, module, {"line": line}) for module, line in named.items()
                             if module in modules and module != name)
    return nx.freeze(graph)


def reached(graph: nx.DiGraph, prefix: str) -> set[str]:
    """Every module that the modules named ``prefix`` or ``prefix.*`` import, directly or not."""
    return {m for start in graph if within(start, prefix) for m in nx.descendants(graph, start)}


def within(module: str, prefix: str) -> bool:
    """Whether ``module`` is ``prefix`` or one of its modules."""
    return module == prefix or module.startswith(prefix + ".")
