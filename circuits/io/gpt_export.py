"""A circuits model written in Hugging Face's GPT-2 or GPT-Neo layout: the state dict and the config to build it.

GPT-2 keeps Conv1D weights as [in, out], GPT-Neo Linear weights as [out, in]; both are followed
exactly, so Hugging Face's `load_state_dict` accepts what `to_hf_state_dict` writes (gpt.py reads it back).
"""

from __future__ import annotations

import math

import numpy as np

from circuits.errors import CircuitError
from circuits.model.transformer import Model

# circuits MLP activations -> Hugging Face activation names (numerically the same functions).
TO_HF_ACT = {"gelu_tanh": "gelu_new", "gelu_new": "gelu_new", "gelu": "gelu", "relu": "relu"}


def to_hf_state_dict(model: Model, arch: str | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """The model as a GPT-2 or GPT-Neo state dict (HF names, numpy float64) and the config dict to build it.

    `arch` is "gpt2" or "gpt_neo"; by default the attention scale decides (1/sqrt(d_head): GPT-2,
    1: GPT-Neo). The model must have GPT's shape: W_pos, LayerNorms, an MLP in every layer,
    equal heads filling d_model, no fixed patterns, and a W_U without bias.
    """
    n, dh, d_mlp, eps, act = _gpt_shape(model)
    arch = arch or _infer_arch(model, dh)
    if arch not in ("gpt2", "gpt_neo"):
        raise CircuitError(f"arch {arch!r} is not supported; choose 'gpt2' or 'gpt_neo'")
    kinds = _check_arch(model, arch, dh)
    sd: dict[str, np.ndarray] = {
        "transformer.wte.weight": model.W_E.T,  # [n_vocab, d_model]
        "transformer.wpe.weight": model.W_pos.T,
    }  # [n_ctx, d_model]
    for l, block in enumerate(model.blocks):
        p = f"transformer.h.{l}."
        Wq, Wk, Wv = (np.concatenate([getattr(h, m) for h in block.heads]) for m in ("W_Q", "W_K", "W_V"))  # [d, d]
        Wo = np.concatenate([h.W_O for h in block.heads], axis=1)  # [d_model, n·d_head]
        W_in, b_in, W_out, b_out, _ = block.mlp
        b_O = block.b_O if block.b_O is not None else np.zeros(model.d_model)
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = block.ln_attn.w, block.ln_attn.b
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = block.ln_mlp.w, block.ln_mlp.b
        if arch == "gpt2":
            bq, bk, bv = (np.concatenate([getattr(h, m) for h in block.heads]) for m in ("b_Q", "b_K", "b_V"))
            sd[p + "attn.c_attn.weight"] = np.concatenate([Wq, Wk, Wv]).T  # Conv1D [d_model, 3·d_model]
            sd[p + "attn.c_attn.bias"] = np.concatenate([bq, bk, bv])
            sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = Wo.T, b_O
            sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = W_in.T, b_in  # [d_model, d_mlp]
            sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = W_out.T, b_out  # [d_mlp, d_model]
        else:
            a = p + "attn.attention."
            sd[a + "q_proj.weight"], sd[a + "k_proj.weight"], sd[a + "v_proj.weight"] = Wq, Wk, Wv  # Linear [out, in]
            sd[a + "out_proj.weight"], sd[a + "out_proj.bias"] = Wo, b_O
            sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = W_in, b_in  # [d_mlp, d_model]
            sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = W_out, b_out  # [d_model, d_mlp]
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = model.ln_final.w, model.ln_final.b
    sd["lm_head.weight"] = model.W_U  # [n_vocab, d_model]
    config = _hf_config(model, arch, n, d_mlp, eps, act, kinds)
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in sd.items()}, config


