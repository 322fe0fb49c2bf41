"""Attention: a head puts enough of its attention on the target key (or keys) at every query."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from circuits.checking import behaviours, diagnosis, fields, once
from circuits.checking.targets import authored
from circuits.checking.targets.base import Evaluation, Explanation, Shows, Target, Tokens
from circuits.checking.targets.formats import families, family_of
from circuits.checking.targets.scores import Differs, ScaleBy, differs, factor_needed
from circuits.model.decompose import Writes, before, written_before


def _rotates(W: np.ndarray) -> bool:
    """Whether some row of W mixes two directions (a rotation of a cos/sin pair), rather than weighing one."""
    return bool(((np.asarray(W) != 0).sum(-1) >= 2).any())


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
        _named([labels[i] for i in read if abs(x[i]) > 1e-9]),
    )


def _named(labels: list[str]) -> tuple[str, ...]:
    """A few directions by name (tok:1, pos:1), more by family (tok:*), so the line stays short."""
    return tuple(labels) if len(labels) <= 4 else families(labels)


# --- what an explanation found: the miss (its summary) and its likely cause (its hint) --------------------------
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
class WriterFirst:
    """The keys differ in `into`, which head `writer` writes from `reads` less faithfully than this head reads
    them: the writer is the likelier culprit."""

    writer: tuple[int, int]
    into: tuple[str, ...]
    reads: tuple[str, ...]


@dataclass(frozen=True)
class TiedKeys:
    """Key `rival` and the target key `best` score the same (`score`): no scale separates them; `then` says what
    would (an earlier writer's fault, or what differs between them)."""

    head: tuple[int, int]
    rival: int
    best: int
    score: float
    then: WriterFirst | Differs


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


@dataclass
class Attention(Target):
    """Head `layer.head` puts at least `min_mass` of its attention on the target key at every query that has one.

    `where` is a behaviour name ("previous-token", "induction", …, see circuits.checking.behaviours),
    a function of token ids `[b, T] -> [b, T]`, or `per_input=True` with a function
    tokens -> list of key positions (None where a query has no target). A query may also
    have a set of target keys (a collection in a per_input list, or a function of ids
    returning bool `[b, query, key]`): the mass on all of them counts, and with
    `evenly=True` each of the k keys must hold at least min_mass / k.
    """

    layer: int
    head: int
    where: str | Callable
    min_mass: float = 0.9
    per_input: bool = False
    description: str = ""
    skip_first: int = 0
    evenly: bool = False
    metric: str = field(default="smallest attention on target", init=False)
    higher_is_worse: bool = field(default=False, init=False)

    def __post_init__(self):
        fields.whole("Attention", "layer", self.layer)
        fields.whole("Attention", "head", self.head)
        fields.number("Attention", "min_mass", self.min_mass)
        fields.whole("Attention", "skip_first", self.skip_first)

    @property
    def label(self) -> str:
        what = self.where if isinstance(self.where, str) else getattr(self.where, "__name__", "target")
        return self.description or f"head {self.layer}.{self.head} puts ≥ {self.min_mass:g} of its attention on {what}"

    @property
    def stage(self) -> float:
        return float(self.layer)

    def targets(self, trace, batch) -> np.ndarray:  # [b, T]: the target key, the latest one where a query has several
        if not self.per_input:
            t = self._from_ids(trace)
            if t.ndim == 2:
                return t
        keys = self.key_sets(trace, batch)
        T = keys.shape[-1]
        return np.where(keys.any(-1), T - 1 - np.argmax(keys[..., ::-1], axis=-1), -1)

    def _from_ids(self, trace) -> np.ndarray:  # [b, T] key positions, or [b, T, T] bool key sets
        fn = behaviours.BEHAVIOURS[self.where] if isinstance(self.where, str) else self.where
        t = np.asarray(fn(trace.ids))
        if self.skip_first:
            t = t.copy()
            t[:, : self.skip_first] = -1 if t.ndim == 2 else False
        return t

    def key_sets(self, trace, batch) -> np.ndarray:  # [b, query, key] bool: the keys each query's target allows
        T = trace.ids.shape[1]
        if not self.per_input:
            t = self._from_ids(trace)
            if t.ndim == 3:
                return t.astype(bool)
            return (t[:, :, None] == np.arange(T)) & (t[:, :, None] >= 0)
        out = np.zeros((len(batch), T, T), dtype=bool)
        pairs = once.each((self.where, "key_sets"), batch, self._pairs)
        # one fancy assignment at the end: a Python loop per query would dominate
        n_ = np.repeat(np.arange(len(batch)), [len(q) for q, _ in pairs])
        q_ = np.concatenate([q for q, _ in pairs]) if pairs else np.zeros(0, dtype=int)
        k_ = np.concatenate([k for _, k in pairs]) if pairs else np.zeros(0, dtype=int)
        offset = T - len(batch[0]) if batch else 0  # a BOS token shifts positions
        out[n_, q_ + offset, k_ + offset] = True
        return out

    def _pairs(self, toks: Tokens) -> tuple[np.ndarray, np.ndarray]:
        """One input's (query, key) pairs: every key the query's target allows."""
        q_, k_ = [], []
        for i, k in enumerate(self.where(toks)):
            if k is None:
                continue
            keys = (k,) if isinstance(k, (int, np.integer)) else tuple(k)
            q_ += [i] * len(keys)
            k_ += keys
        return np.asarray(q_, dtype=int), np.asarray(k_, dtype=int)

    def mass(self, pattern, keys, valid=None) -> np.ndarray:  # [b, T, T], [b, T, T] -> [b, T], NaN where no target
        has = keys.any(-1) if valid is None else keys.any(-1) & valid
        if self.evenly:  # the least-attended key of the set, as a share of an even split
            least = np.where(keys, pattern, np.inf).min(-1)  # inf where a query has no key: no target, NaN below
            got = np.where(keys.any(-1), least, 0.0) * keys.sum(-1)
        else:
            got = np.where(keys, pattern, 0.0).sum(-1)
        return np.where(has, got, np.nan)

    def evaluate(self, trace, batch):
        pattern = trace.pattern(self.layer, self.head)  # [b, T, T]
        mass = self.mass(pattern, self.key_sets(trace, batch), trace.valid)
        worst = np.nanmin(np.where(np.isnan(mass), np.inf, mass), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 1.0)
        return Evaluation(worst >= self.min_mass, worst, (~np.isnan(mass)).sum(-1))

    def slack(self, worst):
        return worst - self.min_mass

    def bound(self):
        return f"needs ≥ {self.min_mass:g}"

    def validate(self, examples, alphabet, fail):
        if not 0 < self.min_mass <= 1:
            raise fail(f"min_mass is {self.min_mass:g}, needs a share of attention in (0, 1]")
        if isinstance(self.where, str):
            if self.where not in behaviours.BEHAVIOURS:
                raise fail(
                    f"where={self.where!r} is not a behaviour; the behaviours are {', '.join(behaviours.BEHAVIOURS)}"
                )
            return
        if not callable(self.where):
            raise fail(f"where is {type(self.where).__name__}, needs a behaviour name or a function")
        if self.per_input:
            for toks in examples:
                got = authored.call(self.where, list(toks), f"where({authored.shown(toks)})", fail)
                authored.check_keys(got, toks, fail)
            return
        toks = max(examples, key=len)
        ids = np.array([[alphabet.index(t) for t in toks]])  # [1, T]
        got = authored.call(self.where, ids, f"where(ids of shape {ids.shape})", fail)
        shape = np.shape(got)
        T = ids.shape[1]
        if shape not in ((1, T), (1, T, T)):
            raise fail(
                f"where(ids) returned shape {shape} for ids of shape {ids.shape}; it needs {(1, T)} (a key "
                f"position per query, −1 for none) or {(1, T, T)} (booleans: the keys each query may attend)"
            )
        arr = np.asarray(got)
        if len(shape) == 2:
            if not (np.issubdtype(arr.dtype, np.number) and np.array_equal(arr, np.round(arr))):
                raise fail(f"where(ids) returned {arr.dtype} values, needs integer key positions (−1 for none)")
            bad = np.flatnonzero((arr[0] > np.arange(T)) | (arr[0] < -1))
            if len(bad):
                q = int(bad[0])
                raise fail(
                    f"where(ids) puts query {q}'s key at {int(arr[0, q])}, needs −1 or a key 0..{q} "
                    "(a query sees only itself and earlier keys)"
                )

    def checks_nothing(self, probe):
        return self.per_input and not authored.expects_something(self.where, probe)

    def shown(self, trace, tokens):
        pattern = trace.pattern(self.layer, self.head)[0]
        keys = self.key_sets(trace, [tokens])[0]  # [query, key]
        return {
            "label": self.label,
            "kind": Shows.ATTENTION,
            "head": [self.layer, self.head],
            "readout": f"head {self.layer}.{self.head}: attended key (argmax)",
            "expected": [[int(k) for k in np.flatnonzero(row)] or None for row in keys],
            "output": [int(np.argmax(r)) for r in pattern],
        }

    def classes_ok(self, canon, sample):
        if not self.per_input:
            return self.where in ("previous-token", "current-token", "first-token")
        return all(list(self.where(s)) == list(self.where(canon(s))) for s in sample)

    def explain(self, trace, tokens):
        pattern = trace.pattern(self.layer, self.head)[0]
        keys = self.key_sets(trace, [tokens])[0]  # [T, T]
        targets = self.targets(trace, [tokens])[0]
        labels = trace.tokens(0)
        mass = self.mass(pattern[None], keys[None])[0]
        bad = np.flatnonzero(np.nan_to_num(mass, nan=1.0) < self.min_mass)
        q = int(bad[0])
        t = int(targets[q])
        top = int(np.argmax(pattern[q]))
        rows = AttentionPositions(list(labels), pattern, keys, targets, mass, self.min_mass, self.evenly)
        on = tuple(int(k) for k in np.flatnonzero(keys[q]))
        least = min(on, key=lambda k: pattern[q, k])
        summary = AttentionMiss(
            (self.layer, self.head),
            tuple(labels),
            q,
            on,
            mass[q],
            self.min_mass,
            self.evenly,
            least,
            pattern[q, least],
            top,
            pattern[q, top],
        )
        hint = self._hint(trace, q, keys[q, : q + 1], top, t)
        return Explanation(q, summary, rows, hint, (self.layer, self.head), [int(x) for x in targets])

    def _hint(self, trace, q: int, inside: np.ndarray, top: int, t: int):
        """Why the target keys `inside` `[keys]` miss: a fixed pattern, a zero query, unread directions, a tie,
        too little sharpness, or the wrong key winning."""
        name = (self.layer, self.head)
        if trace.model.head(self.layer, self.head).pattern is not None:
            return FixedPattern(name)
        scores = trace.layers[self.layer].scores[0, self.head, q, : q + 1]
        if (said := self._unread(trace, q, t)) or (said := zero_query(trace, self.layer, self.head, q)):
            return said
        if (~inside).any():  # a tie between a target key and another is a tie whichever way argmax breaks it
            best = int(np.flatnonzero(inside)[np.argmax(scores[inside])])
            rival = int(np.flatnonzero(~inside)[np.argmax(scores[~inside])])
            if diagnosis.tied(scores[best], scores[rival]):
                then = self._writer_first(trace, q, best, rival) or differs(trace, self.layer, best, rival, self.head)
                return TiedKeys(name, rival, best, scores[best], then)
        if not inside[top]:
            return self._wrong_key_hint(trace, q, top, t)
        n_keys = int(inside.sum())
        in_s = scores[inside]
        if self.evenly and in_s.max() - in_s.min() > 1e-9 * max(1.0, float(np.abs(in_s).max())):
            on = np.flatnonzero(inside)
            return Uneven(name, tuple(int(k) for k in on), tuple(scores[k] for k in on))
        rest = scores[~inside]
        gap = float(in_s.min() - rest.max()) if len(rest) else np.inf
        need = self.min_mass / n_keys if self.evenly else self.min_mass
        ok = (lambda p: p[inside].min() >= need) if self.evenly else (lambda p: p[inside].sum() >= need)
        return Sharpen(name, n_keys, gap, ScaleBy(factor_needed(scores, ok), q + 1))

    def _unread(self, trace, q: int, t: int) -> Unread | None:
        """The cause when the head's keys (or queries) read only directions nothing before its layer writes."""
        layer = trace.layers[self.layer]
        head = layer.heads[self.head]
        labels = trace.model.residual.labels
        x = layer.attn_in[0]  # [T, d_model]: what the head reads, at every position of this input
        s = layer.scores[0, self.head, q]
        early = [p for p in before(trace.model, self.layer) if p.kind not in (Writes.HEAD, Writes.B_O)]
        for what, W in (("keys", head.W_K), ("queries", head.W_Q)):
            read = np.flatnonzero(np.abs(W).sum(0) > 0)
            embedded = any(p.writes(read) for p in early)  # an MLP's write is zero only here
            if len(read) and not np.abs(x[:, read]).any() and not embedded:  # not merely zero for these tokens
                written = np.flatnonzero(np.abs(x).sum(0) > 0)
                writers = tuple(
                    (l, h)
                    for l in range(self.layer)
                    for h in range(trace.model.n_heads(l))
                    if np.abs(trace.model.head(l, h).W_O).any()
                )
                return Unread(
                    (self.layer, self.head),
                    what,
                    families(labels[i] for i in read),
                    writers,
                    families(labels[i] for i in written),
                    s[t],
                )
        return None

    def _decisive(self, trace, q: int, a: int, b: int) -> dict[str, float]:
        """Per direction family W_K reads: how much it favours key `a` over key `b`, in the score's own units."""
        layer = trace.layers[self.layer]
        head = layer.heads[self.head]
        labels = trace.model.residual.labels
        x = layer.attn_in[0]
        s = layer.scores[0, self.head, q]
        q_vec = layer.q[0, self.head, q, : head.W_K.shape[0]]
        per_dir = (q_vec @ head.W_K) * (x[a] - x[b])  # [d_model]
        if abs(per_dir.sum()) > 1e-12:  # in the score's own units (the attention scale, if any)
            per_dir = per_dir * (s[a] - s[b]) / per_dir.sum()
        by_group: dict[str, float] = {}
        for i in np.flatnonzero(np.abs(per_dir) > 1e-9):
            by_group[family_of(labels[i])] = by_group.get(family_of(labels[i]), 0.0) + float(per_dir[i])
        return by_group

    def _writer_first(self, trace, q: int, t: int, top: int, family: str | None = None) -> WriterFirst | None:
        """When the keys differ in directions an earlier head wrote, and that head's W_OV pairs names less
        faithfully than this head's W_QK reads them, the writer is the likelier culprit: name it."""
        if self.layer == 0:
            return None
        model = trace.model
        labels = model.residual.labels
        x = trace.layers[self.layer].attn_in[0]
        head = trace.layers[self.layer].heads[self.head]
        differ = np.flatnonzero(np.abs(x[t] - x[top]) > 1e-9)
        if family is not None:
            differ = np.array([i for i in differ if family_of(labels[i]) == family], dtype=int)
        read = np.abs(head.W_K).sum(0) > 0
        differ = np.array([i for i in differ if read[i]], dtype=int)
        if not len(differ):
            return None
        wrote = diagnosis.writers(trace, self.layer, [t, top], list(differ))
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
        writer = diagnosis.matched(ov[np.ix_(rows, cols)], [labels[i] for i in rows], [labels[j] for j in cols])
        reader = diagnosis.matched(qk[np.ix_(qrows, rows)], [labels[i] for i in qrows], [labels[i] for i in rows])
        if writer is None or (reader is not None and writer >= reader):
            return None
        return WriterFirst((l, h), families(labels[i] for i in rows), families(labels[j] for j in cols))

    def _wrong_key_hint(self, trace, q: int, top: int, t: int) -> WrongKey:
        """Why key `top` beat the target `t`: which directions decide it, and who wrote them."""
        head = trace.layers[self.layer].heads[self.head]
        s = trace.layers[self.layer].scores[0, self.head, q]
        by_group = self._decisive(trace, q, t, top)
        pro = {g: v for g, v in by_group.items() if v > 0}
        con = {g: -v for g, v in by_group.items() if v < 0}
        worst = max(con, key=con.get) if con else None
        writer = self._writer_first(trace, q, t, top, worst) if con else None
        if not con or writer:
            advice = None
        elif worst == "cos/sin:*" and pro:
            advice = "outweighs"
        elif worst == "cos/sin:*" and _rotates(head.W_Q):
            advice = "rotates"
        elif worst == "cos/sin:*":
            advice = "signs"
        else:
            advice = "look"
        silent = None if pro else self._silent(trace.model)
        unmatched = None if pro or silent or writer else self._unmatched(trace, q, t)
        return WrongKey(
            top, s[top], t, s[t], tuple(con.items()), tuple(pro.items()), writer, advice, worst, silent, unmatched
        )

    def _unmatched(self, trace, q: int, t: int) -> Unmatched | None:
        """The query looks for directions (W_Qᵀ W_K's) the target key does not hold, though it holds some W_K reads."""
        layer = trace.layers[self.layer]
        head = layer.heads[self.head]
        labels = trace.model.residual.labels
        x = layer.attn_in[0]  # [T, d_model]
        wanted = layer.q[0, self.head, q, : head.W_K.shape[0]] @ head.W_K  # [d_model]: what the query asks of a key
        floor = 1e-9 * max(1.0, float(np.abs(wanted).max()))
        holds = np.flatnonzero((np.abs(head.W_K).sum(0) > 0) & (np.abs(x[t]) > 1e-9))
        looks = [int(i) for i in np.argsort(-wanted, kind="stable") if wanted[i] > floor]
        if not len(holds) or not looks or np.abs(wanted[holds]).max() > floor:
            return None
        reads = np.flatnonzero((np.abs(head.W_Q).sum(0) > 0) & (np.abs(x[q]) > 1e-9))
        named = [_named([labels[int(i)] for i in idx]) for idx in (reads, looks, holds)]
        return Unmatched(q, named[0], named[1], t, named[2])

    def _silent(self, model) -> Silent | None:
        """The directions W_K reads that no part before this layer can write, whatever the input: no embedding,
        no earlier head's OV circuit (or value bias), no earlier MLP. (Not under a LayerNorm: it centres an empty
        direction to a non-zero one.)"""
        if self.layer == 0 or model.blocks[self.layer].ln_attn is not None:
            return None
        written = written_before(model, self.layer)  # [d_model]
        head = model.head(self.layer, self.head)
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
        writers = tuple((l, h) for l in range(self.layer) for h in range(model.n_heads(l)))
        return Silent((self.layer, self.head), tuple(said), set(keys) <= set(dead(head.W_Q)), writers)
