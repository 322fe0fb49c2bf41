"""The forward pass's pure functions, picoGPT style: one concept each, shapes on every line."""

from __future__ import annotations

import numpy as np

_BIG = np.finfo(np.float64).max / 4


def causal_mask(T: int, window: int | None = None) -> np.ndarray:
    """`[T, T]` bool, True where query q may see key k: k ≤ q, and q − k < window if given."""
    q = np.arange(T)[:, None]
    k = np.arange(T)[None, :]
    visible = k <= q
    if window is not None:
        visible &= (q - k) < window
    return visible


def softmax(x: np.ndarray, visible: np.ndarray | None = None) -> np.ndarray:  # [..., k], [..., k] -> [..., k]
    """Row softmax; hidden entries are exactly 0 and a row with nothing visible is all 0, never NaN."""
    if visible is not None:
        x = np.where(visible, x, -np.inf)
    m = np.max(x, axis=-1, keepdims=True)  # NaN or ±inf here means a row needs the careful path
    if not np.isfinite(m).all():
        x = np.nan_to_num(x, nan=0.0, posinf=_BIG, neginf=-_BIG)
        if visible is not None:
            x = np.where(visible, x, -np.inf)
        m = np.max(x, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
    e = x - m  # a fresh array, so the in-place steps below touch nothing of the caller's
    np.exp(e, out=e)
    s = np.sum(e, axis=-1, keepdims=True)
    e /= np.where(s > 0, s, 1.0)
    return e


def log_softmax(x: np.ndarray) -> np.ndarray:  # [..., v] -> [..., v]
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:  # [..., d] -> [..., d]
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def gelu(x: np.ndarray) -> np.ndarray:
    """The exact GELU, x·Φ(x)."""
    from math import erf, sqrt

    return 0.5 * x * (1.0 + np.vectorize(erf, otypes=[float])(x / sqrt(2.0)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GPT-2's tanh approximation of GELU ("gelu_new")."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh, "gelu_new": gelu_tanh}


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, visible: np.ndarray, scale: float | np.ndarray = 1.0):
    """q [..., n_q, d], k [..., n_k, d], v [..., n_k, d_v], visible [..., n_q, n_k] -> scores, pattern [..., n_q, n_k], z [..., n_q, d_v]."""
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    pattern = softmax(scores, visible)
    return np.where(visible, scores, -np.inf), pattern, pattern @ v
