"""Output: a readout (residual directions, a head's output) within a tolerance of the spec at every position."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.targets import authored, fields
from circuits.targets.base import Evaluation, Shows, Target, Tokens
from circuits.targets.readouts import Readout, Residual
from circuits.targets.specs import batched_array, spec_array


@dataclass
class Output(Target):
    """At every position the readout is within `tol` (max abs difference) of `spec(tokens)[i]`.

    `batched`, optional, is the same spec on a whole batch at once, for speed where a Python loop per
    input is slow: tokens `[b, L]` (a numpy array of str) -> expectations `[b, L, k]` (NaN for None).
    The checker uses it on its batches; `spec` stays the readable reference, shown in explanations,
    and the puzzle's tests hold the two equal."""

    readout: Readout
    spec: Callable[[Tokens], Sequence]
    tol: float = 0.1
    description: str = ""
    batched: Callable[[np.ndarray], np.ndarray] | None = None
    metric: str = field(default="largest error", init=False)

    def __post_init__(self):
        owner = type(self).__name__
        fields.number(owner, "tol", self.tol, example="0.1")
        fields.function(owner, "spec", self.spec, optional=False)
        fields.function(owner, "batched", self.batched)

    @property
    def label(self) -> str:
        return self.description or f"{self.readout.label} ≈ spec within {self.tol:g}"

    @property
    def stage(self) -> float:
        """A head's readout: its layer; the residual after layer l: l + 0.5 (after the last: ∞, with the logits)."""
        if isinstance(self.readout, Residual):
            return np.inf if self.readout.after_layer is None else self.readout.after_layer + 0.5
        return float(self.readout.layer)

    def evaluate(self, trace, batch):
        yours = self.readout.get(trace)  # [b, T, k]
        if self.batched is not None and batch and all(len(t) == len(batch[0]) for t in batch):
            exp = batched_array(self.batched, batch, yours.shape[1], yours.shape[2], self.label)
        else:
            exp = spec_array(self.spec, batch, yours.shape[1], yours.shape[2], self.label)
        err = np.nanmax(np.where(np.isnan(exp), -np.inf, np.abs(yours - exp)), axis=-1)  # [b, T]
        err = np.where(np.isfinite(err), err, np.nan)
        worst = np.nanmax(np.where(np.isnan(err), -np.inf, err), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 0.0)
        return Evaluation(worst <= self.tol, worst, (~np.isnan(err)).sum(-1))

    @property
    def tolerance(self):
        return float(self.tol)

    def slack(self, worst):
        return self.tol - worst

    def bound(self):
        return f"tolerance {self.tol:g}"

    def validate(self, examples, alphabet, fail):
        if not callable(self.spec):
            raise fail(f"spec is {type(self.spec).__name__}, needs a function tokens -> one value per token")
        width = (
            len(self.readout.directions)
            if isinstance(self.readout, Residual) or getattr(self.readout, "directions", None)
            else None
        )
        for toks in examples:
            got = authored.call(self.spec, list(toks), f"spec({authored.shown(toks)})", fail)
            authored.check_spec_result(got, toks, width, False, fail)

    def checks_nothing(self, probe):
        return not authored.expects_something(self.spec, probe)

    def shown(self, trace, tokens):
        yours = self.readout.get(trace)[0]
        off = yours.shape[0] - len(tokens)
        exp = [None] * off + [
            None if e is None else list(map(float, np.atleast_1d(e))) for e in self.spec(tokens)
        ]  # a scalar spec too
        names = self.readout.components(trace.model)
        named = {"directions": names} if not all(n.isdigit() for n in names) else {}  # residual directions, as check
        return {
            "label": self.label,
            "kind": Shows.OUTPUT,
            "readout": self.readout.label,
            "expected": exp,
            "output": yours.tolist(),
            **named,
        }

    def classes_ok(self, canon, sample):
        return all(
            np.allclose(np.asarray(self.spec(s), dtype=float), np.asarray(self.spec(canon(s)), dtype=float))
            for s in sample
        )
