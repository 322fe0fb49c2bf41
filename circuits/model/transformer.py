"""The model: heads, layers and a batched forward pass over hand-written weights.

Shape glossary (used in every shape comment and message of the package):
  d_model  width of the residual stream        d_head   width of one head's q, k (and v, z)
  n_heads  heads in a layer                    d_mlp    hidden width of an MLP
  n_ctx    longest input (W_pos columns)       n_vocab  tokens in the vocabulary (d_vocab in TL)
  batch    inputs run together                 seq      positions of an input (query / key axes)

Convention (column vectors, as in "A Mathematical Framework for Transformer Circuits"):
x is a d_model column; q = W_Q x + b_Q; W_E is [d_model, n_vocab] (a column per token),
W_pos is [d_model, n_ctx], W_Q/W_K/W_V are [d_head, d_model], W_O is [d_model, d_head],
W_U is [n_vocab, d_model]. Internally activations are rows: `[batch, seq, d_model]`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from circuits.errors import CircuitError, CircuitWarning
from circuits.model import functional as F
from circuits.model.basis import Basis, NamedMatrix, as_basis
from circuits.model.trace import LayerTrace, Trace
from circuits.model.vocab import Vocab
from circuits.model.weights import (
    Params,
    check_labels,
    exact,
    frozen,
    matrix,
    symbols_in,
    vector,
)

FIXED_PATTERNS = ("previous", "self", "first", "uniform")
QK_DTYPES = ("float64", "float32")
# A head wider than this is a typo (real models use 64–256): its q, k and v over a checker's batch
# would take gigabytes, so it is refused when built.
MAX_D_HEAD = 1024


@dataclass(eq=False)
class Head:
    """One attention head as the user writes it (any matrix-like values).

    `pattern` fixes the attention pattern instead of computing it from W_Q/W_K:
    "previous" (position i attends to i−1; position 0 to itself), "self",
    "first", "uniform", or a function T -> [T, T] array.
    `scale` overrides the model's attention scale; `window` makes the head local
    (key k is visible from query q iff 0 ≤ q−k < window).
    A head without W_O writes nothing into the residual stream (its z is still traced).
    """

    W_Q: object = None
    W_K: object = None
    W_V: object = None
    W_O: object = None
    b_Q: object = None
    b_K: object = None
    b_V: object = None
    pattern: str | Callable[[int], np.ndarray] | None = None
    scale: float | None = None
    window: int | None = None


@dataclass(eq=False)
class LayerNorm:
    """Pre-LayerNorm: (x − mean) / sqrt(var + eps) · w + b over d_model."""

    w: object = None
    b: object = None
    eps: float = 1e-5


@dataclass(eq=False)
class MLP:
    """W_out · act(W_in x + b_in) + b_out, with W_in [d_mlp, d_model] and W_out [d_model, d_mlp]."""

    W_in: object
    W_out: object
    b_in: object = None
    b_out: object = None
    act: str = "relu"


@dataclass(eq=False)
class Layer:
    """Heads summed into the residual stream (+ b_O), then an optional MLP; optional pre-LayerNorms."""

    heads: Sequence[Head] = ()
    b_O: object = None
    mlp: MLP | None = None
    ln_attn: LayerNorm | None = None
    ln_mlp: LayerNorm | None = None


class LayerNormWeights(NamedTuple):
    """A built LayerNorm: read-only `w`, `b` `[d_model]` and its `eps`."""

    w: np.ndarray
    b: np.ndarray
    eps: float


class MLPWeights(NamedTuple):
    """A built MLP: read-only W_in `[d_mlp, d_model]`, b_in `[d_mlp]`, W_out `[d_model, d_mlp]`, b_out `[d_model]`."""

    W_in: np.ndarray
    b_in: np.ndarray
    W_out: np.ndarray
    b_out: np.ndarray
    act: str


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
        get = lambda k: exact(parts[k] if parts[k] is not None else getattr(self, k), params)  # noqa: E731
        if what == "W_QK":
            return (get("W_Q").T * get("W_K")).expand()
        if what == "W_OV":
            return (get("W_O") * get("W_V")).expand()
        if what in parts:
            return get(what)
        raise CircuitError(f"no matrix {what!r}: choose one of W_Q, W_K, W_V, W_O, W_QK, W_OV")


class Block:
    """One layer's numbers, stacked over heads for the batched forward pass."""

    def __init__(self, heads: list[HeadWeights], b_O, mlp, ln_attn, ln_mlp):
        self.heads = heads
        dk = max([h.W_Q.shape[0] for h in heads], default=0)
        dv = max([h.W_V.shape[0] for h in heads], default=0)
        pad = lambda a, n: np.pad(a, [(0, n - a.shape[0])] + [(0, 0)] * (a.ndim - 1))  # noqa: E731
        # Heads of one layer may differ in d_head; zero rows change nothing, so pad to stack.
        self.W_Q = np.stack([pad(h.W_Q, dk) for h in heads]) if heads else np.zeros((0, 0, 0))  # [h, dk, d]
        self.W_K = np.stack([pad(h.W_K, dk) for h in heads]) if heads else np.zeros((0, 0, 0))
        self.W_V = np.stack([pad(h.W_V, dv) for h in heads]) if heads else np.zeros((0, 0, 0))  # [h, dv, d]
        self.W_O = np.stack([pad(h.W_O.T, dv).T for h in heads]) if heads else np.zeros((0, 0, 0))  # [h, d, dv]
        self.b_Q = np.stack([pad(h.b_Q, dk) for h in heads]) if heads else np.zeros((0, 0))
        self.b_K = np.stack([pad(h.b_K, dk) for h in heads]) if heads else np.zeros((0, 0))
        self.b_V = np.stack([pad(h.b_V, dv) for h in heads]) if heads else np.zeros((0, 0))
        self.scale = np.array([h.scale for h in heads], dtype=np.float64)
        self.d_k, self.d_v = dk, dv
        n, d = len(heads), (heads[0].W_V.shape[1] if heads else 0)
        self.W_QKV = np.concatenate(  # [d, h·dk + h·dk + h·dv]: one matmul for q, k and v
            [self.W_Q.reshape(n * dk, d), self.W_K.reshape(n * dk, d), self.W_V.reshape(n * dv, d)]
        ).T if heads else None
        self.b_QKV = np.concatenate([self.b_Q.ravel(), self.b_K.ravel(), self.b_V.ravel()]) if heads else None
        self.W_O_cat = self.W_O.transpose(0, 2, 1).reshape(n * dv, d) if heads else None  # [h·dv, d]
        self.b_O, self.mlp, self.ln_attn, self.ln_mlp = b_O, mlp, ln_attn, ln_mlp
        self.qk_float32 = False
        for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "scale", "W_QKV", "b_QKV", "W_O_cat"):
            if getattr(self, k) is not None:  # derived once from the heads: editing them would desynchronise
                setattr(self, k, frozen(getattr(self, k), owned=True))

    def visible(self, T: int, valid: np.ndarray) -> np.ndarray:  # [b, T] -> [b, h, T, T], read-only
        per_head = _causal_masks(tuple(h.window for h in self.heads), T)  # [h, T, T]
        if valid.all():  # the checker's batches are unpadded: a view, not b copies
            return np.broadcast_to(per_head, (valid.shape[0], *per_head.shape))
        return per_head[None] & valid[:, None, None, :]

    def fixed(self, T: int, visible: np.ndarray, pattern: np.ndarray) -> np.ndarray:
        for i, h in enumerate(self.heads):
            if h.pattern is None:
                continue
            fixed = fixed_pattern(h.pattern, T, h.name)
            pattern[:, i] = np.where(visible[:, i], fixed[None], 0.0)
            total = pattern[:, i].sum(-1, keepdims=True)
            pattern[:, i] /= np.where(total > 0, total, 1.0)
        return pattern

    def _check_scores(self, scores: np.ndarray, visible: np.ndarray) -> None:
        """A visible q·k beyond float64 (inf, or inf − inf = NaN) has lost its value: a pattern from it would be a guess."""
        if np.isfinite(scores).all():  # the common case, in one pass
            return
        computed = np.array([h.pattern is None for h in self.heads])[None, :, None, None]
        lost = ~np.isfinite(scores) & visible & computed
        if lost.any():
            at = tuple(np.argwhere(lost)[0])
            raise CircuitError(f"the attention scores of {self.heads[at[1]].name} overflowed to {scores[at]}: "
                               "the weights are too large for these inputs")

    def forward(self, x: np.ndarray, valid: np.ndarray, index: int) -> tuple[np.ndarray, LayerTrace]:
        b, T, d = x.shape  # [batch, seq, d_model]
        n, dk, dv = len(self.heads), self.d_k, self.d_v
        t = LayerTrace(resid_pre=x, heads=self.heads)
        a_in = F.layer_norm(x, *self.ln_attn) if self.ln_attn else x
        t.attn_in = a_in
        if n:
            qkv = a_in.reshape(b * T, d) @ self.W_QKV  # [b·T, h·(2dk+dv)]
            qkv += self.b_QKV
            q, k, v = np.split(qkv, [n * dk, 2 * n * dk], axis=-1)
            q = q.reshape(b, T, n, dk).transpose(0, 2, 1, 3)  # [b, h, T, dk]
            k = k.reshape(b, T, n, dk).transpose(0, 2, 1, 3)
            v = v.reshape(b, T, n, dv).transpose(0, 2, 1, 3)  # [b, h, T, dv]
            visible = self.visible(T, valid)
            if self.qk_float32:  # HF GPT-Neo's q·k: float32 inputs, a float32 product, then back to float64
                scores = F.scores_float32(q, k)
            else:
                scores = q @ k.transpose(0, 1, 3, 2)  # [b, h, T, T]
            scores *= self.scale[None, :, None, None]
            self._check_scores(scores, visible)
            pattern = self.fixed(T, visible, F.softmax(scores, visible))
            np.copyto(scores, -np.inf, where=~visible)  # the trace shows hidden scores as −inf
            z = pattern @ v  # [b, h, T, dv]
            attn_out = (z.transpose(0, 2, 1, 3).reshape(b * T, n * dv) @ self.W_O_cat).reshape(b, T, d)  # [b, T, d]
            t.q, t.k, t.v, t.scores, t.pattern, t.z = q, k, v, scores, pattern, z
        else:
            attn_out = np.zeros_like(x)
        if self.b_O is not None:
            attn_out += self.b_O
        t.attn_out = attn_out
        x = x + attn_out
        t.resid_mid = x
        if self.mlp is not None:
            W_in, b_in, W_out, b_out, act = self.mlp
            m_in = F.layer_norm(x, *self.ln_mlp) if self.ln_mlp else x
            # Matmuls on [b·T, ·] rows: numpy runs a 3-D @ 2-D product as b separate ones, twice as slow.
            pre = (m_in.reshape(b * T, d) @ W_in.T).reshape(b, T, W_in.shape[0])  # [b, T, d_mlp]
            pre += b_in
            post = F.ACTIVATIONS[act](pre)
            out = (post.reshape(b * T, W_in.shape[0]) @ W_out.T).reshape(b, T, d)  # [b, T, d]
            out += b_out
            t.mlp_in, t.mlp_pre, t.mlp_post, t.mlp_out = m_in, pre, post, out
            x = x + out
        t.resid_post = x
        if not np.isfinite(x).all():
            raise CircuitError(
                f"the residual stream overflowed to inf/NaN in layer {index}: the weights are too large for these inputs"
            )
        return x, t


