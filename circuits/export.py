"""Save and load models: TransformerLens- and Hugging Face-style state dicts, .npz and .safetensors files.

Numbers leave as float64 arrays under the field's names; everything else a circuits Model
needs (vocabulary, residual names, layer structure, attention scale, windows, fixed patterns,
LayerNorm eps, MLP activation) travels as a small JSON config stored inside the file.
Only numpy is needed for .npz; .safetensors needs the `safetensors` package. Nothing is pickled.

Shapes in TransformerLens style (row vectors): W_E [n_vocab, d_model], W_pos [n_ctx, d_model],
W_Q/W_K/W_V [n_heads, d_model, d_head], W_O [n_heads, d_head, d_model], W_in [d_model, d_mlp],
W_out [d_mlp, d_model], W_U [d_model, n_vocab]. Hugging Face style follows GPT-2 (Conv1D,
[in, out]) or GPT-Neo (Linear, [out, in]) exactly, so `load_state_dict` accepts it.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .errors import CircuitError
from .model import FIXED_PATTERNS, MLP, Head, Layer, LayerNorm, Model
from .vocab import Vocab

FORMAT = "circuits-model"
VERSION = 1
CONFIG_KEY = "__circuits_config__"  # the JSON config inside an .npz, as utf-8 bytes
METADATA_KEY = "circuits_config"  # … and inside a .safetensors header

# Hugging Face activation names <-> circuits MLP activations (numerically the same functions).
HF_ACTS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh",
           "gelu": "gelu", "relu": "relu"}
TO_HF_ACT = {"gelu_tanh": "gelu_new", "gelu_new": "gelu_new", "gelu": "gelu", "relu": "relu"}
# Buffers HF and TransformerLens keep in their state dicts: masks, not weights.
IGNORED_SUFFIXES = (".attn.bias", ".attn.masked_bias", ".attention.bias", ".attention.masked_bias",
                    ".attn.IGNORE", ".attn.mask")


# --- the JSON config ------------------------------------------------------------------------
def model_config(model: Model) -> dict:
    """Everything but the numbers: enough to rebuild `model` from a TransformerLens-style state dict."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": model.name,
        "vocab": {"tokens": list(model.vocab.tokens), "bos": model.vocab.bos},
        "residual": list(model.residual.labels),
        "n_ctx": model.n_ctx,
        "attn_scale": _scale_setting(model),
        "W_pos": model.W_pos is not None,
        "W_U": model.W_U is not None,
        "b_U": model.b_U is not None,
        "ln_final": _ln_config(model.ln_final),
        "layers": [_layer_config(model, l) for l in range(model.n_layers)],
    }


def _scale_setting(model: Model) -> float | str:
    s = model.attn_scale
    if isinstance(s, str):
        return s
    return model._scale(Head(), 0, "the model")  # binds a symbolic scale to its number


def _ln_config(ln) -> dict | None:
    return None if ln is None else {"eps": ln[2]}


def _layer_config(model: Model, l: int) -> dict:
    block = model.blocks[l]
    heads = []
    for h in block.heads:
        if callable(h.pattern):
            raise CircuitError(
                f"{h.name} has a fixed pattern given as a function, which cannot be saved; "
                f"only the named patterns ({', '.join(FIXED_PATTERNS)}) can"
            )
        heads.append({
            "d_head": int(h.W_Q.shape[0]),
            "d_value": int(h.W_V.shape[0]),
            "scale": None if h.source.scale is None else float(h.scale),
            "window": None if h.window is None else int(h.window),
            "pattern": h.pattern,
        })
    return {
        "heads": heads,
        "b_O": block.b_O is not None,
        "mlp": None if block.mlp is None else {"act": block.mlp[4]},
        "ln_attn": _ln_config(block.ln_attn),
        "ln_mlp": _ln_config(block.ln_mlp),
    }


