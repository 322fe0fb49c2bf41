"""Collection: which folders and files are puzzles, and their nodes (a PuzzleFile per file, a PuzzleItem per target)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from circuits.errors import CircuitError
from circuits.pytest_plugin.base import (
    _FOLDERS,
    _NAME,
    _NOT_CHECKED,
    _RESULTS,
    NAME_CHARS,
    Failure,
    _first_line,
)


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
    return (
        path.suffix == ".py"
        and path.parent.name in _FOLDERS
        and bool(_NAME.match(path.name))
        and _declares_puzzle(path)
    )


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
    return any(
        _declares_puzzle(f) for folder in (path, twin) if folder.is_dir() for f in folder.glob("[0-9][0-9]_*.py")
    )


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: the hook is new in pytest 8
def pytest_collect_directory(path: Path, parent):
    if _answers_beside_puzzles(path, parent.session):
        return AnswersDir.from_parent(parent, path=path)  # a course's solutions/ are answers, not puzzles to count
    if is_puzzle_folder(path, parent.session):
        return PuzzleDir.from_parent(parent, path=path)
    return None


def _answers_beside_puzzles(path: Path, session) -> bool:
    """solutions/ reached by walking a folder that also holds puzzles/: not a learner's puzzles (`--solutions`
    checks them through puzzles/, once each; naming the folder on the command line checks it as it is)."""
    return (
        path.name == "solutions"
        and (path.parent / "puzzles").is_dir()
        and not session.isinitpath(path)
        and not _declared(path, session.config)
        and not _named_puzzle_inside(path, session)
    )


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
        from circuits.sealed import sandbox

        if not self.config.getoption("--solutions") and self.path.name != "solutions":  # references run here
            try:
                sandbox.warm()  # the process that runs the puzzle files, warming up while pytest collects
            except (OSError, sandbox.SandboxError):
                pass
        yield from self._collect()

    def _collect(self):
        ihook, config = self.ihook, self.config
        entries = sorted(os.scandir(self.path), key=lambda e: e.name)
        names = {e.name for e in entries}
        ours = (
            _declared(self.path, config)
            or self.session.isinitpath(self.path, with_parents=True)
            or self.path.name not in _FOLDERS
            or _holds_puzzles(self.path)
        )
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
            node = PuzzleFile.from_parent(
                parent, path=path
            )  # keeps the path asked for, so `pytest puzzles/NN_x.py` selects it
            node.source = twin
            return node
        return PuzzleFile.from_parent(parent, path=path)


class AnswersDir(getattr(pytest, "Directory", pytest.Collector)):
    """A course's solutions/ beside its puzzles/, reached by walking the folder: nothing collected from it."""

    def collect(self):
        return []


class NotCollected(pytest.File):
    """A file that declares a Puzzle in a folder that is not a puzzle folder: skipped, saying why and what to do."""

    def collect(self):
        yield Skipped.from_parent(self, name="not collected")


class Skipped(pytest.Item):
    def runtest(self):
        from circuits.io import paths

        where = paths.shown(self.path.parent)
        said = (
            f"{paths.shown(self.path)} looks like a circuits puzzle, but {where}/ is not puzzles/ or solutions/ nor in "
            f"the ini option circuits_paths: name the file (pytest {paths.shown(self.path)}) or add {where} to "
            "circuits_paths"
        )
        self.config.stash[_NOT_CHECKED].append(  # said in the summary too, not only with -rs
            f"{paths.shown(self.path)} was not checked: add {where} to the ini option circuits_paths, or name the file"
        )
        raise pytest.skip.Exception(said, _use_item_location=True)

    def reportinfo(self):
        return self.path, 0, f"{self.path.name}: not collected"


class PuzzleFailure(Exception):
    def __init__(self, result):
        super().__init__(result.label)
        self.result = result


class MissingSolution(pytest.File):
    def collect(self):
        yield LoadError.from_parent(
            self, name="solution", message=f"no reference solution for {self.path.name} in solutions/"
        )


class LoadError(pytest.Item):
    """A puzzle file that cannot be loaded: one failing item with a one-line message."""

    def __init__(self, *, message: str, **kwargs):
        super().__init__(**kwargs)
        self.message = message

    def runtest(self):
        from circuits.checking.checker import PuzzleResult

        self.config.stash[_RESULTS].append(
            (self.parent.nodeid, PuzzleResult.unloaded(self.path, CircuitError(self.message)))
        )
        raise CircuitError(self.message)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CircuitError):
            return Failure(str(excinfo.value), _first_line(str(excinfo.value)))
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}: cannot load"


class PuzzleFile(pytest.File):
    """One puzzle file; its check runs once, the first time one of its items runs."""

    source: Path | None = None  # the file checked, when not `path` itself (--solutions)

    def collect(self):
        from circuits.checking.pipeline import load

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
            item = PuzzleItem.from_parent(self, name=f"{i + 1}. {_short(target.label, NAME_CHARS)}", index=i)
            item.whole_name = f"{i + 1}. {target.label}"  # the name JUnit XML gives it (the node id's is cut)
            yield item

    def result(self):
        if self._result is None:
            from circuits.explain import cached_check

            self._result = cached_check(
                self.attempt,
                not self.config.getoption("circuits_no_cache"),
                margins=not self.config.getoption("--no-margins"),
            )
            self.config.stash[_RESULTS].append((self.nodeid, self._result))
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
            from circuits.display.words import said

            raise pytest.skip.Exception(said(result), _use_item_location=True)
        if result.status in ("failed", "error"):
            raise PuzzleFailure(result)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, PuzzleFailure) and self.config.getoption("tbstyle", "auto") == "line":
            from circuits.display.report import failure_line

            line = failure_line(excinfo.value.result)  # --tb=line: the report's one line, as pytest's own
            return Failure(line, line)
        if isinstance(excinfo.value, PuzzleFailure) and excinfo.value.result.status == "error":
            from circuits.display.report import failure_line

            result = excinfo.value.result  # a mistake in the file: its one line, never wrapped
            return Failure(f"! {result.label}\n{result.error}", failure_line(result))
        if isinstance(excinfo.value, PuzzleFailure):
            from circuits.display.report import failure_line, target_report
            from circuits.display.terminal import console

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
            return Failure(buf.getvalue().rstrip(), failure_line(excinfo.value.result))
        return super().repr_failure(excinfo)

    def reportinfo(self):
        where = f"{self.parent.attempt.puzzle.id} · target {self.index + 1}: "
        room = self.config.get_terminal_writer().fullwidth - len(where) - 6  # the header is "_ where label _"
        label = _short(self.parent.attempt.puzzle.targets[self.index].label, max(room, 20))
        return self.parent.source or self.path, self.parent.answer_line, where + label
