"""Where a head should attend: the attention behaviours the puzzles target and the head scan looks for.

Each behaviour maps token ids `[b, T]` to target key positions `[b, T]`, with −1 on
query rows that have no target (e.g. the first occurrence of a token, for induction).
Scores count only rows with a target, so rows without one cannot dilute them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Behaviour = Callable[[np.ndarray], np.ndarray]


def previous_token(ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T]
    """Position i attends to i − 1 (no target at position 0)."""
    b, T = ids.shape
    out = np.broadcast_to(np.arange(T) - 1, (b, T)).copy()
    return out


def current_token(ids: np.ndarray) -> np.ndarray:
    """Position i attends to itself."""
    b, T = ids.shape
    return np.broadcast_to(np.arange(T), (b, T)).copy()


def first_token(ids: np.ndarray) -> np.ndarray:
    """Every position attends to position 0."""
    return np.zeros(ids.shape, dtype=np.int64)


def _previous_occurrence(ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T], −1 where none
    b, T = ids.shape
    same = ids[:, :, None] == ids[:, None, :]  # [b, q, k]
    earlier = np.tril(np.ones((T, T), dtype=bool), -1)[None]
    cand = np.where(same & earlier, np.arange(T)[None, None, :], -1)
    return cand.max(-1)


def duplicate_token(ids: np.ndarray) -> np.ndarray:
    """Position i attends to the latest earlier position holding the same token."""
    return _previous_occurrence(ids)


def induction(ids: np.ndarray) -> np.ndarray:
    """Position i attends to the token after the latest earlier copy of its own token."""
    prev = _previous_occurrence(ids)
    return np.where(prev >= 0, prev + 1, -1)


BEHAVIOURS: dict[str, Behaviour] = {
    "previous-token": previous_token,
    "current-token": current_token,
    "first-token": first_token,
    "duplicate-token": duplicate_token,
    "induction": induction,
}
DEFAULT_BEHAVIOURS = ("previous-token", "duplicate-token", "induction", "first-token")  # what a head scan scores
DEFAULT_THRESHOLD = 0.5  # the score at or above which a scan says a head shows a behaviour


def mass_on_target(pattern: np.ndarray, targets: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Attention on each row's target: pattern `[b, (h,) T, T]`, targets `[b, T]` -> `[b, (h,) T]`, NaN where no
    target."""
    b, T = targets.shape
    has = targets >= 0
    if valid is not None:
        has &= valid
    safe = np.where(has, targets, 0)
    if pattern.ndim == 4:
        got = np.take_along_axis(pattern, safe[:, None, :, None], axis=-1)[..., 0]
        return np.where(has[:, None], got, np.nan)
    got = np.take_along_axis(pattern, safe[:, :, None], axis=-1)[..., 0]
    return np.where(has, got, np.nan)
