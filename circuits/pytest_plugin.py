"""The pytest plugin: `pytest puzzles/` collects puzzle files, one test item per target.

A thin adapter over circuits.checker, in the manner of pytest's doctest plugin. It only
collects files named NN_*.py inside a folder named puzzles/ or solutions/ that declare a
circuits Puzzle, so it never touches other projects' Python files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .errors import CircuitError

_RESULTS = pytest.StashKey[list]()
_NAME = re.compile(r"^\d\d_\w+\.py$")


def pytest_addoption(parser):
    group = parser.getgroup("circuits", "circuits puzzles")
    group.addoption("--solutions", action="store_true", default=False,
                    help="check the reference solutions (solutions/NN_*.py) instead of your puzzle files")
    group.addoption("--no-margins", action="store_true", default=False,
                    help="skip the margin search on solved puzzles (faster)")


def pytest_configure(config):
    config.stash[_RESULTS] = []


def is_puzzle_file(path: Path) -> bool:
    if path.suffix != ".py" or path.parent.name not in ("puzzles", "solutions") or not _NAME.match(path.name):
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "circuits" in head and "Puzzle(" in head


def pytest_collect_file(file_path: Path, parent):
    if not is_puzzle_file(file_path):
        return None
    if parent.config.getoption("--solutions") and file_path.parent.name == "puzzles":
        twin = file_path.parent.parent / "solutions" / file_path.name
        if not twin.exists():
            return MissingSolution.from_parent(parent, path=file_path)
        file_path = twin
    elif not parent.config.getoption("--solutions") and file_path.parent.name == "solutions":
        pass  # asked for explicitly: `pytest solutions/` checks the solutions
    return PuzzleFile.from_parent(parent, path=file_path)


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
        raise CircuitError(self.message)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CircuitError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}: cannot load"


class PuzzleFile(pytest.File):
    """One puzzle file; its check runs once, the first time one of its items runs."""

    def collect(self):
        from .loader import load

        try:
            self.attempt = load(self.path)
        except CircuitError as e:
            yield LoadError.from_parent(self, name="load", message=str(e))
            return
        self._result = None
        lines = self.path.read_text(encoding="utf-8").splitlines()
        self.answer_line = next((n for n, line in enumerate(lines) if line.startswith("# ── your answer")), 0)
        for i, target in enumerate(self.attempt.puzzle.targets):
            yield PuzzleItem.from_parent(self, name=f"{i + 1}. {_short(target.label)}", index=i)

    def result(self):
        if self._result is None:
            from .checker import check

            self._result = check(self.attempt, margins=not self.config.getoption("--no-margins"))
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
            return f"! {result.label}\n{result.message}"
        if isinstance(excinfo.value, PuzzleFailure):
            from .render import console
            from .report import target_report

            markup = self.config.get_terminal_writer().hasmarkup
            import io

            buf = io.StringIO()
            c = console(file=buf, color=markup, width=max(100, self.config.get_terminal_writer().fullwidth))
            c.print(target_report(excinfo.value.result))
            return buf.getvalue().rstrip()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.parent.answer_line, f"{self.parent.attempt.puzzle.id} · target {self.index + 1}: {self.parent.attempt.puzzle.targets[self.index].label}"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    import io

    from .render import console
    from .report import summary_table

    buf = io.StringIO()
    width = max(100, terminalreporter._tw.fullwidth)
    c = console(file=buf, color=terminalreporter._tw.hasmarkup, width=width)
    which = "solutions" if config.getoption("--solutions") else "your puzzles"
    c.print(summary_table(results, title=f"circuits · {which}"))
    terminalreporter.write("\n" + buf.getvalue())
