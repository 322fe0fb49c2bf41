"""Find (places.py) and load puzzle files under a time limit, without writing anything next to them (no __pycache__)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path

from circuits import limits
from circuits.checking import curriculum, givens
from circuits.checking.places import (  # noqa: F401 - re-exported: loader is where callers look
    COURSE_ENV,
    COURSE_OPTION,
    INI_FILES,
    course_references,
    course_twin,
    declared_folders,
    find,
    nearest_settings,
    puzzle_files,
    puzzle_folder,
    recorded_course,
    reference_for,
)
from circuits.checking.puzzle import Puzzle, Stub
from circuits.errors import CircuitError
from circuits.io import paths
from circuits.io.paths import is_loop


@dataclass
class Attempt:
    """A loaded puzzle file: the Puzzle it declares and the learner's answer."""

    path: Path
    puzzle: Puzzle
    answer: types.SimpleNamespace
    missing: list[str] = field(default_factory=list)  # answer names still FILL ME IN
    allowed_mutants: list = field(default_factory=list)  # the file's ALLOWED_MUTANTS: (mutant or pattern, why)
    edits: list = field(default_factory=list)  # givens.Edit: givens the file changed (the shipped ones are checked)
    reference: Path | None = None  # the shipped reference the puzzle comes from (None: the file is its own source)
    reads: list = field(
        default_factory=list
    )  # files the puzzle file read as it ran (modules, data): part of its verdict
    digest: str = ""  # sha256 of the bytes loaded: what the check checked, whatever the file holds later
    declared_in: Path | None = None  # the file whose code declares the puzzle: the shipped reference, or this file
    names: dict = field(default_factory=dict, repr=False, compare=False)  # that file's globals, for validation
    sealed: object = field(default=None, repr=False, compare=False)  # sealed.answer.Sealed: it ran apart from here

    @property
    def attempted(self) -> bool:
        return not self.missing

    def model(self, answer: types.SimpleNamespace | None = None):
        """The Model the answer (or `answer`) builds; a CircuitError names the file on any mistake (checking.build)."""
        from circuits.checking.build import model_of

        return model_of(self, answer)


def load(path: str | Path) -> Attempt:
    """Execute a puzzle file in a fresh module and collect its Puzzle and answer.

    A file whose id names a shipped puzzle (curriculum.twin), or a course's (course_twin), contributes only its
    answer, from a fenced child (sealed/): the puzzle, its givens and targets come from the reference,
    and every given the file changed is listed in `Attempt.edits`. A file with no reference at all (an author's
    puzzle in the making) is its own source, run here.

    The import runs under limits.run: at most limits.IMPORT_SECONDS, and nothing it does (os._exit,
    closing sys.stdout, leaving threads running) outlives it. Every mistake is one CircuitError line.
    Loading only loads: the puzzle is validated by the next stage (validate.validated; pipeline.load does both).
    """
    given = Path(path)
    shown = paths.shown(given)
    ref = curriculum.twin(given) or course_twin(given)
    if ref is not None:
        return _sealed(given, shown, ref)
    if curriculum.is_shipped(given) and curriculum.reference_file(given) is not None:
        mine, source = _shipped(curriculum.reference_file(given))  # the shipped file itself: run once per process
    else:
        module, source = _execute(given, shown, "circuits_puzzle")
        mine = vars(module)
    puzzle = _declared(mine, shown)
    _attach_curriculum(puzzle, given.name)
    missing, answer = [], {}
    for name in puzzle.answer:
        if name not in mine:
            raise CircuitError(f"{shown} does not define {name} (the answer needs {', '.join(puzzle.answer)})")
        value = mine[name]
        if isinstance(value, Stub):
            missing.append(name)
        answer[name] = value
    for name in puzzle.optional:
        if name in mine:
            answer[name] = mine[name]
    answer.setdefault("params", {})  # builds pass answer.params to Model, so symbols can be bound anywhere
    if curriculum.is_shipped(given):  # the shipped puzzle is shared: each attempt gets its own copy
        puzzle = dataclasses.replace(puzzle, targets=list(puzzle.targets))
    return Attempt(
        Path(os.path.abspath(given)),
        puzzle,
        types.SimpleNamespace(**answer),
        missing,
        list(mine.get("ALLOWED_MUTANTS", ())),
        reads=list(mine.get("__circuits_reads__", [])),
        digest=mine.get("__circuits_digest__", ""),
        declared_in=Path(os.path.abspath(given)),
        names=mine,
    )


