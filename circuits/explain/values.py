"""Output of a head: why what a head's readout writes misses the spec, its facts and their words: the values are
right but the attention is not (aimed wrong, not sharp, tied), the pattern is given and the values are at fault, or
no mix of the values gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from circuits.explain.attention import zero_query
from circuits.explain.diagnosis import Mix, mix, tied, writers
from circuits.explain.formats import digits, families, fmt_vec, head, part, token_at
from circuits.explain.scores import Differs, ScaleBy, differs
from circuits.explain.tables import words
from circuits.explain.terms import matrix
from circuits.targets.readouts import HeadOutput
from circuits.targets.scores import factor_needed


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
    mix: Mix
    tokens: tuple[str, ...]
    expected: np.ndarray


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


# --- the explanation ---------------------------------------------------------------------------------------------
def head_cause(target, trace, tokens, q, expected):
    """Why head `target.readout`'s output misses `expected` at q: its attention, else its values."""
    l, h = target.readout.layer, target.readout.head
    name = (l, h)
    tokens = tuple(tokens)
    pattern = trace.pattern(l, h)[0, q, : q + 1]
    values = target.readout.values(trace)[0, : q + 1]  # [q+1, k]
    near = np.abs(values - expected).max(-1) <= target.tol
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
            close = lambda p: np.abs(p @ values - expected).max() <= target.tol  # noqa: E731
            return NotSharp(
                name, tokens, q, keys, gap, mass, q + 1 - len(good), ScaleBy(factor_needed(scores, close), q + 1)
            )
        if len(good) <= q:
            rest = np.delete(np.arange(q + 1), good)
            a, b = int(good[np.argmax(scores[good])]), int(rest[np.argmax(scores[rest])])
            if tied(scores[a], scores[b]):
                return TiedValue(name, a, b, scores[a], differs(trace, l, a, b, h))
        return ElsewhereAttended(name, tokens, q, keys, mass)
    if np.abs(values.mean(0) - expected).max() <= target.tol and not fixed:
        return EvenWould(name, q)
    m = mix(pattern, values, expected, target.tol)
    if m.reachable and len(m.keys) > 1:
        leak = Leak(name, m, tokens, expected)
        if fixed:
            return FixedMix(leak, *values_fed_by(target, trace, q))
        if zero := zero_query(trace, l, h, q):
            return zero
        return AttentionNotValues(q, expected, leak, why_scores(target, trace, q, m))
    return NoMix(q, values[:4], expected, isinstance(target.readout, HeadOutput))


def values_fed_by(target, trace, q: int) -> tuple[tuple[str, ...], tuple | None]:
    """The directions the readout head's W_V reads at keys 0..q, and the part before its layer that wrote most
    into them."""
    l, h = target.readout.layer, target.readout.head
    x = trace.layers[l].attn_in[0, : q + 1]
    labels = trace.model.residual.labels
    read = [int(i) for i in np.flatnonzero(np.abs(trace.model.head(l, h).W_V).sum(0) > 0) if np.abs(x[:, i]).any()]
    wrote = writers(trace, l, list(range(q + 1)), read) if read else {}
    who = max(wrote, key=wrote.get) if wrote else None
    return families(labels[i] for i in read), who if who is not None and wrote[who] > 1e-9 else None


def why_scores(target, trace, q: int, m, head: tuple[int, int] | None = None) -> ScoresWhy | None:
    """Why the attention goes where the mix does not want it: the best wanted key against the best unwanted one."""
    l, h = head if head is not None else (target.readout.layer, target.readout.head)
    s = trace.layers[l].scores[0, h, q, : q + 1]
    want = [j for g, keys in enumerate(m.keys) if m.needed[g] > m.yours[g] + 0.005 for j in keys]
    leak = [j for g, keys in enumerate(m.keys) if m.yours[g] > m.needed[g] + 0.005 for j in keys]
    if not want or not leak:
        return None
    a, b = max(want, key=lambda j: s[j]), max(leak, key=lambda j: s[j])
    return ScoresWhy(a, b, s[a], s[b], tied(s[a], s[b]))


# --- the words -----------------------------------------------------------------------------------------------------
@words.register
def _(f: Leak) -> str:
    """Where the attention goes that the expected vector does not want, and where it should go instead."""
    m, name = f.mix, head(f.head)
    over = [g for g in np.argsort(m.needed - m.yours) if m.yours[g] - m.needed[g] > 0.005]
    under = [g for g in np.argsort(m.yours - m.needed) if m.needed[g] - m.yours[g] > 0.005]

    def said(g, mass):
        return (
            f"{mass:.3f} on key{'s' if len(m.keys[g]) > 1 else ''} "  # noqa: E731
            f"{_keys_at(m.keys[g], f.tokens)} (value {_vec(m.values[g])})"
        )

    parts = []
    if over:
        parts.append(
            f"{name}'s attention leaks: it puts "
            + " and ".join(said(g, m.yours[g]) for g in over[:2])
            + f", where a pattern giving {_vec(f.expected)} puts "
            + " and ".join(f"{m.needed[g]:.3f}" for g in over[:2])
        )
    if under:
        parts.append(
            "too little goes to "
            + " and ".join(said(g, m.yours[g]) for g in under[:2])
            + " (needs "
            + " and ".join(f"{m.needed[g]:.3f}" for g in under[:2])
            + ")"
        )
    return "; ".join(parts)


