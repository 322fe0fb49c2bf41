"""Where puzzle files are: a project's puzzles/ and solutions/, the folders its pytest configuration declares, a
course's references, and the reference a learner's file stands for."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from circuits.checking import curriculum
from circuits.errors import CircuitError
from circuits.io import paths


def _root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "puzzles").is_dir() or (d / "solutions").is_dir():
            return d
    return here


def puzzle_files(solutions: bool = False, root: Path | None = None) -> list[Path]:
    """The puzzle files of this project or workspace: puzzles/ (or solutions/), and, for puzzles, every folder its
    pytest configuration declares in `circuits_paths`, in order of their names."""
    files = list(puzzle_folder(solutions, root).glob("[0-9][0-9]_*.py"))
    if not solutions:
        files += [p for folder in declared_folders(root) for p in folder.glob("[0-9][0-9]_*.py")]
    return sorted(dict.fromkeys(files), key=lambda p: (p.name, str(p)))


INI_FILES = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", None),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


def declared_folders(start: Path | None = None) -> list[Path]:
    """The folders `circuits_paths` names in the pytest configuration pytest would use from `start` (as pytest finds
    it: the first pytest.ini, pyproject.toml with [tool.pytest.ini_options], tox.ini or setup.cfg going up).
    A name that is not a folder is one CircuitError line, never silence."""
    found = nearest_settings(start)
    if found is None:
        return []
    ini, options = found
    raw = options.get("circuits_paths", [])
    if isinstance(raw, str):
        names = [raw] if ini.name == "pyproject.toml" else raw.split()
    else:
        names = [str(v) for v in raw]
    folders = []
    for name in names:
        folder = ini.parent / name
        if not folder.is_dir():
            what = "a file" if folder.is_file() else "not there"
            raise CircuitError(
                f"{paths.shown(ini)}: circuits_paths names {name}, which is {what}; it lists folders of puzzle files"
            )
        folders.append(folder)
    return folders


def nearest_settings(start: Path | None = None) -> tuple[Path, dict] | None:
    """The pytest configuration file pytest would use from `start`, and its options; None when there is none."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        for name, section in INI_FILES:
            ini = d / name
            if ini.is_file() and (options := _ini_options(ini, section)) is not None:
                return ini, options
    return None


def _ini_options(ini: Path, section: str | None) -> dict | None:
    """The pytest options of one configuration file; None when it has no pytest section (pytest looks on)."""
    import configparser
    import tomllib

    try:
        if section is None:
            with open(ini, "rb") as f:
                table = tomllib.load(f).get("tool", {}).get("pytest", {}).get("ini_options")
            return dict(table) if isinstance(table, dict) else None
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(ini, encoding="utf-8")
    except (OSError, ValueError, configparser.Error) as e:  # tomllib's errors are ValueErrors
        raise CircuitError(f"{paths.shown(ini)} cannot be read: {e}") from None
    if not parser.has_section(section):
        return {} if ini.name == "pytest.ini" else None  # pytest.ini counts even without its section
    return dict(parser.items(section))


def puzzle_folder(solutions: bool = False, root: Path | None = None) -> Path:
    """puzzles/ or solutions/ of the project; a workspace made by `circuits init` has no solutions/ of its own,
    so its reference solutions are its course's (`circuits_course`), else the shipped ones."""
    folder = _root(root) / ("solutions" if solutions else "puzzles")
    if not solutions or folder.is_dir():
        return folder
    course = recorded_course(_root(root))
    return course / "solutions" if course is not None else curriculum.folder()


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
    where = paths.shown(puzzle_folder(solutions, root))
    hint = (
        f"; did you mean {', '.join(map(repr, close))}?"
        if close
        else f"; the puzzles in {where} are: {', '.join(stems) or 'none'}"
    )
    raise CircuitError(f"no puzzle named {name!r}{hint}")


COURSE_ENV = "CIRCUITS_COURSE"  # a course folder (holding solutions/) whose references state its puzzles
COURSE_OPTION = "circuits_course"  # the same, recorded in a workspace's pytest.ini by `circuits init --course`


def course_references(folder: str | Path, said: str = "--course", named: str | None = None) -> list[Path]:
    """A course's reference files (its solutions/NN_name.py), or one line naming the folder that is no course
    (as `said` names it: `named`, else `folder`)."""
    where = Path(folder)
    refs = (
        sorted(p for p in (where / "solutions").glob("[0-9][0-9]_*.py") if p.is_file())
        if (where / "solutions").is_dir()
        else []
    )
    if not refs:
        raise CircuitError(f"{said} {named or folder} is no course: it has no solutions/NN_name.py")
    return refs


def recorded_course(start: Path | None = None) -> Path | None:
    """The course folder the pytest configuration above `start` records in `circuits_course` (relative to that
    file), or None; a name that is no course is one line naming the file."""
    found = nearest_settings(start)
    raw = found[1].get(COURSE_OPTION) if found else None
    if not raw or not isinstance(raw, str):
        return None
    folder = found[0].parent / raw.strip()
    course_references(folder, f"{paths.shown(found[0])}: {COURSE_OPTION}", raw.strip())
    return folder


def course_twin(path: str | Path) -> Path | None:
    """The course reference a learner's file stands for: solutions/<name> beside its folder, in the course its
    workspace records (`circuits_course`), or in the course folder $CIRCUITS_COURSE names; never the file
    itself, nor a file in a solutions/ folder (a reference)."""
    path = Path(path)
    if (
        not curriculum.is_id(path.stem)
        or path.suffix != ".py"
        or Path(os.path.abspath(path)).parent.name == "solutions"
    ):
        return None
    places = [Path(os.path.abspath(path)).parent.parent / "solutions" / path.name]
    if (course := recorded_course(Path(os.path.abspath(path)).parent)) is not None:
        places.append(course / "solutions" / path.name)
    if os.environ.get(COURSE_ENV):
        places.append(Path(os.environ[COURSE_ENV]) / "solutions" / path.name)
    for ref in places:
        if ref.is_file() and paths.real(ref) != paths.real(path):
            return Path(os.path.abspath(ref))
    return None


def reference_for(path: str | Path) -> Path | None:
    """The reference file of a puzzle file: the shipped one of its id, else solutions/<name> beside its folder."""
    path = Path(path)
    shipped = curriculum.reference_file(path)
    if shipped is not None:
        return shipped
    sibling = Path(os.path.abspath(path)).parent.parent / "solutions" / path.name
    if sibling.exists() or sibling.is_symlink():
        return sibling
    return course_twin(path)
