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

from circuits.errors import CircuitError
from circuits.model.transformer import (
    FIXED_PATTERNS,
    MLP,
    QK_DTYPES,
    Head,
    Layer,
    LayerNorm,
    Model,
)
from circuits.model.vocab import Vocab

FORMAT = "circuits-model"
VERSION = 1
CONFIG_KEY = "__circuits_config__"  # the JSON config inside an .npz, as utf-8 bytes
METADATA_KEY = "circuits_config"  # … and inside a .safetensors header
# The most a model file or a Hugging Face config may ask circuits to hold, counted as float64 arrays
# (GPT-2 medium needs 2.8 GiB). Checked from zip directories, .npy / .safetensors headers and config
# sizes, before any array is read or allocated; raise it here for a larger model.
MAX_BYTES = 4 * 2**30
MAX_CONFIG_BYTES = 16 * 2**20  # the JSON config inside a file

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
        "qk_dtype": model.qk_dtype,
        "W_pos": model.W_pos is not None,
        "W_U": model.W_U is not None,
        "b_U": model.b_U is not None,
        "ln_final": _ln_config(model.ln_final),
        "layers": [_layer_config(model, l) for l in range(model.n_layers)],
    }


def _scale_setting(model: Model) -> float | str:
    s = model.qk_multiplier
    if isinstance(s, str):
        return s
    return model.head_multiplier(Head(), 0, "the model")  # binds a symbolic scale to its number


def _ln_config(ln) -> dict | None:
    return None if ln is None else {"eps": ln.eps}


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
        "mlp": None if block.mlp is None else {"act": block.mlp.act},
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
            sd[p + "ln1.w"], sd[p + "ln1.b"] = block.ln_attn.w, block.ln_attn.b
        if block.heads:
            sd[p + "attn.W_Q"] = block.W_Q.transpose(0, 2, 1)  # [h, d_model, d_head]
            sd[p + "attn.W_K"] = block.W_K.transpose(0, 2, 1)
            sd[p + "attn.W_V"] = block.W_V.transpose(0, 2, 1)  # [h, d_model, d_value]
            sd[p + "attn.W_O"] = block.W_O.transpose(0, 2, 1)  # [h, d_value, d_model]
            sd[p + "attn.b_Q"], sd[p + "attn.b_K"], sd[p + "attn.b_V"] = block.b_Q, block.b_K, block.b_V
        if block.b_O is not None:
            sd[p + "attn.b_O"] = block.b_O  # [d_model]
        if block.ln_mlp is not None:
            sd[p + "ln2.w"], sd[p + "ln2.b"] = block.ln_mlp.w, block.ln_mlp.b
        if block.mlp is not None:
            W_in, b_in, W_out, b_out, _ = block.mlp
            sd[p + "mlp.W_in"], sd[p + "mlp.b_in"] = W_in.T, b_in  # [d_model, d_mlp]
            sd[p + "mlp.W_out"], sd[p + "mlp.b_out"] = W_out.T, b_out  # [d_mlp, d_model]
    if model.ln_final is not None:
        sd["ln_final.w"], sd["ln_final.b"] = model.ln_final.w, model.ln_final.b
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
        with np.errstate(over="ignore", invalid="ignore"):  # said below in one line, not as a numpy warning
            out = arr.astype(np.float64, copy=False)  # the model copies it once when it is built
        if out.size and not (np.isfinite(out.min()) and np.isfinite(out.max())):  # NaN propagates through min/max
            at = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
            what = "a value too large for float64" if np.isfinite(arr[at]) else f"{arr[at]}"
            raise CircuitError(f"{self.source}: key {key!r} has {what} at {list(at)}; every entry must be finite")
        return out

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
    try:
        vocab = Vocab(cfg["vocab"]["tokens"], bos=cfg["vocab"]["bos"])
    except CircuitError as e:
        raise e.within(source) from None
    V = len(vocab)
    W_E = r.take("embed.W_E", (V, None)).T  # [d_model, n_vocab]
    d = W_E.shape[0]
    if d < 1:
        raise CircuitError(f"{source}: key 'embed.W_E' has shape {W_E.T.shape}; d_model must be at least 1")
    W_pos = r.take("pos_embed.W_pos", (None, d)).T if cfg["W_pos"] else None  # [d_model, n_ctx]
    layers = [_tl_layer(r, l, lc, d) for l, lc in enumerate(cfg["layers"])]
    ln_final = _tl_ln(r, "ln_final", cfg["ln_final"], d)
    W_U = r.take("unembed.W_U", (d, V)).T if cfg["W_U"] else None  # [n_vocab, d_model]
    b_U = r.take("unembed.b_U", (V,)) if cfg["b_U"] else None
    r.finish()
    return _build(source, vocab, W_E, W_pos=W_pos, layers=layers, W_U=W_U, b_U=b_U, ln_final=ln_final,
                  residual=cfg["residual"], n_ctx=cfg["n_ctx"], qk_multiplier=cfg["attn_scale"], name=cfg["name"],
                  qk_dtype=cfg.get("qk_dtype", "float64"))


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
        _check_padding(r.source, p, lc["heads"], W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, b_Q=b_Q, b_K=b_K, b_V=b_V)
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