# --- TransformerLens-style state dicts --------------------------------------------------------
def to_tl_state_dict(model: Model) -> dict[str, np.ndarray]:
    """TransformerLens names and shapes; heads of one layer with different d_head are zero-padded."""
    model_config(model)  # refuse what cannot be described before building arrays
    sd: dict[str, np.ndarray] = {"embed.W_E": model.W_E.T}  # [n_vocab, d_model]
    if model.W_pos is not None:
        sd["pos_embed.W_pos"] = model.W_pos.T  # [n_ctx, d_model]
    for l, block in enumerate(model.blocks):
        p = f"blocks.{l}."
        if block.ln_attn is not None:
            sd[p + "ln1.w"], sd[p + "ln1.b"] = block.ln_attn[0], block.ln_attn[1]
        if block.heads:
            sd[p + "attn.W_Q"] = block.W_Q.transpose(0, 2, 1)  # [h, d_model, d_head]
            sd[p + "attn.W_K"] = block.W_K.transpose(0, 2, 1)
            sd[p + "attn.W_V"] = block.W_V.transpose(0, 2, 1)  # [h, d_model, d_value]
            sd[p + "attn.W_O"] = block.W_O.transpose(0, 2, 1)  # [h, d_value, d_model]
            sd[p + "attn.b_Q"], sd[p + "attn.b_K"], sd[p + "attn.b_V"] = block.b_Q, block.b_K, block.b_V
        if block.b_O is not None:
            sd[p + "attn.b_O"] = block.b_O  # [d_model]
        if block.ln_mlp is not None:
            sd[p + "ln2.w"], sd[p + "ln2.b"] = block.ln_mlp[0], block.ln_mlp[1]
        if block.mlp is not None:
            W_in, b_in, W_out, b_out, _ = block.mlp
            sd[p + "mlp.W_in"], sd[p + "mlp.b_in"] = W_in.T, b_in  # [d_model, d_mlp]
            sd[p + "mlp.W_out"], sd[p + "mlp.b_out"] = W_out.T, b_out  # [d_mlp, d_model]
    if model.ln_final is not None:
        sd["ln_final.w"], sd["ln_final.b"] = model.ln_final[0], model.ln_final[1]
    if model.W_U is not None:
        sd["unembed.W_U"] = model.W_U.T  # [d_model, n_vocab]
    if model.b_U is not None:
        sd["unembed.b_U"] = model.b_U
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in sd.items()}


class _Reader:
    """Takes arrays out of a state dict by name, checking shapes; says which file and key is wrong."""

    def __init__(self, state: Mapping[str, object], source: str):
        self.state, self.source, self.used = state, source, set()

    def take(self, key: str, shape: tuple) -> np.ndarray:
        if key not in self.state:
            raise CircuitError(f"{self.source}: key {key!r} is missing")
        try:
            arr = np.asarray(self.state[key])
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
            raise CircuitError(f"{self.source}: key {key!r} cannot be read ({_first_line(e)})") from None
        want = tuple(a if s is None else s for s, a in zip(shape, arr.shape)) if arr.ndim == len(shape) else shape
        if arr.shape != want:
            need = "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise CircuitError(f"{self.source}: key {key!r} has shape {tuple(arr.shape)} but needs {need}")
        if arr.dtype.kind not in "fiub":
            raise CircuitError(f"{self.source}: key {key!r} holds {arr.dtype} values, not numbers")
        self.used.add(key)
        return arr.astype(np.float64)

    def finish(self, extra_ok=IGNORED_SUFFIXES) -> None:
        for key in self.state:
            if key not in self.used and key != CONFIG_KEY and not key.endswith(extra_ok):
                raise CircuitError(f"{self.source}: unexpected key {key!r}; it is not part of the model its config describes")


def from_tl_state_dict(state: Mapping[str, object], config: Mapping, source: str = "the state dict") -> Model:
    """Rebuild a Model from `to_tl_state_dict` arrays and `model_config`; a wrong key names `source`."""
    cfg = _check_config(config, source)
    try:
        return _from_tl_state_dict(state, cfg, source)
    except KeyError as e:  # an entry missing inside the config's vocab or layers
        raise CircuitError(f"{source}: the config has no {e.args[0]!r} entry where circuits needs one") from None
    except (TypeError, AttributeError, IndexError) as e:  # an entry of the wrong kind, e.g. a list for a dict
        raise CircuitError(f"{source}: the config has an entry of the wrong kind ({_first_line(e)})") from None


