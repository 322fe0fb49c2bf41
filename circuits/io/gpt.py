"""Hugging Face-style GPT-2 and GPT-Neo state dicts and configs: their layout read into circuits, and written from it.

GPT-2 keeps Conv1D weights as [in, out], GPT-Neo Linear weights as [out, in]; both are followed
exactly, so Hugging Face's `load_state_dict` accepts what `to_hf_state_dict` writes (gpt_export.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from circuits.errors import CircuitError
from circuits.io import sizes
from circuits.io.config import number, short, whole
from circuits.io.gpt_export import TO_HF_ACT, to_hf_state_dict  # noqa: F401 - re-exported: gpt is where callers look
from circuits.io.reader import StateReader, build_model
from circuits.io.sizes import bytes_text
from circuits.model.specs import MLP, Head, Layer, LayerNorm
from circuits.model.transformer import Model
from circuits.model.vocab import Vocab

# Hugging Face activation names <-> circuits MLP activations (numerically the same functions).
HF_ACTS = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "gelu": "gelu",
    "relu": "relu",
}
# Sizes a config must give, and sizes it may give (else Hugging Face's default, used for the size estimate).
HF_SIZES = {"gpt2": ("n_embd", "n_head", "n_layer"), "gpt_neo": ("hidden_size", "num_heads", "num_layers")}
HF_DEFAULTS = {
    "gpt2": {"vocab_size": 50257, "n_positions": 1024, "n_inner": None},
    "gpt_neo": {"vocab_size": 50257, "max_position_embeddings": 2048, "intermediate_size": None},
}
HF_FLAGS = ("scale_attn_weights", "scale_attn_by_inverse_layer_idx", "tie_word_embeddings")


def from_hf_state_dict(
    state: Mapping[str, object],
    config: Mapping,
    tokens: Sequence[str] | None = None,
    bos: str | None = None,
    name: str | None = None,
    source: str = "the state dict",
    qk_dtype: str = "float64",
    dtype: str = "float64",
) -> Model:
    """A GPT-2 or GPT-Neo state dict (numpy arrays, HF names) and its config dict -> a circuits Model.

    The weights are used as they are: no LayerNorm folding, no centring. `tokens` names the
    vocabulary (else "t0", "t1", …); `bos` marks the BOS token among them. `qk_dtype="float32"`
    reproduces Hugging Face GPT-Neo's float32 q·k; `dtype="float32"` runs the forward in float32 (see `Model`).
    """
    check_hf_config(config, source)
    model_type = config["model_type"]
    state = {k.removeprefix("transformer."): v for k, v in state.items()}
    r = StateReader(state, source)
    d = int(config["n_embd"] if model_type == "gpt2" else config["hidden_size"])
    n = int(config["n_head"] if model_type == "gpt2" else config["num_heads"])
    L = int(config["n_layer"] if model_type == "gpt2" else config["num_layers"])
    if d % n:
        raise CircuitError(f"{source}: hidden size {d} is not divisible by {n} heads")
    eps = float(config.get("layer_norm_epsilon", 1e-5))
    act = _hf_act(config.get("activation_function", "gelu_new"), source)
    W_E = r.take("wte.weight", (None, d)).T  # [d_model, n_vocab]
    V = W_E.shape[1]
    W_pos = r.take("wpe.weight", (None, d)).T  # [d_model, n_ctx]
    read = _gpt2_layer if model_type == "gpt2" else _neo_layer
    layers = [read(r, l, config, n, d, eps, act) for l in range(L)]
    ln_final = LayerNorm(w=r.take("ln_f.weight", (d,)), b=r.take("ln_f.bias", (d,)), eps=eps)
    if "lm_head.weight" in state or not config.get("tie_word_embeddings", True):
        W_U = r.take("lm_head.weight", (V, d))  # [n_vocab, d_model]
    else:
        W_U = W_E.T.copy()  # tied unembedding
    r.finish()
    vocab = _vocab(tokens, V, bos)
    scale = _gpt2_scale(config) if model_type == "gpt2" else 1.0
    return build_model(
        source,
        vocab,
        W_E,
        W_pos=W_pos,
        layers=layers,
        W_U=W_U,
        ln_final=ln_final,
        n_ctx=W_pos.shape[1],
        qk_multiplier=scale,
        name=name or config.get("_name_or_path") or model_type,
        qk_dtype=qk_dtype,
        dtype=dtype,
    )


# Sizes a config must give, and sizes it may give (else Hugging Face's default, used for the size estimate).


def check_hf_config(config, source: str) -> None:
    """A GPT-2 / GPT-Neo config (config.json, or a config's to_dict()) with every setting circuits reads usable.

    Sizes are whole numbers ≥ 1, eps a positive number, GPT-Neo's layer kinds and window well formed,
    and the model no larger than sizes.MAX_BYTES as float64; else a one-line CircuitError naming the key and its value.
    """
    if not isinstance(config, Mapping):
        raise CircuitError(
            f"{source}: the config is a JSON {_json_kind(config)}, but it needs to be an object "
            'of settings such as {"model_type": "gpt2", "n_embd": 768, …}'
        )
    model_type = config.get("model_type")
    if model_type not in ("gpt2", "gpt_neo"):
        raise CircuitError(
            f"{source}: model_type {short(model_type)} is not supported; circuits imports gpt2 and gpt_neo"
        )
    if missing := [k for k in HF_SIZES[model_type] if k not in config]:
        raise CircuitError(f"{source}: the {model_type} config has no {', '.join(map(repr, missing))}")
    given = {
        **HF_DEFAULTS[model_type],
        **{k: config[k] for k in (*HF_SIZES[model_type], *HF_DEFAULTS[model_type]) if k in config},
    }
    for key, value in given.items():
        if not (whole(value, 1) or (value is None and key in ("n_inner", "intermediate_size"))):
            raise CircuitError(f"{source}: {key} is {short(value)}; it needs a whole number ≥ 1")
    d, n, L = (int(given[k]) for k in HF_SIZES[model_type])
    if d % n:
        raise CircuitError(f"{source}: hidden size {d} is not divisible by {n} heads")
    eps = config.get("layer_norm_epsilon", 1e-5)
    if not (number(eps) and eps > 0):
        raise CircuitError(f"{source}: layer_norm_epsilon is {short(eps)}; it needs a positive number such as 1e-05")
    for key in HF_FLAGS:
        if key in config and not isinstance(config[key], bool):
            raise CircuitError(f"{source}: {key} is {short(config[key])}; it needs true or false")
    for key in ("bos_token_id", "eos_token_id"):
        ids = config.get(key)
        if not (ids is None or whole(ids, 0) or (isinstance(ids, list) and all(whole(i, 0) for i in ids))):
            raise CircuitError(f"{source}: {key} is {short(ids)}; it needs null or a token id ≥ 0")
    _hf_act(config.get("activation_function", "gelu_new"), source)
    if model_type == "gpt_neo":
        _neo_kinds(config, L, source)
    V, P, m = (given[k] for k in HF_DEFAULTS[model_type])
    m = 4 * d if m is None else m
    count = (
        V * d * (1 if config.get("tie_word_embeddings", True) else 2)
        + P * d
        + 2 * d
        + L * (4 * d * d + 2 * d * m + m + 9 * d)
    )
    if 8 * count > sizes.MAX_BYTES:
        raise CircuitError(
            f"{source}: the config describes {count:,} parameters, {bytes_text(8 * count)} as float64, "
            f"beyond the {bytes_text(sizes.MAX_BYTES)} circuits holds ({sizes.WHERE})"
        )


def _neo_kinds(config: Mapping, L: int, source: str) -> list[str]:
    """GPT-Neo's per-layer kinds from attention_types (and attention_layers, which must agree); local needs
    window_size."""
    layers, types = config.get("attention_layers"), config.get("attention_types")
    if layers is not None and not (isinstance(layers, (list, tuple)) and all(k in ("global", "local") for k in layers)):
        raise CircuitError(f'{source}: attention_layers is {short(layers)}; it needs a list of "global" and "local"')
    if types is None and layers is None:
        raise CircuitError(
            f"{source}: the gpt_neo config has no attention_types; it needs pairs of layer kinds and "
            'repeats, e.g. [[["global", "local"], 6]]'
        )
    kinds = list(layers or [])
    if types is not None:

        def pair(t):
            return (
                isinstance(t, (list, tuple))
                and len(t) == 2
                and isinstance(t[0], (list, tuple))
                and all(k in ("global", "local") for k in t[0])
                and whole(t[1], 1)
                and t[1] <= L
            )

        if not (isinstance(types, (list, tuple)) and types and all(pair(t) for t in types)):
            raise CircuitError(
                f"{source}: attention_types is {short(types)}; it needs pairs of layer kinds and "
                'repeats, e.g. [[["global", "local"], 6]]'
            )
        kinds = [k for ks, times in types for _ in range(times) for k in ks]
        if layers is not None and list(layers) != kinds:
            raise CircuitError(
                f"{source}: attention_layers {short(list(layers))} disagrees with attention_types "
                f"{short(types)}, which give {short(kinds)}"
            )
    if len(kinds) != L:
        raise CircuitError(f"{source}: attention_types give {len(kinds)} layer kinds for {L} layers")
    if "local" in kinds and "window_size" not in config:
        raise CircuitError(
            f"{source}: the gpt_neo config has local layers but no window_size; it needs a whole "
            "number ≥ 1 (GPT-Neo 125M uses 256)"
        )
    if "local" in kinds and not whole(config["window_size"], 1):
        raise CircuitError(f"{source}: window_size is {short(config['window_size'])}; it needs a whole number ≥ 1")
    return kinds


def _json_kind(value) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _hf_act(name: str, source: str) -> str:
    if not isinstance(name, str) or name not in HF_ACTS:
        raise CircuitError(f"{source}: activation {name!r} is not supported; circuits has {', '.join(HF_ACTS)}")
    return HF_ACTS[name]


def _gpt2_scale(config: Mapping) -> float | str:
    if config.get("scale_attn_by_inverse_layer_idx"):
        return 1.0  # per-head scales are set in _gpt2_layer
    return "1/sqrt(d_head)" if config.get("scale_attn_weights", True) else 1.0


def _split_heads(W: np.ndarray, n: int) -> list[np.ndarray]:  # [n·d_head, ...] -> n × [d_head, ...]
    return np.split(W, n, axis=0)


def _heads(Wq, Wk, Wv, Wo, bq, bk, bv, n: int, **head) -> list[Head]:
    """Heads from stacked [n·d_head, d_model] projections and W_O [d_model, n·d_head]."""
    parts = zip(
        _split_heads(Wq, n),
        _split_heads(Wk, n),
        _split_heads(Wv, n),
        _split_heads(Wo.T, n),
        _split_heads(bq, n),
        _split_heads(bk, n),
        _split_heads(bv, n),
    )
    return [Head(W_Q=q, W_K=k, W_V=v, W_O=o.T, b_Q=b1, b_K=b2, b_V=b3, **head) for q, k, v, o, b1, b2, b3 in parts]


def _hf_lns(r: StateReader, p: str, d: int, eps: float) -> tuple[LayerNorm, LayerNorm]:
    ln1 = LayerNorm(w=r.take(p + "ln_1.weight", (d,)), b=r.take(p + "ln_1.bias", (d,)), eps=eps)
    ln2 = LayerNorm(w=r.take(p + "ln_2.weight", (d,)), b=r.take(p + "ln_2.bias", (d,)), eps=eps)
    return ln1, ln2


def _gpt2_layer(r: StateReader, l: int, config: Mapping, n: int, d: int, eps: float, act: str) -> Layer:
    p = f"h.{l}."
    W = r.take(p + "attn.c_attn.weight", (d, 3 * d))  # Conv1D: [in, out] = [d_model, 3·d_model]
    b = r.take(p + "attn.c_attn.bias", (3 * d,))
    Wq, Wk, Wv = np.split(W.T, 3, axis=0)  # 3 × [n·d_head, d_model]
    bq, bk, bv = np.split(b, 3)
    Wo = r.take(p + "attn.c_proj.weight", (d, d)).T  # [d_model, n·d_head]
    scale = None
    if config.get("scale_attn_by_inverse_layer_idx"):
        scale = (1.0 / math.sqrt(d // n) if config.get("scale_attn_weights", True) else 1.0) / float(l + 1)
    heads = _heads(Wq, Wk, Wv, Wo, bq, bk, bv, n, scale=scale)
    W_in = r.take(p + "mlp.c_fc.weight", (d, None)).T  # [d_mlp, d_model]
    d_mlp = W_in.shape[0]
    mlp = MLP(
        W_in=W_in,
        b_in=r.take(p + "mlp.c_fc.bias", (d_mlp,)),
        W_out=r.take(p + "mlp.c_proj.weight", (d_mlp, d)).T,
        b_out=r.take(p + "mlp.c_proj.bias", (d,)),
        act=act,
    )
    ln1, ln2 = _hf_lns(r, p, d, eps)
    return Layer(heads=heads, b_O=r.take(p + "attn.c_proj.bias", (d,)), mlp=mlp, ln_attn=ln1, ln_mlp=ln2)


def neo_attention_layers(config: Mapping, source: str = "the config") -> list[str]:
    """GPT-Neo's per-layer "global"/"local", expanded from attention_types like [[["global", "local"], 6]]."""
    return _neo_kinds(config, int(config["num_layers"]), source)


def _neo_layer(r: StateReader, l: int, config: Mapping, n: int, d: int, eps: float, act: str) -> Layer:
    p = f"h.{l}.attn.attention."
    kinds = neo_attention_layers(config, r.source)
    window = int(config["window_size"]) if kinds[l] == "local" else None
    Wq = r.take(p + "q_proj.weight", (d, d))  # Linear: [out, in] = [n·d_head, d_model]
    Wk, Wv = r.take(p + "k_proj.weight", (d, d)), r.take(p + "v_proj.weight", (d, d))
    Wo = r.take(p + "out_proj.weight", (d, d))  # [d_model, n·d_head]
    zero = np.zeros(d)
    heads = _heads(Wq, Wk, Wv, Wo, zero, zero, zero, n, window=window)
    q = f"h.{l}."
    W_in = r.take(q + "mlp.c_fc.weight", (None, d))  # [d_mlp, d_model]
    d_mlp = W_in.shape[0]
    mlp = MLP(
        W_in=W_in,
        b_in=r.take(q + "mlp.c_fc.bias", (d_mlp,)),
        W_out=r.take(q + "mlp.c_proj.weight", (d, d_mlp)),
        b_out=r.take(q + "mlp.c_proj.bias", (d,)),
        act=act,
    )
    ln1, ln2 = _hf_lns(r, q, d, eps)
    return Layer(heads=heads, b_O=r.take(p + "out_proj.bias", (d,)), mlp=mlp, ln_attn=ln1, ln_mlp=ln2)


def _vocab(tokens: Sequence[str] | None, V: int, bos: str | None) -> Vocab:
    if tokens is None:
        return Vocab.numbered(V)
    names, seen = [], set()
    for i in range(V):
        t = tokens[i] if i < len(tokens) and tokens[i] is not None else f"<id:{i}>"
        if t in seen:
            t = f"{t}<id:{i}>"
        seen.add(t)
        names.append(t)
    return Vocab(names, bos=bos if bos in seen else None)
