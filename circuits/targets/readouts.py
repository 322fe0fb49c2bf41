"""Readouts: which part of a trace an Output target compares (a head's z, its output, residual directions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.targets import fields


@dataclass(frozen=True)
class HeadZ:
    """A head's value mix z = Σ_j A_ij v_j, before W_O, `[b, T, d_head]` (TransformerLens's hook_z;
    TL's hook_result is after W_O: that is HeadOutput here)."""

    layer: int = 0
    head: int = 0

    def __post_init__(self):
        fields.whole("HeadZ", "layer", self.layer)
        fields.whole("HeadZ", "head", self.head)

    @property
    def label(self) -> str:
        return f"head {self.layer}.{self.head} z (A·V)"

    def get(self, trace) -> np.ndarray:
        return trace.z(self.layer, self.head)

    def values(self, trace) -> np.ndarray:  # [b, T, d_head]: what each key would contribute alone
        h = trace.model.head(self.layer, self.head)
        return trace.layers[self.layer].v[:, self.head, :, : h.W_V.shape[0]]

    def components(self, model) -> list[str]:
        return [str(i) for i in range(model.head(self.layer, self.head).W_V.shape[0])]


@dataclass(frozen=True)
class HeadOutput:
    """A head's output W_O z in the residual stream, optionally only some named directions."""

    layer: int = 0
    head: int = 0
    directions: tuple[str, ...] | None = None

    def __post_init__(self):
        fields.whole("HeadOutput", "layer", self.layer)
        fields.whole("HeadOutput", "head", self.head)
        fields.labels("HeadOutput", "directions", self.directions)

    @property
    def label(self) -> str:
        where = f" on {', '.join(self.directions)}" if self.directions else ""
        return f"head {self.layer}.{self.head} output{where}"

    def _idx(self, model):
        if self.directions is None:
            return list(range(model.d_model))
        return model.residual.index(list(self.directions))

    def get(self, trace) -> np.ndarray:
        return trace.head_out(self.layer, self.head)[..., self._idx(trace.model)]

    def values(self, trace) -> np.ndarray:
        h = trace.model.head(self.layer, self.head)
        v = trace.layers[self.layer].v[:, self.head, :, : h.W_V.shape[0]]
        return (v @ h.W_O.T)[..., self._idx(trace.model)]

    def components(self, model) -> list[str]:
        return [model.residual.labels[i] for i in self._idx(model)]


@dataclass(frozen=True)
class Residual:
    """Named directions of the residual stream after a layer (None: after the last)."""

    directions: tuple[str, ...]
    after_layer: int | None = None

    def __post_init__(self):
        fields.labels("Residual", "directions", self.directions, optional=False)
        fields.whole("Residual", "after_layer", self.after_layer, optional=True)

    @property
    def label(self) -> str:
        return f"residual {', '.join(self.directions)}"

    def get(self, trace) -> np.ndarray:
        return trace.resid(self.after_layer)[..., trace.model.residual.index(list(self.directions))]

    def values(self, trace):
        return None

    def components(self, model) -> list[str]:
        return [model.residual.labels[i] for i in model.residual.index(list(self.directions))]


Readout = HeadZ | HeadOutput | Residual
