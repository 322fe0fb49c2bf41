"""What attention scores need: the factor a softmax needs to pass, and what tells two tied keys apart."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from circuits.checking.targets.formats import families


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def factor_needed(scores: np.ndarray, ok: Callable[[np.ndarray], bool], top: float = 1e4) -> float | None:
    """The smallest factor on one query's scores `[keys]` whose softmax passes `ok` (None: not even ×`top`)."""
    if ok(_softmax(scores)):
        return 1.0
    hi = 2.0
    while not ok(_softmax(hi * scores)):
        hi *= 2
        if hi > top:
            return None
    lo = hi / 2
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(_softmax(mid * scores)) else (mid, hi)
    return hi


@dataclass(frozen=True)
class ScaleBy:
    """What sharpening can do for a query that sees `keys` keys: its scores need ×`factor` (None: no factor up to
    ×10⁴ is enough); with `max_len`, the factor the checker found on the puzzle's sharpness for every input it
    checks, at every length up to max_len (see checking/sharpening.py)."""

    factor: float | None
    keys: int
    max_len: int | None = None  # sized by the checker: the factor holds at every length up to max_len


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
    return Differs(a, b, families(labels[i] for i in differ), read, (at[a], at[b]))
