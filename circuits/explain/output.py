"""Output: why a readout misses the spec at a position (the first one past the tolerance), its facts and their
words: a readout of the residual is blamed on a head whose attention is off, else on the part that wrote the wrong
amount; a head's readout is explained in `values`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.explain.attention import zero_query
from circuits.explain.diagnosis import mix
from circuits.explain.formats import fmt_named, fmt_pair, fmt_vec, head, part, token_at
from circuits.explain.tables import columns, explain, rows, words
from circuits.explain.terms import matrix, mlp_matrix
from circuits.explain.values import Leak, ScoresWhy, head_cause, said_why, why_scores
from circuits.model.decompose import decompose_resid
from circuits.targets.base import Explanation, Tokens
from circuits.targets.output import Output
from circuits.targets.specs import spec_array


@dataclass
class ReadoutPositions:
    """An output target's facts per position: expected `[T, k]` (NaN: none), yours `[T, k]`, the error `[T]`."""

    tokens: Tokens
    expected: np.ndarray
    yours: np.ndarray
    error: np.ndarray
    tol: float
    names: list[str] | None = None  # the directions, where vectors are shown by name (too wide for a terminal)


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


# --- the explanation ---------------------------------------------------------------------------------------------
@explain.register
def why(target: Output, trace, tokens):
    return explained(target, trace, tokens, head_cause)


def explained(target, trace, tokens, cause) -> Explanation:
    """An output target's explanation, its readout's hint (a head's or an MLP's) found by `cause`."""
    yours = target.readout.get(trace)[0]
    exp = spec_array(target.spec, [tokens], yours.shape[0], yours.shape[1], target.label)[0]
    err = np.where(np.isnan(exp), 0.0, np.abs(yours - exp)).max(-1)
    bad = np.flatnonzero(err > target.tol)
    q = int(bad[0]) if len(bad) else int(np.argmax(err))
    tokens = trace.tokens(0)
    rows = ReadoutPositions(list(tokens), exp, yours, err, target.tol)
    summary = ReadoutMiss(tuple(tokens), q, target.readout.label, exp[q], yours[q], err[q], target.tol)
    head = getattr(target.readout, "layer", None), getattr(target.readout, "head", None)
    head = head if head[0] is not None else None
    marks = None
    if head:
        hint = cause(target, trace, tokens, q, exp[q])
    else:
        hint, head, marks = _attention_culprit(target, trace, q, yours[q], exp[q]) or (None, None, None)
        hint = hint or _residual_hint(target, trace, q, yours[q] - exp[q])
    return Explanation(q, summary, rows, hint, head, marks, "value")


def _attention_culprit(target, trace, q: int, yours: np.ndarray, expected: np.ndarray):
    """A head whose values could give what the readout needs, had it attended elsewhere: (hint, head, marks).

    The readout is residual directions; each head with a computed pattern adds its attention-weighted
    values there. If the needed output of one head is a mix of its keys' values, its attention is the cause."""
    model = trace.model
    tokens = trace.tokens(0)
    idx = model.residual.index(target.readout.components(model))
    err = np.nan_to_num(yours - expected)
    found = []
    for l, layer in enumerate(trace.layers):
        if target.readout.after_layer is not None and l > target.readout.after_layer:
            break
        for h, w in enumerate(layer.heads):
            if w.pattern is not None or not np.abs(w.W_O[idx]).any():
                continue
            values = (layer.v[0, h, : q + 1, : w.W_V.shape[0]] @ w.W_O.T)[:, idx]  # [keys, k]
            if np.ptp(values, axis=0).max() <= target.tol:
                continue  # every key gives the same: the attention cannot matter
            pattern = layer.pattern[0, h, q, : q + 1]
            current = pattern @ values
            m = mix(pattern, values, current - err, target.tol)
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
        tuple(target.readout.components(model)),
        q,
        needed,
        Leak((l, h), m, tuple(tokens), needed),
        why_scores(target, trace, q, m, (l, h)),
    )
    return hint, (l, h), marks


def _residual_hint(target, trace, q: int, error: np.ndarray) -> WrittenBy | WronglyWritten:
    """Which part of the model wrote the wrong amount into the worst direction."""
    model = trace.model
    added = decompose_resid(trace)  # per part: [b, T, d_model]

    def parts(col: int) -> dict[Part, float]:
        return {part: float(a[0, q, col]) for part, a in added.items()}

    names = target.readout.components(model)
    order = [int(d) for d in np.argsort(-np.nan_to_num(np.abs(error))) if abs(error[d]) > target.tol]
    for d in order:  # prefer a direction whose error one part of the model explains exactly
        p = parts(model.residual.index(names[d]))
        culprit = min(p, key=lambda k: abs(p[k] - error[d]))
        if abs(p[culprit] - error[d]) <= target.tol and abs(p[culprit]) > 1e-12:
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


