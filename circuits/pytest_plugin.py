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
import types
from pathlib import Path

import pytest

from circuits.errors import CircuitError


class Failure:
    """A failure as pytest shows it: the report, and its one-line summary as the crash message.

    The line is whole where a program reads it (JUnit's failure message, for autograders); for the terminal's
    short summary it is trimmed to the width once every other plugin has seen the report (pytest pastes it
    untrimmed on CI). A plain string longrepr would be pasted whole into that summary.
    """

    def __init__(self, text: str, line: str):
        self.text = text
        self.reprcrash = _Crash(line)

    def toterminal(self, out) -> None:
        for line in self.text.splitlines():
            out.line(line)

    def __str__(self) -> str:
        return self.text


class _Crash:
    def __init__(self, message: str):
        self.message = message

    def __str__(self) -> str:  # --tb=line prints it
        return self.message


def _first_line(text: str) -> str:
    return (re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines() or [""])[0]


_RESULTS = pytest.StashKey[list]()
_NOT_CHECKED = pytest.StashKey[list]()  # files that look like puzzles in folders the plugin does not take over
_NAME = re.compile(r"^\d\d_.*\.py$")  # as loader.puzzle_files globs: [0-9][0-9]_*.py
_FOLDERS = ("puzzles", "solutions")
NAME_CHARS = 28  # of a target's label in its test name: "FAILED puzzles/NN_longest_name.py::2. …" fits 80 columns


def pytest_addoption(parser):
    group = parser.getgroup("circuits", "circuits puzzles")
    group.addoption(
        "--solutions",
        action="store_true",
        default=False,
        help="check the reference solutions (solutions/NN_*.py) instead of your puzzle files",
    )
    group.addoption(
        "--no-margins", action="store_true", default=False, help="skip the margin search on solved puzzles (faster)"
    )
    parser.addini(
        "circuits_paths",
        type="paths",
        default=[],
        help="folders of circuits puzzle files besides puzzles/ and solutions/ (relative to the ini file)",
    )
    parser.addini(
        "circuits_course",
        default="",
        help="the course folder whose solutions/ state these puzzles (`circuits init --course` writes it)",
    )
    group.addoption(
        "--no-cache",
        action="store_true",
        default=False,
        dest="circuits_no_cache",
        help="check again even puzzles solved before with this exact file (the verdict cache is in "
        "$XDG_CACHE_HOME/circuits)",
    )


# --- pytest's own cache (--lf, --ff, --sw) kept outside the learner's project ---------------------------------
_CACHE_HOME = pytest.StashKey[Path]()


def user_cache_home() -> Path:
    """$XDG_CACHE_HOME, or ~/.cache (a relative XDG path is ignored, as the spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"


def project_cache_dir(rootpath: Path, home: Path | None = None) -> Path:
    """Where pytest's cache of a circuits project goes: circuits/pytest/<folder name>-<hash of its path> in the
    user's cache folder, one per project, so nothing is written beside the learner's files."""
    import hashlib

    root = Path(rootpath).resolve()
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return (home or user_cache_home()) / "circuits" / "pytest" / f"{root.name or 'root'}-{digest}"


def _is_circuits_project(config) -> bool:
    """A root folder with puzzles/ or solutions/ (or one of them itself, when no ini file fixed the root:
    `pytest puzzles/`), or whose ini lists circuits_paths."""
    root = config.rootpath  # decided by names alone: reading a learner's files here would read them on every run
    return bool(config.getini("circuits_paths")) or root.name in _FOLDERS or any((root / n).is_dir() for n in _FOLDERS)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """The user's cache folder as pytest was started, before a conftest changes the environment (the project's own
    test suite points XDG_CACHE_HOME at a temporary folder for what it checks)."""
    early_config.stash[_CACHE_HOME] = user_cache_home()
    return (yield)


@pytest.hookimpl(tryfirst=True)  # before the cache provider's own tryfirst one: plugins registered later go first
def pytest_configure(config):
    """Before the cache provider opens its cache: in a circuits project whose ini does not name a cache_dir, the
    cache goes to the user's cache folder (an xdist worker uses its controller's)."""
    if (
        config.pluginmanager.has_plugin("cacheprovider")
        and config.getini("cache_dir") == ".pytest_cache"
        and hasattr(config, "_inicache")
    ):
        given = getattr(config, "workerinput", {}).get("circuits_cache_dir")
        if given or _is_circuits_project(config):
            home = config.stash.get(_CACHE_HOME, None) or user_cache_home()
            config.stash[_CACHE_DIR] = given or str(project_cache_dir(config.rootpath, home))
            config._inicache["cache_dir"] = config.stash[_CACHE_DIR]
    config.stash[_RESULTS] = []  # (the file's node id, its PuzzleResult)
    config.stash[_NOT_CHECKED] = []
    _CONFIG.append(config)
    _check_paths(config)
    _check_course(config)


_CACHE_DIR = pytest.StashKey[str]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """An xdist worker reads and writes the controller's cache folder (--lf under -n)."""
    if _CACHE_DIR in node.config.stash:
        node.workerinput["circuits_cache_dir"] = node.config.stash[_CACHE_DIR]


