"""Depends: a mechanism checked by intervention, as activation patching does.

"Head L.H's attention depends on what `writer` writes into `into`" holds when
(a) zeroing that write breaks the head's target wherever the puzzle says it
depends on it, and (b) taking that write from another input (an interchange
intervention) moves the head to where the patched write points (`follows`).
What a check finds are facts (Unfollowed, Unbroken, Interventions), worded by
explain/depends.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

import numpy as np

from circuits.errors import CircuitError
from circuits.targets import authored, fields
from circuits.targets.base import Kind, Target, Tokens
from circuits.targets.examples import extremes, worked_examples

PATCHING, ZEROING = "patching (an interchange intervention)", "ablation (the write zeroed)"
SAMPLE = 200  # random inputs drawn, besides the worked examples and extremes
BASES = 48  # bases per length, the worked examples first
PER_BASE = 2  # informative sources kept per base
TRIES = 6  # sources tried per base before giving up on it
KEPT = 32  # pair plans kept per process (a plan is the puzzle's, not the answer's)
KEEP = ("z", "resid_pre", "resid_post", "mlp_out", "embed")  # what an edit and a writer's contribution read


# --- what a check finds: facts, worded by explain/depends.py ---------------------------------------------------
@dataclass(frozen=True)
class Unfollowed:
    """With the write taken from `source`, the reader at `query` of `base` put only `mass` on the keys the patch
    points to (`points`); it attended most to `top` (`still`: a key of its unpatched target)."""

    reader: tuple[int, int]
    writer: str
    into: tuple[str, ...]
    base: tuple[str, ...]
    source: tuple[str, ...]
    labels: tuple[str, ...]  # the base's tokens by position (BOS included)
    query: int
    points: tuple[int, ...]
    mass: float
    min_mass: float
    top: int
    top_weight: float
    still: bool


@dataclass(frozen=True)
class Unbroken:
    """With the write zeroed, the reader at `query` of `base` still put `mass` ≥ `min_mass` on its target `keys`."""

    reader: tuple[int, int]
    writer: str
    into: tuple[str, ...]
    base: tuple[str, ...]
    labels: tuple[str, ...]
    query: int
    keys: tuple[int, ...]
    mass: float
    min_mass: float


@dataclass(frozen=True)
class Interventions:
    """What a mechanism target tried: `patched` (base, source) pairs and `zeroed` inputs, of lengths `lengths`;
    `example` is one pair."""

    reader: tuple[int, int]
    writer: str
    into: tuple[str, ...]
    patched: int
    zeroed: int
    queries: int  # queries checked, patched and zeroed together
    lengths: tuple[int, int]
    example: tuple[tuple[str, ...], tuple[str, ...]] | None


@dataclass
class Verdict:
    """A mechanism target's result as facts: what it tried, and its first failure (None: it holds)."""

    tried: Interventions
    finding: Unfollowed | Unbroken | None = None
    stage: str = ""


# --- the plan: which pairs, answer-independent, made once per puzzle ----------------------------------------------
@dataclass
class Group:
    """The pairs of one length: `inputs` run once; rows (base, source) patched, `zeroed` bases zeroed; the keys
    each row's queries must (patched) or must not (zeroed) hold, as (row, query, key) in token coordinates."""

    inputs: list[Tokens]
    base: np.ndarray  # [n_pairs] indices into inputs
    source: np.ndarray  # [n_pairs]
    zeroed: np.ndarray  # [n_zeroed]
    keys: tuple[np.ndarray, np.ndarray, np.ndarray]  # row, query, key; rows: pairs, then zeroed
    plain: list  # per input, its keys per query unpatched (follows(t, t))


def _keys(spec) -> list[frozenset | None]:
    """A per-input Attention spec as one key set per query (None: no expectation)."""
    return [None if k is None else frozenset((int(k),) if np.ndim(k) == 0 else (int(x) for x in k)) for k in spec]


def _informative(patched: list, plain: list) -> bool:
    return any(p is not None and p != u for p, u in zip(patched, plain))


def _even_meets(keys: frozenset, q: int, bos: bool, min_mass: float) -> bool:
    """Whether attention spread evenly over query q's visible keys would already put min_mass on `keys`."""
    return len(keys) / (q + 1 + bos) >= min_mass


def _pool(puzzle) -> tuple[list[Tokens], int]:
    """The inputs pairs are drawn from, the worked examples first, and how many of them are worked examples."""
    inputs = puzzle.inputs
    examples = [tuple(t) for t in worked_examples(puzzle) if t]
    drawn = [*examples, *map(tuple, extremes(inputs)), *map(tuple, inputs.sample(SAMPLE, seed=inputs.seed))]
    return [list(t) for t in dict.fromkeys(drawn)], len(set(examples))


