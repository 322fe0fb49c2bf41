"""What a forward pass leaves behind: every intermediate, batched."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(eq=False)
class LayerTrace:
    """One layer's intermediates. Shapes: resid `[b, T, d_model]`, q/k `[b, h, T, d_head]`,
    v/z `[b, h, T, d_value]`, scores/pattern `[b, h, query, key]` (hidden scores are −inf)."""

    resid_pre: np.ndarray
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

    @property
    def head_out(self) -> np.ndarray:  # [b, h, T, d_model]: W_O z per head (b_O not included)
        W_O = np.stack([np.pad(h.W_O, [(0, 0), (0, self.z.shape[-1] - h.W_O.shape[1])]) for h in self.heads])
        return np.einsum("bhtv,hdv->bhtd", self.z, W_O)


@dataclass(eq=False)
class Trace:
    """The result of `Model.run`: token ids `[b, T]`, `valid` `[b, T]` (False on padding),
    the embeddings, one LayerTrace per layer, and logits/logprobs `[b, T, n_vocab]` if the model unembeds."""

    model: object = field(repr=False)
    ids: np.ndarray
    valid: np.ndarray
    embed: np.ndarray
    pos_embed: np.ndarray
    layers: list[LayerTrace]
    resid_final: np.ndarray
    final: np.ndarray
    logits: np.ndarray | None
    logprobs: np.ndarray | None

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
        return self.layers[layer].pattern[:, head]

    def z(self, layer: int, head: int) -> np.ndarray:  # [b, T, d_value]: the head's value mix, before W_O
        h = self.model.head(layer, head)
        return self.layers[layer].z[:, head, :, : h.W_V.shape[0]]

    def head_out(self, layer: int, head: int) -> np.ndarray:  # [b, T, d_model]: W_O z
        h = self.model.head(layer, head)
        return self.z(layer, head) @ h.W_O.T

    def resid(self, layer: int | None = None) -> np.ndarray:
        """The residual stream after `layer` (None: after the last; -1: the embedding)."""
        if layer is None:
            return self.resid_final
        if layer == -1:
            return self.embed + self.pos_embed
        return self.layers[layer].resid_post
