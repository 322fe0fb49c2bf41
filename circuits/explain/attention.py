"""Attention: why a head misses its target keys at a query (the first one that misses), its facts and their
words: a fixed pattern, a zero query, directions nothing writes, a tie, too little sharpness; the wrong key winning
is in `keys`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.explain.diagnosis import apart, largest, tied
from circuits.explain.formats import families, head, listed, token_at
from circuits.explain.keys import WriterFirst, by_name, writer_first, wrong_key
from circuits.explain.scores import Differs, ScaleBy, differs
from circuits.explain.tables import columns, explain, rows, words
from circuits.explain.terms import matrix
from circuits.model.decompose import Writes, before
from circuits.targets.attention import Attention
from circuits.targets.base import Explanation, Tokens
from circuits.targets.scores import factor_needed


def zero_query(trace, layer: int, head: int, q: int) -> ZeroQuery | None:
    """The cause when a head's query is exactly zero at q: every key scores the same, whatever W_K does."""
    w = trace.model.head(layer, head)
    if w.pattern is not None or q == 0:
        return None
    q_vec = trace.layers[layer].q[0, head, q, : w.W_Q.shape[0]]
    if np.abs(q_vec).any():
        return None
    labels = trace.model.residual.labels
    x = trace.layers[layer].attn_in[0, q]
    read = np.flatnonzero(np.abs(w.W_Q).sum(0) > 0)
    return ZeroQuery(
        (layer, head),
        q,
        trace.tokens(0)[q],
        families(labels[i] for i in read),
        families(labels[i] for i in np.flatnonzero(np.abs(x) > 1e-9)),
        by_name([labels[i] for i in read if abs(x[i]) > 1e-9]),
    )


# --- what an explanation found: the miss (its summary) and its likely cause (its hint) --------------------------
@dataclass
class AttentionPositions:
    """An attention target's facts per query: the head's pattern `[T, T]`, the target keys `[T, T]` (bool), the
    latest target key `[T]` (−1: none), the mass on them `[T]` (NaN: no target) and the mass needed."""

    tokens: Tokens
    pattern: np.ndarray
    keys: np.ndarray
    targets: np.ndarray
    mass: np.ndarray
    min_mass: float
    evenly: bool = False  # mass is the least-attended target key's weight × the number of target keys


@dataclass(frozen=True)
class AttentionMiss:
    """The first query that misses: the target keys, the mass on them (with `evenly`, the least-attended key's
    weight, against an even share of min_mass) and the key the head attends most."""

    head: tuple[int, int]
    tokens: tuple[str, ...]
    query: int
    keys: tuple[int, ...]
    mass: float
    min_mass: float
    evenly: bool
    least: int  # with evenly: the target key with the least weight
    least_weight: float
    top: int
    top_weight: float


@dataclass(frozen=True)
class FixedPattern:
    """The head's pattern is fixed (given), but the target needs one computed from the scores."""

    head: tuple[int, int]


@dataclass(frozen=True)
class ZeroQuery:
    """The head's query at `query` is exactly zero (W_Q reads `reads`; the residual there holds `has`): every key
    scores the same. `cancels`: the directions W_Q reads that are there, whose contributions add up to zero."""

    head: tuple[int, int]
    query: int
    token: str
    reads: tuple[str, ...]
    has: tuple[str, ...]
    cancels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unread:
    """The head's keys or queries (`side`) read only directions (`reads`) that nothing before its layer writes:
    the embedding and the `writers` (heads with a W_O) write only `written`, so every key scores `score`."""

    head: tuple[int, int]
    side: str  # "keys" | "queries"
    reads: tuple[str, ...]
    writers: tuple[tuple[int, int], ...]
    written: tuple[str, ...]
    score: float


@dataclass(frozen=True)
class TiedKeys:
    """Key `rival` and the target key `best` score the same (`score`): no scale separates them; `then` says what
    would (an earlier writer's fault, or what differs between them)."""

    head: tuple[int, int]
    rival: int
    best: int
    score: float
    then: WriterFirst | Differs
    echo: str | None = None  # the query's token, where the rival holds it too (the query itself, or a copy of it)
    itself: bool = False  # the rival is the query's own position
    target_too: bool = False  # the target key holds the query's token as well


@dataclass(frozen=True)
class Uneven:
    """The head should spread its attention evenly over `keys`, but their scores differ."""

    head: tuple[int, int]
    keys: tuple[int, ...]
    scores: tuple[float, ...]


@dataclass(frozen=True)
class Sharpen:
    """The head attends most to the right key(s) (`n_keys`), but only by `gap`: the scores need scaling."""

    head: tuple[int, int]
    n_keys: int
    gap: float
    scale: ScaleBy


# --- the explanation ---------------------------------------------------------------------------------------------


