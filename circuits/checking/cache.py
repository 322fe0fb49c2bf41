"""The verdict cache: a solved puzzle whose file and library are unchanged is not checked again."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from circuits.checking.checker import check
from circuits.checking.library import cache_root, library_version
from circuits.checking.results import PuzzleResult, readable, typed

FORMAT = (
    3  # bump when the stored entry changes shape (2: coverage and margins as facts, not words; 3: PuzzleResult.to_dict)
)


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/circuits/verdicts, or ~/.cache/circuits/verdicts (a relative XDG path is ignored, as the spec
    says)."""
    return cache_root() / "verdicts"


def _key(attempt) -> str:
    """The bytes that were checked (loaded once, hashed then), the library, the puzzle, which folder, and the time
    limits the check ran under. Never the file as it is now: it may have been saved again during the check."""
    from circuits.limits import ENV

    digest = getattr(attempt, "digest", "") or hashlib.sha256(attempt.path.read_bytes()).hexdigest()
    h = hashlib.sha256(digest.encode())  # the bytes that were checked, not the file as it is now
    for read in attempt.reads:  # a helper module or data file the puzzle file read decides the verdict too
        h.update(b"\0" + str(read).encode() + b"\0" + hashlib.sha256(Path(read).read_bytes()).digest())
    for part in (
        library_version(),
        attempt.puzzle.id,
        attempt.path.parent.name,
        *(os.environ.get(ENV[w], "") for w in ("check", "import", "target")),
        str(FORMAT),
    ):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


MAX_ENTRY_BYTES = 2**20  # a stored verdict is a few kB; anything larger is not one of ours


def _read_entry(path: Path) -> bytes | None:
    """The bytes of a cache entry if it is a small regular file, else None: a FIFO, a device, a folder or a symlink
    is never waited on or followed (O_NONBLOCK, O_NOFOLLOW), so a planted entry cannot hang or redirect a check."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


_ENTRY = {  # what a stored verdict holds beside its result (PuzzleResult.to_dict)
    "library": str,
    "n_random": (int, type(None)),
    "property_examples": int,
    "margins_measured": bool,
}


def valid_entry(entry, attempt) -> bool:
    """A stored solved verdict of this puzzle, every field of the type this version writes; anything else is not one."""
    return (
        typed(entry, _ENTRY, exact=False)
        and readable(entry)
        and entry["puzzle"] == attempt.puzzle.id
        and entry["library"] == library_version()
        and entry["status"] == "solved"
        and all(t["status"] == "passed" for t in entry["targets"])
        and [t["label"] for t in entry["targets"]] == [t.label for t in attempt.puzzle.targets]
    )


def _deep_enough(stored: dict, n_random, property_examples: int, margins: bool) -> bool:
    """A stored verdict answers a request when it checked at least as much (None = the puzzle's full random count)."""
    if margins and not stored["margins_measured"]:
        return False
    if stored["n_random"] is not None and (n_random is None or stored["n_random"] < n_random):
        return False
    return stored["property_examples"] >= property_examples


def lookup(attempt, n_random=None, property_examples: int = 100, margins: bool = True) -> PuzzleResult | None:
    """The cached solved verdict of this file, if one checked at least this much; else None.

    An entry is a hint, never trusted: one that is not a small regular file of valid JSON with every field of the
    right type (or any error reading it) is "not cached", and the puzzle is checked again."""
    try:
        raw = _read_entry(cache_dir() / f"{_key(attempt)}.json")
        entry = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (OSError, ValueError, RecursionError):
        return None
    if not valid_entry(entry, attempt) or not _deep_enough(entry, n_random, property_examples, margins):
        return None
    result = PuzzleResult.from_dict(entry, attempt)
    result.cached = True
    return result


def store(result: PuzzleResult, n_random=None, property_examples: int = 100, margins: bool = True) -> None:
    """Keep a solved verdict (only solved ones: a failure is always shown fresh), keyed by the bytes that were
    checked; a cache that cannot be written is skipped."""
    if result.status != "solved" or result.attempt is None:
        return
    try:
        key = _key(result.attempt)
        folder = cache_dir()
        old = folder / f"{key}.json"
        if lookup(result.attempt, n_random, property_examples, margins) is not None:
            return  # an entry at least as deep is there already
        entry = {
            "library": library_version(),
            "n_random": n_random,
            "property_examples": property_examples,
            "margins_measured": margins,
            **result.to_dict(),
        }
        if not margins:
            entry["margins"] = None  # margins not asked for are not said from the cache either
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, old)  # whole, never half written; an entry that is a folder stays (not cached)
        finally:
            if tmp.exists():
                tmp.unlink()
    except (OSError, TypeError, ValueError):  # a read-only or full cache only costs speed
        return


def cached_check(
    attempt, use_cache: bool = True, n_random=None, property_examples: int = 100, margins: bool = True
) -> PuzzleResult:
    """checker.check, answered from the cache when this exact file was solved before with this library."""
    if use_cache:
        hit = lookup(attempt, n_random, property_examples, margins)
        if hit is not None:
            return hit
    result = check(attempt, n_random=n_random, property_examples=property_examples, margins=margins)
    if use_cache:
        store(result, n_random, property_examples, margins)
    return result
