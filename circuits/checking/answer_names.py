"""Hints in the puzzle's own words: "W_Q" of a head becomes the answer matrix that built it (W_Q_c, W_K2, …)."""

from __future__ import annotations

import re

import numpy as np

from circuits.errors import CircuitError

ROLES = ("W_Q", "W_K", "W_V", "W_O")


def head_matrices(attempt, model) -> dict[tuple[int, int, str], str]:
    """(layer, head, role) → the answer's name for it, matched by value in the order both are written."""
    from circuits.model.weights import matrix

    answer = attempt.answer
    slots = [(l, h, role) for l in range(model.n_layers) for h in range(model.n_heads(l)) for role in ROLES
             if getattr(model.head(l, h), role, None) is not None]
    out: dict[tuple[int, int, str], str] = {}
    for name in attempt.puzzle.answer:
        value = getattr(answer, name, None)
        if name == "params" or value is None or callable(value):
            continue
        try:
            numbers = matrix(value, name, (None, None), params=getattr(answer, "params", None))
        except (CircuitError, TypeError, ValueError):
            continue
        for slot in slots:
            built = np.asarray(getattr(model.head(slot[0], slot[1]), slot[2]))
            if slot not in out and built.shape == numbers.shape and np.array_equal(built, numbers):
                out[slot] = name
                break
    return out


def in_answer_terms(hint: str, head: tuple[int, int] | None, names: dict[tuple[int, int, str], str]) -> str:
    """The hint with each bare W_Q/W_K/W_V/W_O of `head` (or of the head it names) as the answer calls it."""

    def rename(match: re.Match) -> str:
        role = match.group(0)
        at = head
        of = re.match(r"\s+of\s+head (\d+)\.(\d+)", hint[match.end():])
        if of:
            at = (int(of.group(1)), int(of.group(2)))
        elif at is None:  # a hint about the residual names its culprit: "… W_O and W_V of head 1.0"
            found = re.search(r"head (\d+)\.(\d+)", hint[match.end():]) or re.search(r"head (\d+)\.(\d+)", hint)
            at = (int(found.group(1)), int(found.group(2))) if found else None
        if at is None:
            return role
        name = names.get((*at, role))
        if name is None:
            return role if not names else f"{role} (a given)"
        return name

    return re.sub(r"\bW_[QKVO]\b(?![_\w])", rename, hint)
