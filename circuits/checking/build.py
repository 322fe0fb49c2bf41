"""Building the answer's Model: the puzzle's build(answer), every mistake one line saying whose it is."""

from __future__ import annotations

import types

from circuits.checking import limits
from circuits.checking.validate import build_mistake
from circuits.errors import CircuitError
from circuits.io import paths


def model_of(attempt, answer: types.SimpleNamespace | None = None):
    """The Model `answer` (default: the attempt's own) builds; a CircuitError names the file on any mistake, and
    the puzzle's author where build() is at fault."""
    from circuits.model.transformer import Model

    answer = answer or attempt.answer
    try:
        model = attempt.puzzle.build(answer)
    except CircuitError as e:
        shown = paths.shown(attempt.path)  # on the error path only: a check builds hundreds of models
        raise build_mistake(e, answer, attempt.puzzle, shown) or e.within(shown) from None
    except limits.TimeLimit:
        raise
    except BaseException as e:  # noqa: BLE001 - anything the learner's values trip is reported in one line
        shown = paths.shown(attempt.path)
        if (author := build_mistake(e, answer, attempt.puzzle, shown)) is not None:
            raise author from None
        raise CircuitError(f"{shown}: building the model failed{limits.where_raised(e, attempt.path)}: {_exc(e)}") from e
    if not isinstance(model, Model):
        raise CircuitError(f"{paths.shown(attempt.path)}: build() returned {_kind(model)}, not a Model; "
                           "end it with `return Model(...)`")
    return model


def _exc(e: BaseException) -> str:
    """`ValueError: bad thing`, or just `ValueError` when the exception says nothing."""
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _kind(value) -> str:
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"