def pytest_unconfigure(config):
    if config in _CONFIG:
        _CONFIG.remove(config)
    if not _CONFIG:  # the warm process that ran the puzzle files ends with the run (an inline run's too)
        from circuits.checking.sealed import sandbox

        sandbox.stop_warm()


def _check_paths(config) -> None:
    """Every folder circuits_paths lists exists and is a folder: a typo would leave its puzzles unchecked in silence,
    so it is a usage error (one line, exit 4), as pytest's own for a bad option."""
    from circuits.io import paths
    from circuits.io.paths import is_loop

    where = f"circuits_paths in {paths.shown(config.inipath)}" if config.inipath else "circuits_paths"
    for p in config.getini("circuits_paths"):
        shown = paths.shown(p)
        if is_loop(p):
            raise pytest.UsageError(
                f"{where}: {shown} is a symlink loop (it never reaches a folder); list folders of puzzle files"
            )
        if not os.path.exists(p):
            raise pytest.UsageError(f"{where}: {shown} does not exist (a typo?); list folders of puzzle files")
        if not os.path.isdir(p):
            raise pytest.UsageError(
                f"{where}: {shown} is a file, not a folder; list folders of puzzle files (a "
                "puzzle file elsewhere is checked when named: pytest path/NN_name.py)"
            )


def _check_course(config) -> None:
    """The folder circuits_course records is a course: else every puzzle would fail on the same line, so it is a
    usage error (one line, exit 4), as a bad circuits_paths is."""
    from circuits.checking.loader import course_references
    from circuits.io import paths

    raw = (config.getini("circuits_course") or "").strip()
    if raw and config.inipath is not None:
        try:
            course_references(config.inipath.parent / raw, f"circuits_course in {paths.shown(config.inipath)}:", raw)
        except CircuitError as e:
            raise pytest.UsageError(str(e)) from None


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
        from circuits.checking.sealed import sandbox

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
            from circuits.checking.cache import cached_check

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
            from circuits.display.render import console
            from circuits.display.report import failure_line, target_report

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


# --- reports: whole lines for programs, trimmed lines for the terminal, the same under xdist -------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Facts a report carries to the controller under xdist (a worker sends a custom longrepr as its text)."""
    report = yield
    if isinstance(report.longrepr, Failure):
        report.circuits_line = report.longrepr.reprcrash.message
    if isinstance(item, PuzzleItem):
        report.circuits_name = item.whole_name
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    """Before JUnit XML reads the report: its failure line back (under xdist it came as text) and its whole name."""
    line = getattr(report, "circuits_line", None)
    if line is not None and isinstance(report.longrepr, str):
        report.longrepr = Failure(report.longrepr, line)
    name = getattr(report, "circuits_name", None)
    xml = _junit_xml() if name else None
    if xml is not None:
        xml.node_reporter(report).add_attribute("name", name)


@pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
def pytest_circuits_trim_summary_line(report):  # named pytest_*: pytest reads hook options only there
    """After every plugin has the whole line: trimmed so "FAILED <node id> - <line>" fits the terminal."""
    if isinstance(report.longrepr, Failure) and report.longrepr.reprcrash is not None and _CONFIG:
        room = _CONFIG[-1].get_terminal_writer().fullwidth - len(f"FAILED {report.nodeid} - ")
        first = report.longrepr.reprcrash.message
        if room < 8:  # no summary message at all: the node id alone fills the line
            report.longrepr.reprcrash = None
        elif len(first) > room:
            report.longrepr.reprcrash = _Crash(first[: room - 1] + "…")


