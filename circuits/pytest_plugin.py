"""The pytest plugin: `pytest puzzles/` collects puzzle files, one test item per target.

A thin adapter over circuits.checking.checker, in the manner of pytest's doctest plugin. It takes over a
folder named puzzles/ or solutions/ when the folder is named on the command line or one of its
NN_*.py files declares a circuits Puzzle, so it never touches other projects' Python files. In such
a folder every NN_*.py entry is a row of the summary, whatever it is (an empty file, a folder, a
broken link): what cannot be loaded is a failing item with one line saying why.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from circuits.errors import CircuitError


class Failure:
    """A failure as pytest shows it: the report, and one line for the short summary.

    A plain string would be pasted whole into the short summary on CI (pytest does not trim there),
    so the summary line is given separately, already trimmed to the terminal's width.
    """

    def __init__(self, text: str, item: pytest.Item):
        self.text = text
        plain = re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines() or [""]
        room = item.config.get_terminal_writer().fullwidth - len(f"FAILED {item.nodeid} - ")
        first = plain[0]
        if room >= 8:  # else no summary message at all: the node id alone fills the line
            self.reprcrash = _Crash(first if len(first) <= room else first[: room - 1] + "…")

    def toterminal(self, out) -> None:
        for line in self.text.splitlines():
            out.line(line)

    def __str__(self) -> str:
        return self.text


class _Crash:
    def __init__(self, message: str):
        self.message = message

_RESULTS = pytest.StashKey[list]()
_NOT_CHECKED = pytest.StashKey[list]()  # files that look like puzzles in folders the plugin does not take over
_NAME = re.compile(r"^\d\d_.*\.py$")  # as loader.puzzle_files globs: [0-9][0-9]_*.py
_FOLDERS = ("puzzles", "solutions")
NAME_CHARS = 28  # of a target's label in its test name: "FAILED puzzles/NN_longest_name.py::2. …" fits 80 columns


def pytest_addoption(parser):
    group = parser.getgroup("circuits", "circuits puzzles")
    group.addoption("--solutions", action="store_true", default=False,
                    help="check the reference solutions (solutions/NN_*.py) instead of your puzzle files")
    group.addoption("--no-margins", action="store_true", default=False,
                    help="skip the margin search on solved puzzles (faster)")
    parser.addini("circuits_paths", type="paths", default=[],
                  help="folders of circuits puzzle files besides puzzles/ and solutions/ (relative to the ini file)")
    group.addoption("--no-cache", action="store_true", default=False, dest="circuits_no_cache",
                    help="check again even puzzles solved before with this exact file (the verdict cache is in "
                         "$XDG_CACHE_HOME/circuits)")


def pytest_configure(config):
    config.stash[_RESULTS] = []
    config.stash[_NOT_CHECKED] = []
    _check_paths(config)


def _check_paths(config) -> None:
    """Every folder circuits_paths lists exists and is a folder: a typo would leave its puzzles unchecked in silence,
    so it is a usage error (one line, exit 4), as pytest's own for a bad option."""
    from circuits.checking.loader import display
    from circuits.io.paths import is_loop

    where = f"circuits_paths in {display(config.inipath)}" if config.inipath else "circuits_paths"
    for p in config.getini("circuits_paths"):
        shown = display(p)
        if is_loop(p):
            raise pytest.UsageError(f"{where}: {shown} is a symlink loop (it never reaches a folder); list folders "
                                    "of puzzle files")
        if not os.path.exists(p):
            raise pytest.UsageError(f"{where}: {shown} does not exist (a typo?); list folders of puzzle files")
        if not os.path.isdir(p):
            raise pytest.UsageError(f"{where}: {shown} is a file, not a folder; list folders of puzzle files (a "
                                    "puzzle file elsewhere is checked when named: pytest path/NN_name.py)")


def _declares_puzzle(path: Path) -> bool:
    try:
        if not path.is_file():  # never open a named pipe: it would wait for a writer forever
            return False
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "circuits" in text and "Puzzle(" in text


def is_puzzle_file(path: Path) -> bool:
    """A regular NN_*.py file in a puzzles/ or solutions/ folder that declares a circuits Puzzle."""
    return path.suffix == ".py" and path.parent.name in _FOLDERS and bool(_NAME.match(path.name)) \
        and _declares_puzzle(path)


def _declared(path: Path, config) -> bool:
    """Whether `path` is one of the folders the ini option circuits_paths lists."""
    from circuits.io.paths import real

    return any(real(p) == real(path) for p in config.getini("circuits_paths"))


def _named_puzzle_inside(path: Path, session) -> bool:
    """Whether a puzzle file in `path` was named on the command line (`pytest mycourse/91_x.py`): always checked."""
    if not session.isinitpath(path, with_parents=True):  # nothing named inside it: no need to look
        return False
    return any(session.isinitpath(f) and _declares_puzzle(f) for f in path.glob("[0-9][0-9]_*.py"))