def _check_padding(source: str, prefix: str, heads: list, **arrays: np.ndarray) -> None:
    """Heads narrower than their layer are zero-padded on save; weights in the padding mean config and arrays disagree."""
    for i, hc in enumerate(heads):
        for name, a in arrays.items():
            size = hc["d_value"] if name in ("W_V", "b_V", "W_O") else hc["d_head"]
            part = a[i, size:] if name in ("W_O", "b_Q", "b_K", "b_V") else a[i, :, size:]
            if np.any(part):
                raise CircuitError(f"{source}: key {prefix + 'attn.' + name!r} has non-zero weights for head {i} beyond "
                                   f"the {'d_value' if name in ('W_V', 'b_V', 'W_O') else 'd_head'} {size} its config "
                                   "gives; the config and the arrays disagree")


def _check_config(config: Mapping, source: str) -> Mapping:
    if not isinstance(config, Mapping) or config.get("format") != FORMAT:
        raise CircuitError(f"{source}: the config is not a circuits model config (no \"format\": \"{FORMAT}\")")
    if config.get("version") != VERSION:
        raise CircuitError(f"{source}: config version {_short(config.get('version'))} is not supported "
                           f"(this circuits reads {VERSION})")
    for key in ("name", "vocab", "residual", "n_ctx", "attn_scale", "W_pos", "W_U", "b_U", "ln_final", "layers"):
        if key not in config:
            raise CircuitError(f"{source}: the config has no {key!r} entry")
    _ConfigCheck(source).model(config)
    return config


def _whole(value, least: int) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= least


def _number(value) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            and bool(np.isfinite(value)))


