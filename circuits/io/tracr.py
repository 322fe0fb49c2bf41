"""tracr's compiled transformers as circuits models, read by tracr's own direction names (the [tracr] extra).

    from tracr.compiler import compiling, lib
    assembled = compiling.compile_rasp_to_model(lib.make_hist(), {"a", "b", "c"}, max_seq_len=5)
    model = circuits.from_tracr(assembled)
    trace = model.run(["abac"])                       # tokens without tracr's BOS, as every circuits model
    circuits.tracr_output(model, trace)               # [[2, 1, 2, 1]]: the program's values

tracr writes row vectors (x @ w); circuits' matrices are column-vector ones (q = W_Q x), so every
weight comes over transposed. tracr divides q·k by sqrt(key_size), has no LayerNorm and uses ReLU
MLPs; its attention is causal or bidirectional as compiled. Heads and MLPs that are all zero
(tracr's padding of a layer to the widest one) are left out: they add exactly 0.
jax, haiku and tracr are imported inside the functions that need them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from circuits.errors import CircuitError
from circuits.model.specs import MLP, Head, Layer
from circuits.model.trace import Trace
from circuits.model.transformer import Model
from circuits.model.vocab import Vocab

INSTALL = 'pip install "circuits-workbench[tracr]"'
ATTN = ("query", "key", "value", "linear")
MLP_PARTS = ("linear_1", "linear_2")


@dataclasses.dataclass(frozen=True)
class TracrOutput:
    """Where a compiled program writes its result: the output space's residual directions, in tracr's
    order, and for a categorical program the value each direction stands for (None: numerical)."""

    directions: tuple[str, ...]
    values: tuple | None

    @property
    def categorical(self) -> bool:
        return self.values is not None


def _require(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise CircuitError(f"tracr models need {name}, which is not installed: {INSTALL}") from None


def _checked(assembled) -> None:
    """One line naming what is missing when `assembled` is not what tracr's compile_rasp_to_model returns."""
    need = ("params", "residual_labels", "model_config", "input_encoder", "output_encoder", "get_compiled_model")
    missing = [a for a in need if not hasattr(assembled, a)]
    if missing:
        raise CircuitError(
            f"from_tracr needs a tracr AssembledTransformerModel (from compile_rasp_to_model), "
            f"not a {type(assembled).__name__} (it has no {missing[0]})"
        )
    if not isinstance(assembled.params, Mapping):
        raise CircuitError(f"from_tracr: the model's params are a {type(assembled.params).__name__}, not a dict")
    enc = assembled.input_encoder
    if enc is None or not isinstance(getattr(enc, "encoding_map", None), Mapping):
        raise CircuitError("from_tracr: the model has no categorical input encoder (tracr sets one when compiling)")
    if enc.bos_token is None:
        raise CircuitError("from_tracr: the model was compiled without a BOS token (compiler_bos=None)")
    cfg = assembled.model_config
    if getattr(cfg, "layer_norm", False):
        raise CircuitError(
            "from_tracr: the model has layer_norm=True; tracr compiles without LayerNorm, "
            "and circuits loads compiled models only"
        )
    act = getattr(cfg.activation_function, "__name__", repr(cfg.activation_function))
    if act != "relu":
        raise CircuitError(f"from_tracr: the model's activation is {act}; compiled models use relu")


def _arrays(assembled) -> dict[str, dict[str, np.ndarray]]:
    """tracr's params as float64 numpy, every key known (an unknown one is a piece circuits would drop)."""
    out = {}
    for module, ps in assembled.params.items():
        tail = module.rsplit("/", 1)[-1]
        known = module in ("token_embed", "pos_embed") or (
            module.startswith("transformer/layer_") and tail in ATTN + MLP_PARTS
        )
        if not known:
            raise CircuitError(
                f"from_tracr: the params hold {module!r}, which circuits does not know "
                "(it reads token_embed, pos_embed and each layer's attn and mlp)"
            )
        out[module] = {k: np.asarray(v, dtype=np.float64) for k, v in ps.items()}
    return out


def _vocab(assembled) -> Vocab:
    """The input encoder's tokens in id order, as strings, tracr's BOS the model's."""
    enc = assembled.input_encoder
    values = tuple(sorted(enc.encoding_map, key=enc.encoding_map.get))
    if [enc.encoding_map[v] for v in values] != list(range(len(values))):
        raise CircuitError("from_tracr: the input encoder's ids are not 0..n-1")
    return Vocab([str(v) for v in values], bos=str(enc.bos_token))


def _heads(p: Mapping[str, dict], prefix: str, n: int, k: int) -> list[Head]:
    """A layer's heads, split from tracr's fused [d_model, n·key_size] matrices and transposed; all-zero ones left
    out."""
    q, kk, v, o = (p[prefix + part] for part in ATTN)
    heads = []
    for i in range(n):
        cols = slice(i * k, (i + 1) * k)
        parts = dict(
            W_Q=q["w"][:, cols].T,
            W_K=kk["w"][:, cols].T,
            W_V=v["w"][:, cols].T,
            W_O=o["w"][cols].T,
            b_Q=q["b"][cols],
            b_K=kk["b"][cols],
            b_V=v["b"][cols],
        )
        if any(np.any(a) for a in parts.values()):
            heads.append(Head(**parts))
    return heads