def is_puzzle_folder(path: Path, session) -> bool:
    """puzzles/ or solutions/, named on the command line or holding (or beside) a file that declares a Puzzle;
    a folder listed in circuits_paths; or any folder holding a puzzle file named on the command line."""
    if _declared(path, session.config) or _named_puzzle_inside(path, session):
        return True
    if path.name not in _FOLDERS:
        return False
    return True  # whether it holds puzzles is looked at only if it is collected (PuzzleDir.collect): pytest makes a
    # node for every folder beside the ones it was asked for, and reading their files then would read a learner's


def _holds_puzzles(path: Path) -> bool:
    """puzzles/ or solutions/ holding (or beside a folder holding) a file that declares a Puzzle."""
    twin = path.parent / _FOLDERS[path.name == "puzzles"]
    return any(_declares_puzzle(f) for folder in (path, twin) if folder.is_dir() for f in folder.glob("[0-9][0-9]_*.py"))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: the hook is new in pytest 8
def pytest_collect_directory(path: Path, parent):
    if is_puzzle_folder(path, parent.session):
        return PuzzleDir.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent):
    """Before pytest 8 (no directory hook): puzzle files one by one, as long as they declare a Puzzle.
    A puzzle file in a folder the plugin does not take over is one skipped item saying why."""
    if isinstance(parent, PuzzleDir):
        return None
    if is_puzzle_file(file_path):
        return PuzzleDir.puzzle(parent, file_path)
    if file_path.suffix == ".py" and _NAME.match(file_path.name) and _declares_puzzle(file_path):
        return NotCollected.from_parent(parent, path=file_path)
    return None


class PuzzleDir(getattr(pytest, "Directory", pytest.Collector)):  # pytest.Directory: pytest 8 on
    """puzzles/ (or solutions/): a PuzzleFile for every NN_*.py entry, whatever it is; anything else as pytest would."""

    def collect(self):
        ihook, config = self.ihook, self.config
        entries = sorted(os.scandir(self.path), key=lambda e: e.name)
        names = {e.name for e in entries}
        ours = (_declared(self.path, config) or self.session.isinitpath(self.path, with_parents=True)
                or self.path.name not in _FOLDERS or _holds_puzzles(self.path))
        for entry in entries:
            path = Path(entry.path)
            if not self.session.isinitpath(path) and ihook.pytest_ignore_collect(collection_path=path, config=config):
                continue
            if ours and _NAME.match(entry.name):
                yield self.puzzle(self, path)
            elif entry.is_dir():
                col = ihook.pytest_collect_directory(path=path, parent=self)
                if col is not None:
                    yield col
            elif entry.is_file():
                yield from ihook.pytest_collect_file(file_path=path, parent=self)
        if ours and self.config.getoption("--solutions") and self.path.name == "puzzles":
            twin = self.path.parent / "solutions"  # a solution with no puzzle file is still checked
            for path in sorted(twin.glob("[0-9][0-9]_*.py")) if twin.is_dir() else ():
                if path.name not in names:
                    yield PuzzleFile.from_parent(self, path=path)

    @staticmethod
    def puzzle(parent, path: Path) -> pytest.File:
        """The node for puzzles/NN_x.py: the file itself, or with --solutions the solution of the same name."""
        if parent.config.getoption("--solutions") and path.parent.name == "puzzles":
            from circuits.checking.loader import reference_for

            twin = reference_for(path)  # the shipped reference of its id, else solutions/ beside puzzles/
            if twin is None:
                return MissingSolution.from_parent(parent, path=path)
            node = PuzzleFile.from_parent(parent, path=path)  # keeps the path asked for, so `pytest puzzles/NN_x.py` selects it
            node.source = twin
            return node
        return PuzzleFile.from_parent(parent, path=path)


class NotCollected(pytest.File):
    """A file that declares a Puzzle in a folder that is not a puzzle folder: skipped, saying why and what to do."""

    def collect(self):
        yield Skipped.from_parent(self, name="not collected")


class Skipped(pytest.Item):
    def runtest(self):
        from circuits.checking.loader import display

        where = display(self.path.parent)
        said = (f"{display(self.path)} looks like a circuits puzzle, but {where}/ is not puzzles/ or solutions/ nor in "
                f"the ini option circuits_paths: name the file (pytest {display(self.path)}) or add {where} to "
                "circuits_paths")
        self.config.stash[_NOT_CHECKED].append(  # said in the summary too, not only with -rs
            f"{display(self.path)} was not checked: add {where} to the ini option circuits_paths, or name the file")
        raise pytest.skip.Exception(said, _use_item_location=True)

    def reportinfo(self):
        return self.path, 0, f"{self.path.name}: not collected"


class PuzzleFailure(Exception):
    def __init__(self, result):
        super().__init__(result.label)
        self.result = result