def _from_tl_state_dict(state: Mapping[str, object], cfg: Mapping, source: str) -> Model:
    r = _Reader(state, source)
    vocab = Vocab(cfg["vocab"]["tokens"], bos=cfg["vocab"]["bos"])
    V = len(vocab)
    W_E = r.take("embed.W_E", (V, None)).T  # [d_model, n_vocab]
    d = W_E.shape[0]
    W_pos = r.take("pos_embed.W_pos", (None, d)).T if cfg["W_pos"] else None  # [d_model, n_ctx]
    layers = [_tl_layer(r, l, lc, d) for l, lc in enumerate(cfg["layers"])]
    ln_final = _tl_ln(r, "ln_final", cfg["ln_final"], d)
    W_U = r.take("unembed.W_U", (d, V)).T if cfg["W_U"] else None  # [n_vocab, d_model]
    b_U = r.take("unembed.b_U", (V,)) if cfg["b_U"] else None
    r.finish()
    return _build(source, vocab, W_E, W_pos=W_pos, layers=layers, W_U=W_U, b_U=b_U, ln_final=ln_final,
                  residual=cfg["residual"], n_ctx=cfg["n_ctx"], attn_scale=cfg["attn_scale"], name=cfg["name"])


def _tl_ln(r: _Reader, prefix: str, lc: Mapping | None, d: int) -> LayerNorm | None:
    if lc is None:
        return None
    return LayerNorm(w=r.take(prefix + ".w", (d,)), b=r.take(prefix + ".b", (d,)), eps=float(lc["eps"]))


def _tl_layer(r: _Reader, l: int, lc: Mapping, d: int) -> Layer:
    p = f"blocks.{l}."
    heads = []
    if lc["heads"]:
        n = len(lc["heads"])
        dk = max(h["d_head"] for h in lc["heads"])
        dv = max(h["d_value"] for h in lc["heads"])
        W_Q = r.take(p + "attn.W_Q", (n, d, dk))  # [h, d_model, d_head]
        W_K = r.take(p + "attn.W_K", (n, d, dk))
        W_V = r.take(p + "attn.W_V", (n, d, dv))
        W_O = r.take(p + "attn.W_O", (n, dv, d))  # [h, d_value, d_model]
        b_Q, b_K, b_V = r.take(p + "attn.b_Q", (n, dk)), r.take(p + "attn.b_K", (n, dk)), r.take(p + "attn.b_V", (n, dv))
        for i, hc in enumerate(lc["heads"]):
            q, v = hc["d_head"], hc["d_value"]
            heads.append(Head(W_Q=W_Q[i, :, :q].T, W_K=W_K[i, :, :q].T, W_V=W_V[i, :, :v].T, W_O=W_O[i, :v].T,
                              b_Q=b_Q[i, :q], b_K=b_K[i, :q], b_V=b_V[i, :v], pattern=hc["pattern"],
                              scale=hc["scale"], window=hc["window"]))
    b_O = r.take(p + "attn.b_O", (d,)) if lc["b_O"] else None
    mlp = None
    if lc["mlp"] is not None:
        W_in = r.take(p + "mlp.W_in", (d, None))  # [d_model, d_mlp]
        d_mlp = W_in.shape[1]
        mlp = MLP(W_in=W_in.T, b_in=r.take(p + "mlp.b_in", (d_mlp,)), W_out=r.take(p + "mlp.W_out", (d_mlp, d)).T,
                  b_out=r.take(p + "mlp.b_out", (d,)), act=lc["mlp"]["act"])
    return Layer(heads=heads, b_O=b_O, mlp=mlp, ln_attn=_tl_ln(r, p + "ln1", lc["ln_attn"], d),
                 ln_mlp=_tl_ln(r, p + "ln2", lc["ln_mlp"], d))


def _check_config(config: Mapping, source: str) -> Mapping:
    if not isinstance(config, Mapping) or config.get("format") != FORMAT:
        raise CircuitError(f"{source}: the config is not a circuits model config (no \"format\": \"{FORMAT}\")")
    if config.get("version") != VERSION:
        raise CircuitError(f"{source}: config version {config.get('version')!r} is not supported "
                           f"(this circuits reads {VERSION})")
    for key in ("name", "vocab", "residual", "n_ctx", "attn_scale", "W_pos", "W_U", "b_U", "ln_final", "layers"):
        if key not in config:
            raise CircuitError(f"{source}: the config has no {key!r} entry")
    return config


def _build(source: str, vocab: Vocab, W_E, **kwargs) -> Model:
    try:
        return Model(vocab, W_E, **kwargs)
    except CircuitError as e:
        raise e.within(source) from None


