"""A learner's workspace (`circuits init`): the shipped puzzles' stubs (or a course's), a README and pytest's settings.

Every file is created exclusively: a file already there is the learner's and is kept as it is, so running
init again (after an upgrade, say) only adds what is new.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from circuits.checking import curriculum
from circuits.checking.loader import course_references, recorded_course
from circuits.errors import CircuitError
from circuits.io.paths import real
from circuits.workspace.reset import stub_text


def commands(n: int, example: str) -> str:
    """The README's list of commands, its examples naming puzzle `n` and the input `example`."""
    said = [
        ("circuits watch", "the loop: checks the first unsolved puzzle each time you save it"),
        (f"circuits hint {n}", "hints, one level at a time (--level 2, 3 for more)"),
        (f"circuits check {n}", "one puzzle's full report"),
        (f"circuits show {n} {example}", "one input through your model: heatmaps, yours vs expected"),
        ("circuits list", "every puzzle's status and your progress"),
        (f"circuits reset {n}", "start a puzzle over (your file is backed up first)"),
        ("pytest", "every puzzle: solved / failing / not attempted"),
    ]
    return "".join(f"    {command:<24}# {what}\n" for command, what in said)


README = (
    """\
# My circuits course

Each file in `puzzles/` is a worksheet: read its statement, replace every `FILL_ME_IN(...)` with
your weights (or code, for puzzle 00), and save. The checker always checks the puzzle as shipped:
only your answer is read from the file.

"""
    + commands(1, "abcce")
    + """
New puzzles after an upgrade: run `circuits init` here again; it adds them and never touches
a file that is already here.
"""
)

COURSE_README = """\
# {name}: a circuits course

The puzzles in `puzzles/` come from this course (`pytest.ini` records it: `circuits_course`):

    {course}

Each file is a worksheet: read its statement, replace every `FILL_ME_IN(...)` with your
answer, and save. The statements come from the course's reference files (its `solutions/`):
the statement, givens, targets and inputs are the course's, and only your answer is read
from your file. A given you edit or a target you loosen is named, and your answer is checked
as the course states the puzzle. Every command below, and `pytest`, checks against the
course; your instructor grades with their own copy.

{commands}
New puzzles in the course: run this here again; it adds them and never touches a file that
is already here:

    circuits init . --course {course}
"""

PYTEST_INI = """\
# pytest in this folder checks your puzzles (the circuits plugin): `pytest`, or `pytest puzzles/01_consonants.py`.
# Its cache (for --lf, --ff, --sw) is kept in your user cache folder, never here.
[pytest]
testpaths = puzzles
"""

COURSE_INI = (
    PYTEST_INI.replace("puzzles/01_consonants.py", "puzzles/NN_name.py")
    + """\
# the course whose solutions/ state these puzzles: circuits and pytest check against it
circuits_course = {course}
"""
)


@dataclass
class Created:
    """What init did: the files it wrote, those it found already there (kept untouched) and, where the folder's
    pytest settings live elsewhere (`settings_in`), the pytest.ini it did not write, which would override them."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    settings_in: str | None = None  # the file holding the folder's own pytest settings (pytest.ini not written)
    course: Path | None = None  # `--course`: the course folder the stubs come from
    shipped_wins: list[str] = field(default_factory=list)  # course puzzles with a shipped puzzle's id
    unrecorded: str | None = None  # the settings file kept as it was, which does not record the course


def pytest_settings(folder: Path) -> str | None:
    """The file of `folder` that holds pytest settings of its own (pyproject.toml's [tool.pytest.ini_options],
    tox.ini's [pytest], setup.cfg's [tool:pytest], pytest.toml): a pytest.ini beside it would silently win."""
    import configparser
    import tomllib

    for name in ("pytest.toml", ".pytest.toml"):
        if (folder / name).is_file():
            return name
    try:
        with open(folder / "pyproject.toml", "rb") as f:
            tool = tomllib.load(f).get("tool", {})
        if isinstance(tool, dict) and isinstance(tool.get("pytest"), dict):
            return "pyproject.toml"
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        pass
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(folder / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section(section):
            return name
    return None


def _not_a_folder(folder: Path, course: Path | None) -> None:
    """One line, before anything is written, when a folder the workspace needs is a file."""
    for rel in dict.fromkeys(Path(rel).parent for rel, _ in files(course)):
        path = folder / rel
        if rel != Path(".") and (path.is_file() or (path.exists() and not path.is_dir())):
            raise CircuitError(
                f"{path} is a file, not a folder: the workspace keeps its puzzles in {path}/, so "
                "move or rename that file and run `circuits init` again (nothing was written)"
            )


def files(course: Path | None = None) -> list[tuple[str, str]]:
    """(path relative to the workspace, text) of every file a fresh workspace (of `course`, if given) holds."""
    if course is None:
        refs = [curriculum.folder() / f"{stem}.py" for stem in curriculum.ids()]
        return [*_stubs(refs), ("README.md", README), ("pytest.ini", PYTEST_INI)]
    refs = [curriculum.reference_file(ref) or ref for ref in course_references(course)]  # the shipped one wins
    first = int(course_references(course)[0].stem[:2])  # the commands' examples name the course's first puzzle
    readme = COURSE_README.format(name=course.name, course=course, commands=commands(first, "INPUT"))
    return [*_stubs(refs), ("README.md", readme), ("pytest.ini", COURSE_INI.format(course=course))]


def _stubs(refs: list[Path]) -> list[tuple[str, str]]:
    """Each reference's stub, as `circuits reset` rebuilds it, at puzzles/<its name>."""
    return [(f"puzzles/{ref.name}", stub_text(ref)) for ref in refs]


def shipped_wins(course: Path) -> list[str]:
    """The course's puzzle ids that are shipped puzzles' too: the shipped puzzle is the one checked."""
    return [ref.stem for ref in course_references(course) if curriculum.reference_file(ref) is not None]


def create(folder: Path, course: Path | None = None) -> Created:
    """Write the workspace (of `course`, if given) into `folder`, never over a file (or anything else) that is
    already there."""
    if folder.exists() and not folder.is_dir():
        raise CircuitError(f"{folder} is a file, not a folder: name a new or existing folder for the workspace")
    if course is not None:
        course_references(course)  # one line naming the folder as given, when it is no course
        course = Path(os.path.abspath(course))
    texts = files(course)  # a course that is no course, or a reference with no stub: one line, nothing written
    _not_a_folder(folder, course)
    done = Created(folder, course=course, shipped_wins=shipped_wins(course) if course else [])
    for rel, text in texts:
        path = folder / rel
        if rel == "pytest.ini" and not path.exists() and (settings := pytest_settings(folder)):
            done.settings_in = settings  # a pytest.ini would override the folder's own settings: not written
            continue
        if path.exists() or path.is_symlink():
            done.kept.append(path)
            continue
        _write(path, text, done)
    if course is not None and not _records(folder, course):
        done.unrecorded = done.settings_in or "pytest.ini"
    return done


def _write(path: Path, text: str, done: Created) -> None:
    """Create `path` holding `text`, only if nothing is there (else it is kept)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        done.kept.append(path)
        return
    except OSError as e:
        raise CircuitError(
            f"cannot write {path}: {e.strerror}"
            f"{f' (wrote {len(done.written)} files before it)' if done.written else ''}"
        ) from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    done.written.append(path)


def _records(folder: Path, course: Path) -> bool:
    """Whether the pytest settings `folder` uses record `course`, so every command there checks against it."""
    try:
        recorded = recorded_course(folder)
    except CircuitError:
        return False
    return recorded is not None and real(recorded) == real(course)