def _as_layer(layer, i: int) -> Layer:
    if isinstance(layer, Layer):
        return layer
    if isinstance(layer, Head) or not isinstance(layer, Sequence):
        raise CircuitError(f"layer {i} is a {type(layer).__name__}; a layer is a Layer or a list of heads, "
                           "e.g. layers=[[Head(...)]]")
    return Layer(heads=list(layer))


@functools.lru_cache(maxsize=64)
def _causal_masks(windows: tuple[int | None, ...], T: int) -> np.ndarray:  # -> [h, T, T], read-only
    masks = np.stack([F.causal_mask(T, w) for w in windows]) if windows else np.zeros((0, T, T), dtype=bool)
    masks.flags.writeable = False
    return masks


def fixed_pattern(pattern, T: int, name: str) -> np.ndarray:  # -> [T, T]
    if callable(pattern):
        try:
            out = np.asarray(pattern(T), dtype=np.float64)
        except Exception as e:  # noqa: BLE001 - the user's function failing is reported in one line
            raise CircuitError(f"the fixed pattern of {name} raised {type(e).__name__} for T={T}: {e}") from e
        if out.shape != (T, T):
            raise CircuitError(f"the fixed pattern of {name} returned shape {out.shape} for T={T}; it needs ({T}, {T})")
        bad = ~np.isfinite(out) | (out < 0)
        if bad.any():
            q, k = (int(i) for i in np.argwhere(bad)[0])
            raise CircuitError(f"the fixed pattern of {name} has {out[q, k]} at [{q}, {k}] for T={T}; "
                               "attention weights must be finite and ≥ 0")
        return out
    idx = np.arange(T)
    out = np.zeros((T, T))
    if pattern == "previous":
        out[idx, np.maximum(idx - 1, 0)] = 1.0
    elif pattern == "self":
        out[idx, idx] = 1.0
    elif pattern == "first":
        out[:, 0] = 1.0
    elif pattern == "uniform":
        out = np.tril(np.ones((T, T))) / (idx + 1)[:, None]
    else:
        raise CircuitError(f"{name} has pattern={pattern!r}; choose one of {', '.join(FIXED_PATTERNS)} or a function T -> [T, T]")
    return out