class MissingSolution(pytest.File):
    def collect(self):
        yield LoadError.from_parent(self, name="solution", message=f"no reference solution for {self.path.name} in solutions/")


class LoadError(pytest.Item):
    """A puzzle file that cannot be loaded: one failing item with a one-line message."""

    def __init__(self, *, message: str, **kwargs):
        super().__init__(**kwargs)
        self.message = message

    def runtest(self):
        from circuits.checking.checker import PuzzleResult

        self.config.stash[_RESULTS].append(PuzzleResult.unloaded(self.path, self.message))
        raise CircuitError(self.message)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CircuitError):
            return Failure(str(excinfo.value), self)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}: cannot load"


class PuzzleFile(pytest.File):
    """One puzzle file; its check runs once, the first time one of its items runs."""

    source: Path | None = None  # the file checked, when not `path` itself (--solutions)

    def collect(self):
        from circuits.checking.loader import load

        source = self.source or self.path
        try:
            self.attempt = load(source)
        except CircuitError as e:
            yield LoadError.from_parent(self, name="load", message=str(e))
            return
        self._result = None
        lines = source.read_text(encoding="utf-8-sig", errors="replace").splitlines()
        self.answer_line = next((n for n, line in enumerate(lines) if line.startswith("# ── your answer")), 0)
        for i, target in enumerate(self.attempt.puzzle.targets):
            yield PuzzleItem.from_parent(self, name=f"{i + 1}. {_short(target.label, NAME_CHARS)}", index=i)

    def result(self):
        if self._result is None:
            from circuits.checking.cache import cached_check

            self._result = cached_check(self.attempt, not self.config.getoption("circuits_no_cache"),
                                        margins=not self.config.getoption("--no-margins"))
            self.config.stash[_RESULTS].append(self._result)
        return self._result


def _short(label: str, n: int = 60) -> str:
    label = label.replace("[", "(").replace("]", ")")
    return label if len(label) <= n else label[: n - 1] + "…"


class PuzzleItem(pytest.Item):
    def __init__(self, *, index: int, **kwargs):
        super().__init__(**kwargs)
        self.index = index

    def runtest(self):
        result = self.parent.result().targets[self.index]
        if result.status == "not attempted":
            raise pytest.skip.Exception(result.message, _use_item_location=True)
        if result.status in ("failed", "error"):
            raise PuzzleFailure(result)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, PuzzleFailure) and excinfo.value.result.status == "error":
            result = excinfo.value.result  # a mistake in the file: its one line, never wrapped
            return Failure(f"! {result.label}\n{result.message}", self)
        if isinstance(excinfo.value, PuzzleFailure):
            from circuits.display.render import console
            from circuits.display.report import target_report

            markup = self.config.get_terminal_writer().hasmarkup
            import io

            buf = io.StringIO()
            c = console(file=buf, color=markup, width=self.config.get_terminal_writer().fullwidth)
            c.print(target_report(excinfo.value.result))
            hints = self.parent.attempt.puzzle.hints
            if hints and not getattr(self.parent, "hinted", False):  # once per puzzle, under its first failure
                from circuits.display.report import first_hint

                self.parent.hinted = True
                c.print(first_hint(hints, self.parent.attempt.puzzle.number))
            return Failure(buf.getvalue().rstrip(), self)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        where = f"{self.parent.attempt.puzzle.id} · target {self.index + 1}: "
        room = self.config.get_terminal_writer().fullwidth - len(where) - 6  # the header is "_ where label _"
        label = _short(self.parent.attempt.puzzle.targets[self.index].label, max(room, 20))
        return self.parent.source or self.path, self.parent.answer_line, where + label


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for said in config.stash.get(_NOT_CHECKED, []):
        terminalreporter.write_line(f"circuits: {said}", yellow=True)
    results = config.stash.get(_RESULTS, [])
    if results:
        _summary(terminalreporter, config, results)
    from circuits.checking.limits import take_warnings, warnings_line
    from circuits.checking.loader import display

    warned = warnings_line(take_warnings(), display)
    if warned:  # after the summary, paths as typed: never before the report with absolute paths
        terminalreporter.write_line(f"circuits: note: the puzzle files' code warned: {warned}", yellow=True)


def _summary(terminalreporter, config, results) -> None:
    import io

    from circuits.display.render import console
    from circuits.display.report import edited_givens, progress, summary_table

    buf = io.StringIO()
    width = terminalreporter._tw.fullwidth
    c = console(file=buf, color=terminalreporter._tw.hasmarkup, width=width)
    which = "solutions" if config.getoption("--solutions") else "your puzzles"
    c.print(summary_table(results, title=f"circuits · {which}"))
    c.print(progress(results))
    for line in (line for r in results for line in edited_givens(r)):
        c.print(line)
    terminalreporter.write("\n" + buf.getvalue())
