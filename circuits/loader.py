"""Find and load puzzle files without writing anything next to them (no __pycache__)."""

from __future__ import annotations

import difflib
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CircuitError
from .puzzle import Puzzle, Stub


@dataclass
class Attempt:
    """A loaded puzzle file: the Puzzle it declares and the learner's answer."""

    path: Path
    puzzle: Puzzle
    answer: types.SimpleNamespace
    missing: list[str] = field(default_factory=list)  # answer names still FILL ME IN

    @property
    def attempted(self) -> bool:
        return not self.missing

    def model(self, answer: types.SimpleNamespace | None = None):
        """The Model the answer builds; a CircuitError names the file on any mistake."""
        try:
            return self.puzzle.build(answer or self.answer)
        except CircuitError as e:
            raise e.within(display(self.path)) from None
        except Exception as e:  # noqa: BLE001 - anything the learner's values trip is reported in one line
            raise CircuitError(f"{display(self.path)}: building the model failed: {_exc(e)}") from e


def display(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _exc(e: BaseException) -> str:
    """`ValueError: bad thing`, or just `ValueError` when the exception says nothing."""
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _where_raised(exc: BaseException, path: Path) -> str:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename) == path:
            return f" at line {frame.lineno}"
    return ""


def load(path: str | Path) -> Attempt:
    """Execute a puzzle file in a fresh module and collect its Puzzle and answer."""
    path = Path(path).resolve()
    shown = display(path)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CircuitError(f"cannot read puzzle file {shown}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        line = _line_at(path.read_bytes(), e.start)
        raise CircuitError(f"{shown} line {line}: not UTF-8 text (byte {e.object[e.start]:#04x}); save the file as UTF-8") from None
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte, before Python 3.12
        where = f" line {e.lineno}" if getattr(e, "lineno", None) else ""
        raise CircuitError(f"{shown}{where}: syntax error: {getattr(e, 'msg', None) or e}") from None
    module = types.ModuleType(f"circuits_puzzle_{path.stem}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # dataclasses and pickling look modules up by name
    try:
        exec(code, module.__dict__)
    except CircuitError as e:
        raise e.within(shown) from None
    except SystemExit as e:  # exit() in a puzzle file must not end the checker silently
        raise CircuitError(f"{shown} called exit() on import{_where_raised(e, path)}; remove it") from None
    except Exception as e:  # noqa: BLE001
        said = f": {e}" if str(e) else ""
        raise CircuitError(f"{shown} raised {type(e).__name__} on import{_where_raised(e, path)}{said}") from e
    finally:
        sys.modules.pop(module.__name__, None)
    puzzles = [v for v in vars(module).values() if isinstance(v, Puzzle)]
    if not puzzles:
        raise CircuitError(f"{shown} declares no puzzle (expected `puzzle = Puzzle(...)`)")
    puzzle = puzzles[0]
    missing, answer = [], {}
    for name in puzzle.answer:
        if name not in vars(module):
            raise CircuitError(f"{shown} does not define {name} (the answer needs {', '.join(puzzle.answer)})")
        value = vars(module)[name]
        if isinstance(value, Stub):
            missing.append(name)
        answer[name] = value
    for name in puzzle.optional:
        if name in vars(module):
            answer[name] = vars(module)[name]
    answer.setdefault("params", {})  # builds pass answer.params to Model, so symbols can be bound anywhere
    return Attempt(path, puzzle, types.SimpleNamespace(**answer), missing)


def _line_at(data: bytes, offset: int) -> int:
    """The 1-based line of a byte offset."""
    return data.count(b"\n", 0, offset) + 1


def _root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "puzzles").is_dir() or (d / "solutions").is_dir():
            return d
    return here


def puzzle_files(solutions: bool = False, root: Path | None = None) -> list[Path]:
    folder = _root(root) / ("solutions" if solutions else "puzzles")
    return sorted(p for p in folder.glob("[0-9][0-9]_*.py"))


def find(name: str, solutions: bool = False, root: Path | None = None) -> Path:
    """A puzzle by file path, by name ("consonants"), by id ("01_consonants") or by number ("1")."""
    p = Path(name)
    if p.suffix == ".py" and p.exists():
        return p
    files = puzzle_files(solutions, root)
    stems = {f.stem: f for f in files}
    for f in files:
        number, _, slug = f.stem.partition("_")
        if name in (f.stem, slug, number) or (name.isdigit() and int(name) == int(number)):
            return f
    close = difflib.get_close_matches(name, [*stems, *(s.partition("_")[2] for s in stems)], n=3, cutoff=0.5)
    where = display(_root(root) / ("solutions" if solutions else "puzzles"))
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else f"; the puzzles in {where} are: {', '.join(stems) or 'none'}"
    raise CircuitError(f"no puzzle named {name!r}{hint}")


def load_puzzle(name_or_path: str, solution: bool = False) -> Attempt:
    return load(find(name_or_path, solution))
