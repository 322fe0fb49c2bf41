"""Which givens a learner's file changed, compared with the shipped puzzle it stands for.

The checker always checks the shipped puzzle (statement, givens, targets, inputs); a learner's file
contributes only its answer. A given the file changed (an edited W_E, a `puzzle = dataclasses.replace(...)`
that loosens a tolerance) is therefore ignored, and named, with the line that changed it, so the learner
knows their copy is not what was checked.
"""

from __future__ import annotations

import ast
import dataclasses
import types
from dataclasses import dataclass

import numpy as np

ANSWER_LINE = "# ── your answer"  # a puzzle file's statement and givens stand above this line, the answer below


@dataclass(frozen=True)
class Edit:
    """A given the learner's file binds to something other than the shipped value."""

    name: str
    line: int | None  # the last top-level statement of the file that binds or changes it (None: not found)
    removed: bool = False  # the file no longer defines it at all


def given_names(source: str) -> list[str]:
    """The names a puzzle file's givens bind: top-level assignments, functions and classes above the answer line.

    Loop variables and imports are left out: a learner's own loop rebinds `k` or `t` without changing a given."""
    names: list[str] = []
    for node in ast.parse(source).body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        for t in targets:
            for leaf in ast.walk(t):
                if isinstance(leaf, ast.Name):
                    names.append(leaf.id)
    return list(dict.fromkeys(names))


def edits(learner: dict, shipped: dict, names: list[str], source: str) -> list[Edit]:
    """The givens among `names` whose value in the learner's namespace differs from the shipped one."""
    found = []
    for name in names:
        if name not in shipped:
            continue
        if name not in learner:
            if name not in speed_only(shipped):
                found.append(Edit(name, None, removed=True))
        elif fingerprint(compared(learner[name])) not in [fingerprint(compared(v)) for v in accepted(shipped, name)]:
            found.append(Edit(name, last_change(source, name)))
    return found


def speed_only(shipped: dict) -> set[str]:
    """The givens a file may lack: a reference's batched specs (Output(..., batched=...)), which only make the
    check faster. A file made before the reference gained one checks as before; the verdict always runs the
    reference's own spec and batched spec, whatever the file holds."""
    puzzle = _puzzle(shipped)
    helpers = {id(b) for t in (puzzle.targets if puzzle else ()) if (b := getattr(t, "batched", None)) is not None}
    return {name for name, value in shipped.items() if id(value) in helpers}


def accepted(shipped: dict, name: str) -> list:
    """The values a learner's given `name` may hold unflagged: the shipped one, and for the puzzle, the shipped puzzle
    without its batched specs (as a file made before the reference gained them declares it)."""
    value = shipped[name]
    if value is not _puzzle(shipped) or not speed_only(shipped):
        return [value]
    plain = [dataclasses.replace(t, batched=None) if getattr(t, "batched", None) else t for t in value.targets]
    return [value, dataclasses.replace(value, targets=plain)]


def _puzzle(namespace: dict):
    from circuits.checking.puzzle import Puzzle

    return next((v for v in namespace.values() if isinstance(v, Puzzle)), None)


def compared(value):
    """What of a given is compared: a Puzzle without its hint ladder and level, which the curriculum attaches."""
    from circuits.checking.puzzle import Puzzle

    if not isinstance(value, Puzzle):
        return value
    return dataclasses.replace(value, hints=(), difficulty=None, minutes=None)


def last_change(source: str, name: str) -> int | None:
    """The line of the last top-level statement that binds `name` or changes it in place (outside functions)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    line = None
    for stmt in tree.body:
        for node in _statements(stmt):
            if _touches(node, name):
                line = node.lineno
    return line


def _statements(stmt: ast.stmt):
    """A top-level statement and the statements nested in its blocks (for, if, with, try), not in functions."""
    yield stmt
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    for field in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(stmt, field, []) or []:
            if isinstance(child, ast.stmt):
                yield from _statements(child)
            elif isinstance(child, ast.ExceptHandler):
                for s in child.body:
                    yield from _statements(s)


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _touches(node: ast.stmt, name: str) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        targets = [node.value.func]  # W_E.fill(0), puzzle.targets.append(...)
    for t in targets:
        for leaf in ast.walk(t) if isinstance(t, (ast.Tuple, ast.List)) else [t]:
            if _root(leaf) == name:
                return True
    return False


def fingerprint(value, _depth: int = 0, _seen: frozenset = frozenset()):
    """A comparable summary of a given's value: equal for equal givens built by the same code in two modules."""
    if _depth > 12 or id(value) in _seen:
        return ("…",)
    seen = _seen | {id(value)}
    deeper = lambda v: fingerprint(v, _depth + 1, seen)  # noqa: E731
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value).__name__, repr(value))
    if isinstance(value, np.ndarray):
        if value.dtype == object:  # sympy entries: by structure (srepr), which no printer setting changes
            return ("array", value.shape, tuple(deeper(x) for x in value.ravel()))
        return ("array", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, np.generic):
        return (type(value).__name__, repr(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(deeper(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, tuple(sorted(repr(v) for v in value)))
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), deeper(v)) for k, v in value.items()))
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if isinstance(value, (types.FunctionType, types.MethodType)):
        fn = getattr(value, "__func__", value)
        cells = tuple(deeper(c.cell_contents) if _filled(c) else None for c in fn.__closure__ or ())
        return ("function", _code(fn.__code__), deeper(fn.__defaults__), deeper(fn.__kwdefaults__), cells)
    if isinstance(value, types.CodeType):
        return _code(value)
    if type(value).__module__.split(".")[0] == "sympy":
        return ("sympy", type(value).__name__, _srepr(value))
    if isinstance(value, type):
        return ("class", value.__qualname__)
    if dataclasses.is_dataclass(value):  # its compared fields: a cache it keeps (compare=False) is not what it is
        state = {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value) if f.compare}
        return (type(value).__qualname__, tuple((k, deeper(v)) for k, v in sorted(state.items())))
    state = getattr(value, "__dict__", None)
    if state is None and hasattr(type(value), "__slots__"):
        state = {s: getattr(value, s, None) for s in type(value).__slots__}
    if state is not None:
        return (type(value).__qualname__, tuple((k, deeper(v)) for k, v in sorted(state.items())))
    return (type(value).__qualname__, repr(value))


def _srepr(value):
    """A sympy object's structure, the arguments of a sum or a product in a fixed order (str() follows the printer's
    settings, and sympy orders terms by its classes, which a second import of sympy makes anew)."""
    args = getattr(value, "args", None)
    if not isinstance(args, tuple) or not args:
        return repr(value) if type(value).__module__.split(".")[0] != "sympy" else _leaf(value)
    parts = [_srepr(a) for a in args]
    if getattr(value, "is_Add", False) or getattr(value, "is_Mul", False):
        parts.sort(key=repr)
    return (type(value).__name__, tuple(parts))


def _leaf(value) -> str:
    import sympy

    try:
        return sympy.srepr(value)
    except Exception:  # noqa: BLE001 - an object sympy cannot print structurally: its text
        return str(value)


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _code(code: types.CodeType):
    """A code object without where it sits (file, line numbers): the same function compiled twice compares equal."""
    consts = tuple(_code(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts)
    return ("code", code.co_code, code.co_names, code.co_varnames, consts)
