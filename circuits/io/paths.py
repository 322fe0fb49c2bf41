"""Paths a user names, resolved without ever raising: a symlink loop is a fact to report, not a crash."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def real(path) -> Path:
    """The absolute path with symlinks resolved as far as they go (pathlib's resolve() raises on a loop; this never
    does: the links of a loop are left as they are)."""
    return Path(os.path.realpath(path))


def shown(path) -> str:
    """A path as the learner would type it: relative to the working directory when inside it, symlinks kept."""
    for p in (Path(os.path.abspath(path)), real(path)):
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            continue
    return str(path)


def is_loop(path) -> bool:
    """Whether following `path` never reaches a file (a symlink to itself, or a cycle of links)."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno == errno.ELOOP
    return False
