"""Attention: why the wrong key wins at a head's query: which direction families decide it, and who wrote them
(an earlier head that pairs names less faithfully than this head reads them, directions nothing can write, a query
that asks for what the target key does not hold); the facts and their words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.explain.diagnosis import matched, writers
from circuits.explain.formats import digits, families, family_of, head
from circuits.explain.tables import words
from circuits.explain.terms import editable, matrix
from circuits.model.decompose import written_before


def rotates(W: np.ndarray) -> bool:
    """Whether some row of W mixes two directions (a rotation of a cos/sin pair), rather than weighing one."""
    return bool(((np.asarray(W) != 0).sum(-1) >= 2).any())


def by_name(labels: list[str]) -> tuple[str, ...]:
    """A few directions by name (tok:1, pos:1), more by family (tok:*), so the line stays short."""
    return tuple(labels) if len(labels) <= 4 else families(labels)


@dataclass(frozen=True)
class WriterFirst:
    """The keys differ in `into`, which head `writer` writes from `reads` less faithfully than this head reads
    them: the writer is the likelier culprit."""

    writer: tuple[int, int]
    into: tuple[str, ...]
    reads: tuple[str, ...]


@dataclass(frozen=True)
class WrongKey:
    """Key `top` (score `top_score`) beats the target key `target` (`target_score`). Per direction family W_K reads:
    how much it favours `top` (`against`) or the target (`toward`); then the writer to blame first, or the advice
    for the family that decides (`advice`: "outweighs" — position outweighs the content in `toward`; "rotates" —
    W_Q rotates the position; "signs" — position entries' signs and sizes; "look" — the family `worst`)."""

    top: int
    top_score: float
    target: int
    target_score: float
    against: tuple[tuple[str, float], ...]
    toward: tuple[tuple[str, float], ...]
    writer: WriterFirst | None
    advice: str | None
    worst: str | None
    silent: Silent | None = None
    unmatched: Unmatched | None = None


@dataclass(frozen=True)
class Unmatched:
    """Nothing favours the target key because the query asks for something it does not hold: at query `query`,
    W_Qᵀ W_K looks for `looks_for` in a key (from `reads`, what W_Q reads there), and the target key `target`
    holds only `holds` of what W_K reads. Directions are named one by one, or by family where there are more
    than four."""

    query: int
    reads: tuple[str, ...]
    looks_for: tuple[str, ...]
    target: int
    holds: tuple[str, ...]


@dataclass(frozen=True)
class Silent:
    """Nothing favours the target key, and the head's W_K (and W_Q, `both`) also reads `reads`, which nothing before
    its layer can write, whatever the input (not the embedding, not the earlier heads `writers`, not an MLP): the
    directions that should tell the keys apart are always empty, so the writers come first."""

    head: tuple[int, int]
    reads: tuple[str, ...]
    both: bool
    writers: tuple[tuple[int, int], ...]


# --- the explanation ---------------------------------------------------------------------------------------------
def decisive(target, trace, q: int, a: int, b: int) -> dict[str, float]:
    """Per direction family W_K reads: how much it favours key `a` over key `b`, in the score's own units."""
    layer = trace.layers[target.layer]
    head = layer.heads[target.head]
    labels = trace.model.residual.labels
    x = layer.attn_in[0]
    s = layer.scores[0, target.head, q]
    q_vec = layer.q[0, target.head, q, : head.W_K.shape[0]]
    per_dir = (q_vec @ head.W_K) * (x[a] - x[b])  # [d_model]
    if abs(per_dir.sum()) > 1e-12:  # in the score's own units (the attention scale, if any)
        per_dir = per_dir * (s[a] - s[b]) / per_dir.sum()
    by_group: dict[str, float] = {}
    for i in np.flatnonzero(np.abs(per_dir) > 1e-9):
        by_group[family_of(labels[i])] = by_group.get(family_of(labels[i]), 0.0) + float(per_dir[i])
    return by_group


def writer_first(target, trace, q: int, t: int, top: int, family: str | None = None) -> WriterFirst | None:
    """When the keys differ in directions an earlier head wrote, and that head's W_OV pairs names less
    faithfully than this head's W_QK reads them, the writer is the likelier culprit: name it."""
    if target.layer == 0:
        return None
    model = trace.model
    labels = model.residual.labels
    x = trace.layers[target.layer].attn_in[0]
    head = trace.layers[target.layer].heads[target.head]
    differ = np.flatnonzero(np.abs(x[t] - x[top]) > 1e-9)
    if family is not None:
        differ = np.array([i for i in differ if family_of(labels[i]) == family], dtype=int)
    read = np.abs(head.W_K).sum(0) > 0
    differ = np.array([i for i in differ if read[i]], dtype=int)
    if not len(differ):
        return None
    wrote = writers(trace, target.layer, [t, top], list(differ))
    who = max(wrote, key=wrote.get)
    if who[0] != "head" or wrote[who] <= 1e-9:
        return None
    _, l, h = who
    w = model.head(l, h)
    ov = w.W_O @ w.W_V  # [d_model, d_model]
    whole = {family_of(labels[i]) for i in differ}  # judged on whole families: prev:* ← tok:*, not one entry
    rows = [i for i in range(model.d_model) if family_of(labels[i]) in whole and read[i] and np.abs(ov[i]).any()]
    cols = [j for j in range(model.d_model) if np.abs(ov[rows, j]).any()] if rows else []
    if not rows or not cols:
        return None
    qk = head.W_Q.T @ head.W_K  # [query dirs, key dirs]
    qrows = [i for i in range(model.d_model) if np.abs(qk[i, rows]).any()]
    writer = matched(ov[np.ix_(rows, cols)], [labels[i] for i in rows], [labels[j] for j in cols])
    reader = matched(qk[np.ix_(qrows, rows)], [labels[i] for i in qrows], [labels[i] for i in rows])
    if writer is None or (reader is not None and writer >= reader):
        return None
    return WriterFirst((l, h), families(labels[i] for i in rows), families(labels[j] for j in cols))


def wrong_key(target, trace, q: int, top: int, t: int) -> WrongKey:
    """Why key `top` beat the target `t`: which directions decide it, and who wrote them."""
    head = trace.layers[target.layer].heads[target.head]
    s = trace.layers[target.layer].scores[0, target.head, q]
    by_group = decisive(target, trace, q, t, top)
    pro = {g: v for g, v in by_group.items() if v > 0}
    con = {g: -v for g, v in by_group.items() if v < 0}
    worst = max(con, key=con.get) if con else None
    writer = writer_first(target, trace, q, t, top, worst) if con else None
    if not con or writer:
        advice = None
    elif worst == "cos/sin:*" and pro:
        advice = "outweighs"
    elif worst == "cos/sin:*" and rotates(head.W_Q):
        advice = "rotates"
    elif worst == "cos/sin:*":
        advice = "signs"
    else:
        advice = "look"
    silent = None if pro else silent_reads(target, trace.model)
    unmatched = None if pro or silent or writer else unmatched_query(target, trace, q, t)
    return WrongKey(
        top, s[top], t, s[t], tuple(con.items()), tuple(pro.items()), writer, advice, worst, silent, unmatched
    )


def unmatched_query(target, trace, q: int, t: int) -> Unmatched | None:
    """The query looks for directions (W_Qᵀ W_K's) the target key does not hold, though it holds some W_K reads."""
    layer = trace.layers[target.layer]
    head = layer.heads[target.head]
    labels = trace.model.residual.labels
    x = layer.attn_in[0]  # [T, d_model]
    wanted = layer.q[0, target.head, q, : head.W_K.shape[0]] @ head.W_K  # [d_model]: what the query asks of a key
    floor = 1e-9 * max(1.0, float(np.abs(wanted).max()))
    holds = np.flatnonzero((np.abs(head.W_K).sum(0) > 0) & (np.abs(x[t]) > 1e-9))
    looks = [int(i) for i in np.argsort(-wanted, kind="stable") if wanted[i] > floor]
    if not len(holds) or not looks or np.abs(wanted[holds]).max() > floor:
        return None
    reads = np.flatnonzero((np.abs(head.W_Q).sum(0) > 0) & (np.abs(x[q]) > 1e-9))
    named = [by_name([labels[int(i)] for i in idx]) for idx in (reads, looks, holds)]
    return Unmatched(q, named[0], named[1], t, named[2])


def silent_reads(target, model) -> Silent | None:
    """The directions W_K reads that no part before this layer can write, whatever the input: no embedding,
    no earlier head's OV circuit (or value bias), no earlier MLP. (Not under a LayerNorm: it centres an empty
    direction to a non-zero one.)"""
    if target.layer == 0 or model.blocks[target.layer].ln_attn is not None:
        return None
    written = written_before(model, target.layer)  # [d_model]
    head = model.head(target.layer, target.head)
    labels = model.residual.labels

    def dead(W) -> list[int]:
        return [int(i) for i in np.flatnonzero(np.abs(W).sum(0) > 0) if not written[i]]

    keys = dead(head.W_K)
    if not keys:
        return None
    read = [labels[i] for i in np.flatnonzero(np.abs(head.W_K).sum(0) > 0)]
    said = []  # a family whole where every direction of it W_K reads is dead: prev:*, else prev:a, prev:c
    for family in families(labels[i] for i in keys):
        mine = [labels[i] for i in keys if family_of(labels[i]) == family]
        said += [family] if len(mine) == sum(family_of(x) == family for x in read) > 1 else mine
    writers = tuple((l, h) for l in range(target.layer) for h in range(model.n_heads(l)))
    return Silent((target.layer, target.head), tuple(said), set(keys) <= set(dead(head.W_Q)), writers)


# --- the words -----------------------------------------------------------------------------------------------------
@words.register
def _(f: WriterFirst) -> str:
    who, into = head(f.writer), ", ".join(f.into)
    v, o = matrix("W_V", f.writer), matrix("W_O", f.writer)
    return (
        f"The keys differ in {into}, which {who} writes: {v} of {who} reads {', '.join(f.reads)} and {o} of {who} "
        f"writes that into {into}, pairing directions less faithfully than this head reads them. The writer is the "
        f"likelier culprit: look at {v} and {o} of {who} (what it writes into {into}) before {matrix('W_Q')} and "
        f"{matrix('W_K')} of this head"
    )


@words.register
def _(f: WrongKey) -> str:
    d = digits(f.top_score, f.target_score)
    head_line = (
        f"attention went to the wrong position: key {f.top} scores {f.top_score:.{d}g} against "
        f"{f.target_score:.{d}g} for the target key {f.target}"
    )
    if not f.against:
        return f"{head_line}. Look at {matrix('W_Q')} and {matrix('W_K')}"
    d = digits(sum(v for _, v in f.against), sum(v for _, v in f.toward)) if f.toward else 3
    favours = f"; of the directions {matrix('W_K')} reads, {_favour(f.against, f'key {f.top}', d)}"
    if f.toward:
        favours += f", {_favour(f.toward, 'the target', d)}"
    if f.writer is not None:
        return f"{head_line}{favours}. {words(f.writer)}"
    if f.silent is not None:
        return f"{head_line}{favours}. {words(f.silent)}"
    if f.unmatched is not None:
        return f"{head_line}{favours}. {words(f.unmatched)}"
    if f.advice == "outweighs":
        advice = (
            f"the position term outweighs the {', '.join(g for g, _ in f.toward)} term that should decide: keep "
            f"the weight on position smaller than the content's lead at every distance (look at {matrix('W_Q')}'s "
            "entries on cos/sin)"
        )
    elif f.advice == "rotates":
        advice = (
            f"look at {matrix('W_Q')} and {matrix('W_K')} on cos/sin: {matrix('W_Q')} rotates the position, so check "
            "the rotation's direction and its sign"
        )
    elif f.advice == "signs":
        advice = f"look at the signs and sizes of {matrix('W_Q')}'s and {matrix('W_K')}'s entries on cos/sin"
    else:
        advice = f"look at {matrix('W_Q')} and {matrix('W_K')} on {f.worst}"
    return f"{head_line}{favours}: {advice}"


@words.register
def _(f: Unmatched) -> str:
    return (
        f"Nothing favours the target: the query at position {f.query} looks for {' and '.join(f.looks_for)} in "
        f"a key ({matrix('W_Q')} reads {', '.join(f.reads) or 'nothing'} there), but key {f.target} holds "
        f"{', '.join(f.holds)} of what {matrix('W_K')} reads. Which of key {f.target}'s directions should the query "
        f"look for? Look at what {matrix('W_Q')} reads"
    )


@words.register
def _(f: Silent) -> str:
    heads = [head(w) for w in f.writers[:3]] + (["…"] if len(f.writers) > 3 else [])
    reads = ", ".join(f.reads)
    dead = (
        f"which nothing before layer {f.head[0]} writes, whatever the input ({' and '.join(heads)} "
        f"write{'s' if len(f.writers) == 1 else ''} nothing there), so no key differs there"
    )
    ours = [w for w in f.writers[:3] if editable("W_V", w) or editable("W_O", w)]  # a given is not the place to look
    look = ", ".join(f"{matrix('W_V', w)} and {matrix('W_O', w)} of {head(w)}" for w in ours)
    if not ours:
        fixed = f"W_V and W_O of {' and '.join(heads)} are givens"
        who = f"{matrix('W_Q')} and {matrix('W_K')}" if f.both else matrix("W_K")
        return (
            f"{who} {'read' if f.both else 'also reads'} {reads}, {dead}: {fixed}, so {who} should read what is written"
        )
    if f.both:  # query and key read it alike: a pairing by design, missing its input
        return (
            f"{matrix('W_Q')} and {matrix('W_K')} read {reads}, {dead}: look first at {look}, which must write what "
            f"{head(f.head)} reads"
        )
    return (
        f"{matrix('W_K')} also reads {reads}, {dead}: either {matrix('W_K')} should read what is written, or {look} "
        f"should write {reads}"
    )


def _favour(pairs, who: str, d: int = 3) -> str:
    return " and ".join(
        f"{g} favour{'s' if '*' not in g else ''} {who} by {v:.{d}g}" for g, v in sorted(pairs, key=lambda kv: -kv[1])
    )
