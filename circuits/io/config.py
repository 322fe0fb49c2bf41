"""The JSON config a saved model carries (everything but the numbers), written and checked entry by entry."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from circuits.errors import CircuitError
from circuits.model.specs import FIXED_PATTERNS, MASKS, Head
from circuits.model.transformer import QK_DTYPES, Model

FORMAT = "circuits-model"
VERSION = 2  # 2: the q·k multiplier is saved as "qk_multiplier" (version 1 called it "attn_scale")
READS = (1, VERSION)  # the versions this circuits reads
OLD_KEYS = {1: {"attn_scale": "qk_multiplier"}}  # per older version: its key -> today's
CONFIG_KEY = "__circuits_config__"  # the JSON config inside an .npz, as utf-8 bytes
METADATA_KEY = "circuits_config"  # … and inside a .safetensors header


def model_config(model: Model) -> dict:
    """Everything but the numbers: enough to rebuild `model` from a TransformerLens-style state dict."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": model.name,
        "vocab": {"tokens": list(model.vocab.tokens), "bos": model.vocab.bos},
        "residual": list(model.residual.labels),
        "n_ctx": model.n_ctx,
        "qk_multiplier": _scale_setting(model),
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
        heads.append(
            {
                "d_head": int(h.W_Q.shape[0]),
                "d_value": int(h.W_V.shape[0]),
                "scale": None if h.source.scale is None else float(h.scale),
                "window": None if h.window is None else int(h.window),
                "pattern": h.pattern,
                "mask": h.mask,  # absent in older files: "causal"
            }
        )
    return {
        "heads": heads,
        "b_O": block.b_O is not None,
        "mlp": None if block.mlp is None else {"act": block.mlp.act},
        "ln_attn": _ln_config(block.ln_attn),
        "ln_mlp": _ln_config(block.ln_mlp),
    }


def check_config(config: Mapping, source: str) -> Mapping:
    """The config checked entry by entry, in today's keys: an older version's are read under their new names."""
    if not isinstance(config, Mapping) or config.get("format") != FORMAT:
        raise CircuitError(f'{source}: the config is not a circuits model config (no "format": "{FORMAT}")')
    version = config.get("version")
    if isinstance(version, bool) or version not in READS:
        raise CircuitError(
            f"{source}: config version {short(version)} is not supported "
            f"(this circuits reads {' and '.join(map(str, READS))})"
        )
    renamed = OLD_KEYS.get(version, {})
    for key in ("name", "vocab", "residual", "n_ctx", "qk_multiplier", "W_pos", "W_U", "b_U", "ln_final", "layers"):
        old = next((o for o, new in renamed.items() if new == key), key)
        if old not in config:
            raise CircuitError(f"{source}: the config has no {old!r} entry")
    config = {**{renamed.get(k, k): v for k, v in config.items()}, "version": VERSION}
    ConfigCheck(source, {new: old for old, new in renamed.items()}).model(config)
    return config


def tl_keys(cfg: Mapping) -> set[str]:
    """The TransformerLens-style keys `from_tl_state_dict` reads for a (checked) config."""
    wanted = {
        "embed.W_E": True,
        "pos_embed.W_pos": cfg["W_pos"],
        "unembed.W_U": cfg["W_U"],
        "unembed.b_U": cfg["b_U"],
        "ln_final.w": cfg["ln_final"] is not None,
        "ln_final.b": cfg["ln_final"] is not None,
    }
    for l, lc in enumerate(cfg["layers"]):
        p = f"blocks.{l}."
        wanted |= {p + "attn." + m: bool(lc["heads"]) for m in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V")}
        wanted |= {p + "mlp." + m: lc["mlp"] is not None for m in ("W_in", "b_in", "W_out", "b_out")}
        wanted |= {
            p + "attn.b_O": lc["b_O"],
            p + "ln1.w": lc["ln_attn"] is not None,
            p + "ln1.b": lc["ln_attn"] is not None,
            p + "ln2.w": lc["ln_mlp"] is not None,
            p + "ln2.b": lc["ln_mlp"] is not None,
        }
    return {key for key, want in wanted.items() if want}


def whole(value, least: int) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= least


def number(value) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and bool(np.isfinite(value))
    )


