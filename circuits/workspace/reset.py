"""`circuits reset`: save the learner's puzzle file to a backup that is never overwritten, then restore its stub."""

from __future__ import annotations

import configparser
import os
import re
import shlex
import time
from pathlib import Path

from circuits.checking.givens import ANSWER_LINE
from circuits.errors import CircuitError
from circuits.io.paths import real

MARK = ANSWER_LINE
STUB = "# ── stub: what `circuits reset` restores"


def data_dir() -> Path:
    """$XDG_DATA_HOME/circuits, or ~/.local/share/circuits (a relative XDG path is ignored, as the spec says)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "circuits"


def stub_text(solution: Path) -> str:
    """The fresh puzzle file: the solution's text above its answer line, then its commented stub block uncommented."""
    text = solution.read_text(encoding="utf-8")
    if MARK not in text or STUB not in text:
        missing = "answer line (# ── your answer …)" if MARK not in text else "stub block (# ── stub: …)"
        raise CircuitError(f"{solution} has no {missing}, so the stub cannot be rebuilt from it")
    head = text[: text.index("\n", text.index(MARK)) + 1]
    block = text[text.index("\n", text.index(STUB)) + 1 :]
    lines = []
    for n, line in enumerate(block.rstrip("\n").split("\n")):
        if line != "#" and not line.startswith("# "):
            raise CircuitError(f"{solution}: line {n + 1} of the stub block is not commented out: {line[:40]!r}")
        lines.append(line[2:])
    return head + "\n".join(lines) + "\n"


def declared_folders(start: Path) -> list[Path]:
    """The folders the nearest pytest configuration above `start` lists in circuits_paths (as pytest finds it:
    the first of pytest.ini, pyproject.toml, tox.ini, setup.cfg that has a pytest section), resolved."""
    for d in (start, *start.parents):
        for name, section in (
            ("pytest.ini", "pytest"),
            ("pyproject.toml", None),
            ("tox.ini", "pytest"),
            ("setup.cfg", "tool:pytest"),
        ):
            f = d / name
            if not f.is_file():
                continue
            try:
                if section is None:
                    import tomllib

                    options = (
                        tomllib.loads(f.read_text(encoding="utf-8"))
                        .get("tool", {})
                        .get("pytest", {})
                        .get("ini_options")
                    )
                    if options is None:
                        continue
                    raw = options.get("circuits_paths", [])
                    values = shlex.split(raw) if isinstance(raw, str) else [str(v) for v in raw]
                else:
                    cfg = configparser.ConfigParser(interpolation=None)
                    cfg.read(f, encoding="utf-8")
                    if not cfg.has_section(section):
                        if name != "pytest.ini":
                            continue
                        return []
                    values = shlex.split(cfg.get(section, "circuits_paths", fallback=""))
            except (OSError, ValueError, configparser.Error):
                return []
            return [real(d / v) for v in values]
    return []


def resettable(puzzle: Path) -> None:
    """Refuse, in one line, any file reset must not write: only a learner's NN_name.py in a puzzle folder (puzzles/ or
    a folder in circuits_paths) is restored, never a reference solution, never a file anywhere else."""
    from circuits.io import paths

    folder = real(puzzle).parent
    shown = paths.shown(puzzle)
    if folder.name == "solutions" or Path(puzzle).parent.name == "solutions":
        raise CircuitError(
            f"reset: {shown} is a reference solution, not your puzzle file; reset restores only files "
            f"in puzzles/ (try: circuits reset {Path(puzzle).stem})"
        )
    if not re.match(r"^\d\d_.*\.py$", Path(puzzle).name):
        raise CircuitError(f"reset: {shown} is not a puzzle file (NN_name.py); reset restores only puzzle files")
    if folder.name != "puzzles" and folder not in declared_folders(folder):
        raise CircuitError(
            f"reset: {shown} is not in a puzzle folder (puzzles/ or a folder in the ini option "
            "circuits_paths); reset writes only your puzzle files there"
        )


def backup(path: Path, project: Path) -> Path:
    """Copy `path` to data_dir()/backups/<project>/<stem>/<UTC time>.py, created exclusively: never over another
    backup."""
    data = path.read_bytes()
    folder = data_dir() / "backups" / project.name / path.stem
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1000):
        target = folder / (f"{stamp}.py" if n == 0 else f"{stamp}-{n}.py")
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if target.read_bytes() != data:  # a backup that does not hold the answer must not let the reset go on
            raise CircuitError(f"the backup {target} does not match {path}; nothing was reset")
        return target
    raise CircuitError(f"{folder} already holds 1000 backups made this second; nothing was reset")


def reset(puzzle: Path, solution: Path) -> Path | None:
    """Restore `puzzle` to its stub; first back up what it holds (returned), unless it is the stub already or
    missing."""
    resettable(puzzle)
    if os.path.exists(puzzle) and os.path.exists(solution) and os.path.samefile(puzzle, solution):
        raise CircuitError(f"reset: {puzzle} is the reference solution itself (a link to it?); nothing was reset")
    fresh = stub_text(solution)
    saved = None
    if puzzle.exists() or puzzle.is_symlink():
        if not puzzle.is_file():
            raise CircuitError(f"{puzzle} is not a regular file; move it away and run reset again")
        if puzzle.read_text(encoding="utf-8", errors="replace") == fresh:
            return None
        saved = backup(puzzle, real(puzzle).parent.parent)
    tmp = puzzle.with_name(f".{puzzle.name}.reset-{os.getpid()}")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(fresh)
        os.replace(tmp, puzzle)  # the old file is replaced whole, never left half written
    finally:
        if tmp.exists():
            tmp.unlink()
    return saved