# --- the words -----------------------------------------------------------------------------------------------------
@columns.register
def _(f: ReadoutPositions) -> list[str]:
    return ["pos", "token", "expected", "yours", "error", ""]


@rows.register
def _(f: ReadoutPositions) -> list[list[str]]:
    shown = (lambda v: fmt_named(v, f.names)) if f.names is not None else fmt_vec  # noqa: E731
    return [
        [
            str(i),
            repr(t),
            "—" if np.isnan(f.expected[i]).all() else shown(f.expected[i]),
            shown(f.yours[i]),
            f"{f.error[i]:.3g}" if f.error[i] >= 1e-9 else "0",
            "✗" if f.error[i] > f.tol else "✓",
        ]
        for i, t in enumerate(f.tokens)
    ]


@words.register
def _(f: ReadoutMiss) -> str:
    q = f.query
    if f.names is None:
        shown_exp, shown_yours = fmt_pair(f.expected, f.yours)
    else:
        shown_exp = "—" if np.isnan(f.expected).all() else fmt_named(f.expected, f.names)
        shown_yours = fmt_named(f.yours, f.names)
    return (
        f"at position {token_at(f.tokens, q)} the expected {f.readout} is {shown_exp}, "
        f"yours is {shown_yours} (error {f.error:.3g} > tolerance {f.tol:g})"
    )


@words.register
def _(f: AttentionCulprit) -> str:
    name = head(f.head)
    return (
        f"{name} writes the wrong amount into {', '.join(f.directions)} at position {f.query}, and its values are "
        f"not the cause: {fmt_vec(f.needed)} from {name} would fix it, and that is a mix of what its keys' values "
        f"write there. So the attention is off: {words(f.leak)}. {said_why(f.why)}Look at {matrix('W_Q', f.head)} and "
        f"{matrix('W_K', f.head)} of {name}"
    )


@words.register
def _(f: WrittenBy) -> str:
    culprit = part(f.culprit)
    said = (
        f"direction {f.direction!r} at position {f.query} is off by {f.error:.3g}, exactly what {culprit} writes "
        f"there (written: {written_by(f.written)})"
    )
    if f.culprit[0] == "head":
        return f"{said}: look at {matrix('W_O', f.culprit[1:])} and {matrix('W_V', f.culprit[1:])} of {culprit}"
    if f.culprit[0] == "mlp":
        return (
            f"{said}: look at {mlp_matrix('W_out', f.culprit[1])} and {mlp_matrix('W_in', f.culprit[1])} of {culprit}"
        )
    if not f.heads:
        o = matrix("W_O", first_head(f.written))  # no head meant: named as the first the sentence names
        return (
            f"{said}, and the embedding is a given: a head must change it there, but no head's {o} "
            f"writes {f.direction!r} — look at {o} of the head that should"
        )
    heads = [part(k) for k, _ in f.heads]
    return (
        f"{said}, and the embedding is a given: {' and '.join(heads)} should change it there "
        f"({', '.join(f'{part(k)} writes {v:.3g}' for k, v in f.heads)}) — look at "
        f"{matrix('W_V', f.heads[-1][0][1:])} and {matrix('W_O', f.heads[-1][0][1:])} of {heads[-1]} "
        "(what it reads, where it writes)"
    )


@words.register
def _(f: WronglyWritten) -> str:
    said = (
        f"direction {f.direction!r} at position {f.query} is off by {f.error:.3g} (written there: "
        f"{written_by(f.written) or 'nothing'})"
    )
    if f.heads:
        heads = [part(k) for k in f.heads]
        return (
            f"{said}: {' and '.join(heads)} {'writes' if len(heads) == 1 else 'write'} it, but the wrong value — "
            f"check which direction {matrix('W_V', f.heads[-1][1:])} of {heads[-1]} reads (from which position) and "
            f"where its {matrix('W_O', first_head(f.written))} writes it"
        )
    o, v = matrix("W_O", first_head(f.written)), matrix("W_V", first_head(f.written))
    if f.mlps:
        return (
            f"{said}: the part that should write it does not — check which rows of {o} write this direction and "
            f"what {v} reads, or what {mlp_matrix('W_out', f.mlps[-1][1])} of {part(f.mlps[-1])} writes there"
        )
    return (
        f"{said}: the head that should write it does not — check which rows of {o} write this direction, and "
        f"what {v} reads"
    )


def first_head(pairs) -> tuple[int, int] | None:
    """The first head among the parts that wrote (a sentence about the residual names its matrices as that head's,
    as the words around them first name one), or None."""
    return next((k[1:] for k, _ in pairs if k[0] == "head"), None)


def written_by(pairs) -> str:
    return ", ".join(f"{part(k)} {v:.3g}" for k, v in pairs)
