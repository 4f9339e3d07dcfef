"""The shape of the code (ARCHITECTURE.md): layers that only point down, no import circles.

The import graph is built from the source itself (``ast``: every ``import`` and ``from ... import``
of a project module, at any depth), so the test needs no import of the code. It fails when

* a module imports one on a higher floor (an upward arrow);
* modules import each other in a circle, on any floor;
* a project module is imported inside a function (the usual way to hide a circle or an upward
  import), unless the import points down and is listed in :data:`LAZY` with its reason; third-party
  imports kept lazy for start-up time are fine;
* the engine imports the app (``ui``, ``pages``), streamlit or plotly;
* a module sits on no floor: a new module is placed on purpose, by adding it to :data:`FLOORS`.

An ``importlib.import_module("pkg.")`` of a project module counts as an import inside a function.
"""
from __future__ import annotations

import ast
import os
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("engine", "figures", "ui", "pages")

#: (floor, module-name prefixes), bottom first; a module is on the floor of its longest matching prefix.
FLOORS = [
    (0, ["engine.core"]),
    (1, ["engine.kernels"]),
    (2, ["engine.mechanisms"]),
    (3, ["engine.models"]),
    (4, ["engine.numerics"]),
    (5, ["engine.methods", "engine.protection"]),
    (6, ["engine.spec", "engine.cost"]),
    (7, ["engine.api", "engine.protection.report"]),
    (8, ["engine.studies"]),
    (9, ["figures"]),
    (10, ["engine.cli", "engine"]),
    (11, ["engine.__main__", "ui"]),
    (12, ["pages"]),
    (13, ["app"]),
]


#: Imports inside a function that point down, kept lazy on purpose: (importer, imported) -> why.
LAZY = {
    ("engine.cli.study", "figures.export"): "plotly and kaleido load only when a study draws its figures",
    ("engine.cli.study", "figures.studies"): "plotly loads only when a study draws: import engine.cli stays free "
                                               "of plotly (tests/test_studies.py)",
}


def _modules() -> dict[str, str]:
    """{module name: file path} of every project module."""
    out = {"app": os.path.join(ROOT, "app.py")}
    for pkg in PACKAGES:
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            if "__pycache__" in dirpath:
                continue
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].replace(os.sep, ".")
                    out[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(dirpath, f)
    return out


MODULES = _modules()


def floor_of(module: str) -> int | None:
    best, floor = -1, None
    for level, prefixes in FLOORS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, floor = len(p), level
    return floor


def _target(name: str) -> str | None:
    """The project module an imported dotted name lands in (a module, or the package that holds the name)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, source: str | None = None) -> list[tuple[str, int, bool]]:
    """(imported project module, line, inside a function) for every import in ``module``'s file (or in
    ``source``, read as if it were that file)."""
    path = MODULES[module]
    tree = ast.parse(open(path, encoding="utf-8").read() if source is None else source, path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            hidden = in_function  # an import statement inside a def; a run-time lookup is always hidden
            dynamic = _dynamic_import(child) if isinstance(child, ast.Call) else None
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    stem = ".".join(base + ([child.module] if child.module else []))
                else:
                    stem = child.module or ""
                names = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in MODULES else stem for a in child.names]
            elif dynamic is not None:
                names, hidden = [dynamic], True
            else:
                names = []
            for name in names:
                target = _target(name)
                if target is not None and target != module:
                    found.append((target, child.lineno, hidden))
                elif target is None and module.startswith("engine") and name.split(".")[0] in ("streamlit", "plotly"):
                    found.append((name, child.lineno, hidden))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def _dynamic_import(call: ast.Call) -> str | None:
    """The module name (or its constant prefix) of ``importlib.import_module(...)``, else None."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return arg.values[0].value.rstrip(".")
    return None


GRAPH = {m: _imports(m) for m in MODULES}


def test_every_module_sits_on_a_floor():
    assert [m for m in MODULES if floor_of(m) is None] == []


def test_layers_only_point_down():
    upward = [f"{m} (floor {floor_of(m)}) imports {t} (floor {floor_of(t)}) at line {line}"
              for m, edges in GRAPH.items() for t, line, _ in edges
              if t in MODULES and floor_of(t) > floor_of(m)]
    assert upward == []


def test_no_project_module_is_imported_inside_a_function():
    hidden = [f"{m} line {line}: {t}" for m, edges in GRAPH.items() for t, line, inner in edges
              if inner and t in MODULES and (m, t) not in LAZY]
    assert hidden == []


def test_every_lazy_import_points_down_and_is_still_there():
    seen = {(m, t) for m, edges in GRAPH.items() for t, _, inner in edges if inner}
    assert [k for k in LAZY if k not in seen] == []
    assert [k for k in LAZY if floor_of(k[1]) >= floor_of(k[0])] == []


def test_the_engine_imports_neither_the_app_nor_streamlit_nor_plotly():
    """Only the command line draws figures, through figures/ (plotly, no streamlit); the library never."""
    bad = [f"{m} line {line}: {t}" for m, edges in GRAPH.items() if m.startswith("engine")
           for t, line, _ in edges if t.split(".")[0] in ("ui", "pages", "app", "streamlit", "plotly")
           or (t.split(".")[0] == "figures" and floor_of(m) < floor_of("engine.cli"))]
    assert bad == []


def test_figures_need_no_streamlit():
    bad = [f"{m} line {line}: {t}" for m, edges in GRAPH.items() if m.startswith("figures")
           for t, line, _ in edges if t.split(".")[0] in ("ui", "pages", "app", "streamlit")]
    assert bad == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_circles():
    graph = {m: {t for t, _, _ in edges if t in MODULES} for m, edges in GRAPH.items()}
    assert _cycles(graph) == []


@pytest.mark.parametrize("graph, circle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set(), "c": {"b"}}, []),
])
def test_the_circle_finder_finds_circles(graph, circle):
    assert _cycles(graph) == circle


def test_the_graph_sees_relative_imports_and_imports_inside_functions():
    """The checks above can fail: the builder resolves relative and package imports, and sees an import
    hidden in a function, an upward one among them."""
    source = ("from .core.results import Problem\nfrom .numerics import grid_posterior\nimport engine.models\n"
              "def f():\n    from .studies import presets\n")
    assert _imports("engine.api", source) == [
        ("engine.core.results", 1, False), ("engine.numerics.grid_posterior", 2, False), ("engine.models", 3, False),
        ("engine.studies.presets", 5, True)]
    assert _imports("engine.methods.exact", "from ..models.beta_binomial import log_beta_binomial_pmf") == [
        ("engine.models.beta_binomial", 1, False)]
    assert _imports("engine.cli", "import importlib\ndef f(m):\n    return importlib.import_module(f'ui.{m}')\n") == [
        ("ui", 3, True)]
    assert floor_of("engine.studies.presets") > floor_of("engine.api") > floor_of("engine.core.results")


def test_the_installable_packages_are_every_package_of_the_library():
    """``pip install .`` ships what pyproject.toml lists: a package missing there imports here (the repository
    is on sys.path) and fails only for someone who installed the library."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = {os.path.relpath(d, ROOT).replace(os.sep, ".") for top in ("engine", "figures")
             for d, _, files in os.walk(os.path.join(ROOT, top)) if "__init__.py" in files}
    assert listed == found