def _short(value) -> str:
    """A string as its repr ('twelve'), other values as their JSON spelling (null, true, [1, 2]); one short line."""
    try:
        text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _ConfigCheck:
    """Every entry of a circuits config has the kind and range a model needs; the error names the entry and its value."""

    def __init__(self, source: str):
        self.source = source

    def need(self, ok: bool, where: str, value, what: str) -> None:
        if not ok:
            raise CircuitError(f"{self.source}: the config's {where} is {_short(value)}; it needs {what}")

    def entry(self, parent, key: str, where: str):
        if not isinstance(parent, Mapping):
            raise CircuitError(f"{self.source}: the config has an entry of the wrong kind: {where} is "
                               f"{_short(parent)}; it needs an object")
        if key not in parent:
            raise CircuitError(f"{self.source}: the config has no {key!r} entry where circuits needs one")
        return parent[key]

    def model(self, cfg: Mapping) -> None:
        self.need(isinstance(cfg["name"], str), "name", cfg["name"], "a string")
        tokens, bos = self.entry(cfg["vocab"], "tokens", "vocab"), self.entry(cfg["vocab"], "bos", "vocab")
        self.need(isinstance(tokens, list) and all(isinstance(t, str) for t in tokens), "vocab.tokens", tokens,
                  "a list of token strings")
        self.need(bos is None or isinstance(bos, str), "vocab.bos", bos, "null or one of the tokens")
        res = cfg["residual"]
        self.need(res is None or (isinstance(res, list) and all(isinstance(r, str) for r in res)), "residual", res,
                  "a list of direction names")
        self.need(cfg["n_ctx"] is None or _whole(cfg["n_ctx"], 1), "n_ctx", cfg["n_ctx"], "a whole number ≥ 1 (or null)")
        scale = cfg["attn_scale"]
        self.need(isinstance(scale, str) or _number(scale), "attn_scale", scale, "a finite number or '1/sqrt(d_head)'")
        for key in ("W_pos", "W_U", "b_U"):
            self.need(isinstance(cfg[key], bool), key, cfg[key], "true or false")
        qk = cfg.get("qk_dtype", "float64")  # absent in files written before it existed
        self.need(qk in QK_DTYPES, "qk_dtype", qk, " or ".join(map(repr, QK_DTYPES)))
        self.layer_norm(cfg["ln_final"], "ln_final")
        if not isinstance(cfg["layers"], list):
            raise CircuitError(f"{self.source}: the config has an entry of the wrong kind: layers is "
                               f"{_short(cfg['layers'])}; it needs a list of layers")
        for l, lc in enumerate(cfg["layers"]):
            self.layer(lc, f"layers[{l}]")

    def layer(self, lc, where: str) -> None:
        heads = self.entry(lc, "heads", where)
        self.need(isinstance(heads, list), f"{where}.heads", heads, "a list of heads")
        for i, hc in enumerate(heads):
            at = f"{where}.heads[{i}]"
            pattern = self.entry(hc, "pattern", at)
            self.need(pattern is None or isinstance(pattern, str), f"{at}.pattern", pattern, "null or a pattern name")
            d_head, d_value = self.entry(hc, "d_head", at), self.entry(hc, "d_value", at)
            self.need(_whole(d_head, 0 if pattern else 1), f"{at}.d_head", d_head,
                      "a whole number ≥ 1 (0 only for a fixed-pattern head)")
            self.need(_whole(d_value, 1), f"{at}.d_value", d_value, "a whole number ≥ 1")
            scale, window = self.entry(hc, "scale", at), self.entry(hc, "window", at)
            self.need(scale is None or _number(scale), f"{at}.scale", scale, "null or a finite number")
            self.need(window is None or _whole(window, 1), f"{at}.window", window, "null or a whole number ≥ 1")
        b_O = self.entry(lc, "b_O", where)
        self.need(isinstance(b_O, bool), f"{where}.b_O", b_O, "true or false")
        mlp = self.entry(lc, "mlp", where)
        if mlp is not None:
            act = self.entry(mlp, "act", f"{where}.mlp")
            self.need(isinstance(act, str), f"{where}.mlp.act", act, "an activation name")
        self.layer_norm(self.entry(lc, "ln_attn", where), f"{where}.ln_attn")
        self.layer_norm(self.entry(lc, "ln_mlp", where), f"{where}.ln_mlp")

    def layer_norm(self, ln, where: str) -> None:
        if ln is not None:
            eps = self.entry(ln, "eps", where)
            self.need(_number(eps) and eps > 0, f"{where}.eps", eps, "a positive number such as 1e-05")


def _build(source: str, vocab: Vocab, W_E, **kwargs) -> Model:
    try:
        return Model(vocab, W_E, **kwargs)
    except CircuitError as e:
        raise e.within(source) from None


