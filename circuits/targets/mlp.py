"""An MLP's output as a target: what a layer's MLP writes into the residual stream, with hints about W_in and W_out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.errors import CircuitError
from circuits.targets import fields
from circuits.targets.output import Output


@dataclass(frozen=True)
class MLPOut:
    """What the MLP of `layer` writes, W_out · relu(W_in x), on some named directions (None: all) `[b, T, k]`."""

    layer: int = 0
    directions: tuple[str, ...] | None = None

    def __post_init__(self):
        fields.whole("MLPOut", "layer", self.layer)
        fields.labels(f"MLPOut({self.layer})", "directions", self.directions)

    @property
    def label(self) -> str:
        where = f" on {', '.join(self.directions)}" if self.directions else ""
        return f"output of the MLP of layer {self.layer}{where}"

    def _idx(self, model):
        if self.directions is None:
            return list(range(model.d_model))
        return model.residual.index(list(self.directions))

    def get(self, trace) -> np.ndarray:
        n = trace.model.n_layers
        if self.layer >= n:
            raise CircuitError(
                f"MLPOut({self.layer}) reads the MLP of layer {self.layer}, but the model has {n} "
                f"layer{'s' if n != 1 else ''} ({'0' if n == 1 else f'0..{n - 1}'}): a mistake in the "
                "puzzle's targets, not in the answer"
            )
        if trace.model.blocks[self.layer].mlp is None:
            raise CircuitError(f"MLPOut({self.layer}): layer {self.layer} has no MLP, so it writes nothing to read")
        out = trace.layers[self.layer].held("mlp_out", f"output of the MLP of layer {self.layer}")  # [b, T, d_model]
        return out[..., self._idx(trace.model)]

    def values(self, trace):
        return None

    def components(self, model) -> list[str]:
        return [model.residual.labels[i] for i in self._idx(model)]


@dataclass
class MLPOutput(Output):
    """At every position the MLP of a layer writes `spec(tokens)[i]` (within `tol`); hints name W_in and W_out."""

    @property
    def stage(self) -> float:
        return self.readout.layer + 0.5  # after the layer's heads, before the next layer
