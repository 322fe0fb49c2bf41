"""What a tie or a dull softmax needs: the factor its scores need (ScaleBy) and what tells two tied keys apart
(Differs), with their words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.explain.diagnosis import factor
from circuits.explain.formats import families
from circuits.explain.tables import words
from circuits.explain.terms import matrix, readable, sharpness


@dataclass(frozen=True)
class ScaleBy:
    """What sharpening can do for a query that sees `keys` keys: its scores need ×`factor` (None: no factor up to
    ×10⁴ is enough); with `max_len`, the factor the checker found on the puzzle's sharpness for every input it
    checks, at every length up to max_len (see explain/sharpening.py)."""

    factor: float | None
    keys: int
    max_len: int | None = None  # sized by the checker: the factor holds at every length up to max_len
    unscaled: str | None = None  # why raising the puzzle's sharpness does not raise these scores (it cancels)


@dataclass(frozen=True)
class Differs:
    """What tells two tied keys `a` and `b` apart in the residual a layer's heads read: the direction families in
    which they differ (none: their residuals are identical); `read`, those of them the head's keys already read
    (through W_Qᵀ W_K), so the tie is in how the query meets them, not in what is read."""

    a: int
    b: int
    families: tuple[str, ...]
    read: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()  # the tokens at a and b
    directions: tuple[str, ...] = ()  # the residual directions in which they differ
    every: tuple[str, ...] = ()  # every direction of the residual (a family named whole where all of it differs)
    head: tuple[int, int] | None = None  # the head whose keys tie


def differs(trace, layer: int, a: int, b: int, head: int | None = None) -> Differs:
    """What tells keys `a` and `b` apart in the residual the heads of `layer` read (and, given `head`, which of
    those directions its keys already read)."""
    x = trace.layers[layer].attn_in[0]  # [T, d_model]
    differ = np.flatnonzero(np.abs(x[a] - x[b]) > 1e-9)
    labels = trace.model.residual.labels
    read: tuple[str, ...] = ()
    w = trace.model.head(layer, head) if head is not None else None
    if w is not None and w.pattern is None:
        keyed = np.abs(np.asarray(w.W_Q, dtype=float).T @ np.asarray(w.W_K, dtype=float)).sum(0) > 0  # [d_model]
        read = families(labels[i] for i in differ if keyed[i])
    at = trace.tokens(0)
    return Differs(
        a,
        b,
        families(labels[i] for i in differ),
        read,
        (at[a], at[b]),
        tuple(labels[i] for i in differ),
        tuple(labels),
        None if head is None else (layer, head),
    )


@words.register
def _(f: Differs) -> str:
    if not f.families:
        return (
            f"Their residuals are identical, so no {matrix('W_Q')} and {matrix('W_K')} can tell them apart: what is "
            "written into them before this layer must differ"
        )
    if f.read:
        return (
            f"Their residuals differ in {', '.join(f.families)}, and {matrix('W_K')} reads {', '.join(f.read)}, yet "
            f"with this query both keys score the same: look at {matrix('W_Q')} and {matrix('W_K')} together, at what "
            f"this query asks for against what keys {f.a} and {f.b} give it"
        )
    may = readable("W_K", f.head, f.directions)
    if may is not None and not may:
        return (
            f"Their residuals differ only in {', '.join(f.families)}, which the puzzle does not let "
            f"{matrix('W_K', f.head)} read: what is written into them before this layer must differ in what it reads"
        )
    those = "those directions" if may is None or len(may) == len(f.directions) else named(may, f.every)
    return (
        f"Their residuals differ in {', '.join(f.families)}: look at {matrix('W_Q')} and {matrix('W_K')} — reading "
        f"{those} would make key {key_at(f.a, f.tokens[:1])} score higher than key {key_at(f.b, f.tokens[1:])}"
    )


def named(directions: list[str], every: tuple[str, ...]) -> str:
    """Some residual directions, a family named whole where all of it is among them: "tok:*, cos:0, sin:0"."""
    from circuits.explain.formats import family_of

    said = []
    for family in families(directions):
        members = [d for d in directions if family_of(d) == family]
        whole = [d for d in every if family_of(d) == family]
        said += [family] if len(members) == len(whole) and len(whole) > 1 else members
    return ", ".join(said)


def key_at(i: int, token: tuple[str, ...]) -> str:
    return f"{i} {token[0]!r}" if token else str(i)


@words.register
def _(f: ScaleBy) -> str:
    if f.factor is None:
        return "no scale up to ×10⁴ is enough, so sharpening alone will not fix it"
    if f.max_len is not None:  # sized by the checker on the puzzle's sharpness, for every length it promises
        return (
            f"to pass at every length up to {f.max_len} (this input at its full length included), the scores "
            f"need ×{factor(f.factor)} (raise {sharpness('attention')} by that much)"
        )
    if f.unscaled is not None:
        return (
            f"at this length ({f.keys} keys visible) the scores need ×{factor(f.factor)}, and raising "
            f"{sharpness('attention')} does not raise them: {f.unscaled}"
        )
    return (
        f"at this length ({f.keys} keys visible) the scores need ×{factor(f.factor)} (raise "
        f"{sharpness('attention')} by that much)"
    )