# --- Hugging Face-style state dicts (GPT-2, GPT-Neo) ------------------------------------------
def from_hf_state_dict(state: Mapping[str, object], config: Mapping, tokens: Sequence[str] | None = None,
                       bos: str | None = None, name: str | None = None, source: str = "the state dict",
                       qk_dtype: str = "float64") -> Model:
    """A GPT-2 or GPT-Neo state dict (numpy arrays, HF names) and its config dict -> a circuits Model.

    The weights are used as they are: no LayerNorm folding, no centring. `tokens` names the
    vocabulary (else "t0", "t1", …); `bos` marks the BOS token among them. `qk_dtype="float32"`
    reproduces Hugging Face GPT-Neo's float32 q·k (see `Model`).
    """
    check_hf_config(config, source)
    kind = config["model_type"]
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
                  n_ctx=W_pos.shape[1], qk_multiplier=scale, name=name or config.get("_name_or_path") or kind,
                  qk_dtype=qk_dtype)


# Sizes a config must give, and sizes it may give (else Hugging Face's default, used for the size estimate).
HF_SIZES = {"gpt2": ("n_embd", "n_head", "n_layer"), "gpt_neo": ("hidden_size", "num_heads", "num_layers")}
HF_DEFAULTS = {"gpt2": {"vocab_size": 50257, "n_positions": 1024, "n_inner": None},
               "gpt_neo": {"vocab_size": 50257, "max_position_embeddings": 2048, "intermediate_size": None}}
HF_FLAGS = ("scale_attn_weights", "scale_attn_by_inverse_layer_idx", "tie_word_embeddings")


def check_hf_config(config, source: str) -> None:
    """A GPT-2 / GPT-Neo config (config.json, or a config's to_dict()) with every setting circuits reads usable.

    Sizes are whole numbers ≥ 1, eps a positive number, GPT-Neo's layer kinds and window well formed,
    and the model no larger than MAX_BYTES as float64; else a one-line CircuitError naming the key and its value.
    """
    if not isinstance(config, Mapping):
        raise CircuitError(f"{source}: the config is a JSON {_json_kind(config)}, but it needs to be an object "
                           "of settings such as {\"model_type\": \"gpt2\", \"n_embd\": 768, …}")
    kind = config.get("model_type")
    if kind not in ("gpt2", "gpt_neo"):
        raise CircuitError(f"{source}: model_type {_short(kind)} is not supported; circuits imports gpt2 and gpt_neo")
    if missing := [k for k in HF_SIZES[kind] if k not in config]:
        raise CircuitError(f"{source}: the {kind} config has no {', '.join(map(repr, missing))}")
    sizes = {**HF_DEFAULTS[kind], **{k: config[k] for k in (*HF_SIZES[kind], *HF_DEFAULTS[kind]) if k in config}}
    for key, value in sizes.items():
        if not (_whole(value, 1) or (value is None and key in ("n_inner", "intermediate_size"))):
            raise CircuitError(f"{source}: {key} is {_short(value)}; it needs a whole number ≥ 1")
    d, n, L = (int(sizes[k]) for k in HF_SIZES[kind])
    if d % n:
        raise CircuitError(f"{source}: hidden size {d} is not divisible by {n} heads")
    eps = config.get("layer_norm_epsilon", 1e-5)
    if not (_number(eps) and eps > 0):
        raise CircuitError(f"{source}: layer_norm_epsilon is {_short(eps)}; it needs a positive number such as 1e-05")
    for key in HF_FLAGS:
        if key in config and not isinstance(config[key], bool):
            raise CircuitError(f"{source}: {key} is {_short(config[key])}; it needs true or false")
    for key in ("bos_token_id", "eos_token_id"):
        ids = config.get(key)
        if not (ids is None or _whole(ids, 0) or (isinstance(ids, list) and all(_whole(i, 0) for i in ids))):
            raise CircuitError(f"{source}: {key} is {_short(ids)}; it needs null or a token id ≥ 0")
    _hf_act(config.get("activation_function", "gelu_new"), source)
    if kind == "gpt_neo":
        _neo_kinds(config, L, source)
    V, P, m = (sizes[k] for k in HF_DEFAULTS[kind])
    m = 4 * d if m is None else m
    count = V * d * (1 if config.get("tie_word_embeddings", True) else 2) + P * d + 2 * d + \
        L * (4 * d * d + 2 * d * m + m + 9 * d)
    if 8 * count > MAX_BYTES:
        raise CircuitError(f"{source}: the config describes {count:,} parameters, {_bytes(8 * count)} as float64, "
                           f"beyond the {_bytes(MAX_BYTES)} circuits holds (circuits.io.export.MAX_BYTES)")


