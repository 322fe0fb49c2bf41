"""The Model: hand-written specs built into checked, read-only weights, and run on token ids (running.py).

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

import contextlib
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from circuits.errors import CircuitError, CircuitWarning
from circuits.model.basis import Basis, NamedMatrix, as_basis
from circuits.model.blocks import Block, HeadWeights, LayerNormWeights, MLPWeights
from circuits.model.running import Running
from circuits.model.specs import (  # noqa: F401  (FIXED_PATTERNS, fixed_pattern: re-exported)
    FIXED_PATTERNS,
    MASKS,
    MLP,
    Head,
    Layer,
    LayerNorm,
    check_mask,
    fixed_pattern,
)
from circuits.model.vocab import Vocab
from circuits.model.weights import (
    Params,
    check_labels,
    frozen,
    matrix,
    symbols_in,
    vector,
)

REFUSED = object()  # the default of a keyword that is refused whatever its value (even None)
DTYPES = ("float64", "float32")  # what a forward pass, and its q·k (qk_dtype), may compute in
# A head wider than this is a typo (real models use 64–256): its q, k and v over a checker's batch
# would take gigabytes, so it is refused when built.
MAX_D_HEAD = 1024
# An MLP wider than this is a typo or a runaway answer (GPT-J has 16,384): its hidden units over a checker's batch
# would not fit in memory, so it is refused when built, naming the matrix, its shape and this limit.
MAX_D_MLP = 16384


def frozen_as(a: np.ndarray, dtype) -> np.ndarray:
    """A read-only C-contiguous copy of `a` in `dtype`."""
    out = np.array(a, dtype=dtype, order="C")
    out.flags.writeable = False
    return out


def _as_layer(layer, i: int) -> Layer:
    if isinstance(layer, Layer):
        return layer
    if isinstance(layer, Head) or not isinstance(layer, Sequence):
        raise CircuitError(
            f"layer {i} is a {type(layer).__name__}; a layer is a Layer or a list of heads, e.g. layers=[[Head(...)]]"
        )
    return Layer(heads=list(layer))


def _key_matrix(W_K, name: str, dk: int, d: int, p, reads) -> np.ndarray:
    """W_K in numbers; a wrong width (or a transpose) is said against W_Q's d_head, a row count is left to the
    caller."""
    try:
        return matrix(W_K, f"W_K of {name}", (None, d), ("d_head", "d_model"), p, reads)
    except CircuitError:
        return matrix(W_K, f"W_K of {name}", (dk, d), ("d_head", "d_model"), p, reads)


@contextlib.contextmanager
def _naming(name: str, head):
    """A head's matrix error carries (its text, the value it came from), so a puzzle can say it in its own names."""
    try:
        yield
    except CircuitError as e:
        e.culprits = [
            (f"{role} of {name}", getattr(head, role))
            for role in ("W_Q", "W_K", "W_V", "W_O")
            if getattr(head, role, None) is not None
        ]
        raise


