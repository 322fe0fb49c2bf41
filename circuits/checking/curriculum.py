"""The shipped curriculum: the reference copy of every puzzle (statement, givens, targets, answer), by its id."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def folder() -> Path | None:
    """The folder of the shipped reference solutions (package data), or None when none is installed."""
    for candidate in (_PACKAGE / "curriculum" / "solutions", _PACKAGE.parent / "solutions"):
        if candidate.is_dir():
            return candidate
    return None


def reference_file(name: str) -> Path | None:
    """The shipped reference file of a puzzle id ("01_consonants", or a file named so), or None: no twin."""
    stem = Path(name).name.removesuffix(".py")
    where = folder()
    if where is None or not (stem[:2].isdigit() and stem[2:3] == "_"):
        return None
    path = where / f"{stem}.py"
    return path if path.is_file() else None
