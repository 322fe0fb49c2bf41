"""The path decomposition of an attention-only model's logits: direct, one head, chains of heads, biases."""

from __future__ import annotations

import numpy as np

from circuits.analysis.composition import head_name
from circuits.errors import CircuitError
from circuits.model.transformer import Model


def check_attention_only(model: Model) -> None:
    """The path view is exact only without MLPs and LayerNorm; say which part is in the way."""
    for l, layer in enumerate(model.layers):
        if layer.mlp is not None:
            raise CircuitError(f"the path view needs an attention-only model, but layer {l} has an MLP")
        if layer.ln_attn is not None or layer.ln_mlp is not None:
            raise CircuitError(f"the path view needs a model without LayerNorm, but layer {l} has one")
    if model.ln_final is not None:
        raise CircuitError("the path view needs a model without LayerNorm, but it has ln_final")


def path_count(model: Model) -> int:
    return int(np.prod([1 + model.n_heads(l) for l in range(model.n_layers)]))


def path_decomposition(trace) -> dict[str, np.ndarray]:
    """Each path's share of the logits `[b, T, n_vocab]` (of the final residual `[b, T, d_model]` without W_U).

    With the attention patterns of this trace held fixed, an attention-only model is linear in its
    embedding, so the logits are exactly the sum over paths: "direct" (W_U x), each head alone
    ("0.1": W_U A x W_OV^T), each chain of heads in increasing layers ("0.1 → 1.0"), and the
    biases ("bias 0" for b_O and b_V of layer 0, then through later heads; "b_U").
    """
    model = trace.model
    check_attention_only(model)
    if trace.embed is None or any(layer.pattern is None and layer.heads for layer in trace.layers):
        raise CircuitError(
            "the path decomposition needs the embedding and every attention pattern, which this trace "
            'does not hold: run the model with keep=("embed", "pattern") or keep="all"'
        )
    terms = {"direct": trace.resid(-1)}  # [b, T, d_model]
    for l, block in enumerate(model.blocks):
        new = {}
        for name, x in terms.items():  # every path so far ends before layer l
            for h in block.heads:
                A = trace.pattern(l, h.index)  # [b, T, T]
                new[head_name(h) if name == "direct" else f"{name} → {head_name(h)}"] = A @ x @ h.W_OV.T
        bias = _layer_bias(trace, l)
        if bias is not None:
            new[f"bias {l}"] = bias
        terms.update(new)
    if model.W_U is None:
        return terms
    out = {name: x @ model.W_U.T for name, x in terms.items()}  # [b, T, n_vocab]
    if model.b_U is not None:
        out["b_U"] = np.broadcast_to(model.b_U, trace.logits.shape).copy()
    return out


def _layer_bias(trace, l: int) -> np.ndarray | None:  # [b, T, d_model]
    """b_O plus each head's W_O b_V (weighted by its pattern's row sums, 1 wherever a row sees a key)."""
    block = trace.model.blocks[l]
    if block.b_O is None and not any(np.any(h.b_V) for h in block.heads):
        return None
    total = np.zeros(trace.resid_final.shape)
    if block.b_O is not None:
        total += block.b_O
    for h in block.heads:
        rows = trace.pattern(l, h.index).sum(-1, keepdims=True)  # [b, T, 1]
        total += rows * (h.W_O @ h.b_V)
    return total
