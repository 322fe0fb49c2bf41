"""A learner's workspace (`circuits init`): the shipped puzzles' stubs, a short README and pytest's settings.

Every file is created exclusively: a file already there is the learner's and is kept as it is, so running
init again (after an upgrade, say) only adds what is new.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from circuits.checking import curriculum
from circuits.checking.reset import stub_text
from circuits.errors import CircuitError

README = """\
# My circuits course

Each file in `puzzles/` is a worksheet: read its statement, replace every `FILL_ME_IN(...)` with
your weights (or code, for puzzle 00), and save. The checker always checks the puzzle as shipped:
only your answer is read from the file.

    circuits watch          # the loop: checks the first unsolved puzzle each time you save it
    circuits hint 1         # hints, one level at a time (--level 2, 3 for more)
    circuits check 1        # one puzzle's full report
    circuits show 1 abcce   # one input through your model: heatmaps, yours vs expected
    circuits list           # every puzzle's status and your progress
    circuits reset 1        # start a puzzle over (your file is backed up first)
    pytest                  # every puzzle: solved / failing / not attempted

New puzzles after an upgrade: run `circuits init` here again; it adds them and never touches
a file that is already here.
"""

PYTEST_INI = """\
# pytest in this folder checks your puzzles (the circuits plugin): `pytest`, or `pytest puzzles/01_consonants.py`.
# Its cache (for --lf, --ff, --sw) is kept in your user cache folder, never here.
[pytest]
testpaths = puzzles
"""


@dataclass
class Created:
    """What init did: the files it wrote, those it found already there (kept untouched) and, where the folder's
    pytest settings live elsewhere (`settings_in`), the pytest.ini it did not write, which would override them."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    settings_in: str | None = None  # the file holding the folder's own pytest settings (pytest.ini not written)


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


def _not_a_folder(folder: Path) -> None:
    """One line, before anything is written, when a folder the workspace needs is a file."""
    for rel in dict.fromkeys(Path(rel).parent for rel, _ in files()):
        path = folder / rel
        if rel != Path(".") and (path.is_file() or (path.exists() and not path.is_dir())):
            raise CircuitError(f"{path} is a file, not a folder: the workspace keeps its puzzles in {path}/, so "
                               "move or rename that file and run `circuits init` again (nothing was written)")


def files() -> list[tuple[str, str]]:
    """(path relative to the workspace, text) of every file a fresh workspace holds."""
    stubs = [(f"puzzles/{stem}.py", stub_text(curriculum.folder() / f"{stem}.py")) for stem in curriculum.ids()]
    return [*stubs, ("README.md", README), ("pytest.ini", PYTEST_INI)]


def create(folder: Path) -> Created:
    """Write the workspace into `folder`, never over a file (or anything else) that is already there."""
    if folder.exists() and not folder.is_dir():
        raise CircuitError(f"{folder} is a file, not a folder: name a new or existing folder for the workspace")
    _not_a_folder(folder)
    done = Created(folder)
    for rel, text in files():
        path = folder / rel
        if rel == "pytest.ini" and not path.exists() and (settings := pytest_settings(folder)):
            done.settings_in = settings  # a pytest.ini would override the folder's own settings: not written
            continue
        if path.exists() or path.is_symlink():
            done.kept.append(path)
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            done.kept.append(path)
            continue
        except OSError as e:
            raise CircuitError(f"cannot write {path}: {e.strerror}"
                               f"{f' (wrote {len(done.written)} files before it)' if done.written else ''}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        done.written.append(path)
    return done
