"""A submission: a folder or a .zip holding puzzle files (NN_name.py, in puzzles/ or at the top), read safely.

Nothing in a submission is followed: a symbolic link (a file, a folder, `puzzles/` itself, or the submission)
or a file with a second name (a hard link) is refused with a note, never read. The puzzle files are looked for
in a `puzzles/` folder at any depth, else the shallowest folder holding any; a folder holding none but one .zip
is read from that zip. Whatever a submission holds, reading it never stops the class: what could not be read
is the student's note. Only a path that does not exist (the instructor's typo) stops the run.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from circuits.errors import CircuitError

MAX_FILE = 1 << 20  # one puzzle or helper file: 1 MB is far more than any answer needs
MAX_FILES = 200
MAX_DEPTH = 6  # folders below the submission searched for its puzzle files
MAX_ENTRIES = 20_000  # files and folders looked at in one submission
PUZZLE = re.compile(r"^(\d\d)_[A-Za-z0-9_]+\.py$")
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    OSError,
    EOFError,
    RuntimeError,
    ValueError,
    NotImplementedError,
    zlib.error,
)  # RuntimeError: encrypted; ValueError: a bad name or header


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
    """The folder's or the zip's own name (a link's, not its target's: `.` is the current folder's name)."""
    name = Path(os.path.abspath(path)).name or str(path)
    return name[:-4] if name.lower().endswith(".zip") and not Path(path).is_dir() else name


def read(path: str | Path) -> Submission:
    """A submission's .py files and notes on what was not read; a CircuitError only when `path` does not exist
    or is neither a folder nor a .zip (the instructor's mistake, not the student's)."""
    path = Path(path)
    if path.is_symlink():
        return Submission(
            student_name(path), str(path), notes=[f"{path.name} is a symbolic link: not followed, nothing graded"]
        )
    if path.is_dir():
        return _from_folder(path)
    if not path.exists():
        raise CircuitError(f"submission {path}: no such folder or file")
    if path.suffix.lower() == ".zip" or path.is_file() and zipfile.is_zipfile(path):
        sub = Submission(student_name(path), str(path))
        return _from_zip(path, sub, f"{path.name}:")
    raise CircuitError(f"submission {path} is neither a folder nor a .zip file")


# --- a folder ---------------------------------------------------------------------------------------------------
def _from_folder(path: Path) -> Submission:
    sub = Submission(student_name(path), str(path), where=f"{path.name}/")
    holding, zips, links = _survey(path)
    sub.notes += [f"{rel} is a symbolic link: not followed" for rel in links[:5]]
    if len(links) > 5:
        sub.notes.append(f"{len(links) - 5} more symbolic links: not followed")
    if not holding:
        if len(zips) == 1:
            sub.notes.append(f"no puzzle files in {path.name}/: read from {zips[0]}")
            return _from_zip(path / zips[0], sub, f"{path.name}/{zips[0]}:")
        if zips:
            sub.notes.append(
                f"no puzzle files in {path.name}/ and {len(zips)} zip files ({', '.join(zips[:3])}): "
                "none read; upload one"
            )
        else:
            sub.notes.append(f"no puzzle files (NN_name.py) in {path.name}/ or any folder below it")
        return sub
    chosen = holding[0]
    others = [f for f in holding if f != chosen]
    if others:
        sub.notes.append(
            f"puzzle files also in {', '.join(f or '.' for f in others[:3])}/: not graded (only {chosen or '.'}/ is)"
        )
    folder = path / chosen if chosen else path
    sub.where = f"{path.name}/{chosen + '/' if chosen else ''}"
    for f in sorted(folder.iterdir()):
        if not f.name.endswith(".py") or f.is_symlink():  # a link: noted above
            continue
        if len(sub.files) >= MAX_FILES:
            sub.notes.append(f"only the first {MAX_FILES} .py files were read")
            break
        data, why = _regular(f)
        if why:
            sub.notes.append(f"{f.name} skipped: {why}")
        else:
            sub.files[f.name] = data
    return sub


def _survey(root: Path) -> tuple[list[str], list[str], list[str]]:
    """The folders below root (as relative POSIX paths, "" for root) holding puzzle files, the .zip files at the
    top or one folder down, and every symbolic link met, without following any."""
    holding, zips, links, seen = [], [], [], 0
    stack = [("", 0)]
    while stack and seen < MAX_ENTRIES:
        rel, depth = stack.pop()
        try:
            entries = sorted(os.scandir(root / rel if rel else root), key=lambda e: e.name)
        except OSError:
            continue
        has_puzzles = False
        for e in entries:
            seen += 1
            shown = f"{rel}/{e.name}" if rel else e.name
            if e.is_symlink():
                links.append(shown)
            elif e.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH and not e.name.startswith(".") and e.name != "__MACOSX":
                    stack.append((shown, depth + 1))
            elif PUZZLE.match(e.name):
                has_puzzles = True
            elif e.name.lower().endswith(".zip") and depth <= 1:
                zips.append(shown)
        if has_puzzles:
            holding.append(rel)
    return sorted(holding, key=_rank), sorted(zips), sorted(links)


def _rank(folder: str) -> tuple:
    """A puzzles/ folder (at any depth) first, then the shallowest."""
    return (not (folder == "puzzles" or folder.endswith("/puzzles")), folder.count("/") + bool(folder), folder)


def _regular(f: Path) -> tuple[bytes, str]:
    """A file's bytes, or why it is not read: opened without following a link, one name only, not too large."""
    try:
        fd = os.open(f, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        return b"", "a symbolic link: not followed" if f.is_symlink() else f"unreadable ({e.strerror})"
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b"", "not a regular file"
        if st.st_nlink > 1:
            return b"", f"a hard link (the file has {st.st_nlink} names): not read"
        if st.st_size > MAX_FILE:
            return b"", f"larger than {MAX_FILE >> 20} MB"
        return handle.read(MAX_FILE + 1)[:MAX_FILE], ""


# --- a zip ------------------------------------------------------------------------------------------------------
def _from_zip(path: Path, sub: Submission, shown: str) -> Submission:
    """The zip's puzzle files into `sub`; a zip that cannot be read is the student's note, never the class's end."""
    if path.is_symlink() or not path.is_file():  # never opened: a link is not followed, a FIFO would block
        sub.notes.append(f"{shown.rstrip(':')} is not a regular file: not read; nothing graded")
        return sub
    try:
        with zipfile.ZipFile(path) as z:
            infos = [
                i
                for i in z.infolist()
                if not i.is_dir() and i.filename.endswith(".py") and "__MACOSX" not in i.filename
            ]
            base = _base(infos)
            sub.where = f"{shown}{base}"
            for info in infos:
                rel = _path(info)
                if str(rel.parent) + "/" != base and not (base == "" and str(rel.parent) == "."):
                    continue
                if len(sub.files) >= MAX_FILES:
                    sub.notes.append(f"only the first {MAX_FILES} .py files were read")
                    break
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    sub.notes.append(f"{rel.name} skipped: a symbolic link: not followed")
                    continue
                try:
                    with z.open(info) as f:
                        data = f.read(MAX_FILE + 1)
                except ZIP_ERRORS as e:
                    sub.notes.append(f"{rel.name} skipped: cannot be read from the zip ({_said(e)})")
                    continue
                if len(data) > MAX_FILE:
                    sub.notes.append(f"{rel.name} skipped: larger than {MAX_FILE >> 20} MB")
                    continue
                sub.files[rel.name] = data
    except ZIP_ERRORS as e:
        sub.notes.append(f"{shown.rstrip(':')}: cannot read the zip file ({_said(e)}); nothing graded")
        return sub
    if not any(PUZZLE.match(n) for n in sub.files):
        sub.notes.append(f"no puzzle files (NN_name.py) in {shown.rstrip(':')}")
    return sub


def _path(info: zipfile.ZipInfo) -> PurePosixPath:
    """A member's path; some Windows tools write its folders with backslashes."""
    return PurePosixPath(info.filename.replace("\\", "/"))


def _said(e: BaseException) -> str:
    return " ".join(str(e).split())[:120] or type(e).__name__


def _base(infos) -> str:
    """The zip folder holding the puzzle files ("" for the top, else "a/b/"), chosen as in a folder."""
    folders = {str(_path(i).parent) for i in infos if PUZZLE.match(_path(i).name)}
    chosen = sorted(("" if f == "." else f for f in folders), key=_rank)
    return chosen[0] + "/" if chosen and chosen[0] else ""