def _called(follows: Callable, base: Tokens, source: Tokens) -> list[frozenset | None]:
    """follows(base, source) as key sets per query, or one line naming the call when it gives no such thing."""
    got = follows(list(base), list(source))
    try:
        authored.check_keys(got, base, CircuitError, name="follows")
    except CircuitError as e:
        call = f"follows({authored.shown(base)}, {authored.shown(source)})"
        raise CircuitError(
            f"Depends: {str(e).replace(f'follows({authored.shown(base)})', call)} (a mistake in the "
            "puzzle, not in the answer)"
        ) from None
    return _keys(got)


def plan_pairs(follows: Callable, puzzle) -> dict[int, tuple[list[Tokens], list, dict]]:
    """Per length: the inputs, the (base, source, patched keys) pairs and each base's keys per query (follows(b, b)).
    Bases: the worked examples, then others in a seeded order, at most BASES; each keeps its first PER_BASE
    informative sources (a patch points elsewhere) among the next TRIES inputs of its length."""
    pool, n_examples = _pool(puzzle)
    by_len: dict[int, list[int]] = {}
    for n, toks in enumerate(pool):
        by_len.setdefault(len(toks), []).append(n)
    out = {}
    for L, members in sorted(by_len.items()):
        rng = np.random.default_rng(L)
        first = [n for n in members if n < n_examples]
        rest = [members[i] for i in rng.permutation(len(members)) if members[i] >= n_examples]
        order = [*first, *rest]
        pairs, plain = [], {}
        for at, b in enumerate(order[:BASES]):
            plain[b] = _called(follows, pool[b], pool[b])
            found = 0
            for src in [*order[at + 1 :], *order[:at]][:TRIES]:
                patched = _called(follows, pool[b], pool[src])
                if _informative(patched, plain[b]):
                    pairs.append((b, src, patched))
                    found += 1
                    if found == PER_BASE:
                        break
        if pairs:
            out[L] = (pool, pairs, plain)
    return out


def group_of(group: list[Tokens], pairs: list, plain: dict, min_mass: float, bos: bool) -> Group:
    """The arrays of one length's pairs: patched rows first, then each base zeroed at its dependent queries: where
    a patch points elsewhere, an even spread would not meet its own target, and that target is not BOS (a default
    on BOS, the head's answer when it finds nothing, is not a dependence)."""
    if not bos and any(-1 in (k or ()) for _, _, p in pairs for k in p):
        raise CircuitError(
            "Depends: follows gives −1 (BOS), but the model has no BOS token (a mistake in the puzzle, "
            "not in the answer)"
        )
    rows, qs, ks = [], [], []
    for row, (_, _, patched) in enumerate(pairs):
        for q, keys in enumerate(patched):
            for k in keys or ():
                rows.append(row), qs.append(q), ks.append(k)
    depends: dict[int, set[int]] = {}
    for b, _, patched in pairs:
        depends.setdefault(b, set()).update(
            q
            for q, (p, u) in enumerate(zip(patched, plain[b]))
            if p is not None
            and u is not None
            and p != u
            and not (bos and -1 in u)
            and not _even_meets(u, q, bos, min_mass)
        )
    zeroed = [b for b, qs_ in depends.items() if qs_]
    used = sorted({b for b, _, _ in pairs} | {s for _, s, _ in pairs})  # the inputs run: no others
    at = {old: new for new, old in enumerate(used)}
    for n, b in enumerate(zeroed):
        for q in sorted(depends[b]):
            for k in plain[b][q]:
                rows.append(len(pairs) + n), qs.append(q), ks.append(k)
    ints = lambda x: np.asarray(x, dtype=int)  # noqa: E731
    return Group(
        [group[i] for i in used],
        ints([at[p[0]] for p in pairs]),
        ints([at[p[1]] for p in pairs]),
        ints([at[b] for b in zeroed]),
        (ints(rows), ints(qs), ints(ks)),
        [plain.get(i) for i in used],
    )


_PLANS: dict[tuple[int, int], tuple[object, object, dict]] = {}
_GROUPS: dict[tuple, tuple[dict, Group]] = {}


def _once(plans: dict, key: tuple, make: Callable[[], Group]) -> Group:
    """A plan's arrays for one length, made once per plan (and min_mass, BOS)."""
    kept = _GROUPS.get((id(plans), *key))
    if kept is None or kept[0] is not plans:
        if len(_GROUPS) >= 8 * KEPT:
            _GROUPS.pop(next(iter(_GROUPS)))
        kept = _GROUPS[(id(plans), *key)] = (plans, make())
    return kept[1]


