"""The forward pass's pure functions, as in picoGPT: one concept each, a shape contract on every line."""

from __future__ import annotations

import numpy as np

_BLOCK = 2**16  # numbers per block of rows: a block's temporaries stay in cache
_BLOCKED = 2**20  # arrays at least this large are computed a block of rows at a time


def in_blocks(f, x: np.ndarray, *more: np.ndarray | None) -> np.ndarray:
    """f(x, *more) for an f that works row by row, computed over blocks of the first axis when x is
    large, so each block's temporaries stay in cache. Row by row, the numbers are the same either way."""
    if x.ndim < 2 or x.size < _BLOCKED:
        return f(x, *more)
    out = np.empty(x.shape, dtype=x.dtype)
    step = max(1, _BLOCK * x.shape[0] // x.size)
    for i in range(0, x.shape[0], step):
        rows = slice(i, i + step)
        out[rows] = f(x[rows], *(None if m is None else m[rows] for m in more))
    return out


def _floats(x) -> np.ndarray:  # the in-place steps below need a floating-point array
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def causal_mask(T: int, window: int | None = None, causal: bool = True) -> np.ndarray:  # -> [T, T] bool
    """True where query q may see key k: k ≤ q, and q − k < window if given (every k when not `causal`)."""
    q = np.arange(T)[:, None]
    k = np.arange(T)[None, :]
    visible = k <= q if causal else np.ones((T, T), dtype=bool)
    if window is not None:
        visible &= (q - k) < window
    return visible


def softmax(x: np.ndarray, visible: np.ndarray | None = None) -> np.ndarray:  # [..., k], [..., k] -> [..., k]
    """Row softmax; hidden entries are exactly 0 and a row with nothing visible is all 0, never NaN."""
    x = _floats(x)
    if visible is None:
        return in_blocks(_softmax, x, None)
    x, visible = np.broadcast_arrays(x, visible)
    out = np.where(visible, x, -np.inf)  # our own array: each block is computed in it, nothing copied back
    if out.ndim < 2 or out.size < _BLOCKED:
        return _masked_softmax(out, visible)
    step = max(1, _BLOCK * out.shape[0] // out.size)
    for i in range(0, out.shape[0], step):
        rows = slice(i, i + step)
        block = out[rows]
        done = _masked_softmax(block, visible[rows])
        if done is not block:  # the careful path made a new array
            block[...] = done
    return out


def _softmax(x: np.ndarray, visible: np.ndarray | None) -> np.ndarray:  # [..., k], [..., k] -> [..., k]
    if visible is not None:
        return _masked_softmax(np.where(visible, x, -np.inf), visible)
    m = np.max(x, axis=-1, keepdims=True)  # NaN or ±inf here means a row needs the careful path
    if not np.isfinite(m).all():
        big = np.finfo(x.dtype).max / 4
        x = np.nan_to_num(x, nan=0.0, posinf=big, neginf=-big)
        m = np.max(x, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
    e = x - m  # a fresh array, so the in-place steps below touch nothing of the caller's
    np.exp(e, out=e)
    s = np.sum(e, axis=-1, keepdims=True)
    e /= np.where(s > 0, s, 1.0)
    return e


def _masked_softmax(x: np.ndarray, visible: np.ndarray) -> np.ndarray:  # [..., k] with −inf where hidden, in place
    """The softmax of `x`, which holds −inf wherever `visible` is False, computed in x itself (or, on the careful
    path, in a new array, returned)."""
    m = np.max(x, axis=-1, keepdims=True)  # NaN or ±inf here means a row needs the careful path
    if not np.isfinite(m).all():
        big = np.finfo(x.dtype).max / 4
        x = np.nan_to_num(x, nan=0.0, posinf=big, neginf=-big)
        x = np.where(visible, x, -np.inf)
        m = np.max(x, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
    e = np.subtract(x, m, out=x)  # m is finite: hidden entries stay −inf
    np.exp(e, out=e, where=visible)  # hidden entries hold −inf, whose exp is 0: skip the costly exp there
    np.maximum(e, 0.0, out=e)  # −inf (hidden) to 0; every exp is ≥ 0 and stays as it is
    s = np.sum(e, axis=-1, keepdims=True)
    e /= np.where(s > 0, s, 1.0)
    return e


def log_softmax(x: np.ndarray) -> np.ndarray:  # [..., v] -> [..., v]
    x = _floats(x)
    rows = x.reshape(-1, x.shape[-1]) if x.ndim > 1 and x.flags.c_contiguous else x  # [n, v], a view
    return in_blocks(_log_softmax, rows).reshape(x.shape)


def _log_softmax(x: np.ndarray) -> np.ndarray:  # [n, v] -> [n, v]
    out = x - np.max(x, axis=-1, keepdims=True)
    out -= np.log(np.sum(np.exp(out), axis=-1, keepdims=True))
    return out


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:  # [..., d] -> [..., d]
    out = x - np.mean(x, axis=-1, keepdims=True)
    var = np.mean(out * out, axis=-1, keepdims=True)  # np.var's own steps, without redoing x − mean
    out /= np.sqrt(var + eps)
    out *= w
    out += b
    return out


def linear(
    x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None
) -> np.ndarray:  # [..., n_in], [n_in, n_out] -> [..., n_out]
    """x @ W + b, taken as one matrix product over every row (a 3-D @ 2-D product runs as many small ones)."""
    out = x.reshape(-1, x.shape[-1]) @ W  # [rows, n_out]
    if b is not None:
        out += b
    return out.reshape(*x.shape[:-1], W.shape[1])


def relu(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    return np.maximum(x, 0.0)


def gelu(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The exact GELU, x·Φ(x)."""
    from math import erf, sqrt

    return (0.5 * x * (1.0 + np.vectorize(erf, otypes=[float])(x / sqrt(2.0)))).astype(x.dtype, copy=False)


def gelu_tanh(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """GPT-2's tanh approximation of GELU ("gelu_new")."""
    x = _floats(x)
    rows = x.reshape(-1, x.shape[-1]) if x.ndim > 1 and x.flags.c_contiguous else x  # [n, d_mlp], a view
    return in_blocks(_gelu_tanh, rows).reshape(x.shape)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:  # [n, d_mlp] -> [n, d_mlp]
    inner = x * x * x  # not x**3: pow is ten times slower (and may differ in the last bit)
    inner *= 0.044715
    inner += x
    inner *= np.sqrt(2.0 / np.pi)
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5  # exact, so 0.5·x·(1 + tanh …) in any order
    return inner


ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh, "gelu_new": gelu_tanh}


def mlp(x, W_in, b_in, W_out, b_out, act: str):  # [..., d_model] -> pre, post [..., d_mlp], out [..., d_model]
    """W_out · act(W_in x + b_in) + b_out, with W_in [d_mlp, d_model] and W_out [d_model, d_mlp]."""
    pre = linear(x, W_in.T, b_in)  # [..., d_mlp]
    post = ACTIVATIONS[act](pre)  # [..., d_mlp]
    return pre, post, linear(post, W_out.T, b_out)  # ..., [..., d_model]


def scores_float32(q: np.ndarray, k: np.ndarray) -> np.ndarray:  # [..., n_q, d], [..., n_k, d] -> [..., n_q, n_k]
    """q·kᵀ as Hugging Face's GPT-Neo takes it: q and k rounded to float32, a float32 product, back to float64.

    A float32 product's last bits depend on the BLAS kernel that sums it, so it is taken by torch
    when torch is installed (the library Hugging Face itself runs), else by numpy (within ~1e-7).
    """
    q32, k32 = q.astype(np.float32), np.swapaxes(k.astype(np.float32), -1, -2)
    try:
        import torch
    except ImportError:
        return (q32 @ k32).astype(q.dtype)
    return torch.matmul(torch.from_numpy(q32), torch.from_numpy(k32)).numpy().astype(q.dtype)


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray,
    scale: float | np.ndarray = 1.0,
    fixed: np.ndarray | None = None,
    qk_float32: bool = False,
):
    """softmax(scale · q kᵀ, where mask) v -> scores (scaled, before masking), pattern, z.

    q [..., n_q, d_head], k [..., n_k, d_head], v [..., n_k, d_value], mask [..., n_q, n_k] (True: visible).
    `fixed` [..., n_q, n_k] replaces the pattern wherever it is not NaN (heads with a fixed pattern).
    This is the one attention the model runs. (checking.reference.attention is a different thing:
    puzzle 00's reference answer, with its own 1/sqrt(d) scale, that a learner's function is compared with.)
    """
    scores = scores_float32(q, k) if qk_float32 else q @ np.swapaxes(k, -1, -2)  # [..., n_q, n_k]
    scores *= scale
    computed = None if fixed is None else np.isnan(fixed)  # [..., n_q, n_k]: where the pattern is the softmax's
    # every head's pattern fixed: no softmax to take (np.where as below, for the same array, laid out the same)
    pattern = scores if computed is not None and not computed.any() else softmax(scores, mask)  # [..., n_q, n_k]
    if fixed is not None:
        pattern = np.where(computed, pattern, fixed)  # [..., n_q, n_k]
    return scores, pattern, pattern @ v  # ..., ..., [..., n_q, d_value]
