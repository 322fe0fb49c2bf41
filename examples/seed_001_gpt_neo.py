"""Seed 001 with circuits on GPT-Neo: a layer's self-attention rebuilt from each head's W_QK and W_OV.

    python examples/seed_001_gpt_neo.py PATH [--layer 0]

PATH is a local GPT-Neo directory (e.g. EleutherAI/gpt-neo-125M saved with save_pretrained; see
README, "Real models"); nothing is downloaded. The functions take the models and inputs, so the
tests run the same code on a small randomly initialised GPT-Neo, local (windowed) layers included.

GPT-Neo's attention has no 1/sqrt(d_head) scale and no query/key/value biases, so for head i

    pattern_i = softmax(mask(x W_QK_i xᵀ)),    W_QK_i = W_Q_iᵀ W_K_i   [d_model, d_model]
    output    = Σ_i pattern_i x W_OV_iᵀ + b_O,  W_OV_i = W_O_i W_V_i   [d_model, d_model]

where mask hides future keys and, in local layers, keys `window` or more positions back.
Hugging Face computes q·k and the softmax in float32, so the two agree to float32 precision.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from circuits import CircuitError, Model
from circuits.display.render import console, pattern_heatmap
from circuits.io.hf import from_hf, load_hf
from circuits.model import functional as F


def seed_inputs(d_model: int, seed: int = 2349058, n: int = 5) -> np.ndarray:  # -> [n, d_model] float32
    """The seed's dummy vectors: a random base vector and n − 1 noisy copies (so attention is not the identity)."""
    rng = np.random.RandomState(seed)  # the same stream as the seed's np.random.seed
    base = rng.rand(1, d_model)
    x = np.empty((n, d_model), dtype=np.float32)
    x[0, :] = base
    x[1:, :] = rng.randn(n - 1, d_model) * 0.05 + base
    return x


def attention_weights(x: np.ndarray, W_QK: np.ndarray, visible: np.ndarray) -> np.ndarray:  # [T, d], [d, d] -> [T, T]
    """softmax(mask(x W_QK xᵀ)): the seed's attention_weights, with hidden keys exactly 0."""
    return F.softmax(x @ W_QK @ x.T, visible)


def self_attention(model: Model, x: np.ndarray, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """Every head's pattern [h, T, T] and the layer's attention output [T, d_model], from W_QK and W_OV alone."""
    T = x.shape[0]
    x = x.astype(np.float64)
    patterns, out = [], np.zeros_like(x)  # out: [T, d_model]
    for head in model.blocks[layer].heads:
        aw = attention_weights(x, head.W_QK, F.causal_mask(T, head.window))  # [T, T]
        patterns.append(aw)
        out += aw @ x @ head.W_OV.T  # [T, d_model]
    b_O = model.blocks[layer].b_O
    return np.stack(patterns), out + (b_O if b_O is not None else 0.0)


def seed_head_qk(hf_model, layer: int, i: int) -> np.ndarray:  # -> [d_model, d_model]
    """The seed's headQK: rows i·d_head … (i+1)·d_head of q_proj and k_proj (Linear stores [out, in])."""
    att = hf_model.transformer.h[layer].attn.attention
    dh = att.head_dim
    Q = att.q_proj.weight.detach().double().numpy()[i * dh : (i + 1) * dh]  # [d_head, d_model]
    K = att.k_proj.weight.detach().double().numpy()[i * dh : (i + 1) * dh]
    return Q.T @ K


def rebuild(hf_model, model: Model, x: np.ndarray, layer: int = 0) -> dict[str, float]:
    """Run HF's self-attention module on x [T, d_model] and compare it with the W_QK / W_OV rebuild.

    Returns the largest differences; patterns are compared absolutely, outputs relative to their size.
    """
    import torch

    att = hf_model.transformer.h[layer].attn.attention
    dtype = next(att.parameters()).dtype
    with torch.no_grad():
        fo, aw = att(torch.from_numpy(x)[None].to(dtype))  # [1, T, d_model], [1, h, T, T]
    patterns, result = self_attention(model, x, layer)
    fo = fo[0].double().numpy()
    return {
        "W_QK vs seed headQK": float(
            max(
                np.abs(model.head(layer, i).W_QK - seed_head_qk(hf_model, layer, i)).max()
                for i in range(model.n_heads(layer))
            )
        ),
        "pattern vs HF": float(np.abs(patterns - aw[0].double().numpy()).max()),
        "output vs HF (relative)": float(np.abs(result - fo).max() / max(np.abs(fo).max(), 1e-30)),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("path", help="a local GPT-Neo directory")
    p.add_argument("--layer", type=int, default=0, help="layer to rebuild (default 0, as the seed)")
    args = p.parse_args(argv)
    try:
        return run(args)
    except CircuitError as e:  # a missing tokenizer, a damaged config: one line, not a traceback
        print(f"seed_001_gpt_neo.py: {e}", file=sys.stderr)
        return 2


def run(args) -> int:
    out = console()
    hf_model = load_hf(args.path).eval()
    kind = getattr(hf_model.config, "model_type", None)
    if (
        kind != "gpt_neo"
    ):  # the exercises read gpt_neo's own module names: say so rather than fail on a missing attribute
        print(
            f"seed_001_gpt_neo.py: {args.path} holds a {kind} model; "
            "this example needs a GPT-Neo model (its q_proj / k_proj / v_proj layout): "
            f"try examples/seed_000_gpt2.py",
            file=sys.stderr,
        )
        return 2
    model = from_hf(hf_model)
    x = seed_inputs(model.d_model)
    patterns, result = self_attention(model, x, args.layer)
    labels = [f"x{i}" for i in range(len(x))]
    for h in (0, 1):
        out.print(pattern_heatmap(patterns[h], labels, title=f"layer {args.layer}, head {h}, from W_QK"))
    np.set_printoptions(precision=4)
    out.print(f"result[..., :5] =\n{result[:, :5]}")
    errors = rebuild(hf_model, model, x, args.layer)
    for what, err in errors.items():
        out.print(f"{what}: max |difference| = {err:.2e}")
    return 0 if errors["pattern vs HF"] < 1e-4 and errors["output vs HF (relative)"] < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
