"""What attention scores need: the factor a softmax needs to pass, and what tells two tied keys apart."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from circuits.checking import diagnosis
from circuits.checking.targets.formats import families, families_of


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


def scale_by(factor: float | None, q: int) -> str:
    """The advice for a query at position q whose scores need ×`factor` (None: no factor up to ×10⁴ is enough)."""
    if factor is None:
        return "no scale up to ×10⁴ is enough, so sharpening alone will not fix it"
    return (f"at this length ({q + 1} keys visible) the scores need ×{diagnosis.factor(factor)} (raise your sharpness "
            "symbol of the attention by that much)")


def what_differs(trace, layer: int, a: int, b: int) -> str:
    """What tells two tied keys apart in the residual a layer's heads read, and the advice that follows."""
    x = trace.layers[layer].attn_in[0]  # [T, d_model]
    differ = np.flatnonzero(np.abs(x[a] - x[b]) > 1e-9)
    if not len(differ):
        return ("Their residuals are identical, so no W_Q and W_K can tell them apart: what is written into them "
                "before this layer must differ")
    return (f"Their residuals differ in {families_of(trace.model.residual.labels[i] for i in differ)}: look at W_Q and W_K "
            f"— reading those directions would make key {a} score higher")


@dataclass(frozen=True)
class ScaleBy:
    """What sharpening can do for a query that sees `keys` keys: its scores need ×`factor` (None: no factor up to
    ×10⁴ is enough)."""

    factor: float | None
    keys: int


@dataclass(frozen=True)
class Differs:
    """What tells two tied keys `a` and `b` apart in the residual a layer's heads read: the direction families in
    which they differ (none: their residuals are identical)."""

    a: int
    b: int
    families: tuple[str, ...]


def differs(trace, layer: int, a: int, b: int) -> Differs:
    """The facts of `what_differs`."""
    x = trace.layers[layer].attn_in[0]  # [T, d_model]
    differ = np.flatnonzero(np.abs(x[a] - x[b]) > 1e-9)
    return Differs(a, b, families(trace.model.residual.labels[i] for i in differ))