_CONFIG: list = []  # the running session's config, for hooks that are given only a report


def _junit_xml():
    if not _CONFIG:
        return None
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # a pytest without it: the name stays the node id's
        return None
    return _CONFIG[-1].stash.get(xml_key, None)


# --- xdist: a puzzle file's targets on one worker, the summary on the controller ----------------------------
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist load, loadgroup or worksteal would split a puzzle file's targets over workers, and each would check
    the whole file: keep each NN_*.py file's items together, everything else scheduled as asked."""
    if config.getoption("dist", "no") not in ("load", "loadgroup", "worksteal"):
        return None  # loadscope and loadfile keep files whole already; each and no do not split
    from xdist.scheduler import LoadScopeScheduling

    class PuzzleFileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # an xdist_group mark, as --dist loadgroup reads it
                return nodeid.split("@")[-1]
            file = nodeid.split("::", 1)[0]
            return file if _NAME.match(Path(file).name) else nodeid

    return PuzzleFileScheduling(config, log)


_ORDER = pytest.StashKey[dict]()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """The collection order, so the controller's summary lists puzzles as a serial run does."""
    order = node.config.stash.setdefault(_ORDER, {})
    for nodeid in ids:
        order.setdefault(nodeid.split("::", 1)[0], len(order))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A worker is done: its puzzles' summary rows join the controller's."""
    sent = getattr(node, "workeroutput", {}).get("circuits", [])
    node.config.stash[_RESULTS].extend((facts["nodeid"], _received(facts)) for facts in sent)


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # an xdist worker: send the rows, as plain data
        session.config.workeroutput["circuits"] = [_sent(nodeid, r) for nodeid, r in session.config.stash[_RESULTS]]


def _sent(nodeid: str, r) -> dict:
    """What the summary table and the progress line read of a result, as data execnet can carry: the result's
    `to_dict` and the parts of its file the summary reads."""
    a = r.attempt
    return {
        "nodeid": nodeid,
        "result": r.to_dict(),
        "path": str(a.path) if a else None,
        "missing": list(a.missing) if a else [],
        "difficulty": a.puzzle.difficulty if a else None,
        "minutes": a.puzzle.minutes if a else None,
        "edits": [[e.name, e.line, e.removed] for e in a.edits] if a else [],
    }


class _Received:
    """The parts of an Attempt the summary reads, for a result checked on an xdist worker."""

    def __init__(self, facts: dict):
        from circuits.checking.givens import Edit

        self.path = Path(facts["path"])
        self.missing = facts["missing"]
        self.puzzle = types.SimpleNamespace(
            id=facts["result"]["puzzle"], difficulty=facts.get("difficulty"), minutes=facts.get("minutes")
        )
        self.edits = [Edit(name, line, removed) for name, line, removed in facts.get("edits", [])]


def _received(facts: dict):
    """A worker's result rebuilt from its facts: the same classes, so the summary says it in the same words."""
    from circuits.checking.results import PuzzleResult

    return PuzzleResult.from_dict(facts["result"], _Received(facts) if facts["path"] else None)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workerinput"):
        return
    for said in config.stash.get(_NOT_CHECKED, []):
        terminalreporter.write_line(f"circuits: {said}", yellow=True)
    order = config.stash.get(_ORDER, {})
    rows = {}
    for nodeid, r in config.stash.get(_RESULTS, []):  # one row per file (--dist each checks it on every worker)
        rows.setdefault(nodeid, r)
    if order:  # under xdist: as a serial run would list them
        rows = {n: rows[n] for n in sorted(rows, key=lambda n: (order.get(n, len(order)), n))}
    results = list(rows.values())
    if results:
        _summary(terminalreporter, config, results)
    from circuits.checking.limits import take_warnings, warnings_line
    from circuits.io import paths

    warned = warnings_line(take_warnings(), paths.shown)
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