def _gpt_shape(model: Model) -> tuple[int, int, int, float, str]:
    """(n_heads, d_head, d_mlp, eps, act) of a model shaped like GPT, or a CircuitError naming what is not."""
    if model.W_pos is None:
        raise CircuitError("a Hugging Face model needs W_pos; this model has no position embedding")
    if model.W_U is None or model.ln_final is None:
        raise CircuitError(
            "a Hugging Face model needs W_U and ln_final; this model lacks "
            + ("W_U" if model.W_U is None else "ln_final")
        )
    if model.b_U is not None and np.any(model.b_U):
        raise CircuitError("b_U is not zero, but GPT-2 and GPT-Neo unembed without a bias")
    if not model.n_layers:
        raise CircuitError("a Hugging Face model needs at least one layer; this model has none")
    d, eps = model.d_model, model.ln_final.eps
    n = model.n_heads(0)
    if not n or d % n:
        raise CircuitError(f"layer 0 has {n} head(s), which cannot split d_model = {d} evenly")
    dh = d // n
    d_mlp = act = None
    for l, block in enumerate(model.blocks):
        for part in ("ln_attn", "ln_mlp", "mlp"):
            if getattr(block, part) is None:
                raise CircuitError(f"layer {l} has no {part}; GPT-2 and GPT-Neo have one in every layer")
        if len(block.heads) != n:
            raise CircuitError(f"layer {l} has {len(block.heads)} heads but layer 0 has {n}; HF needs the same number")
        for h in block.heads:
            if h.pattern is not None:
                raise CircuitError(f"{h.name} has a fixed pattern {h.pattern!r}; an HF model computes every pattern")
            if h.W_Q.shape[0] != dh or h.W_V.shape[0] != dh:
                raise CircuitError(f"{h.name} has d_head {h.W_Q.shape[0]} (value {h.W_V.shape[0]}) but HF needs {dh}")
        for ln, where in ((block.ln_attn, "ln_attn"), (block.ln_mlp, "ln_mlp")):
            if ln.eps != eps:
                raise CircuitError(f"{where} of layer {l} has eps {ln.eps} but ln_final has {eps}; HF uses one eps")
        d_mlp = d_mlp or block.mlp.W_in.shape[0]
        act = act or block.mlp.act
        if block.mlp.W_in.shape[0] != d_mlp or block.mlp.act != act:
            raise CircuitError(f"the MLP of layer {l} differs from layer 0's in size or activation; HF uses one")
    if act not in TO_HF_ACT:
        raise CircuitError(f"the MLP activation {act!r} has no Hugging Face name")
    return n, dh, d_mlp, eps, act


def _infer_arch(model: Model, dh: int) -> str:
    scales = {h.scale for h in model.heads()}
    windows = {h.window for h in model.heads()}
    if scales == {1.0 / math.sqrt(dh)} and windows == {None}:
        return "gpt2"
    if scales == {1.0}:
        return "gpt_neo"
    raise CircuitError(
        f"attention scales {sorted(scales)} fit neither GPT-2 (1/sqrt(d_head)) nor GPT-Neo (1); pass arch="
    )


def _check_arch(model: Model, arch: str, dh: int) -> list[str]:
    """Layer kinds ("global"/"local") after checking the heads fit `arch`."""
    kinds, windows = [], set()
    for l, block in enumerate(model.blocks):
        ws = {h.window for h in block.heads}
        if len(ws) > 1:
            raise CircuitError(
                f"layer {l} mixes windows {sorted(ws, key=str)}; HF gives all heads of a layer one window"
            )
        w = ws.pop()
        for h in block.heads:
            if h.mask != "causal":
                raise CircuitError(f"{h.name} has mask={h.mask!r}; {arch} is causal")
            want = 1.0 / math.sqrt(dh) if arch == "gpt2" else 1.0
            if not math.isclose(h.scale, want, rel_tol=1e-15):
                raise CircuitError(f"{h.name} has attention scale {h.scale} but {arch} uses {want}")
            if arch == "gpt_neo" and (np.any(h.b_Q) or np.any(h.b_K) or np.any(h.b_V)):
                raise CircuitError(f"{h.name} has a query, key or value bias, which GPT-Neo does not have")
        if w is not None and arch == "gpt2":
            raise CircuitError(f"layer {l} has a local window {w}; GPT-2 has none (use arch='gpt_neo')")
        kinds.append("global" if w is None else "local")
        windows |= {w} - {None}
    if len(windows) > 1:
        raise CircuitError(f"local layers use windows {sorted(windows)}; GPT-Neo has one window_size")
    return kinds if arch == "gpt_neo" else []


def _hf_config(model: Model, arch: str, n: int, d_mlp: int, eps: float, act: str, kinds: list[str]) -> dict:
    V, d = model.W_E.shape[1], model.d_model
    bos = model.vocab.id(model.vocab.bos) if model.vocab.bos is not None else None
    common = {
        "vocab_size": V,
        "activation_function": TO_HF_ACT[act],
        "layer_norm_epsilon": eps,
        "bos_token_id": bos,
        "eos_token_id": bos,
        "tie_word_embeddings": bool(np.array_equal(model.W_U, model.W_E.T)),
    }
    if arch == "gpt2":
        return {
            "model_type": "gpt2",
            "n_positions": model.W_pos.shape[1],
            "n_embd": d,
            "n_layer": model.n_layers,
            "n_head": n,
            "n_inner": d_mlp,
            "scale_attn_weights": True,
            **common,
        }
    windows = {h.window for h in model.heads()} - {None}
    return {
        "model_type": "gpt_neo",
        "max_position_embeddings": model.W_pos.shape[1],
        "hidden_size": d,
        "num_layers": model.n_layers,
        "num_heads": n,
        "intermediate_size": d_mlp,
        "attention_types": [[kinds, 1]],
        "window_size": windows.pop() if windows else 256,
        **common,
    }
