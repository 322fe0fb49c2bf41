"""What a forward pass leaves behind: the intermediates asked for (all by default), batched."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from circuits.errors import CircuitError
from circuits.model.functional import log_softmax

# What `Model.run(keep=...)` can keep: a layer's intermediates, and the embeddings.
LAYER_FIELDS = (
    "resid_pre",
    "attn_in",
    "q",
    "k",
    "v",
    "scores",
    "pattern",
    "z",
    "attn_out",
    "resid_mid",
    "mlp_in",
    "mlp_pre",
    "mlp_post",
    "mlp_out",
    "resid_post",
)
KEEP_NAMES = (*LAYER_FIELDS, "embed")
_ALL = frozenset(KEEP_NAMES)


def check_keep(keep) -> frozenset[str]:
    """`keep` ("all", or names among KEEP_NAMES) as a set of names, or a one-line error naming the stranger."""
    if isinstance(keep, str) and keep == "all" or keep is _ALL:
        return _ALL
    choices = (
        f'"all" (the default), () for the final residual stream and logits only, or names among {", ".join(KEEP_NAMES)}'
    )
    if keep is None or isinstance(keep, (bytes, int, float)):
        raise CircuitError(f"keep={keep!r}: choose {choices}")
    try:
        names = (keep,) if isinstance(keep, str) else tuple(keep)
    except TypeError:
        raise CircuitError(f"keep is {type(keep).__name__}: choose {choices}") from None
    if strangers := [n for n in names if not isinstance(n, str)]:
        raise CircuitError(f"keep holds {strangers[0]!r}, not a name: choose {choices}")
    if unknown := [n for n in names if n not in KEEP_NAMES]:
        raise CircuitError(
            f'keep names {unknown[0]!r}, which a trace does not hold; choose "all" or among {", ".join(KEEP_NAMES)}'
        )
    return frozenset(names)


@dataclass(eq=False)
class LayerTrace:
    """One layer's intermediates. Shapes: resid `[b, T, d_model]`, q/k `[b, h, T, d_head]`,
    v/z `[b, h, T, d_value]`, scores/pattern `[b, h, query, key]` (hidden scores are −inf).
    A field the run did not keep (see `Model.run(keep=...)`) is None."""

    resid_pre: np.ndarray | None
    heads: list = field(default_factory=list, repr=False)
    attn_in: np.ndarray | None = None
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    scores: np.ndarray | None = None
    pattern: np.ndarray | None = None
    z: np.ndarray | None = None
    attn_out: np.ndarray | None = None
    resid_mid: np.ndarray | None = None
    mlp_in: np.ndarray | None = None
    mlp_pre: np.ndarray | None = None
    mlp_post: np.ndarray | None = None
    mlp_out: np.ndarray | None = None
    resid_post: np.ndarray | None = None

    @classmethod
    def keeping(cls, keep: frozenset[str], heads: list, **arrays: np.ndarray | None) -> LayerTrace:
        """The one place a layer's trace is recorded: the arrays named in `keep`, None for the rest."""
        return cls(heads=heads, **{name: a if name in keep else None for name, a in arrays.items()})

    def rows(self, idx) -> LayerTrace:
        """The same layer's intermediates for the inputs `idx` of the batch only."""
        arrays = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "heads"}
        return LayerTrace(heads=self.heads, **{k: None if a is None else a[idx] for k, a in arrays.items()})

    def held(self, name: str, what: str | None = None) -> np.ndarray:
        a = getattr(self, name)
        if a is None:
            kept = [f.name for f in fields(self) if f.name != "heads" and getattr(self, f.name) is not None]
            raise CircuitError(
                f"the trace holds no {what or name}: it was run with keep="
                f"{tuple(kept)!r}; run again with keep including {name!r}"
            )
        return a

    def head_out_of(self, head: int) -> np.ndarray:  # [b, T, d_model]: W_O z of one head (b_O not included)
        h = self.heads[head]
        return self.held("z")[:, head, :, : h.W_V.shape[0]] @ h.W_O.T

    @property
    def head_out(self) -> np.ndarray:  # [b, h, T, d_model]: W_O z per head (b_O not included)
        return np.stack([self.head_out_of(i) for i in range(len(self.heads))], axis=1)


@dataclass(eq=False)
class Trace:
    """The result of `Model.run`: token ids `[b, T]`, `valid` `[b, T]` (False on padding),
    the embeddings, one LayerTrace per layer, and logits/logprobs `[b, T, n_vocab]` if the model unembeds
    (logprobs are computed from the logits when first read)."""

    model: object = field(repr=False)
    ids: np.ndarray
    valid: np.ndarray
    embed: np.ndarray | None
    pos_embed: np.ndarray | None
    layers: list[LayerTrace]
    resid_final: np.ndarray
    final: np.ndarray
    logits: np.ndarray | None
    _logprobs: np.ndarray | None = field(default=None, repr=False)

    @property
    def logprobs(self) -> np.ndarray | None:  # [b, T, n_vocab]
        if self._logprobs is None and self.logits is not None:
            self._logprobs = log_softmax(self.logits)
            if not np.isfinite(self._logprobs).all():
                raise CircuitError("the logits overflowed to inf/NaN: the weights are too large for these inputs")
        return self._logprobs

    @property
    def batch(self) -> int:
        return self.ids.shape[0]

    def lengths(self) -> np.ndarray:
        return self.valid.sum(1)

    def tokens(self, n: int = 0) -> list[str]:
        """The tokens of input n (padding dropped)."""
        return self.model.vocab.decode(self.ids[n, : int(self.valid[n].sum())])

    def pattern(self, layer: int, head: int) -> np.ndarray:  # [b, query, key]
        self.model.head(layer, head)
        return self.layers[layer].held("pattern")[:, head]

    def z(self, layer: int, head: int) -> np.ndarray:  # [b, T, d_value]: the head's value mix, before W_O
        h = self.model.head(layer, head)
        return self.layers[layer].held("z")[:, head, :, : h.W_V.shape[0]]

    def head_out(self, layer: int, head: int) -> np.ndarray:  # [b, T, d_model]: W_O z
        self.model.head(layer, head)
        return self.layers[layer].head_out_of(head)

    def resid(self, layer: int | None = None) -> np.ndarray:
        """The residual stream after `layer` (None: after the last; -1: the embedding)."""
        if layer is None:
            return self.resid_final
        if layer == -1:
            if self.embed is None:
                raise CircuitError("the trace holds no embedding: run again with keep including 'embed'")
            return self.embed + self.pos_embed
        return self.layers[layer].held("resid_post", f"residual stream after layer {layer}")
