"""The package's import graph, function-local imports included: one way, no cycles, rich only in display."""

import ast
from pathlib import Path

import circuits

PACKAGE = Path(circuits.__file__).parent
# Lower layers never import higher ones; a module may import its own layer (the graph stays acyclic). A layer
# may hold two packages: checking runs a learner's file through sealed, whose child loads the puzzle with checking.
LAYERS = [
    ("errors", "kept"),
    "model",
    "io",
    "limits",
    "targets",
    ("checking", "sealed"),
    "analysis",
    "explain",
    "audit",
    "workspace",
    "display",
    "grading",
    "cli",
    "pytest_plugin",
    "__main__",
]
DISPLAY_ONLY = ("rich",)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules=()) -> set[str]:
    """Every module this file imports, at the top or inside a function, resolved to absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found |= {f"{base}.{alias.name}" for alias in node.names}  # `from pkg import module`
            if not any(f"{base}.{alias.name}" in modules for alias in node.names):
                found.add(base)  # `from module import name` (a parent package is imported anyway: not an edge)
    return found


def graph() -> dict[str, set[str]]:
    # circuits/curriculum is package data (the shipped puzzle files), not modules of the package
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py") if "curriculum" not in p.relative_to(PACKAGE).parts[:1]}
    return {name: {m for m in imports(path, modules) if m in modules and m != name} for name, path in modules.items()}


def layer(module: str) -> int:
    package = module.split(".")[1]
    return next(i for i, names in enumerate(LAYERS) if package in (names if isinstance(names, tuple) else (names,)))


def test_every_module_is_in_a_layer():
    named = {p for names in LAYERS for p in (names if isinstance(names, tuple) else (names,))}
    assert all(name == "circuits" or name.split(".")[1] in named for name in graph())


def upward(g: dict[str, set[str]]) -> list[str]:
    return [
        f"{a} -> {b}"
        for a, bs in sorted(g.items())
        if a != "circuits"
        for b in sorted(bs)
        if b != "circuits" and layer(b) > layer(a)
    ]


def cycles(g: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    found = []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(g.get(node, ())):
            if state.get(nxt) == 1:
                found.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node, [node])
    return found


def test_imports_run_down_the_layers():
    assert upward(graph()) == []


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_rich_only_in_display():
    # circuits/curriculum is package data (the shipped puzzle files), not modules of the package
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py") if "curriculum" not in p.relative_to(PACKAGE).parts[:1]}
    users = sorted(
        name
        for name, path in modules.items()
        if any(m.split(".")[0] in DISPLAY_ONLY for m in imports(path)) and not name.startswith("circuits.display")
    )
    assert users == []


def test_the_checks_catch_a_function_local_cycle_and_an_upward_import(tmp_path, monkeypatch):
    """A function-local import back up from the model is seen, as an upward edge and as a cycle."""
    pkg = tmp_path / "circuits"
    for sub in ("model", "display"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "model" / "trace.py").write_text("def f():\n    from circuits.display.html import g\n")
    (pkg / "display" / "html.py").write_text("from ..model import trace\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    g = graph()
    assert g["circuits.model.trace"] == {"circuits.display.html"}
    assert g["circuits.display.html"] == {"circuits.model.trace"}
    assert upward(g) == ["circuits.model.trace -> circuits.display.html"]
    assert cycles(g) == ["circuits.display.html -> circuits.model.trace -> circuits.display.html"]
