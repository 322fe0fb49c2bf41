"""The puzzle's own names for what a hint names: the answer matrix that built a head's W_Q (W_Q_c, W_K2, …), its
sharpness symbols; display/explanations.py puts them in the hint's words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.errors import CircuitError

ROLES = ("W_Q", "W_K", "W_V", "W_O")


def _matched(attempt, slots_of, model) -> dict:
    """slot → the answer's name for the built matrix in that slot (`slots_of(model)`: slot → matrix), matched by value
    in the order both are written; where the answer's value equals several slots (08's W_V, the same as the given
    W_V0), the slots it builds: those that move when it moves."""
    from circuits.model.weights import matrix

    answer = attempt.answer
    slots = slots_of(model)
    out: dict = {}
    for name in attempt.puzzle.answer:
        value = getattr(answer, name, None)
        if name == "params" or value is None or callable(value):
            continue
        try:
            numbers = matrix(value, name, (None, None), params=getattr(answer, "params", None))
        except (CircuitError, TypeError, ValueError):
            continue
        hits = [
            slot
            for slot, built in slots.items()
            if slot not in out and np.shape(built) == numbers.shape and np.array_equal(built, numbers)
        ]
        if len(hits) > 1:
            hits = _moved(attempt, name, numbers, hits, slots_of) or hits[:1]
        for slot in hits:
            out[slot] = name
    return out


def _moved(attempt, name: str, numbers: np.ndarray, hits: list, slots_of) -> list:
    """The slots among `hits` whose built matrix changes when the answer's `name` does (none: the build failed)."""
    import types
    import warnings

    moved = types.SimpleNamespace(**vars(attempt.answer))
    setattr(moved, name, numbers + 1.0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            slots = slots_of(attempt.puzzle.build(moved))
    except Exception:  # noqa: BLE001 - a build the changed value trips says nothing about which slot it fills
        return []
    return [slot for slot in hits if slot in slots and not np.array_equal(slots[slot], numbers)]


def _head_slots(model) -> dict:
    return {
        (l, h, role): getattr(model.head(l, h), role)
        for l in range(model.n_layers)
        for h in range(model.n_heads(l))
        for role in ROLES
        if getattr(model.head(l, h), role, None) is not None
    }


def _mlp_slots(model) -> dict:
    return {
        (l, role): getattr(block.mlp, role)
        for l, block in enumerate(model.blocks)
        if block.mlp is not None
        for role in ("W_in", "W_out")
    }


def head_matrices(attempt, model) -> dict[tuple[int, int, str], str]:
    """(layer, head, role) → the answer's name for it."""
    return _matched(attempt, _head_slots, model)


def mlp_matrices(attempt, model) -> dict[tuple[int, str], str]:
    """(layer, "W_in" | "W_out") → the answer's name for it, matched by value as for heads."""
    return _matched(attempt, _mlp_slots, model)


def _symbols(value) -> set[str]:
    from circuits.model.weights import raw_array

    try:
        raw = raw_array(value)
    except Exception:  # noqa: BLE001 - a value the builder rejects names no symbol
        return set()
    found: set[str] = set()
    for x in np.asarray(raw, dtype=object).flat:
        found |= {str(s) for s in getattr(x, "free_symbols", ())}
    return found


def sharpness_words(attempt, heads: dict) -> dict[str, list[str]]:
    """ "of the attention" / "of the prediction" → the puzzle's sharpness symbols (or matrices) that set each."""
    declared = [str(s) for s in attempt.puzzle.sharpness]
    qk = {name for (l, h, role), name in heads.items() if role in ("W_Q", "W_K")}
    answer = attempt.answer
    out = {}
    for what, wanted in (("attention", lambda n: n in qk), ("prediction", lambda n: n not in qk)):
        names = [n for n in attempt.puzzle.answer if n != "params" and wanted(n)]
        found = [s for s in declared if s in names or any(s in _symbols(getattr(answer, n, None)) for n in names)]
        out[what] = found or declared
    return out


@dataclass(frozen=True)
class PuzzleTerms:
    """The puzzle's own names for what a hint names: each head's and MLP's matrices as the answer calls them (a
    slot the answer does not write is absent: a given), the answer's names, and the sharpness symbols (or
    matrices) that set the attention's and the prediction's sharpness."""

    heads: dict  # (layer, head, role) → name
    mlps: dict  # (layer, "W_in" | "W_out") → name
    answer: frozenset
    sharpness: dict  # "attention" | "prediction" → names


def puzzle_terms(attempt, model) -> PuzzleTerms:
    """The names display/explanations.py puts in a hint, for this answer to this puzzle."""
    heads = head_matrices(attempt, model)
    return PuzzleTerms(
        heads, mlp_matrices(attempt, model), frozenset(attempt.puzzle.answer), sharpness_words(attempt, heads)
    )
