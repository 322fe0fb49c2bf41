"""Position embeddings: one-hot and sinusoidal bases (columns are positions)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def one_hot_positions(n_ctx: int) -> np.ndarray:
    """`[n_ctx, n_ctx]` identity: direction `pos:i` marks position i."""
    return np.eye(n_ctx)


def sinusoidal(n_ctx: int, freqs: Sequence[float], mags: Sequence[float] | None = None) -> np.ndarray:
    """`[2 * len(freqs), n_ctx]`: rows cos:i and sin:i hold mag_i·cos(freq_i·n) and mag_i·sin(freq_i·n).

    This is the basis u_i^cos, u_i^sin of the induction exercises: position n,
    seen through pair i, is the point λ_i (cos α_i n, sin α_i n), so position
    n−1 is that point rotated by −α_i.
    """
    mags = [1.0] * len(freqs) if mags is None else list(mags)
    if len(mags) != len(freqs):
        from circuits.errors import CircuitError

        raise CircuitError(f"sinusoidal positions got {len(freqs)} frequencies but {len(mags)} magnitudes")
    n = np.arange(n_ctx)
    rows = []
    for a, m in zip(freqs, mags):
        rows += [m * np.cos(a * n), m * np.sin(a * n)]
    return np.array(rows, dtype=np.float64).reshape(2 * len(freqs), n_ctx)


def sinusoidal_names(n_freqs: int) -> list[str]:
    out = []
    for i in range(n_freqs):
        out += [f"cos:{i}", f"sin:{i}"]
    return out


def rotation(theta: float) -> np.ndarray:
    """The 2-D rotation by `theta`: [[cos, −sin], [sin, cos]]."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])