# --- Hugging Face-style state dicts (GPT-2, GPT-Neo) ------------------------------------------
def from_hf_state_dict(state: Mapping[str, object], config: Mapping, tokens: Sequence[str] | None = None,
                       bos: str | None = None, name: str | None = None, source: str = "the state dict") -> Model:
    """A GPT-2 or GPT-Neo state dict (numpy arrays, HF names) and its config dict -> a circuits Model.

    The weights are used as they are: no LayerNorm folding, no centring. `tokens` names the
    vocabulary (else "t0", "t1", …); `bos` marks the BOS token among them.
    """
    kind = config.get("model_type")
    if kind not in ("gpt2", "gpt_neo"):
        raise CircuitError(f"{source}: model_type {kind!r} is not supported; circuits imports gpt2 and gpt_neo")
    sizes = ("n_embd", "n_head", "n_layer") if kind == "gpt2" else ("hidden_size", "num_heads", "num_layers")
    if missing := [k for k in sizes if k not in config]:
        raise CircuitError(f"{source}: the {kind} config has no {', '.join(map(repr, missing))}")
    state = {k.removeprefix("transformer."): v for k, v in state.items()}
    r = _Reader(state, source)
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
    return _build(source, vocab, W_E, W_pos=W_pos, layers=layers, W_U=W_U, ln_final=ln_final,
                  n_ctx=W_pos.shape[1], attn_scale=scale, name=name or config.get("_name_or_path") or kind)


def _hf_act(name: str, source: str) -> str:
    if name not in HF_ACTS:
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
    parts = zip(_split_heads(Wq, n), _split_heads(Wk, n), _split_heads(Wv, n), _split_heads(Wo.T, n),
                _split_heads(bq, n), _split_heads(bk, n), _split_heads(bv, n))
    return [Head(W_Q=q, W_K=k, W_V=v, W_O=o.T, b_Q=b1, b_K=b2, b_V=b3, **head) for q, k, v, o, b1, b2, b3 in parts]


def _hf_lns(r: _Reader, p: str, d: int, eps: float) -> tuple[LayerNorm, LayerNorm]:
    ln1 = LayerNorm(w=r.take(p + "ln_1.weight", (d,)), b=r.take(p + "ln_1.bias", (d,)), eps=eps)
    ln2 = LayerNorm(w=r.take(p + "ln_2.weight", (d,)), b=r.take(p + "ln_2.bias", (d,)), eps=eps)
    return ln1, ln2


def _gpt2_layer(r: _Reader, l: int, config: Mapping, n: int, d: int, eps: float, act: str) -> Layer:
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
    mlp = MLP(W_in=W_in, b_in=r.take(p + "mlp.c_fc.bias", (d_mlp,)),
              W_out=r.take(p + "mlp.c_proj.weight", (d_mlp, d)).T, b_out=r.take(p + "mlp.c_proj.bias", (d,)), act=act)
    ln1, ln2 = _hf_lns(r, p, d, eps)
    return Layer(heads=heads, b_O=r.take(p + "attn.c_proj.bias", (d,)), mlp=mlp, ln_attn=ln1, ln_mlp=ln2)


def neo_attention_layers(config: Mapping) -> list[str]:
    """GPT-Neo's per-layer "global"/"local", expanded from attention_types like [[["global", "local"], 6]]."""
    if config.get("attention_layers"):
        return list(config["attention_layers"])
    return [kind for kinds, times in config.get("attention_types", []) for _ in range(times) for kind in kinds]