@explain.register
def why(target: Attention, trace, tokens):
    pattern = trace.pattern(target.layer, target.head)[0]
    keys = target.key_sets(trace, [tokens])[0]  # [T, T]
    targets = target.targets(trace, [tokens])[0]
    labels = trace.tokens(0)
    mass = target.mass(pattern[None], keys[None])[0]
    bad = np.flatnonzero(np.nan_to_num(mass, nan=1.0) < target.min_mass)
    q = int(bad[0])
    t = int(targets[q])
    on = tuple(int(k) for k in np.flatnonzero(keys[q]))
    top = largest(pattern[q], on)
    rows = AttentionPositions(list(labels), pattern, keys, targets, mass, target.min_mass, target.evenly)
    least = min(on, key=lambda k: pattern[q, k])
    summary = AttentionMiss(
        (target.layer, target.head),
        tuple(labels),
        q,
        on,
        mass[q],
        target.min_mass,
        target.evenly,
        least,
        pattern[q, least],
        top,
        pattern[q, top],
    )
    hint = cause(target, trace, q, keys[q, : q + 1], top, t)
    return Explanation(q, summary, rows, hint, (target.layer, target.head), [int(x) for x in targets])


def cause(target, trace, q: int, inside: np.ndarray, top: int, t: int):
    """Why the target keys `inside` `[keys]` miss: a fixed pattern, a zero query, unread directions, a tie,
    too little sharpness, or the wrong key winning."""
    name = (target.layer, target.head)
    if trace.model.head(target.layer, target.head).pattern is not None:
        return FixedPattern(name)
    scores = trace.layers[target.layer].scores[0, target.head, q, : q + 1]
    if (said := unread(target, trace, q, t)) or (said := zero_query(trace, target.layer, target.head, q)):
        return said
    if (~inside).any():  # a tie between a target key and another is a tie whichever way argmax breaks it
        best = int(np.flatnonzero(inside)[np.argmax(scores[inside])])
        rival = int(np.flatnonzero(~inside)[np.argmax(scores[~inside])])
        if tied(scores[best], scores[rival]):
            then = writer_first(target, trace, q, best, rival) or differs(trace, target.layer, best, rival, target.head)
            ids = trace.ids[0]
            echo = trace.tokens(0)[q] if ids[rival] == ids[q] else None
            return TiedKeys(name, rival, best, scores[best], then, echo, rival == q, bool(ids[best] == ids[q]))
    if not inside[top]:
        return wrong_key(target, trace, q, top, t)
    n_keys = int(inside.sum())
    in_s = scores[inside]
    if target.evenly and in_s.max() - in_s.min() > 1e-9 * max(1.0, float(np.abs(in_s).max())):
        on = np.flatnonzero(inside)
        return Uneven(name, tuple(int(k) for k in on), tuple(scores[k] for k in on))
    rest = scores[~inside]
    gap = float(in_s.min() - rest.max()) if len(rest) else np.inf
    need = target.min_mass / n_keys if target.evenly else target.min_mass
    ok = (lambda p: p[inside].min() >= need) if target.evenly else (lambda p: p[inside].sum() >= need)
    return Sharpen(name, n_keys, gap, ScaleBy(factor_needed(scores, ok), q + 1))


def unread(target, trace, q: int, t: int) -> Unread | None:
    """The cause when the head's keys (or queries) read only directions nothing before its layer writes."""
    layer = trace.layers[target.layer]
    head = layer.heads[target.head]
    labels = trace.model.residual.labels
    x = layer.attn_in[0]  # [T, d_model]: what the head reads, at every position of this input
    s = layer.scores[0, target.head, q]
    early = [p for p in before(trace.model, target.layer) if p.kind not in (Writes.HEAD, Writes.B_O)]
    for what, W in (("keys", head.W_K), ("queries", head.W_Q)):
        read = np.flatnonzero(np.abs(W).sum(0) > 0)
        embedded = any(p.writes(read) for p in early)  # an MLP's write is zero only here
        if len(read) and not np.abs(x[:, read]).any() and not embedded:  # not merely zero for these tokens
            written = np.flatnonzero(np.abs(x).sum(0) > 0)
            writers = tuple(
                (l, h)
                for l in range(target.layer)
                for h in range(trace.model.n_heads(l))
                if np.abs(trace.model.head(l, h).W_O).any()
            )
            return Unread(
                (target.layer, target.head),
                what,
                families(labels[i] for i in read),
                writers,
                families(labels[i] for i in written),
                s[t],
            )
    return None


# --- the words -----------------------------------------------------------------------------------------------------
@columns.register
def _(f: AttentionPositions) -> list[str]:
    return ["query", "token", "target key", "argmax key (weight)", "on target", ""]


