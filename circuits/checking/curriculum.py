"""The shipped curriculum (package data): each puzzle's reference file, hint ladder and level, by the puzzle's id.

The reference file holds the whole puzzle (statement, givens, targets, inputs) and a reference answer; the
learner's stub is rebuilt from it (checking/reset.py), and the checker takes the puzzle from it, so that a
learner's file contributes only its answer. The hints live apart, in hints.toml, so no file a learner edits
shows them; each puzzle's difficulty and expected minutes live in levels.toml, beside them.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from circuits.errors import CircuitError

HOME = Path(__file__).resolve().parent.parent / "curriculum"


def folder() -> Path:
    """The folder of the shipped reference files."""
    return HOME / "solutions"


def ids() -> list[str]:
    """Every shipped puzzle's id, in order ("00_attention", "01_consonants", …)."""
    return sorted(p.stem for p in folder().glob("[0-9][0-9]_*.py"))


def is_id(stem: str) -> bool:
    return stem[:2].isdigit() and stem[2:3] == "_"


def reference_file(name: str | Path) -> Path | None:
    """The shipped reference file of a puzzle id ("01_consonants", or any file so named), or None: no twin."""
    stem = Path(name).name.removesuffix(".py")
    path = folder() / f"{stem}.py"
    return path if is_id(stem) and path.is_file() else None


def is_shipped(path: str | Path) -> bool:
    """Whether `path` is itself one of the shipped reference files (symbolic links followed)."""
    from circuits.io.paths import real

    return real(path).parent == real(folder())


def twin(path: str | Path) -> Path | None:
    """The shipped reference a learner's file stands for: same id, and not the shipped file itself."""
    ref = reference_file(path)
    return None if ref is None or is_shipped(path) else ref


@functools.cache
def _hint_table() -> dict[str, list[str]]:
    try:
        with open(HOME / "hints.toml", "rb") as f:
            table = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CircuitError(f"the shipped hints ({HOME / 'hints.toml'}) cannot be read: {e}") from None
    return {stem: list(entry.get("hints", [])) for stem, entry in table.items()}


@functools.cache
def _level_table() -> dict[str, dict]:
    path = HOME / "levels.toml"
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CircuitError(f"the shipped levels ({path}) cannot be read: {e}") from None
    from circuits.checking.puzzle import check_level

    for stem, entry in table.items():
        unknown = set(entry) - {"difficulty", "minutes"}
        if unknown:
            raise CircuitError(
                f"{path}: [{stem}] has {', '.join(sorted(unknown))}; only difficulty and minutes belong here"
            )
        check_level(entry.get("difficulty"), entry.get("minutes"), f"{path}: [{stem}]")
    return table


def level(stem: str) -> tuple[int | None, int | None]:
    """A shipped puzzle's (difficulty 1–3, minutes), from levels.toml; (None, None) for a puzzle it does not list."""
    entry = _level_table().get(Path(stem).name.removesuffix(".py"), {})
    return entry.get("difficulty"), entry.get("minutes")


def hints(stem: str) -> list[str]:
    """The hint ladder of a shipped puzzle ([] for a puzzle the curriculum does not ship)."""
    return list(_hint_table().get(Path(stem).name.removesuffix(".py"), []))