def _neo_layer(r: _Reader, l: int, config: Mapping, n: int, d: int, eps: float, act: str) -> Layer:
    p = f"h.{l}.attn.attention."
    kinds = neo_attention_layers(config)
    if len(kinds) != int(config["num_layers"]):
        raise CircuitError(f"{r.source}: attention_types give {len(kinds)} layer kinds for {config['num_layers']} layers")
    if kinds[l] not in ("global", "local"):
        raise CircuitError(f"{r.source}: layer {l} has attention type {kinds[l]!r}; GPT-Neo has global and local")
    window = int(config["window_size"]) if kinds[l] == "local" else None
    Wq = r.take(p + "q_proj.weight", (d, d))  # Linear: [out, in] = [n·d_head, d_model]
    Wk, Wv = r.take(p + "k_proj.weight", (d, d)), r.take(p + "v_proj.weight", (d, d))
    Wo = r.take(p + "out_proj.weight", (d, d))  # [d_model, n·d_head]
    zero = np.zeros(d)
    heads = _heads(Wq, Wk, Wv, Wo, zero, zero, zero, n, window=window)
    q = f"h.{l}."
    W_in = r.take(q + "mlp.c_fc.weight", (None, d))  # [d_mlp, d_model]
    d_mlp = W_in.shape[0]
    mlp = MLP(W_in=W_in, b_in=r.take(q + "mlp.c_fc.bias", (d_mlp,)), W_out=r.take(q + "mlp.c_proj.weight", (d, d_mlp)),
              b_out=r.take(q + "mlp.c_proj.bias", (d,)), act=act)
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
    sd: dict[str, np.ndarray] = {"transformer.wte.weight": model.W_E.T,  # [n_vocab, d_model]
                                 "transformer.wpe.weight": model.W_pos.T}  # [n_ctx, d_model]
    for l, block in enumerate(model.blocks):
        p = f"transformer.h.{l}."
        Wq, Wk, Wv = (np.concatenate([getattr(h, m) for h in block.heads]) for m in ("W_Q", "W_K", "W_V"))  # [d, d]
        Wo = np.concatenate([h.W_O for h in block.heads], axis=1)  # [d_model, n·d_head]
        W_in, b_in, W_out, b_out, _ = block.mlp
        b_O = block.b_O if block.b_O is not None else np.zeros(model.d_model)
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = block.ln_attn[0], block.ln_attn[1]
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = block.ln_mlp[0], block.ln_mlp[1]
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
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = model.ln_final[0], model.ln_final[1]
    sd["lm_head.weight"] = model.W_U  # [n_vocab, d_model]
    config = _hf_config(model, arch, n, d_mlp, eps, act, kinds)
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in sd.items()}, config


def _gpt_shape(model: Model) -> tuple[int, int, int, float, str]:
    """(n_heads, d_head, d_mlp, eps, act) of a model shaped like GPT, or a CircuitError naming what is not."""
    if model.W_pos is None:
        raise CircuitError("a Hugging Face model needs W_pos; this model has no position embedding")
    if model.W_U is None or model.ln_final is None:
        raise CircuitError("a Hugging Face model needs W_U and ln_final; this model lacks " +
                           ("W_U" if model.W_U is None else "ln_final"))
    if model.b_U is not None and np.any(model.b_U):
        raise CircuitError("b_U is not zero, but GPT-2 and GPT-Neo unembed without a bias")
    if not model.n_layers:
        raise CircuitError("a Hugging Face model needs at least one layer; this model has none")
    d, eps = model.d_model, model.ln_final[2]
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
            if ln[2] != eps:
                raise CircuitError(f"{where} of layer {l} has eps {ln[2]} but ln_final has {eps}; HF uses one eps")
        d_mlp = d_mlp or block.mlp[0].shape[0]
        act = act or block.mlp[4]
        if block.mlp[0].shape[0] != d_mlp or block.mlp[4] != act:
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
    raise CircuitError(f"attention scales {sorted(scales)} fit neither GPT-2 (1/sqrt(d_head)) nor GPT-Neo (1); pass arch=")


def _check_arch(model: Model, arch: str, dh: int) -> list[str]:
    """Layer kinds ("global"/"local") after checking the heads fit `arch`."""
    kinds, windows = [], set()
    for l, block in enumerate(model.blocks):
        ws = {h.window for h in block.heads}
        if len(ws) > 1:
            raise CircuitError(f"layer {l} mixes windows {sorted(ws, key=str)}; HF gives all heads of a layer one window")
        w = ws.pop()
        for h in block.heads:
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
    common = {"vocab_size": V, "activation_function": TO_HF_ACT[act], "layer_norm_epsilon": eps,
              "bos_token_id": bos, "eos_token_id": bos,
              "tie_word_embeddings": bool(np.array_equal(model.W_U, model.W_E.T))}
    if arch == "gpt2":
        return {"model_type": "gpt2", "n_positions": model.W_pos.shape[1], "n_embd": d, "n_layer": model.n_layers,
                "n_head": n, "n_inner": d_mlp, "scale_attn_weights": True, **common}
    windows = {h.window for h in model.heads()} - {None}
    return {"model_type": "gpt_neo", "max_position_embeddings": model.W_pos.shape[1], "hidden_size": d,
            "num_layers": model.n_layers, "num_heads": n, "intermediate_size": d_mlp,
            "attention_types": [[kinds, 1]], "window_size": windows.pop() if windows else 256, **common}