@words.register
def _(f: RightValuesFixed) -> str:
    return (
        f"{head(f.head)} has a fixed pattern, and attending to {_where_good(f.tokens, f.keys)} would give the "
        "expected vector: the values are right, so check which head or layer the puzzle expects"
    )


@words.register
def _(f: NotSharp) -> str:
    others = f"{f.others} other {'key shares' if f.others == 1 else 'keys share'}"
    return (
        f"attention is aimed right but not sharp enough: at position {f.query} the keys whose value would give "
        f"the expected vector ({_where_good(f.tokens, f.keys)}) score {f.gap:.3g} above the rest, yet hold only "
        f"{f.mass:.3f} of {head(f.head)}'s attention because {others} the softmax. The gap "
        f"must grow with length (about log(length / tolerance)): {words(f.scale)}."
    )


@words.register
def _(f: TiedValue) -> str:
    return (
        f"indistinguishable keys: key {f.b} and key {f.a} (whose value would give the expected vector) both score "
        f"{f.score:.6g}, so {head(f.head)} splits its attention between them and no scale can separate them. "
        f"{words(f.then)}"
    )


@words.register
def _(f: ElsewhereAttended) -> str:
    return (
        f"attention went to the wrong positions: only {f.mass:.3f} of {head(f.head)}'s attention at position "
        f"{f.query} is on the keys whose value would give the expected vector ({_where_good(f.tokens, f.keys)}). "
        f"Look at {matrix('W_Q')} and {matrix('W_K')}."
    )


@words.register
def _(f: EvenWould) -> str:
    return (
        f"attending evenly to positions 0..{f.query} would give the expected vector, but {head(f.head)} does "
        f"not: look at {matrix('W_Q')} and {matrix('W_K')} (a zero W_QK attends evenly)"
    )


@words.register
def _(f: FixedMix) -> str:
    name = head(f.leak.head)
    fed = f"its {matrix('W_V')} reads {', '.join(f.reads)}, " if f.reads else ""
    if f.writer is not None:
        fed += f"which {part(f.writer)} writes: look at what {part(f.writer)} writes there first, then at "
    else:
        fed += "look at "
    return (
        f"{name}'s pattern is fixed (a given), so its values are at fault, not its attention. {fed[0].upper()}"
        f"{fed[1:]}{matrix('W_V', f.leak.head)} and {matrix('W_O', f.leak.head)} of {name}"
    )


@words.register
def _(f: AttentionNotValues) -> str:
    leak = words(f.leak)  # empty where no key is off by more than 0.005: the shortfall is spread thin
    return (
        f"the values are right but the attention is not: the expected vector {fmt_vec(f.expected)} is a mix of "
        f"the values at positions 0..{f.query}, so an attention pattern can give it"
        f"{f', and {leak}' if leak else ''}. {said_why(f.why)}Look at {matrix('W_Q')} and {matrix('W_K')}"
    )


@words.register
def _(f: NoMix) -> str:
    return (
        f"no mix of the values at positions 0..{f.query} ({', '.join(fmt_vec(v) for v in f.values)}"
        f"{' …' if f.query >= 4 else ''}) is close to the expected vector {fmt_vec(f.expected)}, so no attention "
        f"pattern can produce it: look at {matrix('W_V') + ' and ' + matrix('W_O') if f.W_O else matrix('W_V')}"
    )


@words.register
def _(f: ScoresWhy) -> str:
    return said_why(f)


def said_why(f: ScoresWhy | None) -> str:
    if f is None:
        return ""
    if f.tied:
        return (
            f"Indistinguishable keys: key {f.b} and key {f.a} both score {f.score_a:.6g}, so no scale can "
            "separate them. "
        )
    d = digits(f.score_b, f.score_a)
    return f"Key {f.b} scores {f.score_b:.{d}g} against {f.score_a:.{d}g} for key {f.a}. "


def _vec(v) -> str:
    v = np.atleast_1d(v)
    return "[" + ", ".join(f"{x:.3g}" if abs(x) >= 1e-3 else "0" for x in v) + "]"


def _keys_at(keys, tokens, most: int = 3) -> str:
    shown = ", ".join(f"{j} {tokens[j]!r}" for j in keys[:most])
    return shown + (f" and {len(keys) - most} more" if len(keys) > most else "")


def _where_good(tokens, keys) -> str:
    return ", ".join(token_at(tokens, j) for j in keys[:4]) + (" …" if len(keys) > 4 else "")