def _neo_kinds(config: Mapping, L: int, source: str) -> list[str]:
    """GPT-Neo's per-layer kinds from attention_types (and attention_layers, which must agree); local needs window_size."""
    layers, types = config.get("attention_layers"), config.get("attention_types")
    if layers is not None and not (isinstance(layers, (list, tuple)) and all(k in ("global", "local") for k in layers)):
        raise CircuitError(f"{source}: attention_layers is {_short(layers)}; it needs a list of \"global\" and \"local\"")
    if types is None and layers is None:
        raise CircuitError(f"{source}: the gpt_neo config has no attention_types; it needs pairs of layer kinds and "
                           "repeats, e.g. [[[\"global\", \"local\"], 6]]")
    kinds = list(layers or [])
    if types is not None:
        pair = lambda t: (isinstance(t, (list, tuple)) and len(t) == 2 and isinstance(t[0], (list, tuple))  # noqa: E731
                          and all(k in ("global", "local") for k in t[0]) and _whole(t[1], 1) and t[1] <= L)
        if not (isinstance(types, (list, tuple)) and types and all(pair(t) for t in types)):
            raise CircuitError(f"{source}: attention_types is {_short(types)}; it needs pairs of layer kinds and "
                               "repeats, e.g. [[[\"global\", \"local\"], 6]]")
        kinds = [k for ks, times in types for _ in range(times) for k in ks]
        if layers is not None and list(layers) != kinds:
            raise CircuitError(f"{source}: attention_layers {_short(list(layers))} disagrees with attention_types "
                               f"{_short(types)}, which give {_short(kinds)}")
    if len(kinds) != L:
        raise CircuitError(f"{source}: attention_types give {len(kinds)} layer kinds for {L} layers")
    if "local" in kinds and "window_size" not in config:
        raise CircuitError(f"{source}: the gpt_neo config has local layers but no window_size; it needs a whole "
                           "number ≥ 1 (GPT-Neo 125M uses 256)")
    if "local" in kinds and not _whole(config["window_size"], 1):
        raise CircuitError(f"{source}: window_size is {_short(config['window_size'])}; it needs a whole number ≥ 1")
    return kinds


def _json_kind(value) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def _bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


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


def neo_attention_layers(config: Mapping, source: str = "the config") -> list[str]:
    """GPT-Neo's per-layer "global"/"local", expanded from attention_types like [[["global", "local"], 6]]."""
    return _neo_kinds(config, int(config["num_layers"]), source)


def _neo_layer(r: _Reader, l: int, config: Mapping, n: int, d: int, eps: float, act: str) -> Layer:
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
        raise CircuitError("a Hugging Face model needs W_U and ln_final; this model lacks " +
                           ("W_U" if model.W_U is None else "ln_final"))
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
    if magic.startswith(b"\x93NUMPY"):
        with open(path, "rb") as f:
            dtype, _, _ = _npy_header(f, path, "the file")
        if dtype.hasobject:
            raise CircuitError(f"{path}: refusing to load pickled data; circuits reads plain arrays only")
        raise CircuitError(f"{path}: holds a single array, not an .npz archive of a circuits model")
    if not magic.startswith(b"PK"):
        raise CircuitError(f"{path}: not a readable .npz file (it is not a zip archive of arrays)")
    try:
        with zipfile.ZipFile(path) as archive:
            # Names and sizes come from the zip directory and the .npy headers; no array is read before
            # the config has said which keys belong to the model.
            members = _npz_members(archive, path)
            config = _npz_config(archive, members.pop(CONFIG_KEY), path)
            cfg = _check_config(config, str(path))
            _check_keys(members, cfg, str(path))
            return from_tl_state_dict(_NpzArrays(archive, members), cfg, source=str(path))
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as e:
        raise CircuitError(f"{path}: not a readable .npz file ({_first_line(e)})") from None