# --- files ----------------------------------------------------------------------------------
def save(model: Model, path: str | Path) -> Path:
    """Write `model` to .npz (numpy only) or .safetensors: TransformerLens-style arrays plus the JSON config."""
    path = Path(path)
    config = json.dumps(model_config(model))
    arrays = to_tl_state_dict(model)
    if path.suffix == ".npz":
        np.savez(path, **arrays, **{CONFIG_KEY: np.frombuffer(config.encode("utf-8"), dtype=np.uint8)})
    elif path.suffix == ".safetensors":
        save_file = _safetensors(path).save_file
        save_file(arrays, str(path), metadata={METADATA_KEY: config})
    else:
        raise CircuitError(f"{path}: choose a file ending in .npz or .safetensors")
    return path


def load(path: str | Path) -> Model:
    """Read a model written by `save`; a damaged file or a wrong key is a one-line CircuitError naming both."""
    path = Path(path)
    if not path.is_file():
        raise CircuitError(f"{path}: no such file")
    if path.suffix == ".safetensors":
        return _load_safetensors(path)
    if path.suffix != ".npz":
        raise CircuitError(f"{path}: choose a file ending in .npz or .safetensors")
    return _load_npz(path)


def _load_npz(path: Path) -> Model:
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic[:1] == b"\x80":
        raise CircuitError(f"{path}: refusing to load pickled data; circuits reads plain arrays only")
    if not magic.startswith((b"PK", b"\x93NUMPY")):
        raise CircuitError(f"{path}: not a readable .npz file (it is not a zip archive of arrays)")
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e):
            raise CircuitError(f"{path}: refusing to load pickled data; circuits reads plain arrays only") from None
        raise CircuitError(f"{path}: not a readable .npz file ({_first_line(e)})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise CircuitError(f"{path}: not a readable .npz file ({_first_line(e)})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CircuitError(f"{path}: holds a single array, not an .npz archive of a circuits model")
    with archive:
        state = {}
        for key in archive.files:
            try:
                state[key] = archive[key]
            except ValueError as e:
                if "pickle" in str(e):
                    raise CircuitError(f"{path}: key {key!r} holds pickled objects; refusing to load it") from None
                raise CircuitError(f"{path}: key {key!r} cannot be read ({_first_line(e)})") from None
            except (OSError, EOFError, zipfile.BadZipFile) as e:
                raise CircuitError(f"{path}: key {key!r} cannot be read ({_first_line(e)})") from None
    if CONFIG_KEY not in state:
        raise CircuitError(f"{path}: key {CONFIG_KEY!r} is missing; this .npz was not written by circuits.export.save")
    config = _parse_config(bytes(state.pop(CONFIG_KEY).astype(np.uint8)).decode("utf-8", "replace"), path)
    return from_tl_state_dict(state, config, source=str(path))


def _load_safetensors(path: Path) -> Model:
    st = _safetensors(path)
    try:
        state = st.load_file(str(path))
        with _safe_open(path) as f:
            metadata = f.metadata() or {}
    except Exception as e:  # safetensors raises its own error type for damaged headers and data
        raise CircuitError(f"{path}: not a readable .safetensors file ({_first_line(e)})") from None
    if METADATA_KEY not in metadata:
        raise CircuitError(f"{path}: metadata {METADATA_KEY!r} is missing; for a Hugging Face checkpoint use "
                           "circuits.hf.from_hf(its directory)")
    return from_tl_state_dict(state, _parse_config(metadata[METADATA_KEY], path), source=str(path))


def _safe_open(path: Path):
    from safetensors import safe_open

    return safe_open(str(path), framework="np")


def _safetensors(path: Path):
    try:
        import safetensors.numpy as st
    except ImportError:
        raise CircuitError(f'{path}: .safetensors needs the safetensors package: pip install "circuits-workbench[hf]" '
                           "(or save to .npz)") from None
    return st


def _parse_config(text: str, path: Path) -> dict:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CircuitError(f"{path}: the circuits config is not valid JSON ({e.msg} at character {e.pos})") from None


def _first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