class Model(Running):
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
    `dtype="float32"` runs the whole forward pass in float32, for real models (twice the speed, half
    the memory; logits agree with float64 to about 1e-4 on GPT-2 small). Puzzles and every exactness
    claim use the default, float64. Built weights (`model.head(l, h).W_Q`, …) stay float64 either way.
    `mask` is every head's attention mask unless the head gives its own: "causal" (the default, query i
    sees keys 0..i) or "bidirectional" (every key, as tracr compiles with causal=False).
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
        dtype: str = "float64",
        mask: str = "causal",
        *,
        attn_scale=REFUSED,  # TransformerLens's name, which divides q·k: any value is refused, naming qk_multiplier
    ):
        if attn_scale is not REFUSED:
            raise CircuitError(
                f"attn_scale={attn_scale!r}: it is now qk_multiplier (it multiplies q·k; "
                "TransformerLens's attn_scale divides): write qk_multiplier=..."
            )
        if not isinstance(vocab, Vocab):
            raise CircuitError(f"vocab must be a circuits.Vocab, not {type(vocab).__name__}")
        if params is not None and not isinstance(params, Mapping):
            raise CircuitError(
                f"params must be a dict of symbol -> number, e.g. {{'beta': 2.0}}, not a {type(params).__name__}"
            )
        if n_ctx is not None and (isinstance(n_ctx, bool) or not isinstance(n_ctx, (int, np.integer)) or n_ctx < 1):
            raise CircuitError(f"n_ctx = {n_ctx!r}; the context length must be a whole number ≥ 1")
        if qk_dtype not in DTYPES:
            raise CircuitError(f"qk_dtype = {qk_dtype!r}; choose one of {', '.join(map(repr, DTYPES))}")
        if str(np.dtype(dtype) if isinstance(dtype, type) else dtype) not in DTYPES:
            raise CircuitError(f"dtype = {dtype!r}; choose one of {', '.join(map(repr, DTYPES))}")
        check_mask(mask, None, "the model", none=False)
        self.vocab, self.name, self.qk_dtype, self.mask = vocab, name, qk_dtype, mask
        self.dtype = np.dtype(dtype)
        self.params = dict(params or {})
        tokens = ("the vocabulary", vocab.tokens)
        self.W_E = matrix(W_E, "W_E", (None, len(vocab)), ("d_model", "n_vocab"), self.params, (None, tokens))
        d = self.d_model = self.W_E.shape[0]
        if residual is None and isinstance(W_E, NamedMatrix):
            residual = W_E.rows
        self.residual = as_basis(residual if residual is not None else d)
        if len(self.residual) != d:
            raise CircuitError(
                f"the residual basis names {len(self.residual)} directions but W_E has d_model = {d} rows"
            )
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
        self.W_U = (
            None if W_U is None else matrix(W_U, "W_U", (None, d), ("n_vocab", "d_model"), self.params, (tokens, resid))
        )
        n_out = self.W_U.shape[0] if self.W_U is not None else 0
        self.b_U = None if b_U is None else vector(b_U, "b_U", n_out, "n_vocab", self.params)
        self.ln_final = self._ln(ln_final, "ln_final")
        self._warn_unused_params(W_E, W_pos, W_U, b_U)
        self._ready()

    def _ready(self) -> None:
        """The forward pass's own copies in `dtype`, made once: weights are read-only, so never checked again."""

        def cast(a):
            return None if a is None else (a if a.dtype == self.dtype else frozen_as(a, self.dtype))

        self._run_blocks = [b.astype(self.dtype) for b in self.blocks]
        self._W_E_rows = cast(self.W_E.T)  # [n_vocab, d_model]: a row per token (a view in float64)
        self._W_pos_rows = None if self.W_pos is None else cast(self.W_pos.T)  # [n_ctx, d_model]
        self._W_U_cols = None if self.W_U is None else cast(self.W_U.T)  # [d_model, n_vocab]
        self._b_U = cast(self.b_U)
        self._ln_final = None if self.ln_final is None else self.ln_final.astype(self.dtype)

    # --- building -------------------------------------------------------------------------
    def _ln(self, ln: LayerNorm | None, name: str) -> LayerNormWeights | None:
        if ln is None:
            return None
        d = self.d_model
        w = np.ones(d) if ln.w is None else vector(ln.w, f"the weight of {name}", d, "d_model", self.params)
        b = np.zeros(d) if ln.b is None else vector(ln.b, f"the bias of {name}", d, "d_model", self.params)
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
        if callable(h.pattern):
            fixed_pattern(h.pattern, 2, name)  # a user's function is tried once when built
        need_qk = h.pattern is None
        if need_qk and h.W_Q is None:
            raise CircuitError(f"W_Q of {name} is missing (give W_Q and W_K, or a fixed pattern=...)")
        if need_qk and h.W_K is None:
            raise CircuitError(f"W_K of {name} is missing (give W_Q and W_K, or a fixed pattern=...)")
        if h.W_V is None:
            raise CircuitError(f"W_V of {name} is missing; it needs shape (d_head, d_model) = (?, {d})")
        with _naming(name, h):
            W_Q = (
                matrix(h.W_Q, f"W_Q of {name}", (None, d), ("d_head", "d_model"), p, reads)
                if h.W_Q is not None
                else np.zeros((0, d))
            )
            dk = W_Q.shape[0]
            W_K = _key_matrix(h.W_K, name, dk, d, p, reads) if h.W_K is not None else np.zeros((dk, d))
            if h.W_Q is not None and h.W_K is not None and W_K.shape[0] != dk:  # neither is "the" wrong one
                raise CircuitError(
                    f"W_Q of {name} has {dk} row{'s' if dk != 1 else ''} and W_K of {name} has "
                    f"{W_K.shape[0]}: they need the same number of rows (d_head), one per query-key "
                    "feature"
                )
            if h.W_Q is None and h.W_K is not None:
                W_Q, dk = np.zeros_like(W_K), W_K.shape[0]
            W_V = matrix(h.W_V, f"W_V of {name}", (None, d), ("d_head", "d_model"), p, reads)
            dv = W_V.shape[0]
        for what, width in (("W_Q", dk), ("W_V", dv)):
            if width > MAX_D_HEAD:
                raise CircuitError(
                    f"{name} has d_head = {width:,} ({what} has {width:,} rows); a head may have at "
                    f"most {MAX_D_HEAD:,}, and a rank above d_model = {d} adds nothing"
                )
        with _naming(name, h):
            W_O = (
                matrix(h.W_O, f"W_O of {name}", (d, dv), ("d_model", "d_head"), p, writes)
                if h.W_O is not None
                else np.zeros((d, dv))
            )
        b_Q = np.zeros(dk) if h.b_Q is None else vector(h.b_Q, f"b_Q of {name}", dk, "d_head", p)
        b_K = np.zeros(dk) if h.b_K is None else vector(h.b_K, f"b_K of {name}", dk, "d_head", p)
        b_V = np.zeros(dv) if h.b_V is None else vector(h.b_V, f"b_V of {name}", dv, "d_head", p)
        mask = h.mask or self.mask
        check_mask(mask, h.window, name)
        return HeadWeights(
            l, i, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, self.head_multiplier(h, dk, name), h.window, h.pattern, h, p, mask
        )

    def _build_block(self, l: int, layer: Layer) -> Block:
        heads = [self._build_head(l, i, h) for i, h in enumerate(layer.heads)]
        d = self.d_model
        b_O = None if layer.b_O is None else vector(layer.b_O, f"b_O of layer {l}", d, "d_model", self.params)
        mlp = None
        if layer.mlp is not None:
            m = layer.mlp
            resid = self._resid_names
            W_in = matrix(
                m.W_in, f"W_in of the MLP in layer {l}", (None, d), ("d_mlp", "d_model"), self.params, (None, resid)
            )
            d_mlp = W_in.shape[0]
            if d_mlp > MAX_D_MLP:
                raise CircuitError(
                    f"W_in of the MLP in layer {l} has shape {W_in.shape}: d_mlp = {d_mlp:,} hidden units; "
                    f"an MLP may have at most {MAX_D_MLP:,} (MAX_D_MLP in circuits/model/transformer.py)"
                )
            W_out = matrix(
                m.W_out, f"W_out of the MLP in layer {l}", (d, d_mlp), ("d_model", "d_mlp"), self.params, (resid, None)
            )
            b_in = (
                np.zeros(d_mlp)
                if m.b_in is None
                else vector(m.b_in, f"b_in of the MLP in layer {l}", d_mlp, "d_mlp", self.params)
            )
            b_out = (
                np.zeros(d)
                if m.b_out is None
                else vector(m.b_out, f"b_out of the MLP in layer {l}", d, "d_model", self.params)
            )
            mlp = MLPWeights(W_in, frozen(b_in), W_out, frozen(b_out), m.act)
        return Block(
            heads,
            b_O,
            mlp,
            self._ln(layer.ln_attn, f"ln_attn of layer {l}"),
            self._ln(layer.ln_mlp, f"ln_mlp of layer {l}"),
            d,
            qk_float32=self.qk_dtype == "float32",
        )

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
                warnings.warn(
                    CircuitWarning(f"parameter {str(k)!r} is bound in params but no matrix uses it"), stacklevel=3
                )

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
