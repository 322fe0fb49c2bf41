"""Seed 000 with circuits on GPT-2: attention patterns, repeated random tokens, layer-0 attention by hand.

    python examples/seed_000_gpt2.py PATH [--layer 6]

PATH is a local GPT-2 directory holding the model and its tokenizer (README, "Real models",
shows how to save one); nothing is downloaded. Each exercise is a function of the models and
token ids, so the tests run the same code on a small randomly initialised GPT-2.

Exercise 1: every head's pattern in a layer for the sentence; then BOS + 20 random tokens
(torch.manual_seed(2025), ids in [0, 100)) repeated, where the second copy is predicted far
better than the first (GPT-2 small: -6.289 vs -0.843), because induction heads copy the token
that followed the current one last time.
Exercise 2: layer 0's attention pattern A and output O recomputed from c_attn and c_proj
split per head, exactly as the seed does, and compared with Hugging Face and with circuits.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from circuits import CircuitError, Model
from circuits.display.render import console, pattern_heatmap
from circuits.io.hf import (
    encode,
    from_hf,
    halves_logprob,
    load_hf,
    load_tokenizer,
    repeated_random_tokens,
    token_strings,
)
from circuits.model import functional as F

SENTENCE = "The chicken did not cross the road because it was too tired."


def layer_patterns(model: Model, ids: np.ndarray, layer: int) -> np.ndarray:  # ids [1, T] -> [n_heads, T, T]
    """Exercise 1.4–1.7: every head's attention pattern in `layer` (HF: outputs.attentions[layer][0])."""
    return model.run_ids(ids).layers[layer].pattern[0]


def repeated_tokens(model: Model, bos_id: int, seed: int = 2025, seq_len: int = 20, high: int = 100):
    """Exercise 1.8–1.10: BOS + seq_len random tokens twice -> (ids [1, T], trace, HalvesLogprob)."""
    ids = repeated_random_tokens(seed=seed, seq_len=seq_len, high=high, bos_id=bos_id)  # [1, 1 + 2·seq_len]
    trace = model.run_ids(ids)
    return ids, trace, halves_logprob(trace, seq_len)


def split_matrices(hf_model, layer: int = 0) -> dict:
    """Exercise 2.3 as the seed writes it (row vectors, x @ W): c_attn split into W_Q, W_K, W_V, then per head."""
    cfg = hf_model.config
    attn = hf_model.transformer.h[layer].attn
    W = attn.c_attn.weight.detach().double().numpy()  # [d_model, 3·d_model]: Conv1D stores [in, out]
    bias = attn.c_attn.bias.detach().double().numpy()  # [3·d_model]
    W_Q, W_K, W_V = np.split(W, 3, axis=1)  # 3 × [d_model, d_model]
    b_Q, b_K, b_V = np.split(bias, 3)
    per_head = lambda M: np.split(M, cfg.n_head, axis=-1)  # noqa: E731  -> n_head × [..., d_head]
    return {
        "W_Qs": per_head(W_Q),
        "W_Ks": per_head(W_K),
        "W_Vs": per_head(W_V),
        "b_Qs": per_head(b_Q),
        "b_Ks": per_head(b_K),
        "b_Vs": per_head(b_V),
        "W_O": attn.c_proj.weight.detach().double().numpy(),  # [d_model, d_model]: aheads @ W_O
        "b_O": attn.c_proj.bias.detach().double().numpy(),
        "d_head": cfg.n_embd // cfg.n_head,
    }


