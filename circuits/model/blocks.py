"""Built weights: read-only numbers per head, per MLP and LayerNorm, and a layer's heads stacked for the forward
pass."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from circuits.errors import CircuitError
from circuits.model import functional as F
from circuits.model.specs import Head, fixed_pattern
from circuits.model.weights import Params, exact, frozen


class LayerNormWeights(NamedTuple):
    """A built LayerNorm: read-only `w`, `b` `[d_model]` and its `eps`."""

    w: np.ndarray
    b: np.ndarray
    eps: float

    def astype(self, dtype) -> LayerNormWeights:
        return LayerNormWeights(_cast(self.w, dtype), _cast(self.b, dtype), self.eps)


class MLPWeights(NamedTuple):
    """A built MLP: read-only W_in `[d_mlp, d_model]`, b_in `[d_mlp]`, W_out `[d_model, d_mlp]`, b_out `[d_model]`."""

    W_in: np.ndarray
    b_in: np.ndarray
    W_out: np.ndarray
    b_out: np.ndarray
    act: str

    def astype(self, dtype) -> MLPWeights:
        return MLPWeights(*(_cast(a, dtype) for a in self[:4]), self.act)


def _cast(a: np.ndarray | None, dtype) -> np.ndarray | None:
    """A read-only copy of `a` in `dtype` (`a` itself when it already is one)."""
    if a is None or a.dtype == dtype:
        return a
    out = a.astype(dtype)
    out.flags.writeable = False
    return out


@dataclass(eq=False)
class HeadWeights:
    """A built head's numbers, `[d_head, d_model]` etc., plus its exact (sympy) form on request."""

    layer: int
    index: int
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    b_Q: np.ndarray
    b_K: np.ndarray
    b_V: np.ndarray
    scale: float
    window: int | None
    pattern: str | Callable | None
    source: Head
    params: Params = field(default_factory=dict)
    mask: str = "causal"  # or "bidirectional": every query sees every key

    def __post_init__(self):
        for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V"):
            setattr(self, k, frozen(getattr(self, k)))

    @property
    def name(self) -> str:
        return f"head {self.layer}.{self.index}"

    @property
    def W_QK(self) -> np.ndarray:  # [d_model, d_model]
        return self.W_Q.T @ self.W_K

    @property
    def W_OV(self) -> np.ndarray:  # [d_model, d_model]
        return self.W_O @ self.W_V

    def exact(self, what: str, bind: bool = False):
        """The exact sympy form of "W_Q", …, "W_QK" or "W_OV" (symbols kept unless `bind`)."""
        params = self.params if bind else None
        parts = {"W_Q": self.source.W_Q, "W_K": self.source.W_K, "W_V": self.source.W_V, "W_O": self.source.W_O}

        def get(k):
            return exact(parts[k] if parts[k] is not None else getattr(self, k), params)

        if what == "W_QK":
            return (get("W_Q").T * get("W_K")).expand()
        if what == "W_OV":
            return (get("W_O") * get("W_V")).expand()
        if what in parts:
            return get(what)
        raise CircuitError(f"no matrix {what!r}: choose one of W_Q, W_K, W_V, W_O, W_QK, W_OV")


def _stack(arrays: list[np.ndarray], width: int) -> np.ndarray:  # h × [≤ width, ...] -> [h, width, ...]
    """Heads of one layer may differ in d_head; zero rows change nothing, so pad them to stack."""
    out = np.zeros((len(arrays), width, *arrays[0].shape[1:]), dtype=np.result_type(*arrays))
    for h, a in enumerate(arrays):
        out[h, : a.shape[0]] = a
    return out