def _sealed(given: Path, shown: str, ref: Path) -> Attempt:
    """A learner's file for a shipped or course puzzle: the puzzle from the reference (run here), the answer from
    the file (run in a fenced child: sealed/), and the givens the file changed, named."""
    from circuits.sealed import answer

    shipped, shipped_source = _shipped(ref)
    puzzle = _declared(shipped, paths.shown(ref))
    names = compared_givens(shipped_source, puzzle)
    source, data = _source(given, shown)
    path = Path(os.path.abspath(given))
    sealed = answer.load(path, shown, source, puzzle, shipped, names, data)
    _attach_curriculum(puzzle, given.name)
    puzzle = dataclasses.replace(puzzle, targets=list(puzzle.targets))  # shared: each attempt gets its own copy
    return Attempt(
        path,
        puzzle,
        types.SimpleNamespace(**sealed.answer),
        sealed.missing,
        list(shipped.get("ALLOWED_MUTANTS", ())),
        edits=sealed.edits,
        reference=ref,
        reads=sealed.reads,
        digest=f"{sealed.digest}:{_digest_of(ref)}",
        declared_in=Path(os.path.abspath(ref)),
        names=shipped,
        sealed=sealed,
    )


def _digest_of(ref: Path) -> str:
    """The reference's bytes: a course's statement is no part of the library's version, so it keys the cache too."""
    try:
        return hashlib.sha256(ref.read_bytes()).hexdigest()[:32]
    except OSError:
        return ""


def _attach_curriculum(puzzle: Puzzle, name: str) -> None:
    """What the curriculum keeps apart from a shipped puzzle's file (its hints, its level), where the file declares
    none."""
    if not puzzle.hints:
        puzzle.hints = curriculum.hints(name)
    if puzzle.difficulty is None and puzzle.minutes is None:
        puzzle.difficulty, puzzle.minutes = curriculum.level(name)


def _declared(namespace: dict, shown: str) -> Puzzle:
    puzzles = [v for v in namespace.values() if isinstance(v, Puzzle)]
    if not puzzles:
        raise CircuitError(f"{shown} declares no puzzle (expected `puzzle = Puzzle(...)`)")
    return puzzles[0]


def compared_givens(reference_source: str, puzzle: Puzzle) -> list[str]:
    """The givens a learner's file is compared on: the names the reference defines above its answer line."""
    answer = (*puzzle.answer, *puzzle.optional)
    return [n for n in givens.given_names(_above_answer(reference_source)) if n not in answer]


def _above_answer(source: str) -> str:
    """A puzzle file's text above its answer line: the statement and the givens."""
    mark = givens.ANSWER_LINE
    return source[: source.index(mark)] if mark in source else source


_SHIPPED: dict[tuple, tuple[dict, str]] = {}


def _shipped(ref: Path) -> tuple[dict, str]:
    """The namespace and text of a shipped reference file, executed once per process (and again if it changes)."""
    stat = ref.stat()
    key = (str(ref), stat.st_mtime_ns, stat.st_size)
    if key not in _SHIPPED:
        module, source = _execute(ref, paths.shown(ref), "circuits_shipped")
        puzzle = _declared(vars(module), paths.shown(ref))
        _attach_curriculum(puzzle, ref.name)
        _SHIPPED[key] = (vars(module), source)
    return _SHIPPED[key]


def _source(given: Path, shown: str) -> tuple[str, bytes]:
    """A puzzle file's text and bytes, read once, or one line saying why it is no puzzle file (it is not run)."""
    _check_kind(given, shown)
    _check_unique_number(given)
    path = Path(os.path.abspath(given))
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CircuitError(f"cannot read puzzle file {shown}: {e.strerror}") from None
    try:
        source = data.decode("utf-8-sig")  # a byte-order mark some editors write is valid Python
    except UnicodeDecodeError as e:
        line = _line_at(data, e.start)
        raise CircuitError(
            f"{shown} line {line}: not UTF-8 text (byte {e.object[e.start]:#04x}); save the file as UTF-8"
        ) from None
    if not source.strip():
        raise CircuitError(f"{shown} is empty (expected a puzzle file declaring `puzzle = Puzzle(...)`)")
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte, before Python 3.12
        where = f" line {e.lineno}" if getattr(e, "lineno", None) else ""
        raise CircuitError(f"{shown}{where}: syntax error: {getattr(e, 'msg', None) or e}") from None
    return source, data


