"""The verdict cache: a solved puzzle whose file and library are unchanged is not checked again."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from circuits.checking.checker import Coverage, PuzzleResult, TargetResult, check

FORMAT = 1  # bump when the stored entry changes shape


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/circuits/verdicts, or ~/.cache/circuits/verdicts (a relative XDG path is ignored, as the spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "circuits" / "verdicts"


_LIBRARY: list[str] = []


def library_version() -> str:
    """The version and a hash of the library's own source: an edited library (an editable install) is a new version."""
    if not _LIBRARY:
        from circuits import __version__

        h = hashlib.sha256(__version__.encode())
        package = Path(__file__).resolve().parents[1]  # the whole circuits package, not just checking/
        for f in sorted(package.rglob("*.py")):
            h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes())
        _LIBRARY.append(f"{__version__}+{h.hexdigest()[:16]}")
    return _LIBRARY[0]


class _Margins:
    """A cached margin measurement: only its description is kept."""

    def __init__(self, text: str):
        self.text = text

    def describe(self) -> str:
        return self.text


def _key(attempt) -> str:
    """The file's content, the library, the puzzle, which folder, and the time limits the check ran under."""
    from circuits.checking.limits import ENV

    h = hashlib.sha256(attempt.path.read_bytes())
    for read in attempt.reads:  # a helper module or data file the puzzle file read decides the verdict too
        h.update(b"\0" + str(read).encode() + b"\0" + hashlib.sha256(Path(read).read_bytes()).digest())
    for part in (library_version(), attempt.puzzle.id, attempt.path.parent.name,
                 *(os.environ.get(v, "") for v in sorted(ENV.values())), str(FORMAT)):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def _deep_enough(stored: dict, n_random, property_examples: int, margins: bool) -> bool:
    """A stored verdict answers a request when it checked at least as much (None = the puzzle's full random count)."""
    if margins and not stored["margins_measured"]:
        return False
    if stored["n_random"] is not None and (n_random is None or stored["n_random"] < n_random):
        return False
    return stored["property_examples"] >= property_examples


def lookup(attempt, n_random=None, property_examples: int = 100, margins: bool = True) -> PuzzleResult | None:
    """The cached solved verdict of this file, if one checked at least this much; else None."""
    try:
        entry = json.loads((cache_dir() / f"{_key(attempt)}.json").read_text(encoding="utf-8"))
        if not _deep_enough(entry, n_random, property_examples, margins):
            return None
        targets = [TargetResult(t["label"], t["kind"], "passed", worst=t["worst"], metric=t["metric"],
                                checked=t["checked"]) for t in entry["targets"]]
        coverage = Coverage(**{**entry["coverage"], "lengths": tuple(entry["coverage"]["lengths"])})
    except (OSError, ValueError, KeyError, TypeError):  # no entry, or one this version cannot read: check again
        return None
    result = PuzzleResult(attempt, "solved", targets, coverage, seconds=entry["seconds"],
                          margins=_Margins(entry["margins"]) if entry["margins"] else None)
    result.cached = True
    return result


def store(result: PuzzleResult, n_random=None, property_examples: int = 100, margins: bool = True,
          checked_key: str | None = None) -> None:
    """Keep a solved verdict (only solved ones: a failure is always shown fresh); a cache that cannot be written is
    skipped, and so is a file saved again while it was being checked (its key no longer `checked_key`)."""
    if result.status != "solved" or result.attempt is None:
        return
    try:
        key = _key(result.attempt)
        if checked_key is not None and key != checked_key:
            return
        folder = cache_dir()
        old = folder / f"{key}.json"
        if old.exists() and lookup(result.attempt, n_random, property_examples, margins) is None:
            pass  # the old entry checked less: replace it
        elif old.exists():
            return  # an entry at least as deep is there already
        entry = {"puzzle": result.attempt.puzzle.id, "library": library_version(), "n_random": n_random,
                 "property_examples": property_examples, "seconds": result.seconds, "margins_measured": margins,
                 "margins": result.margins.describe() if margins and result.margins is not None else None,
                 "coverage": {k: v for k, v in vars(result.coverage).items()},
                 "targets": [{"label": t.label, "kind": t.kind, "worst": t.worst, "metric": t.metric,
                              "checked": t.checked} for t in result.targets]}
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, old)
    except (OSError, TypeError, ValueError):  # a read-only or full cache only costs speed
        return


def cached_check(attempt, use_cache: bool = True, n_random=None, property_examples: int = 100,
                 margins: bool = True) -> PuzzleResult:
    """checker.check, answered from the cache when this exact file was solved before with this library."""
    key = None
    if use_cache:
        hit = lookup(attempt, n_random, property_examples, margins)
        if hit is not None:
            return hit
        try:
            key = _key(attempt)
        except OSError:
            use_cache = False
    result = check(attempt, n_random=n_random, property_examples=property_examples, margins=margins)
    if use_cache:
        store(result, n_random, property_examples, margins, checked_key=key)
    return result