# --- the target ------------------------------------------------------------------------------------------------
def writer_at(writer: str) -> tuple[int, str, tuple[int, int] | None]:
    """Where `writer` writes: (layer, part, head) for "head L.H", "mlp L" or "embed" (layer −1)."""
    word, _, where = writer.partition(" ")
    if writer == "embed":
        return -1, "attn", None
    if word == "mlp" and where.isdigit():
        return int(where), "mlp", None
    layer, dot, head = where.partition(".")
    if word == "head" and dot and layer.isdigit() and head.isdigit():
        return int(layer), "attn", (int(layer), int(head))
    raise CircuitError(f'Depends: writer is {writer!r}; it needs "head L.H", "mlp L" or "embed"')


@dataclass
class Depends(Target):
    """A mechanism, checked by intervention: the attention of `reader` (an Attention target's label, or
    (layer, head)) depends on what `writer` ("head L.H", "mlp L" or "embed") writes into the directions `into`
    (names or patterns: "dup", "s:*").

    `follows(base, source)` gives, per query of `base`, the keys the reader attends to when that write is taken
    from the run on `source` (same length), in a per-input Attention spec's format (a key, a list of keys, −1
    for BOS, None for none); `follows(t, t)` is the unpatched target. `min_mass` (None: the reader target's)
    is the share of attention the reader must put there.
    """

    reader: str | tuple[int, int]
    writer: str
    into: Sequence[str]
    follows: Callable
    min_mass: float | None = None
    description: str = ""
    kind: Kind = field(default=Kind.MECHANISM, init=False)
    checked_last = True  # two forward passes per length: after the behaviour targets, which kill most mutants

    def __post_init__(self):
        reader_ok = isinstance(self.reader, str) or (
            isinstance(self.reader, tuple)
            and len(self.reader) == 2
            and all(isinstance(x, int) and x >= 0 for x in self.reader)
        )
        if not reader_ok:
            raise CircuitError(
                f"Depends: reader is {self.reader!r}; it needs an Attention target's label or (layer, head)"
            )
        writer_at(self.writer)
        fields.labels("Depends", "into", self.into, optional=False)
        fields.function("Depends", "follows", self.follows, optional=False)
        fields.number("Depends", "min_mass", self.min_mass, optional=True)

    @property
    def label(self) -> str:
        reader = self.reader if isinstance(self.reader, str) else "head {}.{}".format(*self.reader)
        into = ", ".join(self.into)
        return self.description or f"{reader} depends on {self.writer}'s write into {into} (by intervention)"

    def validate(self, examples, alphabet, fail):
        if self.min_mass is not None and not 0 < self.min_mass <= 1:
            raise fail(f"min_mass is {self.min_mass:g}, needs a share of attention in (0, 1]")
        for toks in examples:
            said = f"follows({authored.shown(toks)}, {authored.shown(toks)})"
            got = authored.call(lambda t: self.follows(t, list(t)), list(toks), said, fail)
            authored.check_keys(got, toks, fail, name="follows")

    def resolve(self, puzzle) -> tuple[tuple[int, int], float, bool]:
        """The reader's head, min_mass and evenly: from its Attention target, or (layer, head) and min_mass."""
        from circuits.targets.attention import Attention

        found = [
            t
            for t in puzzle.targets
            if isinstance(t, Attention) and (t.label == self.reader or (t.layer, t.head) == self.reader)
        ]
        if isinstance(self.reader, str) and not found:
            raise CircuitError(f"Depends: reader {self.reader!r} is the label of no Attention target of the puzzle")
        if not found and self.min_mass is None:
            raise CircuitError(
                f"Depends: reader head {self.reader[0]}.{self.reader[1]} has no Attention target; give min_mass="
            )
        head = (found[0].layer, found[0].head) if found else tuple(self.reader)
        mass = self.min_mass if self.min_mass is not None else found[0].min_mass
        return head, mass, bool(found and found[0].evenly)

    def directions(self, model) -> np.ndarray:  # [d_model] bool: the directions `into` names
        labels = model.residual.labels
        for pattern in self.into:
            if not any(fnmatchcase(d, pattern) for d in labels):
                raise CircuitError(f"Depends: into names {pattern!r}, which is no direction of the residual stream")
        return np.array([any(fnmatchcase(d, p) for p in self.into) for d in labels])

    def patched(self, model) -> list[np.ndarray]:  # [[d_model] bool]: what the interventions patch and zero
        return [self.directions(model)]

    def contribution(self, trace) -> np.ndarray:  # [b, T, d_model]: what the writer wrote
        layer, part, head = writer_at(self.writer)
        if layer == -1:
            return trace.embed + trace.pos_embed
        if head is not None:
            return trace.head_out(*head)
        return trace.layers[layer].held("mlp_out")

    def pairs(self, puzzle) -> dict:
        """This target's pair plan for `puzzle`, made once per process (see plan_pairs)."""
        key = (id(self), id(puzzle))
        kept = _PLANS.get(key)
        if kept is None or kept[0] is not self or kept[1] is not puzzle:
            if len(_PLANS) >= KEPT:
                _PLANS.pop(next(iter(_PLANS)))
            kept = _PLANS[key] = (self, puzzle, plan_pairs(self.follows, puzzle))
        return kept[2]

    def run(self, puzzle, model) -> Verdict:
        """Every planned intervention, one forward pass per length: the first failure, shortest base first."""
        head, min_mass, evenly = self.resolve(puzzle)
        layer, part, _ = writer_at(self.writer)
        if head[0] <= layer:
            raise CircuitError(
                f"Depends: head {head[0]}.{head[1]} reads before {self.writer} writes; the reader "
                "must sit in a later layer"
            )
        mask = self.directions(model)  # [d_model]
        bos = model.vocab.bos is not None
        plans = self.pairs(puzzle)
        if not plans:
            raise CircuitError(
                f"the puzzle's target {self.label!r} checks nothing: no two of its inputs make "
                "follows point elsewhere (a mistake in the puzzle, not in the answer)"
            )
        failures, counts = [], np.zeros(3, dtype=int)
        for L, (group, pairs, plain) in plans.items():
            g = _once(plans, (L, min_mass, bos), lambda: group_of(group, pairs, plain, min_mass, bos))
            found, n = self._one_length(model, g, mask, (head, min_mass, evenly), (layer, part))
            counts += n
            failures += found
        lengths = (min(plans), max(plans))
        first = next(iter(plans.values()))
        example = (tuple(first[0][first[1][0][0]]), tuple(first[0][first[1][0][1]]))  # the first pair
        tried = Interventions(
            head, self.writer, tuple(self.into), int(counts[0]), int(counts[1]), int(counts[2]), lengths, example
        )
        if not failures:
            return Verdict(tried)
        *_, finding = min(failures, key=lambda f: f[:3])
        return Verdict(tried, finding, PATCHING if isinstance(finding, Unfollowed) else ZEROING)

    def _one_length(self, model, g: Group, mask, reader, at):
        """One length's patched and zeroed runs in one forward pass: its failures (length, base, kind, finding)
        and its counts (pairs, zeroed, queries)."""
        head, min_mass, evenly = reader
        trace = model.run(g.inputs, keep=KEEP)
        wrote = self.contribution(trace) * mask  # [n, T, d_model]
        delta = np.concatenate([wrote[g.source] - wrote[g.base], -wrote[g.zeroed]])  # [rows, T, d_model]
        edited = model.run_edited(trace, delta, *at, np.concatenate([g.base, g.zeroed]), keep=("pattern",))
        pattern = edited.pattern(*head)  # [rows, T, T]
        off = pattern.shape[-1] - len(g.inputs[0])  # 1 with a BOS token
        keys = np.zeros(pattern.shape, dtype=bool)
        r, q, k = g.keys
        keys[r, q + off, k + off] = True
        mass = _mass(pattern, keys, evenly)  # [rows, T], NaN where nothing is asked
        n = len(g.base)
        bad = np.concatenate(
            [
                np.nan_to_num(mass[:n], nan=1.0) < min_mass,  # patched: must follow
                np.nan_to_num(mass[n:], nan=0.0) >= min_mass,
            ]
        )  # zeroed: must break
        found = []
        for row in np.flatnonzero(bad.any(-1)):
            q = int(np.flatnonzero(bad[row])[0])
            b = int(g.base[row]) if row < n else int(g.zeroed[row - n])
            common = (head, self.writer, tuple(self.into), tuple(g.inputs[b]))
            on = tuple(int(x) for x in np.flatnonzero(keys[row, q]))
            labels = tuple(edited.tokens(row))
            if row < n:
                top = int(np.argmax(pattern[row, q]))
                finding = Unfollowed(
                    *common,
                    tuple(g.inputs[int(g.source[row])]),
                    labels,
                    q,
                    on,
                    float(mass[row, q]),
                    min_mass,
                    top,
                    float(pattern[row, q, top]),
                    top - off in (g.plain[b][q - off] or ()),
                )
            else:
                finding = Unbroken(*common, labels, q, on, float(mass[row, q]), min_mass)
            found.append((len(g.inputs[b]), b, row >= n, finding))
        return found, np.array([n, len(g.zeroed), int((~np.isnan(mass)).sum())])


def _mass(pattern: np.ndarray, keys: np.ndarray, evenly: bool) -> np.ndarray:  # [b, T, T] ×2 -> [b, T]
    """The attention on each query's keys (with `evenly`, the least-attended key × their number); NaN: no keys."""
    has = keys.any(-1)
    if evenly:
        got = np.where(has, np.where(keys, pattern, np.inf).min(-1), 0.0) * keys.sum(-1)
    else:
        got = np.where(keys, pattern, 0.0).sum(-1)
    return np.where(has, got, np.nan)