class Model:
    """A transformer built from hand-written weights.

        model = Model(vocab, W_E, layers=[[Head(W_Q=..., W_K=..., W_V=..., W_O=...)]])
        trace = model.run(["abcce", "cbcce"])
        trace.pattern(0, 0)          # [batch, query, key]

    `residual` names the d_model directions (a Basis or list of names).
    `qk_multiplier` multiplies every q·k: 1.0 (raw dot products, as in the seeds' tables),
    "1/sqrt(d_head)" (GPT-2), or any number (TransformerLens's `attn_scale` divides instead:
    TL's attn_scale = sqrt(d_head) is qk_multiplier = "1/sqrt(d_head)"). `params` binds sympy symbols in any weight.
    `n_ctx` defaults to the number of W_pos columns (no limit without W_pos).
    `qk_dtype="float32"` rounds q and k to float32 and takes q·k in float32, as Hugging Face's
    GPT-Neo does (everything else stays float64); the default computes it exactly in float64.
    """

    def __init__(
        self,
        vocab: Vocab,
        W_E,
        W_pos=None,
        layers: Sequence[Layer | Sequence[Head]] = (),
        W_U=None,
        b_U=None,
        ln_final: LayerNorm | None = None,
        residual: Basis | Sequence[str] | None = None,
        n_ctx: int | None = None,
        qk_multiplier: float | str = 1.0,
        params: Params | None = None,
        name: str = "model",
        qk_dtype: str = "float64",
        attn_scale=None,
    ):
        if attn_scale is not None:
            raise CircuitError(f"attn_scale={attn_scale!r}: it is now qk_multiplier (it multiplies q·k; "
                               "TransformerLens's attn_scale divides): write qk_multiplier=...")
        if not isinstance(vocab, Vocab):
            raise CircuitError(f"vocab must be a circuits.Vocab, not {type(vocab).__name__}")
        if params is not None and not isinstance(params, Mapping):
            raise CircuitError(f"params must be a dict of symbol -> number, e.g. {{'beta': 2.0}}, not a {type(params).__name__}")
        if n_ctx is not None and (isinstance(n_ctx, bool) or not isinstance(n_ctx, (int, np.integer)) or n_ctx < 1):
            raise CircuitError(f"n_ctx = {n_ctx!r}; the context length must be a whole number ≥ 1")
        if qk_dtype not in QK_DTYPES:
            raise CircuitError(f"qk_dtype = {qk_dtype!r}; choose one of {', '.join(map(repr, QK_DTYPES))}")
        self.vocab, self.name, self.qk_dtype = vocab, name, qk_dtype
        self.params = dict(params or {})
        tokens = ("the vocabulary", vocab.tokens)
        self.W_E = matrix(W_E, "W_E", (None, len(vocab)), ("d_model", "n_vocab"), self.params, (None, tokens))
        d = self.d_model = self.W_E.shape[0]
        if residual is None and isinstance(W_E, NamedMatrix):
            residual = W_E.rows
        self.residual = as_basis(residual if residual is not None else d)
        if len(self.residual) != d:
            raise CircuitError(f"the residual basis names {len(self.residual)} directions but W_E has d_model = {d} rows")
        resid = self._resid_names = ("the residual stream", self.residual.labels)
        if isinstance(W_E, NamedMatrix):
            check_labels(W_E, "W_E", (resid, None))
        self.W_pos = None
        if W_pos is not None:
            self.W_pos = matrix(W_pos, "W_pos", (d, n_ctx), ("d_model", "n_ctx"), self.params, (resid, None))
        self.n_ctx = n_ctx if n_ctx is not None else (self.W_pos.shape[1] if self.W_pos is not None else None)
        self.qk_multiplier = qk_multiplier
        self.layers = [_as_layer(l, i) for i, l in enumerate(layers)]
        self.blocks = [self._build_block(i, l) for i, l in enumerate(self.layers)]
        for block in self.blocks:
            block.qk_float32 = qk_dtype == "float32"
        self.W_U = None if W_U is None else matrix(W_U, "W_U", (None, d), ("n_vocab", "d_model"), self.params,
                                                   (tokens, resid))
        n_out = self.W_U.shape[0] if self.W_U is not None else 0
        self.b_U = None if b_U is None else vector(b_U, "b_U", n_out, "n_vocab", self.params)
        self.ln_final = self._ln(ln_final, "ln_final")
        self._warn_unused_params(W_E, W_pos, W_U, b_U)

    # --- building -------------------------------------------------------------------------
    def _ln(self, ln: LayerNorm | None, name: str) -> LayerNormWeights | None:
        if ln is None:
            return None
        d = self.d_model
        w = np.ones(d) if ln.w is None else vector(ln.w, f"the weight of {name}", d, "d_model", self.params)
        b = np.zeros(d) if ln.b is None else vector(ln.b, f"the bias of {name}", d, "d_model", self.params)
        if isinstance(ln.eps, bool) or not isinstance(ln.eps, (int, float, np.integer, np.floating)) or not ln.eps > 0:
            raise CircuitError(f"{name} has eps = {ln.eps!r}; it must be a positive number")
        return LayerNormWeights(frozen(w), frozen(b), float(ln.eps))

    def head_multiplier(self, head: Head, d_head: int, name: str) -> float:
        """The number q·k is multiplied by in `head` (its own `scale`, else the model's qk_multiplier)."""
        s = head.scale if head.scale is not None else self.qk_multiplier
        if isinstance(s, str):
            if s.replace(" ", "") in ("1/sqrt(d_head)", "1/sqrt(dhead)", "rsqrt"):
                return 1.0 / np.sqrt(d_head) if d_head else 1.0
            raise CircuitError(f"attention scale {s!r} for {name} is not understood: give a number or '1/sqrt(d_head)'")
        s = float(matrix([s], f"the attention scale of {name}", (1,), None, self.params)[0])
        return s

    def _build_head(self, l: int, i: int, h: Head) -> HeadWeights:
        if not isinstance(h, Head):
            raise CircuitError(f"layer {l} entry {i} is a {type(h).__name__}, not a circuits.Head")
        d, name, p = self.d_model, f"head {l}.{i}", self.params
        reads, writes = (None, self._resid_names), (self._resid_names, None)
        if h.pattern is not None:
            fixed_pattern(h.pattern, 2, name)  # validate the name early
        need_qk = h.pattern is None
        if need_qk and h.W_Q is None:
            raise CircuitError(f"W_Q of {name} is missing (give W_Q and W_K, or a fixed pattern=...)")
        if need_qk and h.W_K is None:
            raise CircuitError(f"W_K of {name} is missing (give W_Q and W_K, or a fixed pattern=...)")
        if h.W_V is None:
            raise CircuitError(f"W_V of {name} is missing; it needs shape (d_head, d_model) = (?, {d})")
        W_Q = (matrix(h.W_Q, f"W_Q of {name}", (None, d), ("d_head", "d_model"), p, reads) if h.W_Q is not None
               else np.zeros((0, d)))
        dk = W_Q.shape[0]
        W_K = (matrix(h.W_K, f"W_K of {name}", (dk, d), ("d_head", "d_model"), p, reads) if h.W_K is not None
               else np.zeros((dk, d)))
        if h.W_Q is None and h.W_K is not None:
            W_K = matrix(h.W_K, f"W_K of {name}", (None, d), ("d_head", "d_model"), p, reads)
            W_Q, dk = np.zeros_like(W_K), W_K.shape[0]
        W_V = matrix(h.W_V, f"W_V of {name}", (None, d), ("d_head", "d_model"), p, reads)
        dv = W_V.shape[0]
        for what, width in (("W_Q", dk), ("W_V", dv)):
            if width > MAX_D_HEAD:
                raise CircuitError(f"{name} has d_head = {width:,} ({what} has {width:,} rows); a head may have at "
                                   f"most {MAX_D_HEAD:,}, and a rank above d_model = {d} adds nothing")
        W_O = (matrix(h.W_O, f"W_O of {name}", (d, dv), ("d_model", "d_head"), p, writes) if h.W_O is not None
               else np.zeros((d, dv)))
        b_Q = np.zeros(dk) if h.b_Q is None else vector(h.b_Q, f"b_Q of {name}", dk, "d_head", p)
        b_K = np.zeros(dk) if h.b_K is None else vector(h.b_K, f"b_K of {name}", dk, "d_head", p)
        b_V = np.zeros(dv) if h.b_V is None else vector(h.b_V, f"b_V of {name}", dv, "d_head", p)
        if h.window is not None and (isinstance(h.window, bool) or not isinstance(h.window, (int, np.integer)) or h.window < 1):
            raise CircuitError(f"{name} has window = {h.window!r}; a local window must be a whole number ≥ 1")
        if h.window is not None and (h.pattern == "first" or (h.pattern == "previous" and h.window < 2)):
            key = "position 0" if h.pattern == "first" else "the previous position"
            raise CircuitError(f"{name} has pattern={h.pattern!r} with window = {h.window}: the window hides {key}, "
                               "so some queries would attend to nothing; drop the window")
        return HeadWeights(l, i, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, self.head_multiplier(h, dk, name), h.window, h.pattern, h, p)

    def _build_block(self, l: int, layer: Layer) -> Block:
        heads = [self._build_head(l, i, h) for i, h in enumerate(layer.heads)]
        d = self.d_model
        b_O = None if layer.b_O is None else vector(layer.b_O, f"b_O of layer {l}", d, "d_model", self.params)
        mlp = None
        if layer.mlp is not None:
            m = layer.mlp
            resid = self._resid_names
            W_in = matrix(m.W_in, f"W_in of the MLP in layer {l}", (None, d), ("d_mlp", "d_model"), self.params,
                          (None, resid))
            d_mlp = W_in.shape[0]
            W_out = matrix(m.W_out, f"W_out of the MLP in layer {l}", (d, d_mlp), ("d_model", "d_mlp"), self.params,
                           (resid, None))
            b_in = np.zeros(d_mlp) if m.b_in is None else vector(m.b_in, f"b_in of the MLP in layer {l}", d_mlp, "d_mlp", self.params)
            b_out = np.zeros(d) if m.b_out is None else vector(m.b_out, f"b_out of the MLP in layer {l}", d, "d_model", self.params)
            if m.act not in F.ACTIVATIONS:
                raise CircuitError(f"the MLP in layer {l} has act={m.act!r}; choose one of {', '.join(F.ACTIVATIONS)}")
            mlp = MLPWeights(W_in, frozen(b_in), W_out, frozen(b_out), m.act)
        return Block(heads, b_O, mlp, self._ln(layer.ln_attn, f"ln_attn of layer {l}"), self._ln(layer.ln_mlp, f"ln_mlp of layer {l}"))

    def _warn_unused_params(self, *extra) -> None:
        if not self.params:
            return
        used: set[str] = set()
        for m in extra:
            used |= symbols_in(m) if m is not None else set()
        for layer in self.layers:
            for h in layer.heads:
                for m in (h.W_Q, h.W_K, h.W_V, h.W_O, h.b_Q, h.b_K, h.b_V, h.scale):
                    used |= symbols_in(m) if m is not None else set()
            if layer.mlp is not None:
                for m in (layer.mlp.W_in, layer.mlp.W_out, layer.mlp.b_in, layer.mlp.b_out):
                    used |= symbols_in(m) if m is not None else set()
        for k in self.params:
            if str(k) not in used:
                warnings.warn(CircuitWarning(f"parameter {str(k)!r} is bound in params but no matrix uses it"), stacklevel=3)

    # --- shape facts ----------------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        return len(self.blocks)

    def n_heads(self, layer: int) -> int:
        return len(self.blocks[layer].heads)

    def head(self, layer: int, index: int) -> HeadWeights:
        if not 0 <= layer < self.n_layers:
            raise CircuitError(f"there is no layer {layer}; the model has {self.n_layers} layer(s)")
        if not 0 <= index < self.n_heads(layer):
            raise CircuitError(f"there is no head {layer}.{index}; layer {layer} has {self.n_heads(layer)} head(s)")
        return self.blocks[layer].heads[index]

    def heads(self) -> list[HeadWeights]:
        return [h for b in self.blocks for h in b.heads]

    def __repr__(self) -> str:
        shape = " ".join(f"L{i}:{len(b.heads)}h{'+mlp' if b.mlp else ''}" for i, b in enumerate(self.blocks))
        return f"<Model {self.name!r} d_model={self.d_model} n_vocab={len(self.vocab)} {shape}>"

    # --- running --------------------------------------------------------------------------
    def encode(self, inputs, add_bos: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Inputs (a string, a list of strings or token lists, or an int array) -> ids [b, T], valid [b, T]."""
        if isinstance(inputs, np.ndarray) and inputs.dtype.kind not in "iu":
            if inputs.dtype.kind not in "UO":
                raise CircuitError(f"token ids must be integers; got an array of {inputs.dtype}")
            inputs = inputs.tolist()  # an array of strings or token lists: read it as the list it holds
        if isinstance(inputs, np.ndarray) and inputs.dtype.kind in "iu":
            ids = self._checked_ids(inputs[None] if inputs.ndim == 1 else inputs)
            return ids, np.ones(ids.shape, dtype=bool)
        if isinstance(inputs, str) or (isinstance(inputs, Sequence) and inputs and not isinstance(inputs[0], (str, Sequence, np.ndarray))):
            inputs = [inputs]
        if not isinstance(inputs, Sequence) or len(inputs) == 0:
            raise CircuitError("no inputs given; pass a string or a list of strings")
        fast = self._encode_same_length(inputs, add_bos)
        if fast is not None:
            return fast
        rows = []
        for n, text in enumerate(inputs):
            ids = np.asarray(text, dtype=np.int64) if isinstance(text, np.ndarray) else self.vocab.encode(text, add_bos)
            if len(ids) == 0:
                raise CircuitError(f"input {n} is empty; give at least one token")
            self._check_len(len(ids), n)
            rows.append(ids)
        T = max(len(r) for r in rows)
        ids = np.zeros((len(rows), T), dtype=np.int64)
        valid = np.zeros((len(rows), T), dtype=bool)
        for n, r in enumerate(rows):
            ids[n, : len(r)] = r
            valid[n, : len(r)] = True
        return ids, valid

    def _encode_same_length(self, inputs, add_bos) -> tuple[np.ndarray, np.ndarray] | None:
        """The checker's hot path: many token lists of one length, all known tokens. None: take the careful path."""
        if not isinstance(inputs[0], list) or not inputs[0]:
            return None
        T = len(inputs[0])
        ids_of = self.vocab.ids
        try:
            flat = [ids_of[t] for row in inputs for t in row]
        except (KeyError, TypeError):
            return None
        if len(flat) != T * len(inputs) or any(len(r) != T for r in inputs):
            return None
        ids = np.array(flat, dtype=np.int64).reshape(len(inputs), T)
        bos = self.vocab.bos
        if bos is not None:
            b = ids_of[bos]
            if (ids == b).any():
                return None
            if add_bos is None or add_bos:
                ids = np.concatenate([np.full((len(inputs), 1), b), ids], axis=1)
        self._check_len(ids.shape[1], 0)
        return ids, np.ones(ids.shape, dtype=bool)

    def _checked_ids(self, ids, valid=None) -> np.ndarray:
        """Token ids [batch, seq] as int64, or a one-line error: the checks every entry point makes."""
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise CircuitError(f"token ids must be integers; got an array of {ids.dtype}")
        if ids.ndim != 2:
            raise CircuitError(f"token ids must be [batch, seq]; got shape {ids.shape}")
        if ids.shape[1] == 0:
            raise CircuitError("the input is empty; give at least one token")
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.vocab)):
            n, t = (int(i) for i in np.argwhere((ids < 0) | (ids >= len(self.vocab)))[0])
            raise CircuitError(f"token id {int(ids[n, t])} of input {n} at position {t} is outside the vocabulary "
                               f"(ids 0..{len(self.vocab) - 1})")
        self._check_len(ids.shape[1], 0)
        if valid is not None and np.shape(valid) != ids.shape:
            raise CircuitError(f"valid has shape {np.shape(valid)} but the ids have {ids.shape}; it needs the same")
        return ids.astype(np.int64, copy=False)

    def _check_len(self, T: int, n: int) -> None:
        if self.n_ctx is not None and T > self.n_ctx:
            why = f" (W_pos has {self.W_pos.shape[1]} columns)" if self.W_pos is not None else ""
            raise CircuitError(f"input {n} has {T} tokens but n_ctx is {self.n_ctx}{why}")

    def run(self, inputs, add_bos: bool | None = None) -> Trace:
        """Run a batch (padded on the right where lengths differ) and keep every intermediate."""
        ids, valid = self.encode(inputs, add_bos)
        return self.run_ids(ids, valid)

    def run_ids(self, ids: np.ndarray, valid: np.ndarray | None = None) -> Trace:
        """The forward pass on ids [b, T]; `valid` [b, T] marks real (unpadded) tokens."""
        ids = self._checked_ids(ids, valid)
        if valid is not None:
            valid = np.asarray(valid, dtype=bool)
        # Overflow is not silent: every stage's result is checked below and named in a CircuitError.
        with np.errstate(over="ignore", invalid="ignore"):
            return self._forward(ids, valid)

    def _forward(self, ids: np.ndarray, valid: np.ndarray | None) -> Trace:
        b, T = ids.shape
        if valid is None:
            valid = np.ones((b, T), dtype=bool)
        embed = self.W_E.T[ids]  # [b, T, d]
        pos = np.broadcast_to(self.W_pos.T[:T] if self.W_pos is not None else np.zeros(self.d_model), embed.shape)  # a view
        x = embed + pos
        layers = []
        for i, block in enumerate(self.blocks):
            x, t = block.forward(x, valid, i)
            layers.append(t)
        final = F.layer_norm(x, *self.ln_final) if self.ln_final else x
        logits = logprobs = None
        if self.W_U is not None:
            logits = (final.reshape(b * T, self.d_model) @ self.W_U.T).reshape(b, T, self.W_U.shape[0])  # [b, T, n_vocab]
            if self.b_U is not None:
                logits += self.b_U
            logprobs = F.log_softmax(logits)
        for what, out in (("ln_final", final), ("the logits", logprobs)):
            if out is not None and not np.isfinite(out).all():
                raise CircuitError(f"{what} overflowed to inf/NaN: the weights are too large for these inputs")
        return Trace(self, ids, valid, embed, pos, layers, x, final, logits, logprobs)

    def __call__(self, inputs, add_bos: bool | None = None) -> Trace:
        return self.run(inputs, add_bos)