def short(value) -> str:
    """A string as its repr ('twelve'), other values as their JSON spelling (null, true, [1, 2]); one short line."""
    try:
        text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class ConfigCheck:
    """Every entry of a circuits config has the kind and range a model needs; the error names the entry and its
    value."""

    def __init__(self, source: str, spelled: Mapping[str, str] | None = None):
        self.source = source
        self.spelled = dict(spelled or {})  # today's key -> as the file spells it (an older version's name)

    def need(self, ok: bool, where: str, value, what: str) -> None:
        if not ok:
            raise CircuitError(f"{self.source}: the config's {where} is {short(value)}; it needs {what}")

    def entry(self, parent, key: str, where: str):
        if not isinstance(parent, Mapping):
            raise CircuitError(
                f"{self.source}: the config has an entry of the wrong kind: {where} is "
                f"{short(parent)}; it needs an object"
            )
        if key not in parent:
            raise CircuitError(f"{self.source}: the config has no {key!r} entry where circuits needs one")
        return parent[key]

    def model(self, cfg: Mapping) -> None:
        self.need(isinstance(cfg["name"], str), "name", cfg["name"], "a string")
        tokens, bos = self.entry(cfg["vocab"], "tokens", "vocab"), self.entry(cfg["vocab"], "bos", "vocab")
        self.need(
            isinstance(tokens, list) and all(isinstance(t, str) for t in tokens),
            "vocab.tokens",
            tokens,
            "a list of token strings",
        )
        self.need(bos is None or isinstance(bos, str), "vocab.bos", bos, "null or one of the tokens")
        res = cfg["residual"]
        self.need(
            res is None or (isinstance(res, list) and all(isinstance(r, str) for r in res)),
            "residual",
            res,
            "a list of direction names",
        )
        self.need(cfg["n_ctx"] is None or whole(cfg["n_ctx"], 1), "n_ctx", cfg["n_ctx"], "a whole number ≥ 1 (or null)")
        scale = cfg["qk_multiplier"]
        self.need(
            isinstance(scale, str) or number(scale),
            self.spelled.get("qk_multiplier", "qk_multiplier"),
            scale,
            "a finite number or '1/sqrt(d_head)'",
        )
        for key in ("W_pos", "W_U", "b_U"):
            self.need(isinstance(cfg[key], bool), key, cfg[key], "true or false")
        qk = cfg.get("qk_dtype", "float64")  # absent in files written before it existed
        self.need(qk in QK_DTYPES, "qk_dtype", qk, " or ".join(map(repr, QK_DTYPES)))
        self.layer_norm(cfg["ln_final"], "ln_final")
        if not isinstance(cfg["layers"], list):
            raise CircuitError(
                f"{self.source}: the config has an entry of the wrong kind: layers is "
                f"{short(cfg['layers'])}; it needs a list of layers"
            )
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
            self.need(
                whole(d_head, 0 if pattern else 1),
                f"{at}.d_head",
                d_head,
                "a whole number ≥ 1 (0 only for a fixed-pattern head)",
            )
            self.need(whole(d_value, 1), f"{at}.d_value", d_value, "a whole number ≥ 1")
            scale, window = self.entry(hc, "scale", at), self.entry(hc, "window", at)
            self.need(scale is None or number(scale), f"{at}.scale", scale, "null or a finite number")
            self.need(window is None or whole(window, 1), f"{at}.window", window, "null or a whole number ≥ 1")
            mask = hc.get("mask", "causal")
            self.need(mask in MASKS, f"{at}.mask", mask, " or ".join(map(repr, MASKS)))
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
            self.need(number(eps) and eps > 0, f"{where}.eps", eps, "a positive number such as 1e-05")


def parse_config(data: bytes, path: Path) -> dict:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CircuitError(
            f"{path}: the circuits config is not utf-8 text (byte {data[e.start]:#04x} at position {e.start})"
        ) from None
    except json.JSONDecodeError as e:
        raise CircuitError(f"{path}: the circuits config is not valid JSON ({e.msg} at character {e.pos})") from None
    except RecursionError:
        raise CircuitError(f"{path}: the circuits config nests too deeply to be a circuits config") from None
