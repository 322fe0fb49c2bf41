"""The forward pass, read top to bottom: embed, transformer blocks of attention and MLP, unembed.

Each block is picoGPT's `transformer_block` with circuits' extras (per-head scales and windows,
fixed patterns, padding, a check that nothing overflowed) and returns what it computed as one
LayerTrace, holding only the intermediates in `keep`.
"""

from __future__ import annotations

import numpy as np

from circuits.errors import CircuitError
from circuits.model import functional as F
from circuits.model.blocks import Block
from circuits.model.trace import LayerTrace


def split_heads(
    qkv: np.ndarray, n: int, d_head: int, d_value: int
):  # [b, T, h·(2·d_head + d_value)] -> 3 × [b, h, T, ·]
    b, T, _ = qkv.shape
    q, k, v = (
        qkv[..., : n * d_head],
        qkv[..., n * d_head : 2 * n * d_head],
        qkv[..., 2 * n * d_head :],
    )  # [b, T, h·d_head] ×2, [b, T, h·d_value]

    def heads(x, width):
        return x.reshape(b, T, n, width).transpose(0, 2, 1, 3)

    return heads(q, d_head), heads(k, d_head), heads(v, d_value)


def merge_heads(z: np.ndarray) -> np.ndarray:  # [b, h, T, d_value] -> [b, T, h·d_value]
    b, n, T, dv = z.shape
    return z.transpose(0, 2, 1, 3).reshape(b, T, n * dv)


def multi_head_attention(
    x: np.ndarray, block: Block, valid: np.ndarray | None
):  # [b, T, d_model] -> ..., [b, T, d_model]
    """Every head of a layer at once: q, k, v, scores, pattern, z and what the heads write, W_O z + b_O.
    `valid` [b, T] marks real tokens of a padded batch; None: no padding (one mask serves every input)."""
    T = x.shape[1]
    mask = block.visible(T, valid)  # [b | 1, h, T, T]
    fixed = block.fixed_patterns(T, mask, padded=valid is not None)  # [b | 1, h, T, T] or None
    q, k, v = split_heads(F.linear(x, block.W_QKV, block.b_QKV), len(block.heads), block.d_k, block.d_v)  # [b, h, T, ·]
    scores, pattern, z = F.attention(
        q, k, v, mask, block.scale[:, None, None], fixed, block.qk_float32
    )  # [b, h, T, T] ×2, [b, h, T, d_value]
    check_scores(scores, mask, block)
    np.copyto(scores, -np.inf, where=~mask)  # the trace shows hidden scores as −inf
    out = F.linear(merge_heads(z), block.W_O_cat, block.b_O)  # [b, T, d_model]
    return q, k, v, scores, pattern, z, out


def transformer_block(
    x: np.ndarray, block: Block, valid: np.ndarray | None, index: int, keep, edit: np.ndarray | None = None
) -> tuple[np.ndarray, LayerTrace]:
    """x + attention(ln(x)), then + mlp(ln(·)): [b, T, d_model] -> [b, T, d_model] and the layer's trace.
    `edit` [b, T, d_model], if given, is added to the residual stream after the heads (an intervention)."""
    attn_in = F.layer_norm(x, *block.ln_attn) if block.ln_attn else x  # [b, T, d_model]
    q = k = v = scores = pattern = z = None
    if block.heads:
        q, k, v, scores, pattern, z, attn_out = multi_head_attention(attn_in, block, valid)  # ..., [b, T, d_model]
    else:
        attn_out = np.zeros_like(x) + (block.b_O if block.b_O is not None else 0)  # [b, T, d_model]
    resid_mid = x + attn_out if edit is None else x + attn_out + edit  # [b, T, d_model]
    mlp_in = mlp_pre = mlp_post = mlp_out = None
    resid_post = resid_mid
    if block.mlp is not None:
        mlp_in = F.layer_norm(resid_mid, *block.ln_mlp) if block.ln_mlp else resid_mid  # [b, T, d_model]
        mlp_pre, mlp_post, mlp_out = F.mlp(mlp_in, *block.mlp)  # [b, T, d_mlp] ×2, [b, T, d_model]
        resid_post = resid_mid + mlp_out  # [b, T, d_model]
    if not np.isfinite(resid_post).all():
        raise CircuitError(
            f"the residual stream overflowed to inf/NaN in layer {index}: the weights are too large for these inputs"
        )
    trace = LayerTrace.keeping(
        keep,
        heads=block.heads,
        resid_pre=x,
        attn_in=attn_in,
        q=q,
        k=k,
        v=v,
        scores=scores,
        pattern=pattern,
        z=z,
        attn_out=attn_out,
        resid_mid=resid_mid,
        mlp_in=mlp_in,
        mlp_pre=mlp_pre,
        mlp_post=mlp_post,
        mlp_out=mlp_out,
        resid_post=resid_post,
    )
    return resid_post, trace


def check_scores(scores: np.ndarray, visible: np.ndarray, block: Block) -> None:
    """A visible q·k beyond the dtype's range (inf, or inf − inf = NaN) has lost its value: a pattern from it would
    be a guess."""
    if np.isfinite(scores).all():  # the common case, in one pass
        return
    lost = ~np.isfinite(scores) & visible & block.computed[None, :, None, None]
    if lost.any():
        at = tuple(np.argwhere(lost)[0])
        raise CircuitError(
            f"the attention scores of {block.heads[at[1]].name} overflowed to {scores[at]}: "
            "the weights are too large for these inputs"
        )
