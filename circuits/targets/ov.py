"""Checks on one head's full OV circuit W_U W_OV W_E: its copying score, and which token each attended token raises;
each row's facts (CopyingScore, RaisedMost) are worded by explain/ov.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from circuits.errors import CircuitError
from circuits.targets import fields
from circuits.targets.structure import Structure


def full_ov(model, layer: int, head: int, tokens=None) -> np.ndarray:
    """`W_U W_O W_V W_E` of one head, `[output token, attended token]`, over `tokens` (default: all but BOS).

    Column t is what the head adds to every logit when it attends fully to a position holding t
    (the direct path and other heads aside), as in *A Mathematical Framework for Transformer Circuits*.
    The circuit a target checks, dense over a puzzle's few tokens; circuits.analysis.full_ov is the same product
    over the whole vocabulary, kept factored (a real model's vocabulary is too large to multiply out).
    """
    if model.W_U is None:
        raise CircuitError(f"the model {model.name!r} has no W_U, so head {layer}.{head} has no full OV circuit")
    vocab = model.vocab
    tokens = [t for t in vocab.tokens if t != vocab.bos] if tokens is None else list(tokens)
    ids = [vocab.id(t) for t in tokens]
    h = model.head(layer, head)
    return model.W_U[ids] @ h.W_O @ h.W_V @ model.W_E[:, ids]  # [n, n]


def copying_score(M) -> float:
    """Σ Re λ / Σ|λ| over the eigenvalues λ of a square full OV circuit `M`: +1 for a pure copier, −1 for a pure
    suppressor. `M` is an array, or analysis's FactoredMatrix (its eigenvalues come from its small factors).

    The summary statistic of *A Mathematical Framework* (positive eigenvalues: the head raises the logits of the
    tokens it attends to). A circuit with no non-zero eigenvalue (a head that writes nothing W_U reads) scores 0:
    on this scale it neither copies nor suppresses, as a learner reads 0, and it fails a bound such as ≥ 0.9 for
    that reason; NaN would print as "nan", vanish from JSON and compare false with every bound.
    """
    lam = M.eigenvalues() if hasattr(M, "eigenvalues") else np.linalg.eigvals(np.asarray(M, dtype=float))
    total = float(np.abs(lam).sum())
    return float(lam.real.sum() / total) if total > 1e-12 else 0.0


def raised(M: np.ndarray, tokens) -> list[str]:
    """For each attended token (column), the output token the head raises most; '(tie)' where two share the top."""
    out = []
    for col in np.asarray(M, dtype=float).T:
        top = np.flatnonzero(col >= col.max() - 1e-9 * max(1.0, abs(col.max())))
        out.append(tokens[int(top[0])] if len(top) == 1 else "(tie)")
    return out


@dataclass(frozen=True)
class ScoreBound:
    """The bounds a copying score must keep (None: no bound on that side); the expected side of its row."""

    min_score: float | None
    max_score: float | None


@dataclass(frozen=True)
class CopyingScore:
    """A row of the OV report: head `head`'s copying score Σλ/Σ|λ| of W_U W_OV W_E (−0 shown as 0) and its bounds."""

    head: tuple[int, int]
    score: float
    bound: ScoreBound


@dataclass(frozen=True)
class RaisedMost:
    """A row of the OV report: which token each attended token raises most through head `head`; `wrong` holds the
    (attended, raised) pairs that differ from what the puzzle expects ('(tie)' where two share the top)."""

    head: tuple[int, int]
    wrong: tuple[tuple[str, str], ...]


@dataclass
class OVCircuit(Structure):
    """Measurements of head `layer.head`'s full OV circuit, each a row of the structure report.

    `min_score` / `max_score` bound the copying score; `raises(token)` names the output token each
    attended token must raise most (e.g. itself for a copying head, its successor for a successor head).
    """

    layer: int = 0
    head: int = 0
    min_score: float | None = None
    max_score: float | None = None
    raises: Callable[[str], str] | None = None
    tokens: tuple[str, ...] | None = None
    check: Callable | None = field(default=None, init=False)

    def __post_init__(self):
        owner = f"OVCircuit({self.description!r})" if len(self.description) <= 30 else "OVCircuit"
        fields.whole(owner, "layer", self.layer)
        fields.whole(owner, "head", self.head)
        fields.number(owner, "min_score", self.min_score, optional=True)
        fields.number(owner, "max_score", self.max_score, optional=True, example="-0.9")
        fields.function(owner, "raises", self.raises)
        fields.labels(owner, "tokens", self.tokens)

    @property
    def stage(self) -> float:
        return float(self.layer)

    def run(self, answer, model) -> list[tuple[object, object, object, bool]]:
        import sympy

        vocab = model.vocab
        tokens = list(self.tokens) if self.tokens is not None else [t for t in vocab.tokens if t != vocab.bos]
        M = full_ov(model, self.layer, self.head, tokens)
        head = (self.layer, self.head)
        rows = []
        if self.min_score is not None or self.max_score is not None:
            score = copying_score(M)
            bound = ScoreBound(self.min_score, self.max_score)
            ok = (self.min_score is None or score >= self.min_score) and (
                self.max_score is None or score <= self.max_score
            )
            shown = 0.0 if abs(score) < 5e-4 else score  # never "-0.000": its sign is float noise, kernel to kernel
            rows.append(
                (CopyingScore(head, shown, bound), sympy.Matrix([[sympy.Float(round(score, 3), 3)]]), bound, ok)
            )
        if self.raises is not None:
            yours = raised(M, tokens)
            expected = [self.raises(t) for t in tokens]
            wrong = tuple((t, y) for t, y, e in zip(tokens, yours, expected) if y != e)
            rows.append(
                (
                    RaisedMost(head, wrong),
                    sympy.Matrix([[sympy.Symbol(y) for y in yours]]),
                    sympy.Matrix([[sympy.Symbol(e) for e in expected]]),
                    not wrong,
                )
            )
        return rows
