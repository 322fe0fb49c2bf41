"""The answer's own names for the matrices it builds: the answer matrix that built a head's W_Q (W_Q_c, W_K2, …) or
an MLP's W_in, matched by value (explain/terms.py puts them in a hint's words; guarantees in a leak's line)."""

from __future__ import annotations

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
    return _once(attempt, _head_slots, model)


def mlp_matrices(attempt, model) -> dict[tuple[int, str], str]:
    """(layer, "W_in" | "W_out") → the answer's name for it, matched by value as for heads."""
    return _once(attempt, _mlp_slots, model)


def _once(attempt, slots_of, model) -> dict:
    """_matched, worked out once per model and answer (a check asks for the leak's line and for the sharpness's)."""
    try:
        kept = vars(model).setdefault("_answer_names", {})
    except TypeError:  # a model with no __dict__ of its own: worked out each time
        return _matched(attempt, slots_of, model)
    values = tuple(vars(attempt.answer).values())
    key = (slots_of, tuple(map(id, values)), tuple(attempt.puzzle.answer), id(attempt.puzzle.build))
    if key not in kept:
        kept[key] = (values, _matched(attempt, slots_of, model))  # holds the values: their ids are not reused
    return dict(kept[key][1])