def _mlp(p: Mapping[str, dict], prefix: str) -> MLP | None:
    fst, snd = p.get(prefix + "linear_1"), p.get(prefix + "linear_2")
    if fst is None or not any(np.any(a) for a in (*fst.values(), *snd.values())):
        return None
    return MLP(W_in=fst["w"].T, b_in=fst["b"], W_out=snd["w"].T, b_out=snd["b"], act="relu")


def _layers(p: Mapping[str, dict], cfg, heads: Mapping | None) -> list[Layer]:
    layers = []
    for l in range(cfg.num_layers):
        at = f"transformer/layer_{l}/attn/"
        hs = _heads(p, at, cfg.num_heads, cfg.key_size) if at + "query" in p else []
        for (hl, hi), weights in (heads or {}).items():
            if hl == l:
                if not 0 <= hi < len(hs):
                    raise CircuitError(f"from_tracr: heads= names head {hl}.{hi}, but layer {l} has {len(hs)} head(s)")
                hs[hi] = _replaced(hs[hi], weights, f"head {hl}.{hi}")
        b_O = p[at + "linear"]["b"] if at + "linear" in p and hs else None
        layers.append(Layer(heads=hs, b_O=b_O, mlp=_mlp(p, f"transformer/layer_{l}/mlp/")))
    return layers


def _replaced(head: Head, weights: Mapping, name: str) -> Head:
    roles = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V")
    for role in weights:
        if role not in roles:
            raise CircuitError(f"from_tracr: heads= gives {role!r} for {name}; choose among {', '.join(roles)}")
    return dataclasses.replace(head, **weights)


def _output(assembled, d_model: int, labels: Sequence[str]) -> TracrOutput:
    """The output space, read from tracr's own unembedding applied to each residual direction."""
    hk, jnp = _require("haiku"), _require("jax.numpy")

    @hk.without_apply_rng
    @hk.transform
    def unembed(x):
        return assembled.get_compiled_model().unembed(x, use_unembed_argmax=False)

    proj = np.asarray(unembed.apply({}, jnp.eye(d_model)[None]), dtype=np.float64)[0]  # [d_model, n_out] or [d_model]
    proj = proj.reshape(d_model, -1)
    rows = []
    for j in range(proj.shape[1]):
        hit = np.flatnonzero(proj[:, j])
        if len(hit) != 1 or proj[hit[0], j] != 1:
            raise CircuitError(f"from_tracr: output {j} is not one residual direction; circuits reads outputs by name")
        rows.append(labels[hit[0]])
    enc = assembled.output_encoder
    values = None
    if getattr(enc, "encoding_map", None) is not None:
        values = tuple(sorted(enc.encoding_map, key=enc.encoding_map.get))
        if len(values) != len(rows):
            raise CircuitError(f"from_tracr: the output encoder has {len(values)} values for {len(rows)} directions")
    return TracrOutput(tuple(rows), values)


def from_tracr(assembled, name: str = "tracr", heads: Mapping[tuple[int, int], Mapping] | None = None) -> Model:
    """A circuits Model with exactly tracr's weights, its residual directions named by tracr's labels.

    `heads={(1, 0): {"W_Q": ..., "W_K": ...}}` replaces those weights of those heads (circuits' column
    convention, e.g. a learner's answer in a puzzle built on a compiled program). The output space is
    kept as `model.tracr` (a TracrOutput) for `tracr_output`.
    """
    _checked(assembled)
    p = _arrays(assembled)
    labels = [str(x) for x in assembled.residual_labels]
    cfg = assembled.model_config
    vocab = _vocab(assembled)
    W_E = p["token_embed"]["embeddings"].T  # [d_model, n_vocab]
    W_pos = p["pos_embed"]["embeddings"].T  # [d_model, n_ctx]: BOS's position included
    if W_E.shape[0] != len(labels) or W_E.shape[1] != len(vocab):
        raise CircuitError(
            f"from_tracr: token_embed has shape {W_E.T.shape} but the model has "
            f"{len(vocab)} tokens and {len(labels)} residual labels"
        )
    model = Model(
        vocab,
        W_E,
        W_pos=W_pos,
        layers=_layers(p, cfg, heads),
        residual=labels,
        qk_multiplier=1.0 / np.sqrt(cfg.key_size),
        name=name,
        mask="causal" if cfg.causal else "bidirectional",
    )
    model.tracr = _output(assembled, len(labels), labels)
    return model


def _readout_of(model: Model) -> TracrOutput:
    out = getattr(model, "tracr", None)
    if not isinstance(out, TracrOutput):
        raise CircuitError(
            f"tracr_output needs a model from circuits.from_tracr; {getattr(model, 'name', model)!r} "
            "has no tracr output space"
        )
    return out


def tracr_output(model: Model, trace: Trace) -> list[list]:
    """The program's value at each input token (BOS left out), per input: the argmax over the output space's
    directions decoded by tracr's output encoder (categorical), or that direction's value (numerical)."""
    out = _readout_of(model)
    if not isinstance(trace, Trace):
        raise CircuitError(f"tracr_output needs the Trace of model.run, not a {type(trace).__name__}")
    x = trace.final[..., model.residual.index(list(out.directions))]  # [b, T, n_out]
    bos = model.vocab.ids[model.vocab.bos]
    rows = []
    for n in range(trace.batch):
        at = x[n, int(trace.ids[n, 0] == bos) : int(trace.valid[n].sum())]  # [T, n_out]
        if out.categorical:
            rows.append([out.values[i] for i in np.argmax(at, axis=-1)])
        else:
            rows.append([float(v) for v in at[:, 0]])
    return rows
