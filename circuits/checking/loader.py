"""Find and load puzzle files under a time limit, without writing anything next to them (no __pycache__)."""

from __future__ import annotations

import difflib
import hashlib
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path

from circuits.checking import limits
from circuits.checking.puzzle import Puzzle, Stub
from circuits.errors import CircuitError
from circuits.io.paths import is_loop, real


@dataclass
class Attempt:
    """A loaded puzzle file: the Puzzle it declares and the learner's answer."""

    path: Path
    puzzle: Puzzle
    answer: types.SimpleNamespace
    missing: list[str] = field(default_factory=list)  # answer names still FILL ME IN
    allowed_mutants: list = field(default_factory=list)  # the file's ALLOWED_MUTANTS: (mutant or pattern, why)
    digest: str = ""  # sha256 of the bytes loaded: what the check checked, whatever the file holds later

    @property
    def attempted(self) -> bool:
        return not self.missing

    def model(self, answer: types.SimpleNamespace | None = None):
        """The Model the answer builds; a CircuitError names the file on any mistake."""
        from circuits.checking.validate import build_mistake
        from circuits.model.transformer import Model

        try:
            model = self.puzzle.build(answer or self.answer)
        except CircuitError as e:
            raise build_mistake(e, answer or self.answer, self.puzzle, display(self.path)) or e.within(display(self.path)) from None
        except limits.TimeLimit:
            raise
        except BaseException as e:  # noqa: BLE001 - anything the learner's values trip is reported in one line
            if (author := build_mistake(e, answer or self.answer, self.puzzle, display(self.path))) is not None:
                raise author from None
            raise CircuitError(f"{display(self.path)}: building the model failed{_where_raised(e, self.path)}: {_exc(e)}") from e
        if not isinstance(model, Model):
            raise CircuitError(f"{display(self.path)}: build() returned {_kind(model)}, not a Model; "
                               "end it with `return Model(...)`")
        return model


def display(path: Path) -> str:
    """A path as the learner would type it: relative to the working directory when inside it, symlinks kept."""
    for p in (Path(os.path.abspath(path)), real(path)):
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            continue
    return str(path)


def _exc(e: BaseException) -> str:
    """`ValueError: bad thing`, or just `ValueError` when the exception says nothing."""
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _kind(value) -> str:
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def _where_raised(exc: BaseException, path: Path) -> str:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename) == path:
            return f" at line {frame.lineno}"
    return ""


def load(path: str | Path) -> Attempt:
    """Execute a puzzle file in a fresh module and collect its Puzzle and answer.

    The import runs under limits.run: at most limits.IMPORT_SECONDS, and nothing it does (os._exit,
    closing sys.stdout, leaving threads running) outlives it. Every mistake is one CircuitError line.
    """
    given = Path(path)
    shown = display(given)
    _check_kind(given, shown)
    _check_unique_number(given)
    path = given.resolve()
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CircuitError(f"cannot read puzzle file {shown}: {e.strerror}") from None
    try:
        source = data.decode("utf-8-sig")  # a byte-order mark some editors write is valid Python
    except UnicodeDecodeError as e:
        line = _line_at(data, e.start)
        raise CircuitError(f"{shown} line {line}: not UTF-8 text (byte {e.object[e.start]:#04x}); save the file as UTF-8") from None
    if not source.strip():
        raise CircuitError(f"{shown} is empty (expected a puzzle file declaring `puzzle = Puzzle(...)`)")
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte, before Python 3.12
        where = f" line {e.lineno}" if getattr(e, "lineno", None) else ""
        raise CircuitError(f"{shown}{where}: syntax error: {getattr(e, 'msg', None) or e}") from None
    module = types.ModuleType(f"circuits_puzzle_{path.stem}")
    module.__file__ = str(path)

    def execute():
        sys.modules[module.__name__] = module  # dataclasses and pickling look modules up by name
        try:
            exec(code, module.__dict__)
        except CircuitError as e:
            raise e.within(shown) from None
        except limits.ExitCalled as e:  # os._exit() would end pytest itself, with no report
            raise CircuitError(f"{shown} called os._exit() on import{_where_raised(e, path)}; remove it") from None
        except SystemExit as e:  # exit() in a puzzle file must not end the checker silently
            raise CircuitError(f"{shown} called exit() on import{_where_raised(e, path)}; remove it") from None
        except limits.TimeLimit:
            raise
        except BaseException as e:  # noqa: BLE001 - whatever the file raises is reported in one line
            said = f": {e}" if str(e) else ""
            raise CircuitError(f"{shown} raised {type(e).__name__} on import{_where_raised(e, path)}{said}") from e
        finally:
            sys.modules.pop(module.__name__, None)

    limits.run(execute, "import", "importing", shown, source=path)
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
    from circuits.checking.validate import validate

    # the puzzle itself, before any answer is checked: one line per author's mistake
    limits.run(lambda: validate(puzzle, vars(module), shown), "check", "validating the puzzle", shown, source=path)
    return Attempt(path, puzzle, types.SimpleNamespace(**answer), missing, list(vars(module).get("ALLOWED_MUTANTS", ())),
                   hashlib.sha256(data).hexdigest())


def _check_kind(path: Path, shown: str) -> None:
    """Only a regular file can be a puzzle file; say what else it is (and never open a FIFO, which would hang)."""
    if is_loop(path):
        raise CircuitError(f"{shown} is a symlink loop (it never reaches a file); point it at a puzzle file or delete it")
    if path.is_symlink() and not path.exists():
        raise CircuitError(f"{shown} is a symbolic link to {os.readlink(path)}, which does not exist; "
                           "point it at a puzzle file or delete it")
    if path.is_dir():
        raise CircuitError(f"{shown} is a folder, not a puzzle file; rename it (NN_name.py is for puzzle files)")
    if not path.exists():
        raise CircuitError(f"cannot read puzzle file {shown}: no such file")
    if not path.is_file():
        raise CircuitError(f"{shown} is not a regular file (a named pipe or a device?); a puzzle file is a plain text file")


def _check_unique_number(path: Path) -> None:
    """Two puzzle files with one number in one folder: `check 1` and the plugin would each pick one silently."""
    number = path.name[:2]
    if not (number.isdigit() and path.name[2:3] == "_" and path.suffix == ".py"):
        return
    same = sorted(path.parent.glob(f"{number}_*.py"))
    if len(same) > 1:
        names = [display(p) for p in same]
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        raise CircuitError(f"{listed} have the same number, {number}: keep one (rename or move the other{'s' if len(same) > 2 else ''} out of "
                           f"{display(path.parent)}/)")


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
    if p.suffix == ".py" and (p.exists() or p.is_symlink()):
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
