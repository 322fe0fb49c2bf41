"""Hints in the puzzle's own words: "W_Q" of a head becomes the answer matrix that built it (W_Q_c, W_K2, …)."""

from __future__ import annotations

import re

import numpy as np

from circuits.errors import CircuitError

ROLES = ("W_Q", "W_K", "W_V", "W_O")


def _matched(attempt, slots: dict) -> dict:
    """slot → the answer's name for the built matrix `slots[slot]`, matched by value in the order both are written."""
    from circuits.model.weights import matrix

    answer = attempt.answer
    out: dict = {}
    for name in attempt.puzzle.answer:
        value = getattr(answer, name, None)
        if name == "params" or value is None or callable(value):
            continue
        try:
            numbers = matrix(value, name, (None, None), params=getattr(answer, "params", None))
        except (CircuitError, TypeError, ValueError):
            continue
        for slot, built in slots.items():
            built = np.asarray(built)
            if slot not in out and built.shape == numbers.shape and np.array_equal(built, numbers):
                out[slot] = name
                break
    return out


def head_matrices(attempt, model) -> dict[tuple[int, int, str], str]:
    """(layer, head, role) → the answer's name for it."""
    return _matched(attempt, {(l, h, role): getattr(model.head(l, h), role) for l in range(model.n_layers)
                              for h in range(model.n_heads(l)) for role in ROLES
                              if getattr(model.head(l, h), role, None) is not None})


def in_answer_terms(hint: str, head: tuple[int, int] | None, names: dict[tuple[int, int, str], str]) -> str:
    """The hint with each bare W_Q/W_K/W_V/W_O of `head` (or of the head it names) as the answer calls it."""

    def rename(match: re.Match) -> str:
        role = match.group(0)
        at = head
        of = re.match(r"(?:(?:,\s*|\s+and\s+|\s+or\s+)W_[QKVO]\b)*(?:'s entries on \S+)?\s+of\s+head (\d+)\.(\d+)",
                      hint[match.end():])
        if of:
            at = (int(of.group(1)), int(of.group(2)))
        elif at is None:  # a hint about the residual names its culprit: "… W_O and W_V of head 1.0"
            found = re.search(r"head (\d+)\.(\d+)", hint[match.end():]) or re.search(r"head (\d+)\.(\d+)", hint)
            at = (int(found.group(1)), int(found.group(2))) if found else None
        if at is None:  # no head named: every answer matrix in this role
            every = list(dict.fromkeys(n for (_, _, r), n in names.items() if r == role))
            return " or ".join(every) if every else role
        name = names.get((*at, role))
        return f"{role} (a given)" if name is None else name  # a head's matrix the answer does not write

    return re.sub(r"\bW_[QKVO]\b(?![_\w])", rename, hint)


def mlp_matrices(attempt, model) -> dict[tuple[int, str], str]:
    """(layer, "W_in" | "W_out") → the answer's name for it, matched by value as for heads."""
    return _matched(attempt, {(l, role): getattr(block.mlp, role) for l, block in enumerate(model.blocks)
                              if block.mlp is not None for role in ("W_in", "W_out")})


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
    """"of the attention" / "of the prediction" → the puzzle's sharpness symbols (or matrices) that set each."""
    declared = [str(s) for s in attempt.puzzle.sharpness]
    qk = {name for (l, h, role), name in heads.items() if role in ("W_Q", "W_K")}
    answer = attempt.answer
    out = {}
    for what, wanted in (("attention", lambda n: n in qk), ("prediction", lambda n: n not in qk)):
        names = [n for n in attempt.puzzle.answer if n != "params" and wanted(n)]
        found = [s for s in declared if s in names or any(s in _symbols(getattr(answer, n, None)) for n in names)]
        out[what] = found or declared
    return out


def in_puzzle_terms(explanation, attempt, model) -> str:
    """An explanation's hint in the puzzle's own terms: its answer's matrix names (givens marked as such),
    and its own sharpness symbol where the hint asks to sharpen."""
    heads = head_matrices(attempt, model)
    hint = in_answer_terms(explanation.hint, explanation.head, heads)
    mlps = mlp_matrices(attempt, model)

    def mlp(match: re.Match) -> str:
        role = match.group(0)
        of = re.search(r"MLP (?:of|in) layer (\d+)", hint[match.end():match.end() + 80])
        layer = int(of.group(1)) if of else explanation.mlp
        if layer is None:
            return role
        return mlps.get((layer, role), f"{role} (a given)" if mlps else role)

    hint = re.sub(r"\bW_(?:in|out)\b(?![_\w])", mlp, hint)
    answer = set(attempt.puzzle.answer)
    hint = re.sub(r"\bW_(?:U|E|pos)\b(?![_\w])(?! \(a given\))",
                  lambda m: m.group(0) if m.group(0) in answer else f"{m.group(0)} (a given)", hint)
    for what, found in sharpness_words(attempt, heads).items():
        symbols = [s for s in found if s not in answer]
        matrices = [s for s in found if s in answer]
        said = " and ".join(([f"your sharpness symbol{'s' if len(symbols) > 1 else ''} {' and '.join(symbols)}"]
                             if symbols else []) + ([f"the scale of {' and '.join(matrices)}"] if matrices else []))
        hint = hint.replace(f"your sharpness symbol of the {what}",
                            said or f"the scale of the {'scores' if what == 'attention' else 'logits'}")
    return hint
