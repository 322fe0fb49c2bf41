"""The inputs the property test tries while nothing fails, kept on disk once drawn.

hypothesis's derandomized `find` draws the same list every time nothing fails, so the list depends only on
the puzzle's inputs, the number of examples and the versions involved. Kept in the user's cache folder, a
check tries them without importing hypothesis or drawing again; it still runs hypothesis when one of them
fails, to find and shrink the shortest failing input.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

Tokens = list[str]


def _hypothesis_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hypothesis")
    except PackageNotFoundError:
        return "?"


def key(puzzle_id: str, inputs, n_examples: int, source: bytes | None) -> str | None:
    """What the list depends on, hashed: the library, hypothesis, the puzzle file's bytes (its strategy's code)
    and the inputs' settings. None where the settings have no stable text (an object shown by its address)."""
    from circuits.checking.library import library_version

    settings = repr(inputs)
    if source is None or " at 0x" in settings:
        return None
    h = hashlib.sha256()
    for part in (library_version(), _hypothesis_version(), puzzle_id, str(n_examples), settings):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update(source)
    return h.hexdigest()


def folder() -> Path:
    from circuits.checking.library import cache_root

    return cache_root() / "drawn"


def load(name: str | None) -> list[Tokens] | None:
    """The list kept under `name`, or None (none kept, or not one this module wrote)."""
    if name is None:
        return None
    try:
        data = json.loads((folder() / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(data, list) and all(isinstance(s, list) and all(isinstance(t, str) for t in s) for s in data)
    return data if ok else None


def store(name: str | None, tried: list[Tokens]) -> None:
    """Keep `tried` under `name`, written whole or not at all; a folder that cannot be written is no error."""
    if name is None or not all(isinstance(t, str) for s in tried for t in s):
        return
    where = folder()
    tmp = where / f".{name}.{os.getpid()}.tmp"
    try:
        where.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(tried), encoding="utf-8")
        os.replace(tmp, where / f"{name}.json")
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # no folder to hold it: nothing was written
            pass
