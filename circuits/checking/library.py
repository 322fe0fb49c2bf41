"""What this installed library is and where it keeps what it computes: its version with a hash of its source, and
the user's cache folder for circuits."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_LIBRARY: list[str] = []


def cache_root() -> Path:
    """$XDG_CACHE_HOME/circuits, or ~/.cache/circuits (a relative XDG path is ignored, as the spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if base and os.path.isabs(base) else Path.home() / ".cache") / "circuits"


def library_version() -> str:
    """The version and a hash of the library's own source: an edited library (an editable install) is a new version."""
    if not _LIBRARY:
        h = hashlib.sha256()
        package = Path(__file__).resolve().parents[1]  # the whole circuits package (its __version__ included)
        for f in sorted(package.rglob("*.py")):
            h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes())
        _LIBRARY.append(f"{_installed()}+{h.hexdigest()[:16]}")
    return _LIBRARY[0]


def _installed() -> str:
    """The distribution's version as installed (without importing circuits, which imports this module)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("circuits-workbench")
    except PackageNotFoundError:
        return "0"
