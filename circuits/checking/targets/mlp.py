"""An MLP's output as a target: what a layer's MLP writes into the residual stream, with hints about W_in and W_out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.checking import fields
from circuits.checking.targets.output import Output, ReadoutMiss
from circuits.errors import CircuitError


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

    def explain(self, trace, tokens):
        e = super().explain(trace, tokens)
        e.head = None  # no attention heatmap: the culprit is the MLP
        e.mlp = self.readout.layer
        facts = e.per_position
        facts.names = names = self.readout.components(trace.model)  # by name: a residual-wide vector does not fit
        q, exp, yours = e.position, facts.expected, facts.yours  # [T, k]
        err = float(np.abs(np.nan_to_num(yours[q] - exp[q])).max())
        e.summary = ReadoutMiss(
            tuple(facts.tokens), q, self.readout.label, exp[q], yours[q], err, self.tol, tuple(names)
        )
        return e

    def _hint(self, trace, tokens, q, expected) -> MLPReads:
        l = self.readout.layer
        layer = trace.layers[l]
        labels = trace.model.residual.labels
        x = layer.mlp_in[0, q]  # [d_model]: what the MLP reads at this position
        read = tuple((labels[i], x[i]) for i in np.flatnonzero(np.abs(x) > 1e-9))
        pre, post = layer.mlp_pre[0, q], layer.mlp_post[0, q]  # [d_mlp]
        yours = self.readout.get(trace)[0, q]
        names = self.readout.components(trace.model)
        worst = int(np.nanargmax(np.abs(np.nan_to_num(yours - expected))))
        return MLPReads(
            q,
            read,
            pre,
            post,
            tuple(int(j) for j in np.flatnonzero(post > 1e-9)),
            yours,
            np.nan_to_num(expected),
            tuple(names),
            names[worst],
        )


@dataclass(frozen=True)
class MLPReads:
    """At `query` the MLP reads `read` (direction, value), its hidden units are `pre` (`post` after the ReLU; `fired`:
    the active units), and W_out makes `yours` where `expected` is expected, worst on direction `worst`."""

    query: int
    read: tuple[tuple[str, float], ...]
    pre: np.ndarray
    post: np.ndarray
    fired: tuple[int, ...]
    yours: np.ndarray
    expected: np.ndarray
    names: tuple[str, ...]
    worst: str