def _npy_header(f, path: Path, what: str) -> tuple[np.dtype, tuple, int]:
    """(dtype, shape, header bytes) of the .npy at f's position, reading the header only."""
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f".npy format version {version[0]}.{version[1]} is not read")
    except (ValueError, SyntaxError, TypeError, EOFError) as e:
        raise CircuitError(f"{path}: {what} is not a readable .npy array ({_first_line(e)})") from None
    return dtype, tuple(shape), f.tell()


def _npz_members(archive: zipfile.ZipFile, path: Path) -> dict[str, tuple[zipfile.ZipInfo, np.dtype, tuple]]:
    """Every member's key, dtype and shape, checked against the size limits from directory and headers alone."""
    infos = archive.infolist()
    names = {i.filename for i in infos}
    if CONFIG_KEY + ".npy" not in names:
        if CONFIG_KEY in names:
            raise CircuitError(f"{path}: member {CONFIG_KEY!r} has no .npy suffix; circuits .npz files hold "
                               "only .npy arrays, as np.savez writes them")
        raise CircuitError(f"{path}: key {CONFIG_KEY!r} is missing; this .npz was not written by circuits.io.export.save")
    members, total = {}, 0
    for info in infos:
        if not info.filename.endswith(".npy"):
            raise CircuitError(f"{path}: member {info.filename!r} is not an .npy array; circuits .npz files hold "
                               "only the arrays np.savez writes")
        key = info.filename.removesuffix(".npy")
        if key in members:
            raise CircuitError(f"{path}: key {key!r} is stored twice")
        if info.file_size > MAX_BYTES:
            raise CircuitError(f"{path}: key {key!r} declares {_bytes(info.file_size)}, beyond the "
                               f"{_bytes(MAX_BYTES)} circuits reads (circuits.io.export.MAX_BYTES)")
        with archive.open(info) as f:
            dtype, shape, header = _npy_header(f, path, f"key {key!r}")
        if dtype.hasobject:
            raise CircuitError(f"{path}: key {key!r} holds pickled objects; refusing to load it")
        count = math.prod(shape)
        need = count * max(dtype.itemsize, 8)  # every array becomes float64
        total += need
        if total > MAX_BYTES:
            size = f"{_bytes(need)} as float64, beyond" if need > MAX_BYTES else "which takes the file beyond"
            raise CircuitError(f"{path}: key {key!r} declares shape {shape}, {size} the {_bytes(MAX_BYTES)} "
                               "circuits reads (circuits.io.export.MAX_BYTES)")
        if header + count * dtype.itemsize != info.file_size:
            raise CircuitError(f"{path}: key {key!r} is damaged: its header declares shape {shape} of {dtype} "
                               f"({_bytes(count * dtype.itemsize)}) but the archive holds {_bytes(info.file_size - header)}")
        members[key] = (info, dtype, shape)
    return members


def _npz_config(archive: zipfile.ZipFile, member: tuple, path: Path) -> dict:
    info, dtype, shape = member
    if dtype != np.uint8 or len(shape) != 1:
        raise CircuitError(f"{path}: key {CONFIG_KEY!r} holds {dtype} values of shape {shape}, but the config is "
                           "JSON text as utf-8 bytes (uint8, one dimension)")
    if shape[0] > MAX_CONFIG_BYTES:
        raise CircuitError(f"{path}: key {CONFIG_KEY!r} declares {_bytes(shape[0])} of config, beyond the "
                           f"{_bytes(MAX_CONFIG_BYTES)} circuits reads")
    with archive.open(info) as f:
        data = np.lib.format.read_array(f, allow_pickle=False)
    return _parse_config(data.tobytes(), path)