@rows.register
def _(f: AttentionPositions) -> list[list[str]]:
    rows = []
    for i, t in enumerate(f.tokens):
        top = f"{int(np.argmax(f.pattern[i]))} ({f.pattern[i].max():.3f})"
        if f.targets[i] < 0:
            rows.append([str(i), repr(t), "—", top, "—", ""])
            continue
        keys = [str(int(k)) for k in np.flatnonzero(f.keys[i])]
        wanted = ", ".join(keys if len(keys) <= 4 else [*keys[:2], "…", keys[-1]])
        wanted = wanted if len(keys) > 1 else f"{f.targets[i]} {f.tokens[f.targets[i]]!r}"
        on = f"{f.mass[i]:.3f}"
        if f.evenly and len(keys) > 1:  # the least-attended key, which the even share judges, not the sum
            on = f"{apart(f.mass[i] / len(keys), f.min_mass / len(keys))[0]} each"
        rows.append([str(i), repr(t), wanted, top, on, "✗" if f.mass[i] < f.min_mass else "✓"])
    return rows


@words.register
def _(f: AttentionMiss) -> str:
    name, labels, q = head(f.head), f.tokens, f.query
    n_keys = len(f.keys)
    on = ", ".join(str(k) for k in f.keys)
    if n_keys == 1:
        got, need = apart(f.mass, f.min_mass)
        where = f"the target is key {token_at(labels, f.keys[0])}, but {name} puts only {got} there (needs ≥ {need})"
    elif f.evenly:
        got, need = apart(f.least_weight, f.min_mass / n_keys)
        where = (
            f"the targets are keys {on}, each needing ≥ {need} (an even share of "
            f"{f.min_mass:g}), but {name} puts only {got} on key {token_at(labels, f.least)}"
        )
    else:
        got, need = apart(f.mass, f.min_mass)
        where = f"the targets are keys {on}, but {name} puts only {got} on them together (needs ≥ {need})"
    return (
        f"at query {token_at(labels, q)} {where}; its largest weight, {f.top_weight:.3f}, is on key "
        f"{token_at(labels, f.top)}"
    )


@words.register
def _(f: FixedPattern) -> str:
    return f"{head(f.head)} has a fixed pattern; this target needs a computed one"


@words.register
def _(f: ZeroQuery) -> str:
    q = matrix("W_Q")
    if f.cancels:
        return (
            f"{head(f.head)}'s query at position {f.query} ({f.token!r}) is exactly zero: {q} reads "
            f"{listed(f.cancels)} there, but in every row of {q} what they add up to is 0, so every key scores the "
            f"same and the attention spreads evenly. Look at {q} on those directions: they cancel at this position"
        )
    return (
        f"{head(f.head)}'s query at position {f.query} ({f.token!r}) is exactly zero: {q} reads nothing at that "
        f"token ({q} reads {', '.join(f.reads) or 'nothing'}; the residual there holds "
        f"{', '.join(f.has) or 'nothing'}), so every key scores the same and the attention spreads evenly. Look at "
        f"{q}: which of this token's directions should it read?"
    )


@words.register
def _(f: Unread) -> str:
    name, writers = head(f.head), [head(w) for w in f.writers]
    earlier = ", ".join(["the embedding", *writers])
    fix = (
        f"Look at {matrix('W_K' if f.side == 'keys' else 'W_Q', f.head)} of {name}"
        + "".join(f", or at {matrix('W_O', w)} of {head(w)}" for w in f.writers[:3])
        + ": one must read what the other writes"
    )
    return (
        f"{name}'s {f.side} read {', '.join(f.reads)}, which nothing writes before layer {f.head[0]} ({earlier} "
        f"write{'' if writers else 's'} only {', '.join(f.written) or 'nothing'} at this input), so every key "
        f"scores the same ({f.score:.3g}). {fix}"
    )


@words.register
def _(f: TiedKeys) -> str:
    return (
        f"indistinguishable keys: key {f.rival} and the target key {f.best} both score {f.score:.6g}, so "
        f"{head(f.head)} splits its attention between them and no scale can separate them. {_echo(f)}{words(f.then)}"
    )


def _echo(f: TiedKeys) -> str:
    """A rival that holds the query's own token: the likeliest slip is a rule that picks a key equal to the query."""
    if f.echo is None or (f.target_too and not f.itself):
        return ""
    if f.target_too:  # a copy of the query is the target: its own position is what must lose
        return f"Key {f.rival} is the query itself and is no target: its own position must score below the targets. "
    who = f"Key {f.rival} is the query itself" if f.itself else f"Key {f.rival} holds {f.echo!r}, as the query does"
    return f"{who} and is no target: here a key equal to the query must score below the targets. "


@words.register
def _(f: Uneven) -> str:
    keys = ", ".join(str(k) for k in f.keys)
    scores = ", ".join(f"{k}: {s:.3g}" for k, s in zip(f.keys, f.scores))
    return (
        f"{head(f.head)} should spread its attention evenly over keys {keys}, but their scores differ ({scores}). "
        f"Look at {matrix('W_Q')} and {matrix('W_K')}: which directions make these keys score differently?"
    )


@words.register
def _(f: Sharpen) -> str:
    return (
        f"{head(f.head)} attends most to the right key{'s' if f.n_keys > 1 else ''}, but the score there beats "
        f"the next best by only {f.gap:.3g}: sharpen the pattern; {words(f.scale)}"
    )