def _execute(given: Path, shown: str, prefix: str) -> tuple[types.ModuleType, str]:
    """Run a puzzle file's code in a fresh module, under the import time limit: the module and its text."""
    source, data = _source(given, shown)
    path = Path(os.path.abspath(given))  # symlinks kept: reports name the file as the learner does
    code = compile(source, str(path), "exec", dont_inherit=True)
    module = types.ModuleType(f"{prefix}_{path.stem}")
    module.__file__ = str(path)

    reads: list[str] = []

    def execute():
        sys.modules[module.__name__] = module  # dataclasses and pickling look modules up by name
        _READING[threading.get_ident()] = reads
        try:
            exec(code, module.__dict__)
        except CircuitError as e:
            raise e.within(shown) from None
        except limits.ExitCalled as e:  # os._exit() would end pytest itself, with no report
            raise CircuitError(
                f"{shown} called os._exit() on import{limits.where_raised(e, path)}; remove it"
            ) from None
        except SystemExit as e:  # exit() in a puzzle file must not end the checker silently
            raise CircuitError(f"{shown} called exit() on import{limits.where_raised(e, path)}; remove it") from None
        except limits.TimeLimit:
            raise
        except BaseException as e:  # noqa: BLE001 - whatever the file raises is reported in one line
            said = f": {e}" if str(e) else ""
            raise CircuitError(
                f"{shown} raised {type(e).__name__} on import{limits.where_raised(e, path)}{said}"
            ) from e
        finally:
            _READING.pop(threading.get_ident(), None)
            sys.modules.pop(module.__name__, None)

    _record_reads()
    limits.run(execute, "import", "importing", shown, source=path)
    module.__circuits_reads__ = _own_files(reads, path)
    module.__circuits_digest__ = hashlib.sha256(data).hexdigest()  # what is checked, whatever the file holds later
    own = {str(f) for f in module.__circuits_reads__}
    for name, m in list(sys.modules.items()):  # imported again next time, so an edit to it is seen (and recorded)
        if os.path.abspath(getattr(m, "__file__", None) or "") in own:
            sys.modules.pop(name, None)
    return module, source


# The files a puzzle file reads while it runs (a helper module it imports, a data file it opens): they decide its
# answer as much as its own text, so the verdict cache keys on them too. One audit hook for the process, recording
# only on the thread that runs a puzzle file's import.
_READING: dict[int, list[str]] = {}
_HOOKED: list[bool] = []


def _record_reads() -> None:
    if _HOOKED:
        return

    def hook(event: str, args: tuple) -> None:
        if event == "open" and _READING:
            into = _READING.get(threading.get_ident())
            if into is not None and args and isinstance(args[0], (str, bytes, os.PathLike)):
                into.append(os.fsdecode(args[0]))

    sys.addaudithook(hook)
    _HOOKED.append(True)


def _own_files(reads: list[str], path: Path) -> list[Path]:
    """The regular files among `reads` that are the learner's: not the puzzle file, Python, installed packages
    or circuits itself."""
    skip = tuple({os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    found = []
    for r in dict.fromkeys(reads):
        full = os.path.abspath(r)
        if full == str(path) or full.startswith((*skip, ours)) or not os.path.isfile(full):
            continue
        found.append(Path(full))
    return found


def _check_kind(path: Path, shown: str) -> None:
    """Only a regular file can be a puzzle file; say what else it is (and never open a FIFO, which would hang)."""
    if is_loop(path):
        raise CircuitError(
            f"{shown} is a symlink loop (it never reaches a file); point it at a puzzle file or delete it"
        )
    if path.is_symlink() and not path.exists():
        raise CircuitError(
            f"{shown} is a symbolic link to {os.readlink(path)}, which does not exist; "
            "point it at a puzzle file or delete it"
        )
    if path.is_dir():
        raise CircuitError(f"{shown} is a folder, not a puzzle file; rename it (NN_name.py is for puzzle files)")
    if not path.exists():
        raise CircuitError(f"cannot read puzzle file {shown}: no such file")
    if not path.is_file():
        raise CircuitError(
            f"{shown} is not a regular file (a named pipe or a device?); a puzzle file is a plain text file"
        )


def _check_unique_number(path: Path) -> None:
    """Two puzzle files with one number in one folder: `check 1` and the plugin would each pick one silently."""
    number = path.name[:2]
    if not (number.isdigit() and path.name[2:3] == "_" and path.suffix == ".py"):
        return
    same = sorted(path.parent.glob(f"{number}_*.py"))
    if len(same) > 1:
        names = [paths.shown(p) for p in same]
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        raise CircuitError(
            f"{listed} have the same number, {number}: keep one "
            f"(rename or move the other{'s' if len(same) > 2 else ''} out of {paths.shown(path.parent)}/)"
        )


def _line_at(data: bytes, offset: int) -> int:
    """The 1-based line of a byte offset."""
    return data.count(b"\n", 0, offset) + 1


def statement_file(attempt: Attempt) -> Path | None:
    """The file stating an attempt's puzzle: the reference it was loaded (or graded) against, else its path's."""
    return attempt.reference or reference_for(attempt.path)
