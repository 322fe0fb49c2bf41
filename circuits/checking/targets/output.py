"""Output: a readout (residual directions, a head's output) within a tolerance of the spec at every position."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from circuits.checking import diagnosis, fields
from circuits.checking.readouts import HeadOutput, Readout, Residual
from circuits.checking.targets import authored
from circuits.checking.targets.attention import zero_query
from circuits.checking.targets.base import Evaluation, Explanation, Shows, Target, Tokens
from circuits.checking.targets.formats import families
from circuits.checking.targets.scores import Differs, ScaleBy, differs, factor_needed
from circuits.checking.targets.specs import batched_array, spec_array
from circuits.model.decompose import decompose_resid


@dataclass
class ReadoutPositions:
    """An output target's facts per position: expected `[T, k]` (NaN: none), yours `[T, k]`, the error `[T]`."""

    tokens: Tokens
    expected: np.ndarray
    yours: np.ndarray
    error: np.ndarray
    tol: float
    names: list[str] | None = None  # the directions, where vectors are shown by name (too wide for a terminal)


# --- what an explanation found: the miss (its summary) and its likely cause (its hint) --------------------------
# A part of the model that writes into the residual: ("embedding",), ("head", layer, head) or ("mlp", layer).
Part = tuple


@dataclass(frozen=True)
class ReadoutMiss:
    """At position `query` the readout `readout` (its label) is `yours`, where `expected` is expected (NaN: none),
    an error `error` above `tol`; `names`: the directions, where the vectors are shown by name."""

    tokens: tuple[str, ...]
    query: int
    readout: str
    expected: np.ndarray
    yours: np.ndarray
    error: float
    tol: float
    names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ScoresWhy:
    """Why the attention goes where the mix does not want it: the best unwanted key `b` against the best wanted
    key `a`, and their scores (`tied`: equal up to rounding)."""

    a: int
    b: int
    score_a: float
    score_b: float
    tied: bool


@dataclass(frozen=True)
class Leak:
    """Where head `head`'s attention goes that a pattern giving `expected` does not want (`mix`: the keys grouped by
    value, the mass yours puts on each group and the mass a fit needs)."""

    head: tuple[int, int]
    mix: diagnosis.Mix
    tokens: tuple[str, ...]
    expected: np.ndarray


@dataclass(frozen=True)
class AttentionCulprit:
    """Head `head` writes the wrong amount into the readout's `directions` at `query`, but `needed` from it would
    fix that and is a mix of its keys' values: its attention is off (`leak`, `why`)."""

    head: tuple[int, int]
    directions: tuple[str, ...]
    query: int
    needed: np.ndarray
    leak: Leak
    why: ScoresWhy | None


@dataclass(frozen=True)
class WrittenBy:
    """Direction `direction` at `query` is off by `error`, exactly what `culprit` writes there (`written`: every
    part's write); when the culprit is the embedding (a given), `heads` are the heads that write the direction
    (with what they write there)."""

    direction: str
    query: int
    error: float
    culprit: Part
    written: tuple[tuple[Part, float], ...]
    heads: tuple[tuple[Part, float], ...]


@dataclass(frozen=True)
class WronglyWritten:
    """Direction `direction` at `query` is off by `error` and no one part explains it: `heads` write it (the wrong
    value), else `mlps` could; `written`: every part's write."""

    direction: str
    query: int
    error: float
    written: tuple[tuple[Part, float], ...]
    heads: tuple[Part, ...]
    mlps: tuple[Part, ...]


@dataclass(frozen=True)
class RightValuesFixed:
    """Head `head` has a fixed pattern, and attending to `keys` would give the expected vector."""

    head: tuple[int, int]
    tokens: tuple[str, ...]
    keys: tuple[int, ...]


@dataclass(frozen=True)
class NotSharp:
    """At `query` the keys whose value gives the expected vector (`keys`) score `gap` above the rest yet hold only
    `mass` of head `head`'s attention, with `others` other keys in the softmax."""

    head: tuple[int, int]
    tokens: tuple[str, ...]
    query: int
    keys: tuple[int, ...]
    gap: float
    mass: float
    others: int
    scale: ScaleBy


@dataclass(frozen=True)
class TiedValue:
    """Key `b` and key `a` (whose value gives the expected vector) both score `score`: no scale separates them."""

    head: tuple[int, int]
    a: int
    b: int
    score: float
    then: Differs


@dataclass(frozen=True)
class ElsewhereAttended:
    """Only `mass` of head `head`'s attention at `query` is on the keys whose value gives the expected vector."""

    head: tuple[int, int]
    tokens: tuple[str, ...]
    query: int
    keys: tuple[int, ...]
    mass: float


@dataclass(frozen=True)
class EvenWould:
    """Attending evenly to positions 0..query would give the expected vector, but head `head` does not."""

    head: tuple[int, int]
    query: int


