"""The puzzle file a command names (or one line saying why there is none), loaded; and the console it prints to."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from circuits.errors import CircuitError


def _puzzle_file(name: str, solution: bool) -> Path:
    """The puzzle file a command names, or one line saying why there is none (see loader.find for the names)."""
    from circuits.checking.loader import find, reference_for

    if name.isdigit() and not name.isascii():  # '²' passes isdigit(), but int() cannot read it
        raise CircuitError(f"no puzzle named {name!r}: write a puzzle's number with the digits 0-9")
    if name.endswith(".py") or os.sep in name or (os.altsep and os.altsep in name):
        try:
            os.stat(name)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise CircuitError(
                    f"{name}: a symlink loop (it never reaches a file); point it at a puzzle file"
                ) from None
            if e.errno == errno.ENAMETOOLONG:
                raise CircuitError(f"{name[:40]}…: the file name is too long") from None
        else:
            if solution:  # the reference solution of the puzzle that file holds, not the file itself
                ref = reference_for(name)
                if ref is None:
                    raise CircuitError(
                        f"--solution: there is no reference solution for {name} "
                        f"(looked for solutions/{Path(name).name})"
                    )
                return ref
    return find(name, solution)


def _shown(path) -> str:
    """A path as the loader shows it (relative to here), even when it is a symlink loop."""
    from circuits.io import paths

    try:
        return paths.shown(path)
    except (OSError, RuntimeError):  # RuntimeError: pathlib's resolve() on a symlink loop
        return os.path.relpath(path)


def _load(name: str, solution: bool):
    from circuits.checking.pipeline import load

    return load(_puzzle_file(name, solution))


def _console():
    from circuits.display.terminal import console

    return console()
