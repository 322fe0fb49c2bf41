"""Who writes what into which residual direction, read from a model's weights: the embedding, the position
embedding, each head (its OV circuit, and what its value bias reaches through W_O), each layer's b_O and each MLP
(W_out, b_out), with the directions each can write and how much."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


class Writes(enum.Enum):
    """What kind of part writes: where it sits decides which readers see its write."""

    EMBEDDING = "embedding"
    POSITION = "position"
    HEAD = "head"
    B_O = "b_O"
    MLP = "mlp"


@dataclass(frozen=True)
class Part:
    """One part of a model that writes into the residual stream."""

    name: str  # "embedding", "position", "head 1.0", "b_O 1", "mlp 0"
    kind: Writes
    layer: int  # its layer; -1 for the embeddings
    matrix: str  # what decides the write, as the learner knows it: W_E, W_pos, W_O, b_O, W_out
    out: np.ndarray  # [d_model, n]: column j is one way it writes; row r how much reaches direction r

    @property
    def stage(self) -> float:
        """When it has written: a layer's heads and b_O at the layer, its MLP half a layer later, the embeddings
        at -1. A reader at stage s (layer l's heads: l; its MLP: l + 0.5) sees every part of a smaller stage."""
        return self.layer + (0.5 if self.kind is Writes.MLP else 0.0)

    def size(self) -> np.ndarray:
        """[d_model]: the most it writes into each direction per unit of what it reads (0: never written)."""
        return np.abs(self.out).max(axis=1) if self.out.size else np.zeros(self.out.shape[0])

    def writes(self, directions) -> bool:
        """Whether it can write anything into any of `directions` (indices)."""
        return bool(np.abs(self.out[directions]).any())


def _head(l: int, head) -> Part:
    W_O = np.asarray(head.W_O, float)
    ov = np.concatenate([W_O @ np.asarray(head.W_V, float), (W_O @ np.asarray(head.b_V, float))[:, None]], 1)
    return Part(head.name, Writes.HEAD, l, "W_O", ov)


def _layer(l: int, block) -> list[Part]:
    found = [_head(l, head) for head in block.heads]
    if block.b_O is not None:
        found.append(Part(f"b_O {l}", Writes.B_O, l, "b_O", np.asarray(block.b_O, float).reshape(-1)[:, None]))
    if block.mlp is not None:
        W_out, b_out = np.asarray(block.mlp.W_out, float), np.asarray(block.mlp.b_out, float)
        found.append(Part(f"mlp {l}", Writes.MLP, l, "W_out", np.concatenate([W_out, b_out[:, None]], axis=1)))
    return found


def parts(model) -> list[Part]:
    """Every part of `model` that writes into the residual stream, in the order the forward pass adds them: the
    embedding, the position embedding (when there is one), then per layer its heads, its b_O, its MLP."""
    found = [Part("embedding", Writes.EMBEDDING, -1, "W_E", np.asarray(model.W_E, float))]
    if model.W_pos is not None:
        found.append(Part("position", Writes.POSITION, -1, "W_pos", np.asarray(model.W_pos, float)))
    for l, block in enumerate(model.blocks):
        found += _layer(l, block)
    return found


def before(model, layer: int) -> list[Part]:
    """The parts a reader at `layer`'s heads sees: the embeddings and every part of an earlier layer."""
    return [p for p in parts(model) if p.stage < layer]


def written_before(model, layer: int) -> np.ndarray:
    """[d_model] bool: the directions anything before `layer` can write, whatever the input (not through a
    LayerNorm, which centres an empty direction to a non-zero one: that is the caller's to judge)."""
    written = np.zeros(model.d_model, bool)
    for part in before(model, layer):
        written |= part.size() > 0
    return written


def decompose_resid(trace, layer: int | None = None) -> dict[tuple, np.ndarray]:
    """What each part before `layer` (None: every layer) added to the residual stream of `trace`, [b, T, d_model]
    each, in the order the forward pass adds them: ("embedding",) (token and position embeddings), ("head", l, h)
    (W_O z, without b_O), ("mlp", l). As TransformerLens's decompose_resid, but per head."""
    out = {("embedding",): trace.embed + trace.pos_embed}
    for l, lt in enumerate(trace.layers[:layer]):
        for h in range(len(lt.heads)):
            out[("head", l, h)] = lt.head_out_of(h)
        if lt.mlp_out is not None:
            out[("mlp", l)] = lt.mlp_out
    return out