@dataclass(frozen=True)
class FixedMix:
    """Head `head` has a fixed pattern that does not give the expected vector, though other values could (`leak`):
    the pattern is given, so the values are at fault; they read `reads`, which `writer` wrote most (None: no part
    before the head's layer)."""

    leak: Leak
    reads: tuple[str, ...] = ()
    writer: tuple | None = None
    earlier_first: ClassVar[bool] = True  # an earlier part's failure is the likelier cause: its note leads


@dataclass(frozen=True)
class AttentionNotValues:
    """The values are right but the attention is not: `expected` is a mix of the values at 0..query (`leak`, `why`)."""

    query: int
    expected: np.ndarray
    leak: Leak
    why: ScoresWhy | None


@dataclass(frozen=True)
class NoMix:
    """No mix of the values at 0..query (`values`, the first four) is close to `expected`: the values are wrong
    (`W_O`: the readout is the head's output, so W_O may be too)."""

    query: int
    values: np.ndarray
    expected: np.ndarray
    W_O: bool


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

    def explain(self, trace, tokens):
        yours = self.readout.get(trace)[0]
        exp = spec_array(self.spec, [tokens], yours.shape[0], yours.shape[1], self.label)[0]
        err = np.where(np.isnan(exp), 0.0, np.abs(yours - exp)).max(-1)
        bad = np.flatnonzero(err > self.tol)
        q = int(bad[0]) if len(bad) else int(np.argmax(err))
        tokens = trace.tokens(0)
        rows = ReadoutPositions(list(tokens), exp, yours, err, self.tol)
        summary = ReadoutMiss(tuple(tokens), q, self.readout.label, exp[q], yours[q], err[q], self.tol)
        head = getattr(self.readout, "layer", None), getattr(self.readout, "head", None)
        head = head if head[0] is not None else None
        marks = None
        if head:
            hint = self._hint(trace, tokens, q, exp[q])
        else:
            hint, head, marks = self._attention_culprit(trace, q, yours[q], exp[q]) or (None, None, None)
            hint = hint or self._residual_hint(trace, q, yours[q] - exp[q])
        return Explanation(q, summary, rows, hint, head, marks, "value")

    def _attention_culprit(self, trace, q: int, yours: np.ndarray, expected: np.ndarray):
        """A head whose values could give what the readout needs, had it attended elsewhere: (hint, head, marks).

        The readout is residual directions; each head with a computed pattern adds its attention-weighted
        values there. If the needed output of one head is a mix of its keys' values, its attention is the cause."""
        model = trace.model
        tokens = trace.tokens(0)
        idx = model.residual.index(self.readout.components(model))
        err = np.nan_to_num(yours - expected)
        found = []
        for l, layer in enumerate(trace.layers):
            if self.readout.after_layer is not None and l > self.readout.after_layer:
                break
            for h, w in enumerate(layer.heads):
                if w.pattern is not None or not np.abs(w.W_O[idx]).any():
                    continue
                values = (layer.v[0, h, : q + 1, : w.W_V.shape[0]] @ w.W_O.T)[:, idx]  # [keys, k]
                if np.ptp(values, axis=0).max() <= self.tol:
                    continue  # every key gives the same: the attention cannot matter
                pattern = layer.pattern[0, h, q, : q + 1]
                current = pattern @ values
                m = diagnosis.mix(pattern, values, current - err, self.tol)
                if m.reachable:
                    found.append((float(np.ptp(values, axis=0).max()), l, h, m, current - err))
        if not found:
            return None
        _, l, h, m, needed = max(found, key=lambda f: f[0])
        marks: list = [-1] * len(tokens)
        marks[q] = [j for g, keys in enumerate(m.keys) if m.needed[g] > 0.005 for j in keys]
        if zero := zero_query(trace, l, h, q):  # the attention spreads evenly because the query reads nothing here
            return zero, (l, h), marks
        hint = AttentionCulprit(
            (l, h),
            tuple(self.readout.components(model)),
            q,
            needed,
            Leak((l, h), m, tuple(tokens), needed),
            self._why_scores(trace, q, m, (l, h)),
        )
        return hint, (l, h), marks

    def _residual_hint(self, trace, q: int, error: np.ndarray) -> WrittenBy | WronglyWritten:
        """Which part of the model wrote the wrong amount into the worst direction."""
        model = trace.model
        added = decompose_resid(trace)  # per part: [b, T, d_model]

        def parts(col: int) -> dict[Part, float]:
            return {part: float(a[0, q, col]) for part, a in added.items()}

        names = self.readout.components(model)
        order = [int(d) for d in np.argsort(-np.nan_to_num(np.abs(error))) if abs(error[d]) > self.tol]
        for d in order:  # prefer a direction whose error one part of the model explains exactly
            p = parts(model.residual.index(names[d]))
            culprit = min(p, key=lambda k: abs(p[k] - error[d]))
            if abs(p[culprit] - error[d]) <= self.tol and abs(p[culprit]) > 1e-12:
                written = tuple((k, v) for k, v in p.items() if abs(v) > 1e-12)
                heads = (
                    ()
                    if culprit[0] != "embedding"
                    else tuple(
                        (k, p[k])
                        for k in p
                        if k[0] == "head" and np.abs(trace.model.head(*k[1:]).W_O[model.residual.index(names[d])]).any()
                    )
                )
                return WrittenBy(names[d], q, error[d], culprit, written, heads)
        d = order[0]
        p = parts(model.residual.index(names[d]))
        return WronglyWritten(
            names[d],
            q,
            error[d],
            tuple((k, v) for k, v in p.items() if abs(v) > 1e-12),
            tuple(k for k, v in p.items() if k[0] == "head" and abs(v) > 1e-12),
            tuple(k for k in p if k[0] == "mlp"),
        )

    def _hint(self, trace, tokens, q, expected):
        l, h = self.readout.layer, self.readout.head
        name = (l, h)
        tokens = tuple(tokens)
        pattern = trace.pattern(l, h)[0, q, : q + 1]
        values = self.readout.values(trace)[0, : q + 1]  # [q+1, k]
        near = np.abs(values - expected).max(-1) <= self.tol
        fixed = trace.model.head(l, h).pattern is not None
        if near.any():
            good = np.flatnonzero(near)
            mass = float(pattern[good].sum())
            keys = tuple(int(j) for j in good)
            if fixed:
                return RightValuesFixed(name, tokens, keys)
            if zero := zero_query(trace, l, h, q):  # every key scores the same: no scale or key can help
                return zero
            scores = trace.layers[l].scores[0, h, q, : q + 1]
            gap = float(scores[good].min() - np.delete(scores, good).max()) if len(good) <= q else np.inf
            if np.isfinite(gap) and gap > 0:
                close = lambda p: np.abs(p @ values - expected).max() <= self.tol  # noqa: E731
                return NotSharp(
                    name, tokens, q, keys, gap, mass, q + 1 - len(good), ScaleBy(factor_needed(scores, close), q + 1)
                )
            if len(good) <= q:
                rest = np.delete(np.arange(q + 1), good)
                a, b = int(good[np.argmax(scores[good])]), int(rest[np.argmax(scores[rest])])
                if diagnosis.tied(scores[a], scores[b]):
                    return TiedValue(name, a, b, scores[a], differs(trace, l, a, b))
            return ElsewhereAttended(name, tokens, q, keys, mass)
        if np.abs(values.mean(0) - expected).max() <= self.tol and not fixed:
            return EvenWould(name, q)
        m = diagnosis.mix(pattern, values, expected, self.tol)
        if m.reachable and len(m.keys) > 1:
            leak = Leak(name, m, tokens, expected)
            if fixed:
                return FixedMix(leak, *self._values_fed_by(trace, q))
            if zero := zero_query(trace, l, h, q):
                return zero
            return AttentionNotValues(q, expected, leak, self._why_scores(trace, q, m))
        return NoMix(q, values[:4], expected, isinstance(self.readout, HeadOutput))

    def _values_fed_by(self, trace, q: int) -> tuple[tuple[str, ...], tuple | None]:
        """The directions the readout head's W_V reads at keys 0..q, and the part before its layer that wrote most
        into them."""
        l, h = self.readout.layer, self.readout.head
        x = trace.layers[l].attn_in[0, : q + 1]
        labels = trace.model.residual.labels
        read = [int(i) for i in np.flatnonzero(np.abs(trace.model.head(l, h).W_V).sum(0) > 0) if np.abs(x[:, i]).any()]
        wrote = diagnosis.writers(trace, l, list(range(q + 1)), read) if read else {}
        who = max(wrote, key=wrote.get) if wrote else None
        return families(labels[i] for i in read), who if who is not None and wrote[who] > 1e-9 else None

    def _why_scores(self, trace, q: int, m, head: tuple[int, int] | None = None) -> ScoresWhy | None:
        """Why the attention goes where the mix does not want it: the best wanted key against the best unwanted one."""
        l, h = head if head is not None else (self.readout.layer, self.readout.head)
        s = trace.layers[l].scores[0, h, q, : q + 1]
        want = [j for g, keys in enumerate(m.keys) if m.needed[g] > m.yours[g] + 0.005 for j in keys]
        leak = [j for g, keys in enumerate(m.keys) if m.yours[g] > m.needed[g] + 0.005 for j in keys]
        if not want or not leak:
            return None
        a, b = max(want, key=lambda j: s[j]), max(leak, key=lambda j: s[j])
        return ScoresWhy(a, b, s[a], s[b], diagnosis.tied(s[a], s[b]))
