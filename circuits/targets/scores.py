"""What attention scores need: the factor a softmax needs to pass."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


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
