"""Hugging Face-style GPT-2 and GPT-Neo state dicts and configs: their layout read into circuits, and written from it.

GPT-2 keeps Conv1D weights as [in, out], GPT-Neo Linear weights as [out, in]; both are followed
exactly, so Hugging Face's `load_state_dict` accepts what `to_hf_state_dict` writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from circuits.errors import CircuitError
from circuits.io import sizes
from circuits.io.config import number, short, whole
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
TO_HF_ACT = {"gelu_tanh": "gelu_new", "gelu_new": "gelu_new", "gelu": "gelu", "relu": "relu"}
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
    kind = config["model_type"]
    state = {k.removeprefix("transformer."): v for k, v in state.items()}
    r = StateReader(state, source)
    d = int(config["n_embd"] if kind == "gpt2" else config["hidden_size"])
    n = int(config["n_head"] if kind == "gpt2" else config["num_heads"])
    L = int(config["n_layer"] if kind == "gpt2" else config["num_layers"])
    if d % n:
        raise CircuitError(f"{source}: hidden size {d} is not divisible by {n} heads")
    eps = float(config.get("layer_norm_epsilon", 1e-5))
    act = _hf_act(config.get("activation_function", "gelu_new"), source)
    W_E = r.take("wte.weight", (None, d)).T  # [d_model, n_vocab]
    V = W_E.shape[1]
    W_pos = r.take("wpe.weight", (None, d)).T  # [d_model, n_ctx]
    read = _gpt2_layer if kind == "gpt2" else _neo_layer
    layers = [read(r, l, config, n, d, eps, act) for l in range(L)]
    ln_final = LayerNorm(w=r.take("ln_f.weight", (d,)), b=r.take("ln_f.bias", (d,)), eps=eps)
    if "lm_head.weight" in state or not config.get("tie_word_embeddings", True):
        W_U = r.take("lm_head.weight", (V, d))  # [n_vocab, d_model]
    else:
        W_U = W_E.T.copy()  # tied unembedding
    r.finish()
    vocab = _vocab(tokens, V, bos)
    scale = _gpt2_scale(config) if kind == "gpt2" else 1.0
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
        name=name or config.get("_name_or_path") or kind,
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
    kind = config.get("model_type")
    if kind not in ("gpt2", "gpt_neo"):
        raise CircuitError(f"{source}: model_type {short(kind)} is not supported; circuits imports gpt2 and gpt_neo")
    if missing := [k for k in HF_SIZES[kind] if k not in config]:
        raise CircuitError(f"{source}: the {kind} config has no {', '.join(map(repr, missing))}")
    given = {**HF_DEFAULTS[kind], **{k: config[k] for k in (*HF_SIZES[kind], *HF_DEFAULTS[kind]) if k in config}}
    for key, value in given.items():
        if not (whole(value, 1) or (value is None and key in ("n_inner", "intermediate_size"))):
            raise CircuitError(f"{source}: {key} is {short(value)}; it needs a whole number ≥ 1")
    d, n, L = (int(given[k]) for k in HF_SIZES[kind])
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
    if kind == "gpt_neo":
        _neo_kinds(config, L, source)
    V, P, m = (given[k] for k in HF_DEFAULTS[kind])
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
