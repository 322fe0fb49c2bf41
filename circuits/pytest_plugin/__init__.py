"""The pytest plugin: `pytest puzzles/` collects puzzle files, one test item per target.

A thin adapter over circuits.checking.checker, in the manner of pytest's doctest plugin. It takes over a
folder named puzzles/ or solutions/ when the folder is named on the command line or one of its
NN_*.py files declares a circuits Puzzle, so it never touches other projects' Python files. In such
a folder every NN_*.py entry is a row of the summary, whatever it is (an empty file, a folder, a
broken link): what cannot be loaded is a failing item with one line saying why.

base     a failure as pytest shows it, the stash keys of a run
collect  which folders and files are puzzles, and their nodes
reports  report lines, xdist, the summary table
Here: the options, pytest's cache kept outside the learner's project, and the checks of the ini's settings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from circuits.errors import CircuitError
from circuits.pytest_plugin.base import (  # noqa: F401 - NAME_CHARS and Failure re-exported
    _CONFIG,
    _FOLDERS,
    _NOT_CHECKED,
    _RESULTS,
    NAME_CHARS,
    Failure,
)
from circuits.pytest_plugin.collect import (  # noqa: F401 - the hooks pytest looks for here, and public names
    AnswersDir,
    LoadError,
    MissingSolution,
    NotCollected,
    PuzzleDir,
    PuzzleFailure,
    PuzzleFile,
    PuzzleItem,
    Skipped,
    is_puzzle_file,
    is_puzzle_folder,
    pytest_collect_directory,
    pytest_collect_file,
)
from circuits.pytest_plugin.reports import (  # noqa: F401 - the hooks pytest looks for here
    _received,
    _sent,
    pytest_circuits_trim_summary_line,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
    pytest_xdist_make_scheduler,
    pytest_xdist_node_collection_finished,
)


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
        from circuits.sealed import sandbox

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
