"""Building the answer's Model: the puzzle's build(answer), every mistake one line saying whose it is."""

from __future__ import annotations

import os
import types
import warnings

from circuits import limits
from circuits.checking.validate import build_mistake
from circuits.errors import CircuitError, CircuitWarning
from circuits.io import paths


def model_of(attempt, answer: types.SimpleNamespace | None = None):
    """The Model `answer` (default: the attempt's own) builds; a CircuitError names the file on any mistake, and
    the puzzle's author where build() is at fault."""
    from circuits.model.transformer import Model

    answer = answer or attempt.answer
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", CircuitWarning)
            model = attempt.puzzle.build(answer)
        _warn_in_their_file(said, attempt)
    except CircuitError as e:
        shown = paths.shown(attempt.path)  # on the error path only: a check builds hundreds of models
        raise build_mistake(e, answer, attempt.puzzle, shown) or e.within(shown) from None
    except limits.TimeLimit:
        raise
    except BaseException as e:  # noqa: BLE001 - anything the learner's values trip is reported in one line
        shown = paths.shown(attempt.path)
        if (author := build_mistake(e, answer, attempt.puzzle, shown)) is not None:
            raise author from None
        raise CircuitError(
            f"{shown}: building the model failed{limits.where_raised(e, attempt.path)}: {_exc(e)}"
        ) from e
    if not isinstance(model, Model):
        raise CircuitError(
            f"{paths.shown(attempt.path)}: build() returned {_kind(model)}, not a Model; "
            "end it with `return Model(...)`"
        )
    return model


_SAID: set = set()  # (file, its version, message): a warning said once per version of a file, not once per build


def _warn_in_their_file(said: list, attempt) -> None:
    """The warnings build() raised, again: circuits' own at the learner's file (its `params` line, where a
    parameter is the matter), never at the shipped puzzle's build() that the checker ran; any other as it was."""
    for w in said:
        if not issubclass(w.category, CircuitWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        try:
            version = os.stat(attempt.path).st_mtime_ns
        except (OSError, ValueError):
            version = None
        if (key := (str(attempt.path), version, str(w.message))) in _SAID:
            continue
        _SAID.add(key)
        shown = paths.shown(attempt.path)
        warnings.warn_explicit(
            CircuitWarning(f"{shown}: {w.message}"),
            CircuitWarning,
            str(attempt.path),
            _line_of(attempt.path, "params") if "params" in str(w.message) else 1,
        )


def _line_of(path, name: str) -> int:
    """The line of the file that binds `name` (`params = ...`), or 1."""
    import re

    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        return 1
    found = re.search(rf"^{name}\s*=", text, flags=re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _exc(e: BaseException) -> str:
    """`ValueError: bad thing`, or just `ValueError` when the exception says nothing."""
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _kind(value) -> str:
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"
