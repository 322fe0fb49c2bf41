"""The MLP's output: why what a layer's MLP writes misses the spec (what it reads, which units fire, what W_out
writes), its facts and their words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.explain.formats import fmt_named, fmt_vec
from circuits.explain.output import ReadoutMiss, explained
from circuits.explain.tables import explain, words
from circuits.explain.terms import mlp_matrix
from circuits.targets.mlp import MLPOutput


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


@explain.register
def why(target: MLPOutput, trace, tokens):
    e = explained(target, trace, tokens, mlp_cause)
    e.head = None  # no attention heatmap: the culprit is the MLP
    e.mlp = target.readout.layer
    facts = e.per_position
    facts.names = names = target.readout.components(trace.model)  # by name: a residual-wide vector does not fit
    q, exp, yours = e.position, facts.expected, facts.yours  # [T, k]
    err = float(np.abs(np.nan_to_num(yours[q] - exp[q])).max())
    e.summary = ReadoutMiss(
        tuple(facts.tokens), q, target.readout.label, exp[q], yours[q], err, target.tol, tuple(names)
    )
    return e


def mlp_cause(target, trace, tokens, q, expected) -> MLPReads:
    """What the MLP reads at q, what its units do with it, and what W_out writes."""
    l = target.readout.layer
    layer = trace.layers[l]
    labels = trace.model.residual.labels
    x = layer.mlp_in[0, q]  # [d_model]: what the MLP reads at this position
    read = tuple((labels[i], x[i]) for i in np.flatnonzero(np.abs(x) > 1e-9))
    pre, post = layer.mlp_pre[0, q], layer.mlp_post[0, q]  # [d_mlp]
    yours = target.readout.get(trace)[0, q]
    names = target.readout.components(trace.model)
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


@words.register
def _(f: MLPReads) -> str:
    read = ", ".join(f"{label} = {x:.3g}" for label, x in f.read) or "nothing"
    writers = ", ".join(f"unit {j}" for j in f.fired) or "no unit"
    w_in, w_out = mlp_matrix("W_in"), mlp_matrix("W_out")
    return (
        f"at position {f.query} the MLP reads {read}; its hidden units {w_in} x are {fmt_vec(f.pre)}, after the "
        f"ReLU {fmt_vec(f.post)} ({writers} active), and {w_out} turns them into {fmt_named(f.yours, f.names)} "
        f"where {fmt_named(f.expected, f.names)} is expected (worst on {f.worst!r}). Look at {w_in} (which units "
        "fire for this input: a ReLU passes only what is above zero, and a weight on a constant direction sets a "
        f"unit's threshold) and {w_out} (what each unit writes, into which direction)"
    )
