"""TransformerLens-style state dicts: a circuits model as TL names and shapes (row vectors), and back.

Shapes: W_E [n_vocab, d_model], W_pos [n_ctx, d_model], W_Q/W_K/W_V [n_heads, d_model, d_head],
W_O [n_heads, d_head, d_model], W_in [d_model, d_mlp], W_out [d_mlp, d_model], W_U [d_model, n_vocab].
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from circuits.errors import CircuitError
from circuits.io.config import check_config, model_config
from circuits.io.reader import StateReader, build_model, first_line
from circuits.model.specs import MLP, Head, Layer, LayerNorm
from circuits.model.transformer import Model
from circuits.model.vocab import Vocab


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


def from_tl_state_dict(state: Mapping[str, object], config: Mapping, source: str = "the state dict") -> Model:
    """Rebuild a Model from `to_tl_state_dict` arrays and `model_config`; a wrong key names `source`."""
    cfg = check_config(config, source)
    try:
        return _from_tl_state_dict(state, cfg, source)
    except KeyError as e:  # an entry missing inside the config's vocab or layers
        raise CircuitError(f"{source}: the config has no {e.args[0]!r} entry where circuits needs one") from None
    except (TypeError, AttributeError, IndexError) as e:  # an entry of the wrong kind, e.g. a list for a dict
        raise CircuitError(f"{source}: the config has an entry of the wrong kind ({first_line(e)})") from None


def _from_tl_state_dict(state: Mapping[str, object], cfg: Mapping, source: str) -> Model:
    r = StateReader(state, source)
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
    return build_model(
        source,
        vocab,
        W_E,
        W_pos=W_pos,
        layers=layers,
        W_U=W_U,
        b_U=b_U,
        ln_final=ln_final,
        residual=cfg["residual"],
        n_ctx=cfg["n_ctx"],
        qk_multiplier=cfg["qk_multiplier"],
        name=cfg["name"],
        qk_dtype=cfg.get("qk_dtype", "float64"),
    )


def _tl_ln(r: StateReader, prefix: str, lc: Mapping | None, d: int) -> LayerNorm | None:
    if lc is None:
        return None
    return LayerNorm(w=r.take(prefix + ".w", (d,)), b=r.take(prefix + ".b", (d,)), eps=float(lc["eps"]))


def _tl_layer(r: StateReader, l: int, lc: Mapping, d: int) -> Layer:
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
        b_Q, b_K, b_V = (
            r.take(p + "attn.b_Q", (n, dk)),
            r.take(p + "attn.b_K", (n, dk)),
            r.take(p + "attn.b_V", (n, dv)),
        )
        _check_padding(r.source, p, lc["heads"], W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, b_Q=b_Q, b_K=b_K, b_V=b_V)
        for i, hc in enumerate(lc["heads"]):
            q, v = hc["d_head"], hc["d_value"]
            heads.append(
                Head(
                    W_Q=W_Q[i, :, :q].T,
                    W_K=W_K[i, :, :q].T,
                    W_V=W_V[i, :, :v].T,
                    W_O=W_O[i, :v].T,
                    b_Q=b_Q[i, :q],
                    b_K=b_K[i, :q],
                    b_V=b_V[i, :v],
                    pattern=hc["pattern"],
                    scale=hc["scale"],
                    window=hc["window"],
                    mask=hc.get("mask", "causal"),
                )
            )
    b_O = r.take(p + "attn.b_O", (d,)) if lc["b_O"] else None
    mlp = None
    if lc["mlp"] is not None:
        W_in = r.take(p + "mlp.W_in", (d, None))  # [d_model, d_mlp]
        d_mlp = W_in.shape[1]
        mlp = MLP(
            W_in=W_in.T,
            b_in=r.take(p + "mlp.b_in", (d_mlp,)),
            W_out=r.take(p + "mlp.W_out", (d_mlp, d)).T,
            b_out=r.take(p + "mlp.b_out", (d,)),
            act=lc["mlp"]["act"],
        )
    return Layer(
        heads=heads,
        b_O=b_O,
        mlp=mlp,
        ln_attn=_tl_ln(r, p + "ln1", lc["ln_attn"], d),
        ln_mlp=_tl_ln(r, p + "ln2", lc["ln_mlp"], d),
    )


def _check_padding(source: str, prefix: str, heads: list, **arrays: np.ndarray) -> None:
    """Heads narrower than their layer are zero-padded on save; weights in the padding mean config and arrays
    disagree."""
    for i, hc in enumerate(heads):
        for name, a in arrays.items():
            size = hc["d_value"] if name in ("W_V", "b_V", "W_O") else hc["d_head"]
            part = a[i, size:] if name in ("W_O", "b_Q", "b_K", "b_V") else a[i, :, size:]
            if np.any(part):
                raise CircuitError(
                    f"{source}: key {prefix + 'attn.' + name!r} has non-zero weights for head {i} beyond "
                    f"the {'d_value' if name in ('W_V', 'b_V', 'W_O') else 'd_head'} {size} its config "
                    "gives; the config and the arrays disagree"
                )