def _check_keys(members: Mapping, cfg: Mapping, source: str) -> None:
    """Refuse, before reading them, arrays the config does not describe."""
    expected = tl_keys(cfg)
    for key in members:
        if key not in expected and not key.endswith(IGNORED_SUFFIXES):
            raise CircuitError(f"{source}: unexpected key {key!r}; it is not part of the model its config describes")


def tl_keys(cfg: Mapping) -> set[str]:
    """The TransformerLens-style keys `from_tl_state_dict` reads for a (checked) config."""
    wanted = {"embed.W_E": True, "pos_embed.W_pos": cfg["W_pos"], "unembed.W_U": cfg["W_U"], "unembed.b_U": cfg["b_U"],
              "ln_final.w": cfg["ln_final"] is not None, "ln_final.b": cfg["ln_final"] is not None}
    for l, lc in enumerate(cfg["layers"]):
        p = f"blocks.{l}."
        wanted |= {p + "attn." + m: bool(lc["heads"]) for m in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V")}
        wanted |= {p + "mlp." + m: lc["mlp"] is not None for m in ("W_in", "b_in", "W_out", "b_out")}
        wanted |= {p + "attn.b_O": lc["b_O"], p + "ln1.w": lc["ln_attn"] is not None,
                   p + "ln1.b": lc["ln_attn"] is not None, p + "ln2.w": lc["ln_mlp"] is not None,
                   p + "ln2.b": lc["ln_mlp"] is not None}
    return {key for key, want in wanted.items() if want}


class _NpzArrays(Mapping):
    """An .npz's arrays by key, each read from the archive only when asked for."""

    def __init__(self, archive: zipfile.ZipFile, members: Mapping):
        self.archive, self.members = archive, members

    def __getitem__(self, key: str) -> np.ndarray:
        with self.archive.open(self.members[key][0]) as f:
            return np.lib.format.read_array(f, allow_pickle=False)

    def __iter__(self):
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)


def _load_safetensors(path: Path) -> Model:
    st = _safetensors(path)
    try:
        with _safe_open(path) as f:
            metadata = f.metadata() or {}
            shapes = {key: f.get_slice(key).get_shape() for key in f.keys()}  # noqa: SIM118 (safe_open is no dict); from the header: no data read
    except Exception as e:  # safetensors raises its own error type for damaged headers and data
        raise CircuitError(f"{path}: not a readable .safetensors file ({_first_line(e)})") from None
    if METADATA_KEY not in metadata:
        raise CircuitError(f"{path}: metadata {METADATA_KEY!r} is missing; for a Hugging Face checkpoint use "
                           "circuits.io.hf.from_hf(its directory)")
    total = sum(math.prod(shape) for shape in shapes.values()) * 8
    if total > MAX_BYTES:
        raise CircuitError(f"{path}: its arrays take {_bytes(total)} as float64, beyond the {_bytes(MAX_BYTES)} "
                           "circuits reads (circuits.io.export.MAX_BYTES)")
    cfg = _check_config(_parse_config(metadata[METADATA_KEY].encode("utf-8"), path), str(path))
    _check_keys(shapes, cfg, str(path))
    try:
        state = st.load_file(str(path))
    except Exception as e:
        raise CircuitError(f"{path}: not a readable .safetensors file ({_first_line(e)})") from None
    return from_tl_state_dict(state, cfg, source=str(path))


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


def _parse_config(data: bytes, path: Path) -> dict:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CircuitError(f"{path}: the circuits config is not utf-8 text (byte {data[e.start]:#04x} at "
                           f"position {e.start})") from None
    except json.JSONDecodeError as e:
        raise CircuitError(f"{path}: the circuits config is not valid JSON ({e.msg} at character {e.pos})") from None
    except RecursionError:
        raise CircuitError(f"{path}: the circuits config nests too deeply to be a circuits config") from None


def _first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
