"""An answer given as values (a notebook, Colab: no puzzle file) checked against the shipped puzzle."""

from __future__ import annotations

import difflib
import types
from pathlib import Path

from circuits.checking import curriculum
from circuits.checking.loader import Attempt
from circuits.checking.pipeline import load
from circuits.errors import CircuitError


def shipped(name: str | int) -> Path:
    """The shipped reference file of a puzzle named by id ("01_consonants"), slug ("consonants") or number (1)."""
    folder = curriculum.folder()
    if folder is None:
        raise CircuitError("no shipped puzzles found: this installation of circuits has no curriculum")
    files = sorted(folder.glob("[0-9][0-9]_*.py"))
    key = str(name).strip().removesuffix(".py")
    for f in files:
        number, _, slug = f.stem.partition("_")
        if key in (f.stem, slug) or (key.isdigit() and int(key) == int(number)):
            return f
    stems = [f.stem for f in files]
    close = difflib.get_close_matches(key, [*stems, *(s.partition("_")[2] for s in stems)], n=3, cutoff=0.5)
    said = f"did you mean {', '.join(map(repr, close))}?" if close else f"the puzzles are: {', '.join(stems)}"
    raise CircuitError(f"no puzzle named {key!r}; {said}")


def with_values(name: str | int, values: dict, call: str = "circuits.check") -> Attempt:
    """The shipped puzzle `name` with its answer replaced by `values` (every answer name, `params` optional).

    A name the puzzle does not ask for, or one it asks for and is not given, is a one-line CircuitError naming it."""
    attempt = load(shipped(name))
    puzzle = attempt.puzzle
    wanted, optional = list(puzzle.answer), list(dict.fromkeys([*puzzle.optional, "params"]))
    where = f"{call}({puzzle.id!r})"
    unknown = [n for n in values if n not in wanted and n not in optional]
    if unknown:
        raise CircuitError(
            f"{where}: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not part of "
            f"the answer; it is {', '.join(wanted)}" + f" (optional: {', '.join(optional)})"
        )
    missing = [n for n in wanted if n not in values]
    if missing:
        raise CircuitError(f"{where}: give {', '.join(missing)} too (the answer is {', '.join(wanted)})")
    answer = {"params": {}, **values}
    return Attempt(Path(where), puzzle, types.SimpleNamespace(**answer), [], attempt.allowed_mutants)
