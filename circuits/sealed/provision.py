"""What a learner's process is given: the private runtime copy, the paths it may read, its rlimits, its environment.

The paths it may read never include the grader's own circuits package or the reference solutions; the limits are
set by the child on itself (child.py) before any learner's code runs. See sandbox.py for the whole picture.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from circuits import limits as checking_limits
from circuits.checking.library import cache_root

START_SECONDS = 60.0  # the process's own start (Python, numpy, sympy, circuits), before any file of the submission
POLL = 0.1  # seconds between two looks at the process's clock while it is quiet


@dataclass(frozen=True)
class Limits:
    seconds: float = 10.0  # the process's own time, per puzzle file (its import and, for the code puzzle, its calls)
    memory_mb: int = 2048  # address space of the submission's process
    file_mb: int = 16  # the largest file it may write (its printed output included)
    processes: int = 16  # forks and threads beyond what the user runs now (not enforceable for root)


_RUNTIME: list[str] = []
PACKAGE = Path(__file__).resolve().parents[1]  # the circuits package this process runs (sealed/ is one below)


def runtime() -> str:
    """A private copy of the circuits package without the curriculum (the reference solutions): what a learner's
    process imports. Kept in the user's cache per version of the library's source, made once, never temporary."""
    if not _RUNTIME:
        package = PACKAGE
        sources = sorted(p for p in package.rglob("*.py") if "curriculum" not in p.relative_to(package).parts)
        h = hashlib.sha256()
        for f in sources:
            h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes())
        where = cache_root() / "runtime" / h.hexdigest()[:20]
        if not (where / "circuits" / "__init__.py").is_file():
            where.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".making-", dir=where.parent))
            try:
                for f in sources:
                    to = tmp / "circuits" / f.relative_to(package)
                    to.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, to)
                try:
                    os.rename(tmp, where)
                except OSError:  # another process made it first
                    pass
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            _prune(where.parent, keep=where)
        _RUNTIME.append(str(where))
    return _RUNTIME[0]


def _prune(folder: Path, keep: Path, days: float = 2.0) -> None:
    """Copies for library versions unused for `days` (a running process may still import from a recent one)."""
    cutoff = time.time() - days * 86400
    for old in folder.iterdir():
        try:
            if old != keep and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


def readable() -> list[str]:
    if not _READABLE:
        _READABLE.append(_readable_now())
    return _READABLE[0]


_READABLE: list[list[str]] = []


def _readable_now() -> list[str]:
    """What the submission's process may read: Python, its packages and the system libraries, the private
    circuits copy — and never the grader's own circuits package or the reference solutions, even where
    they lie inside one of those (an installed package keeps its curriculum inside site-packages)."""
    from circuits.checking import curriculum

    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        "/usr/lib",
        "/usr/lib64",
        "/lib",
        "/lib64",
    }
    hidden = [PACKAGE, curriculum.folder()]
    allowed = [p for r in sorted(roots) for p in readable_except(Path(r), [h.resolve() for h in hidden if h])]
    return sorted({str(p) for p in allowed} | {runtime()})


def readable_except(root: Path, hidden: list[Path]) -> list[Path]:
    """Paths covering everything under `root` but the folders `hidden`: root itself when none lies inside it,
    else its entries, split again only on the way to a hidden folder."""
    try:
        root = root.resolve()
        if not root.exists():
            return []
    except OSError:
        return []
    if any(root == h for h in hidden):
        return []
    if not any(root in h.parents for h in hidden):
        return [root]
    out: list[Path] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        out += readable_except(Path(entry.path), hidden)
    return out


def _tasks_of_this_user() -> int:
    uid, n = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                continue
    return n


_TASKS: list[tuple[float, int]] = []


def _tasks_now() -> int:
    """The user's tasks, counted again at most every 10 s (a scan of /proc per file would be on every check's
    path; a count much older could leave a child no room for the threads it may start)."""
    if not _TASKS or time.monotonic() - _TASKS[0][0] > 10:
        _TASKS[:] = [(time.monotonic(), _tasks_of_this_user())]
    return _TASKS[0][1]


def rlimits(limits: Limits, n_files: int, serve: bool = False) -> dict:
    """The rlimits the child sets on itself before any learner's code runs (no preexec_fn: the parent has threads)."""
    nproc = _tasks_now() + limits.processes if os.getuid() != 0 and os.path.isdir("/proc") else None
    calls = checking_limits.seconds("check") if serve else 0.0
    return {
        "cpu": int(limits.seconds * n_files + calls + START_SECONDS),
        "as": limits.memory_mb << 20,
        "fsize": limits.file_mb << 20,
        "core": 0,
        "nproc": nproc,
    }


def environment(folder: str) -> dict:
    kept = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}  # see env docs
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": folder,
        "TMPDIR": folder,
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        **kept,
    }


class SandboxError(Exception):
    """No learner's process could be started at all (not the learner's doing)."""


def unnamed_file(prefix: str, data: bytes = b"") -> int:
    """A temporary file of the parent's, unlinked at once: only its descriptor reaches the child."""
    fd, path = tempfile.mkstemp(prefix=prefix)
    os.unlink(path)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