class Block:
    """One layer's numbers, its heads stacked for the batched forward pass (in float64 unless `astype`)."""

    def __init__(
        self,
        heads: list[HeadWeights],
        b_O,
        mlp: MLPWeights | None,
        ln_attn: LayerNormWeights | None,
        ln_mlp: LayerNormWeights | None,
        d_model: int,
        qk_float32: bool = False,
    ):
        self.heads, self.b_O, self.mlp, self.ln_attn, self.ln_mlp = heads, b_O, mlp, ln_attn, ln_mlp
        self.qk_float32 = qk_float32  # HF GPT-Neo's q·k: float32 inputs, a float32 product, then back to float64
        n, d = len(heads), d_model
        dk = self.d_k = max([h.W_Q.shape[0] for h in heads], default=0)
        dv = self.d_v = max([h.W_V.shape[0] for h in heads], default=0)
        self.W_Q = _stack([h.W_Q for h in heads], dk) if n else np.zeros((0, 0, d))  # [h, d_head, d_model]
        self.W_K = _stack([h.W_K for h in heads], dk) if n else np.zeros((0, 0, d))  # [h, d_head, d_model]
        self.W_V = _stack([h.W_V for h in heads], dv) if n else np.zeros((0, 0, d))  # [h, d_value, d_model]
        self.W_O = (
            _stack([h.W_O.T for h in heads], dv).transpose(0, 2, 1) if n else np.zeros((0, d, 0))
        )  # [h, d_model, d_value]
        self.b_Q = _stack([h.b_Q for h in heads], dk) if n else np.zeros((0, 0))  # [h, d_head]
        self.b_K = _stack([h.b_K for h in heads], dk) if n else np.zeros((0, 0))  # [h, d_head]
        self.b_V = _stack([h.b_V for h in heads], dv) if n else np.zeros((0, 0))  # [h, d_value]
        self.scale = np.array([h.scale for h in heads], dtype=np.float64)  # [h]
        # picoGPT's c_attn: q, k and v of every head from one matrix product, then split.
        self.W_QKV = np.concatenate(
            [self.W_Q.reshape(n * dk, d), self.W_K.reshape(n * dk, d), self.W_V.reshape(n * dv, d)]
        ).T  # [d_model, h·(2·d_head + d_value)]
        self.b_QKV = np.concatenate([self.b_Q.ravel(), self.b_K.ravel(), self.b_V.ravel()])  # [h·(2·d_head + d_value)]
        self.W_O_cat = self.W_O.transpose(0, 2, 1).reshape(n * dv, d)  # [h·d_value, d_model]
        for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "scale", "W_QKV", "b_QKV", "W_O_cat"):
            # derived once from the heads: editing them would desynchronise
            setattr(self, k, frozen(getattr(self, k), owned=True))
        self.computed = np.array([h.pattern is None for h in heads])  # [h]: False where the pattern is fixed
        self._fixed: dict[int, np.ndarray | None] = {}

    def astype(self, dtype) -> Block:
        """The same layer with its forward-pass numbers in `dtype` (the heads' own weights stay float64)."""
        if np.dtype(dtype) == np.float64:
            return self
        out = object.__new__(Block)
        out.__dict__.update(self.__dict__)
        for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "scale", "W_QKV", "b_QKV", "W_O_cat", "b_O"):
            setattr(out, k, _cast(getattr(self, k), dtype))
        out.mlp = None if self.mlp is None else self.mlp.astype(dtype)
        out.ln_attn = None if self.ln_attn is None else self.ln_attn.astype(dtype)
        out.ln_mlp = None if self.ln_mlp is None else self.ln_mlp.astype(dtype)
        out._fixed = {}
        return out

    def visible(self, T: int, valid: np.ndarray | None) -> np.ndarray:  # [b, T] or None -> [b | 1, h, T, T]
        """Which keys each query of each head sees; `valid` None: no padding, one mask for every input (read-only)."""
        per_head = visible_masks(tuple((h.window, h.mask == "causal") for h in self.heads), T)  # [h, T, T]
        return per_head[None] if valid is None else per_head[None] & valid[:, None, None, :]

    def fixed_patterns(self, T: int, visible: np.ndarray, padded: bool) -> np.ndarray | None:
        """[b | 1, h, T, T]: each fixed head's pattern on what `visible` [b | 1, h, T, T] shows, renormalised;
        NaN for computed heads. Unpadded batches share one per length, computed (and a user's function checked) once."""
        if self.computed.all():
            return None
        if not padded and T in self._fixed:
            return self._fixed[T]
        vis = visible  # [b | 1, h, T, T]
        out = np.full(vis.shape, np.nan, dtype=self.W_QKV.dtype)
        for i, h in enumerate(self.heads):
            if h.pattern is not None:
                p = np.where(vis[:, i], fixed_pattern(h.pattern, T, h.name)[None], 0.0)  # [b | 1, T, T]
                total = p.sum(-1, keepdims=True)
                out[:, i] = p / np.where(total > 0, total, 1.0)
        if not padded:
            out.flags.writeable = False
            self._fixed[T] = out
        return out


@functools.lru_cache(maxsize=64)
def visible_masks(heads: tuple[tuple[int | None, bool], ...], T: int) -> np.ndarray:  # -> [h, T, T], read-only
    """Each head's mask from its (window, causal)."""
    masks = np.stack([F.causal_mask(T, w, c) for w, c in heads]) if heads else np.zeros((0, T, T), dtype=bool)
    masks.flags.writeable = False
    return masks
