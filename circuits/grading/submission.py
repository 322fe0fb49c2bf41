"""A submission: a folder or a .zip holding puzzle files (NN_name.py, in puzzles/ or at the top), read safely."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from circuits.errors import CircuitError

MAX_FILE = 1 << 20  # one puzzle or helper file: 1 MB is far more than any answer needs
MAX_FILES = 200
PUZZLE = re.compile(r"^(\d\d)_[A-Za-z0-9_]+\.py$")


@dataclass
class Submission:
    student: str
    source: str  # as given on the command line
    files: dict[str, bytes] = field(default_factory=dict)  # file name -> contents (puzzle files and helpers)
    where: str = ""  # how a file is shown: "alice/puzzles/" or "alice.zip:puzzles/"
    notes: list[str] = field(default_factory=list)

    def puzzle_file(self, stem: str) -> str | None:
        """The submission's file for a puzzle id: the same name, else the one file with the same number."""
        if f"{stem}.py" in self.files:
            return f"{stem}.py"
        same = sorted(n for n in self.files if PUZZLE.match(n) and n[:2] == stem[:2])
        return same[0] if len(same) == 1 else None


def student_name(path: Path) -> str:
    path = Path(path)
    return path.name[:-4] if path.suffix.lower() == ".zip" else (path.resolve().name or str(path))


def read(path: str | Path) -> Submission:
    """A submission's .py files (from puzzles/ if it has one, else from the top), or a one-line CircuitError."""
    path = Path(path)
    if path.is_dir():
        return _from_folder(path)
    if path.is_file() and zipfile.is_zipfile(path):
        return _from_zip(path)
    if not path.exists():
        raise CircuitError(f"submission {path}: no such folder or file")
    raise CircuitError(f"submission {path} is neither a folder nor a .zip file")


def _from_folder(path: Path) -> Submission:
    folder = path / "puzzles" if (path / "puzzles").is_dir() else path
    sub = Submission(student_name(path), str(path), where=f"{path.name}/{'puzzles/' if folder != path else ''}")
    for f in sorted(folder.glob("*.py")):
        if len(sub.files) >= MAX_FILES:
            sub.notes.append(f"only the first {MAX_FILES} .py files were read")
            break
        if f.is_symlink() or not f.is_file():
            sub.notes.append(f"{f.name} skipped: not a regular file")
            continue
        if f.stat().st_size > MAX_FILE:
            sub.notes.append(f"{f.name} skipped: larger than {MAX_FILE >> 20} MB")
            continue
        sub.files[f.name] = f.read_bytes()
    return sub


def _from_zip(path: Path) -> Submission:
    sub = Submission(student_name(path), str(path))
    try:
        with zipfile.ZipFile(path) as z:
            infos = [i for i in z.infolist() if not i.is_dir() and i.filename.endswith(".py")
                     and "__MACOSX" not in i.filename]
            base = _base(infos)
            sub.where = f"{path.name}:{base}"
            for info in infos:
                rel = PurePosixPath(info.filename)
                if str(rel.parent) + "/" != base and not (base == "" and str(rel.parent) == "."):
                    continue
                if len(sub.files) >= MAX_FILES:
                    sub.notes.append(f"only the first {MAX_FILES} .py files were read")
                    break
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    sub.notes.append(f"{rel.name} skipped: a symbolic link")
                    continue
                with z.open(info) as f:
                    data = f.read(MAX_FILE + 1)
                if len(data) > MAX_FILE:
                    sub.notes.append(f"{rel.name} skipped: larger than {MAX_FILE >> 20} MB")
                    continue
                sub.files[rel.name] = data
    except (zipfile.BadZipFile, OSError, RuntimeError) as e:  # RuntimeError: an encrypted member
        raise CircuitError(f"submission {path}: cannot read the zip file ({e})") from None
    return sub


def _base(infos) -> str:
    """The zip folder holding the puzzle files: a puzzles/ folder (at any depth) first, else the shallowest."""
    folders = [str(PurePosixPath(i.filename).parent) for i in infos if PUZZLE.match(PurePosixPath(i.filename).name)]
    if not folders:
        return ""
    folders = sorted(set(folders), key=lambda f: (not (f == "puzzles" or f.endswith("/puzzles")), f.count("/"), f))
    return "" if folders[0] == "." else folders[0] + "/"