def attention_by_hand(hf_model, model: Model, ids: np.ndarray, layer: int = 0) -> dict[str, float]:
    """Exercise 2.4–2.5: A and O of `layer` from the split matrices; the largest difference from HF and circuits.

    X is ln_1 of HF's residual stream (exercise 2.2). HF's attention module is called with an
    explicit causal mask: since transformers 5 its eager attention applies none of its own.
    """
    import torch

    m = split_matrices(hf_model, layer)
    block = hf_model.transformer.h[layer]
    with torch.no_grad():
        out = hf_model(torch.from_numpy(ids), output_attentions=True, output_hidden_states=True)
        X_t = block.ln_1(out.hidden_states[layer])  # [1, T, d_model]
        T = X_t.shape[1]
        causal = torch.full((T, T), float("-inf"), dtype=X_t.dtype).triu(1)[None, None]  # [1, 1, T, T]
        O_hf, _ = block.attn(X_t, attention_mask=causal)  # [1, T, d_model]
    X = X_t[0].double().numpy()  # [T, d_model]
    visible = F.causal_mask(T)  # [T, T]: torch.triu's complement
    patterns, heads = [], []
    for i in range(len(m["W_Qs"])):
        Q = X @ m["W_Qs"][i] + m["b_Qs"][i]  # [T, d_head]
        K = X @ m["W_Ks"][i] + m["b_Ks"][i]
        V = X @ m["W_Vs"][i] + m["b_Vs"][i]
        A = F.softmax(Q @ K.T / np.sqrt(m["d_head"]), visible)  # [T, T]: masked entries are exactly 0
        patterns.append(A)
        heads.append(A @ V)  # [T, d_head]
    aheads = np.concatenate(heads, axis=-1)  # [T, d_model]
    O = aheads @ m["W_O"] + m["b_O"]  # [T, d_model]
    t = model.run_ids(ids).layers[layer]
    A_hand = np.stack(patterns)  # [n_head, T, T]
    return {
        "X vs circuits attn_in": float(np.abs(X - t.attn_in[0]).max()),
        "A vs HF attentions": float(np.abs(A_hand - out.attentions[layer][0].double().numpy()).max()),
        "A vs circuits pattern": float(np.abs(A_hand - t.pattern[0]).max()),
        "O vs HF attn(X)": float(np.abs(O - O_hf[0].double().numpy()).max()),
        "O vs circuits attn_out": float(np.abs(O - t.attn_out[0]).max()),
        "W_Q vs circuits head W_Q.T": float(
            max(np.abs(W - model.head(layer, i).W_Q.T).max() for i, W in enumerate(m["W_Qs"]))
        ),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("path", help="a local GPT-2 directory (model and tokenizer)")
    p.add_argument(
        "--layer", type=int, default=None, help="layer to show for the repeated tokens (default: the middle)"
    )
    args = p.parse_args(argv)
    try:
        return run(args)
    except CircuitError as e:  # a missing tokenizer, a damaged config: one line, not a traceback
        print(f"seed_000_gpt2.py: {e}", file=sys.stderr)
        return 2


def run(args) -> int:
    out = console()
    hf_model = load_hf(args.path).double().eval()  # float64, so circuits and HF agree to ~1e-12
    kind = getattr(hf_model.config, "model_type", None)
    if kind != "gpt2":  # the exercises read gpt2's own module names: say so rather than fail on a missing attribute
        print(
            f"seed_000_gpt2.py: {args.path} holds a {kind} model; "
            "this example needs a GPT-2 model (its c_attn / c_proj layout): "
            f"try examples/seed_001_gpt_neo.py",
            file=sys.stderr,
        )
        return 2
    tokenizer = load_tokenizer(args.path, n_vocab=hf_model.config.vocab_size)
    model = from_hf(hf_model, tokenizer)
    last = model.n_layers - 1

    ids = encode(tokenizer, SENTENCE)  # [1, T], BOS first
    labels = token_strings(tokenizer, ids)
    for layer in (0, last):
        for h, pattern in enumerate(layer_patterns(model, ids, layer)):
            out.print(pattern_heatmap(pattern, labels, title=f"{SENTENCE!r}: layer {layer}, head {h}"))

    ids, trace, halves = repeated_tokens(model, bos_id=tokenizer.bos_token_id)
    labels = token_strings(tokenizer, ids)
    out.print(f"repeated tokens (last 25): {labels[-25:]}")
    layer = args.layer if args.layer is not None else model.n_layers // 2
    for h in range(model.n_heads(layer)):
        out.print(
            pattern_heatmap(trace.pattern(layer, h)[0], labels, title=f"repeated tokens: layer {layer}, head {h}")
        )
    out.print("log p(next token): " + " ".join(f"{x:.2f}" for x in halves.series))
    out.print(f"Performance on the first half: {halves.first_half:.3f}")
    out.print(f"Performance on the second half: {halves.second_half:.3f}")

    errors = attention_by_hand(hf_model, model, encode(tokenizer, SENTENCE), layer=0)
    for what, err in errors.items():
        out.print(f"exercise 2, {what}: max |difference| = {err:.2e}")
    return 0 if max(errors.values()) < 1e-8 else 1


if __name__ == "__main__":
    sys.exit(main())
