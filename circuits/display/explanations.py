"""The words of a failing target's explanation made from the facts its kind found: its summary, its table (per
position) and its hint, in the puzzle's own names, with the checker's notes.

One function per kind of facts; the targets in checking/targets/ hold the numbers, and nothing here computes a
finding.
"""

from __future__ import annotations

import re

import numpy as np

from circuits.checking import diagnosis, sharpening
from circuits.checking.targets import attention, mlp, next_token, output, scores
from circuits.checking.targets.base import EarlierFailure, LeakNote
from circuits.checking.targets.formats import fmt_named, fmt_num, fmt_pair, fmt_vec, token_at

COLUMNS = {  # type of a kind's per-position facts → the table's column headers
    output.ReadoutPositions: ["pos", "token", "expected", "yours", "error", ""],
    attention.AttentionPositions: ["query", "token", "target key", "argmax key (weight)", "on target", ""],
    next_token.NextTokenPositions: ["pos", "token", "expected next", "your top guess", "log-prob"],
}


def table(explanation) -> tuple[list[str], list[list[str]]]:
    """The explanation's table: its column headers and one row of cells per position."""
    facts = explanation.per_position
    return COLUMNS[type(facts)], ROWS[type(facts)](facts)


def _readout_rows(f) -> list[list[str]]:
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


def _attention_rows(f) -> list[list[str]]:
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
            on = f"{diagnosis.apart(f.mass[i] / len(keys), f.min_mass / len(keys))[0]} each"
        rows.append([str(i), repr(t), wanted, top, on, "✗" if f.mass[i] < f.min_mass else "✓"])
    return rows


def _next_token_rows(f) -> list[list[str]]:
    return [
        [str(i), repr(t), "—" if e is None else repr(e), repr(top), "—" if np.isnan(lp) else f"{lp:.3f}"]
        for i, (t, e, top, lp) in enumerate(zip(f.tokens, f.expected, f.top, f.logprob))
    ]


ROWS = {
    output.ReadoutPositions: _readout_rows,
    attention.AttentionPositions: _attention_rows,
    next_token.NextTokenPositions: _next_token_rows,
}


MARKS = {
    "target": "* = target key",
    "value": "* = a key whose value the expected vector needs",
    "raises": "* = a key that would raise the expected token most",
}  # Explanation.marks_mean → the legend


# --- the summary and the hint ----------------------------------------------------------------------------------
SUMMARIES: dict = {}  # type of a kind's facts of the miss → its sentence
HINTS: dict = {}  # type of a hint's facts → its sentence


def words(facts) -> str:
    """The sentence for one fact of a summary or a hint."""
    return {**SUMMARIES, **HINTS}[type(facts)](facts)


def summary(explanation) -> str:
    """What failed at the explanation's input, in one sentence or two."""
    return words(explanation.summary)


def _no_given_suspects(facts, terms):
    """The hint's facts without a head named as the suspect (`who`) whose W_V and W_O are both givens: the learner
    cannot edit them, so they are never the place to look."""
    import dataclasses

    if terms is None or not dataclasses.is_dataclass(facts) or isinstance(facts, type):
        return facts
    changed = {}
    for f in dataclasses.fields(facts):
        value = getattr(facts, f.name)
        if (
            f.name == "who"
            and isinstance(value, tuple)
            and len(value) == 2
            and terms.answer
            and not any((*value, role) in terms.heads for role in ("W_V", "W_O"))
        ):
            changed[f.name] = None
        elif dataclasses.is_dataclass(value):
            if (new := _no_given_suspects(value, terms)) is not value:
                changed[f.name] = new
    return dataclasses.replace(facts, **changed) if changed else facts


def hint(explanation) -> str:
    """The likely cause and where to look, in the puzzle's own names, with the checker's notes after it."""
    facts, notes = _no_given_suspects(explanation.hint, explanation.terms), list(explanation.notes)
    for note in notes:  # a factor sized for every length replaces the hint's own, sized for this input alone
        if isinstance(note, sharpening.Sharpening) and note.of == "attention" and sharpening.holds_scale(facts):
            facts, notes = sharpening.sized(facts, note), [n for n in notes if n is not note]
            break
    lead = [n for n in notes if isinstance(n, EarlierFailure) and getattr(facts, "earlier_first", False)]
    misread = [n for n in notes if isinstance(n, LeakNote) and _reads_of(n, explanation.head)]
    said = words(facts)
    if explanation.terms is not None:
        said = in_puzzle_terms(said, explanation)
    for note in notes:
        if note not in lead and note not in misread:
            said = NOTES[type(note)](said, note)
    for note in lead:
        said = (
            f"{_failed_earlier(note)}, earlier in the circuit, is the likelier cause: fix that first. {_capital(said)}"
        )
    for note in misread:  # a read the puzzle forbids, by the failing head itself: the fix, before any other advice
        said = f"{_capital(note.detail.rstrip('.'))}; fix that first. If it still fails: {said}"
    return said


def _reads_of(note, head) -> bool:
    """Whether the note is a read outside its declaration by the head the hint is about."""
    return head is not None and note.reader == _head(head)


def _capital(said: str) -> str:
    return said[:1].upper() + said[1:]


def _failed_earlier(note) -> str:
    label = note.label
    return "The failure of " + (f"part {label.split(' ', 1)[0]}" if label.startswith("(") else repr(label))


def _earlier_failure(said: str, note) -> str:
    label = note.label
    name = f"part {label.split(' ', 1)[0]}" if label.startswith("(") else repr(label)
    said = said if said.endswith(("?", "!")) else said.rstrip(".") + "."
    return f"{said} This may follow from the failure of {name}, earlier in the circuit: fix that first."


def _leak_note(said: str, note) -> str:
    return f"{said.rstrip('.')}. Note: {note.detail}"


def _sharpening_note(said: str, note) -> str:
    names = " and ".join(note.names)
    return (
        f"{said.rstrip('.')}. Raising {names} alone fixes this: ×{diagnosis.factor(note.factor)} makes it pass at "
        f"every length up to {note.max_len} (raise {names} ×{diagnosis.factor(note.factor)})"
    )


NOTES = {EarlierFailure: _earlier_failure, LeakNote: _leak_note, sharpening.Sharpening: _sharpening_note}


# --- attention -------------------------------------------------------------------------------------------------
def _head(head) -> str:
    return f"head {head[0]}.{head[1]}"


def _attention_miss(f) -> str:
    name, labels, q = _head(f.head), f.tokens, f.query
    n_keys = len(f.keys)
    on = ", ".join(str(k) for k in f.keys)
    if n_keys == 1:
        got, need = diagnosis.apart(f.mass, f.min_mass)
        where = f"the target is key {token_at(labels, f.keys[0])}, but {name} puts only {got} there (needs ≥ {need})"
    elif f.evenly:
        got, need = diagnosis.apart(f.least_weight, f.min_mass / n_keys)
        where = (
            f"the targets are keys {on}, each needing ≥ {need} (an even share of "
            f"{f.min_mass:g}), but {name} puts only {got} on key {token_at(labels, f.least)}"
        )
    else:
        got, need = diagnosis.apart(f.mass, f.min_mass)
        where = f"the targets are keys {on}, but {name} puts only {got} on them together (needs ≥ {need})"
    return (
        f"at query {token_at(labels, q)} {where}; its largest weight, {f.top_weight:.3f}, is on key "
        f"{token_at(labels, f.top)}"
    )


def _fixed_pattern(f) -> str:
    return f"{_head(f.head)} has a fixed pattern; this target needs a computed one"


def _and(names) -> str:
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else list(names))


def _zero_query(f) -> str:
    if f.cancels:
        return (
            f"{_head(f.head)}'s query at position {f.query} ({f.token!r}) is exactly zero: W_Q reads "
            f"{_and(f.cancels)} there, but in every row of W_Q what they add up to is 0, so every key scores the "
            "same and the attention spreads evenly. Look at W_Q on those directions: they cancel at this position"
        )
    return (
        f"{_head(f.head)}'s query at position {f.query} ({f.token!r}) is exactly zero: W_Q reads nothing at that "
        f"token (W_Q reads {', '.join(f.reads) or 'nothing'}; the residual there holds "
        f"{', '.join(f.has) or 'nothing'}), so every key scores the same and the attention spreads evenly. Look at "
        "W_Q: which of this token's directions should it read?"
    )


def _unread(f) -> str:
    name, writers = _head(f.head), [_head(w) for w in f.writers]
    earlier = ", ".join(["the embedding", *writers])
    fix = (
        f"Look at W_{'K' if f.side == 'keys' else 'Q'} of {name}"
        + "".join(f", or at W_O of {w}" for w in writers[:3])
        + ": one must read what the other writes"
    )
    return (
        f"{name}'s {f.side} read {', '.join(f.reads)}, which nothing writes before layer {f.head[0]} ({earlier} "
        f"write{'' if writers else 's'} only {', '.join(f.written) or 'nothing'} at this input), so every key "
        f"scores the same ({f.score:.3g}). {fix}"
    )


def _writer_first(f) -> str:
    who, into = _head(f.writer), ", ".join(f.into)
    return (
        f"The keys differ in {into}, which {who} writes: W_V of {who} reads {', '.join(f.reads)} and W_O of {who} "
        f"writes that into {into}, pairing directions less faithfully than this head reads them. The writer is the "
        f"likelier culprit: look at W_V and W_O of {who} (what it writes into {into}) before W_Q and W_K of this "
        "head"
    )


def _differs(f) -> str:
    if not f.families:
        return (
            "Their residuals are identical, so no W_Q and W_K can tell them apart: what is written into them "
            "before this layer must differ"
        )
    if f.read:
        return (
            f"Their residuals differ in {', '.join(f.families)}, and W_K reads {', '.join(f.read)}, yet with this "
            f"query both keys score the same: look at W_Q and W_K together, at what this query asks for against what "
            f"keys {f.a} and {f.b} give it"
        )
    return (
        f"Their residuals differ in {', '.join(f.families)}: look at W_Q and W_K — reading those directions "
        f"would make key {_key(f.a, f.tokens[:1])} score higher than key {_key(f.b, f.tokens[1:])}"
    )


def _key(i: int, token: tuple[str, ...]) -> str:
    return f"{i} {token[0]!r}" if token else str(i)


def _tied_keys(f) -> str:
    return (
        f"indistinguishable keys: key {f.rival} and the target key {f.best} both score {f.score:.6g}, so "
        f"{_head(f.head)} splits its attention between them and no scale can separate them. {words(f.then)}"
    )


def _uneven(f) -> str:
    keys = ", ".join(str(k) for k in f.keys)
    scores = ", ".join(f"{k}: {s:.3g}" for k, s in zip(f.keys, f.scores))
    return (
        f"{_head(f.head)} should spread its attention evenly over keys {keys}, but their scores differ ({scores}). "
        "Look at W_Q and W_K: which directions make these keys score differently?"
    )


def _scale_by(f) -> str:
    if f.factor is None:
        return "no scale up to ×10⁴ is enough, so sharpening alone will not fix it"
    if f.max_len is not None:  # sized by the checker on the puzzle's sharpness, for every length it promises
        return (
            f"to pass at every length up to {f.max_len} (this input at its full length included), the scores "
            f"need ×{diagnosis.factor(f.factor)} (raise your sharpness symbol of the attention by that much)"
        )
    return (
        f"at this length ({f.keys} keys visible) the scores need ×{diagnosis.factor(f.factor)} (raise your "
        "sharpness symbol of the attention by that much)"
    )


def _sharpen(f) -> str:
    return (
        f"{_head(f.head)} attends most to the right key{'s' if f.n_keys > 1 else ''}, but the score there beats "
        f"the next best by only {f.gap:.3g}: sharpen the pattern; {_scale_by(f.scale)}"
    )


def _digits(*values: float) -> int:
    """The fewest significant digits (at least 3) at which the distinct `values` print distinct: where a gap
    decides, a report must not show a tie (−200 against −200)."""
    distinct = sorted(set(float(v) for v in values))
    for d in range(3, 13):
        if len({f"{v:.{d}g}" for v in distinct}) == len(distinct):
            return d
    return 17


def _favour(pairs, who: str, d: int = 3) -> str:
    return " and ".join(
        f"{g} favour{'s' if '*' not in g else ''} {who} by {v:.{d}g}" for g, v in sorted(pairs, key=lambda kv: -kv[1])
    )


WRONG_KEY_ADVICE = {
    "rotates": (
        "look at W_Q and W_K on cos/sin: W_Q rotates the position, so check the rotation's direction and its sign"
    ),
    "signs": "look at the signs and sizes of W_Q's and W_K's entries on cos/sin",
}


def _wrong_key(f) -> str:
    d = _digits(f.top_score, f.target_score)
    head_line = (
        f"attention went to the wrong position: key {f.top} scores {f.top_score:.{d}g} against "
        f"{f.target_score:.{d}g} for the target key {f.target}"
    )
    if not f.against:
        return f"{head_line}. Look at W_Q and W_K"
    d = _digits(sum(v for _, v in f.against), sum(v for _, v in f.toward)) if f.toward else 3
    favours = f"; of the directions W_K reads, {_favour(f.against, f'key {f.top}', d)}"
    if f.toward:
        favours += f", {_favour(f.toward, 'the target', d)}"
    if f.writer is not None:
        return f"{head_line}{favours}. {words(f.writer)}"
    if f.silent is not None:
        return f"{head_line}{favours}. {_silent(f.silent)}"
    if f.unmatched is not None:
        return f"{head_line}{favours}. {_unmatched(f.unmatched)}"
    if f.advice == "outweighs":
        advice = (
            f"the position term outweighs the {', '.join(g for g, _ in f.toward)} term that should decide: keep "
            "the weight on position smaller than the content's lead at every distance (look at W_Q's entries on "
            "cos/sin)"
        )
    else:
        advice = WRONG_KEY_ADVICE.get(f.advice, f"look at W_Q and W_K on {f.worst}")
    return f"{head_line}{favours}: {advice}"


def _unmatched(f) -> str:
    return (
        f"Nothing favours the target: the query at position {f.query} looks for {' and '.join(f.looks_for)} in "
        f"a key (W_Q reads {', '.join(f.reads) or 'nothing'} there), but key {f.target} holds "
        f"{', '.join(f.holds)} of what W_K reads. Which of key {f.target}'s directions should the query look for? "
        "Look at what W_Q reads"
    )


def _silent(f) -> str:
    heads = [_head(w) for w in f.writers[:3]] + (["…"] if len(f.writers) > 3 else [])
    reads, look = ", ".join(f.reads), ", ".join(f"W_V and W_O of {h}" for h in heads if h != "…")
    dead = (
        f"which nothing before layer {f.head[0]} writes, whatever the input ({' and '.join(heads)} "
        f"write{'s' if len(f.writers) == 1 else ''} nothing there), so no key differs there"
    )
    if f.both:  # query and key read it alike: a pairing by design, missing its input
        return f"W_Q and W_K read {reads}, {dead}: look first at {look}, which must write what {_head(f.head)} reads"
    return f"W_K also reads {reads}, {dead}: either W_K should read what is written, or {look} should write {reads}"


SUMMARIES[attention.AttentionMiss] = _attention_miss
HINTS.update(
    {
        attention.FixedPattern: _fixed_pattern,
        attention.ZeroQuery: _zero_query,
        attention.Unread: _unread,
        attention.WriterFirst: _writer_first,
        scores.Differs: _differs,
        attention.TiedKeys: _tied_keys,
        attention.Uneven: _uneven,
        attention.Sharpen: _sharpen,
        scores.ScaleBy: _scale_by,
        attention.WrongKey: _wrong_key,
        attention.Silent: _silent,
        attention.Unmatched: _unmatched,
    }
)


# --- output (a readout within a tolerance) and the MLP's output --------------------------------------------------
def _readout_miss(f) -> str:
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


def _part(part) -> str:
    """A part of the model that writes into the residual: the embedding, a head, an MLP."""
    if part[0] == "embedding":
        return "the embedding"
    return _head(part[1:]) if part[0] == "head" else f"the MLP of layer {part[1]}"


def _vec(v) -> str:
    v = np.atleast_1d(v)
    return "[" + ", ".join(f"{x:.3g}" if abs(x) >= 1e-3 else "0" for x in v) + "]"


def _keys_at(keys, tokens, most: int = 3) -> str:
    shown = ", ".join(f"{j} {tokens[j]!r}" for j in keys[:most])
    return shown + (f" and {len(keys) - most} more" if len(keys) > most else "")


def _leak(f) -> str:
    """Where the attention goes that the expected vector does not want, and where it should go instead."""
    m, name = f.mix, _head(f.head)
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


def _scores_why(f) -> str:
    if f is None:
        return ""
    if f.tied:
        return (
            f"Indistinguishable keys: key {f.b} and key {f.a} both score {f.score_a:.6g}, so no scale can "
            "separate them. "
        )
    d = _digits(f.score_b, f.score_a)
    return f"Key {f.b} scores {f.score_b:.{d}g} against {f.score_a:.{d}g} for key {f.a}. "


def _attention_culprit(f) -> str:
    name = _head(f.head)
    return (
        f"{name} writes the wrong amount into {', '.join(f.directions)} at position {f.query}, and its values are "
        f"not the cause: {fmt_vec(f.needed)} from {name} would fix it, and that is a mix of what its keys' values "
        f"write there. So the attention is off: {_leak(f.leak)}. {_scores_why(f.why)}Look at W_Q and W_K of {name}"
    )


def _written(pairs) -> str:
    return ", ".join(f"{_part(k)} {v:.3g}" for k, v in pairs)


def _written_by(f) -> str:
    culprit = _part(f.culprit)
    said = (
        f"direction {f.direction!r} at position {f.query} is off by {f.error:.3g}, exactly what {culprit} writes "
        f"there (written: {_written(f.written)})"
    )
    if f.culprit[0] == "head":
        return f"{said}: look at W_O and W_V of {culprit}"
    if f.culprit[0] == "mlp":
        return f"{said}: look at W_out and W_in of {culprit}"
    if not f.heads:
        return (
            f"{said}, and the embedding is a given: a head must change it there, but no head's W_O "
            f"writes {f.direction!r} — look at W_O of the head that should"
        )
    heads = [_part(k) for k, _ in f.heads]
    return (
        f"{said}, and the embedding is a given: {' and '.join(heads)} should change it there "
        f"({', '.join(f'{_part(k)} writes {v:.3g}' for k, v in f.heads)}) — look at W_V and W_O of {heads[-1]} "
        "(what it reads, where it writes)"
    )


def _wrongly_written(f) -> str:
    said = (
        f"direction {f.direction!r} at position {f.query} is off by {f.error:.3g} (written there: "
        f"{_written(f.written) or 'nothing'})"
    )
    if f.heads:
        heads = [_part(k) for k in f.heads]
        return (
            f"{said}: {' and '.join(heads)} {'writes' if len(heads) == 1 else 'write'} it, but the wrong value — "
            f"check which direction W_V of {heads[-1]} reads (from which position) and where its W_O writes it"
        )
    if f.mlps:
        return (
            f"{said}: the part that should write it does not — check which rows of W_O write this direction and "
            f"what W_V reads, or what W_out of {_part(f.mlps[-1])} writes there"
        )
    return (
        f"{said}: the head that should write it does not — check which rows of W_O write this direction, and "
        "what W_V reads"
    )


def _where_good(tokens, keys) -> str:
    return ", ".join(token_at(tokens, j) for j in keys[:4]) + (" …" if len(keys) > 4 else "")


def _right_values_fixed(f) -> str:
    return (
        f"{_head(f.head)} has a fixed pattern, and attending to {_where_good(f.tokens, f.keys)} would give the "
        "expected vector: the values are right, so check which head or layer the puzzle expects"
    )


def _not_sharp(f) -> str:
    others = f"{f.others} other {'key shares' if f.others == 1 else 'keys share'}"
    return (
        f"attention is aimed right but not sharp enough: at position {f.query} the keys whose value would give "
        f"the expected vector ({_where_good(f.tokens, f.keys)}) score {f.gap:.3g} above the rest, yet hold only "
        f"{f.mass:.3f} of {_head(f.head)}'s attention because {others} the softmax. The gap "
        f"must grow with length (about log(length / tolerance)): {_scale_by(f.scale)}."
    )


def _tied_value(f) -> str:
    return (
        f"indistinguishable keys: key {f.b} and key {f.a} (whose value would give the expected vector) both score "
        f"{f.score:.6g}, so {_head(f.head)} splits its attention between them and no scale can separate them. "
        f"{_differs(f.then)}"
    )


def _elsewhere_attended(f) -> str:
    return (
        f"attention went to the wrong positions: only {f.mass:.3f} of {_head(f.head)}'s attention at position "
        f"{f.query} is on the keys whose value would give the expected vector ({_where_good(f.tokens, f.keys)}). "
        "Look at W_Q and W_K."
    )


def _even_would(f) -> str:
    return (
        f"attending evenly to positions 0..{f.query} would give the expected vector, but {_head(f.head)} does "
        "not: look at W_Q and W_K (a zero W_QK attends evenly)"
    )


def _fixed_mix(f) -> str:
    name = _head(f.leak.head)
    fed = f"its W_V reads {', '.join(f.reads)}, " if f.reads else ""
    if f.writer is not None:
        fed += f"which {_part(f.writer)} writes: look at what {_part(f.writer)} writes there first, then at "
    else:
        fed += "look at "
    return (
        f"{name}'s pattern is fixed (a given), so its values are at fault, not its attention. {fed[0].upper()}"
        f"{fed[1:]}W_V and W_O of {name}"
    )


def _attention_not_values(f) -> str:
    leak = _leak(f.leak)  # empty where no key is off by more than 0.005: the shortfall is spread thin
    return (
        f"the values are right but the attention is not: the expected vector {fmt_vec(f.expected)} is a mix of "
        f"the values at positions 0..{f.query}, so an attention pattern can give it"
        f"{f', and {leak}' if leak else ''}. {_scores_why(f.why)}Look at W_Q and W_K"
    )


def _no_mix(f) -> str:
    return (
        f"no mix of the values at positions 0..{f.query} ({', '.join(fmt_vec(v) for v in f.values)}"
        f"{' …' if f.query >= 4 else ''}) is close to the expected vector {fmt_vec(f.expected)}, so no attention "
        f"pattern can produce it: look at {'W_V and W_O' if f.W_O else 'W_V'}"
    )


def _mlp_reads(f) -> str:
    read = ", ".join(f"{label} = {x:.3g}" for label, x in f.read) or "nothing"
    writers = ", ".join(f"unit {j}" for j in f.fired) or "no unit"
    return (
        f"at position {f.query} the MLP reads {read}; its hidden units W_in x are {fmt_vec(f.pre)}, after the ReLU "
        f"{fmt_vec(f.post)} ({writers} active), and W_out turns them into {fmt_named(f.yours, f.names)} where "
        f"{fmt_named(f.expected, f.names)} is expected (worst on {f.worst!r}). Look at W_in (which units fire for "
        "this input: a ReLU passes only what is above zero, and a weight on a constant direction sets a "
        "unit's threshold) and W_out (what each unit writes, into which direction)"
    )


SUMMARIES[output.ReadoutMiss] = _readout_miss
HINTS.update(
    {
        output.AttentionCulprit: _attention_culprit,
        output.WrittenBy: _written_by,
        output.WronglyWritten: _wrongly_written,
        output.RightValuesFixed: _right_values_fixed,
        output.NotSharp: _not_sharp,
        output.TiedValue: _tied_value,
        output.ElsewhereAttended: _elsewhere_attended,
        output.EvenWould: _even_would,
        output.FixedMix: _fixed_mix,
        output.AttentionNotValues: _attention_not_values,
        output.NoMix: _no_mix,
        mlp.MLPReads: _mlp_reads,
        output.Leak: _leak,
        output.ScoresWhy: _scores_why,
    }
)


# --- next token ------------------------------------------------------------------------------------------------
def _nothing_expected(f) -> str:
    return f"no position of this input has an expected next token; the mean counts as 0, outside [{f.lo:g}, {f.hi:g}]"


def _spec_empty(f) -> str:
    return "the spec expects nothing of this input: widen the band to include 0, or check the spec"


def _mean_miss(f) -> str:
    side = " (above the band: surer than the context allows)" if f.above else ""
    return (
        f"mean log-prob {f.mean:.3f} over {f.n} predicted position{'s' if f.n != 1 else ''}{side}; "
        f"needs [{f.lo:g}, {f.hi:g}]"
    )


def _token_miss(f) -> str:
    return f"after position {f.query} {f.token!r} the expected next token has log-prob {f.logprob:.3f} < {f.lo:g}"


def _too_sure(f) -> str:
    where = f" (W_Q and W_K of {', '.join(_head(h) for h in f.computed)})" if f.computed else ""
    return (
        "where the context cannot tell the next token, the prediction must stay flat, and yours is not: check "
        f"where your heads attend when no key matches{where} and what they write there (W_V, W_O)"
    )


def _rival(f) -> str:
    q, w, r = f.query, f.want, f.rival
    if f.how in ("tie", "near"):
        shown_w, shown_r = diagnosis.apart(f.p_want, f.p_rival)
        return (
            f"after position {q} your model cannot tell the expected {w!r} from {r!r}"
            f"{f' and {f.more} more' if f.more > 0 else ''}: "
            + (f"a tie, each {f.p_want:.3f}" if f.how == "tie" else f"a near tie, {shown_w} against {shown_r}")
        )
    if f.how == "second":
        if f.need is None:
            return (
                f"your top guess after position {q} is {w!r} ({f.p_want:.3f}), but {r!r} follows with {f.p_rival:.3f}"
            )
        got, need = diagnosis.apart(f.p_want, float(np.exp(f.need)))
        return (
            f"after position {q} your top guess {w!r} is right but only {got} sure ({r!r} follows with "
            f"{f.p_rival:.3f}); it needs log-prob ≥ {f.need:g}, a probability ≥ {need}"
        )
    if f.how == "shared":
        partners = " and ".join(repr(p) for p in f.partners)
        others = f"{r!r}{f' and {f.more} more' if f.more > 0 else ''}"
        return (
            f"after position {q} the expected {w!r} shares the top with {partners} ({f.p_want:.3f} each), as it "
            f"may, but {others} keep {f.rest:.3f} between them"
        )
    return f"after position {q} your model prefers {r!r} ({f.p_rival:.3f}) to the expected {w!r} ({f.p_want:.3f})"


def _attention_cause(f) -> str:
    name, keys = _head(f.head), f.keys
    why = (
        f"indistinguishable keys: key {f.tied[0]} and key {f.tied[1]} both score {f.tied[2]:.6g}. "
        if f.tied is not None
        else ""
    )
    where = ", ".join(token_at(f.tokens, j) for j in keys[:3]) + (" …" if len(keys) > 3 else "")
    return (
        f"{_rival(f.rival)}. The attention is the cause: {name} puts {f.mass:.3f} on "
        f"key{'s' if len(keys) > 1 else ''} {where}, whose value would raise {f.rival.want!r} over "
        f"{f.rival.rival!r} by {f.gain:.3g} more, and its largest weight ({f.top_weight:.3f}) is on key "
        f"{token_at(f.tokens, f.top)}. {why}Look at W_Q and W_K of {name}"
    )


def _surer_prediction(f) -> str:
    return (
        f"{_rival(f.rival)}. No attention pattern of your heads would raise it much: make the prediction surer "
        "(raise your sharpness symbol of the prediction)"
    )


def _not_reaching(f) -> str:
    w, r = f.rival.want, f.rival.rival
    if f.who is not None and f.given:  # the pattern is given: the mix of values it attends to is what counts
        named = (
            f"look at W_V and W_O of {_head(f.who)}: what it writes here is the mix of the values it attends "
            f"to, and that mix must raise {w!r} above {r!r} (it leaves {r!r} ahead by {fmt_num(f.lead)}); then "
            "at W_U"
        )
    elif f.who is not None:
        named = (
            f"look at W_V and W_O of {_head(f.who)} (attending to its best key would raise {w!r} over {r!r} by "
            f"{fmt_num(f.reach)}, against a lead of {fmt_num(f.lead)} for {r!r}) and at W_U"
        )
    else:
        named = "look at W_U"
    if f.mlps:  # an MLP writes where W_U tells them apart: it comes first, before any head
        mlp = " and ".join(f"the MLP of layer {l}" for l in f.mlps)
        named = (
            f"look at W_in and W_out of {mlp} (which units fire for this input, and what they write into the "
            f"directions W_U reads to tell {w!r} from {r!r}), then " + named.removeprefix("look at ")
        )
    if f.rival.how in ("tie", "near"):  # no sharpness separates equal logits
        apart = "the attention is given and does not" if f.given else "no attention pattern of your heads"
        return (
            f"{_rival(f.rival)}, so no sharpness can make {w!r} sure, and {apart} separate{'' if f.given else 's'} "
            f"them: what the attended positions hold must raise {w!r} above {r!r} — {named}"
        )
    change = "the attention is given" if f.given else "no attention pattern of your heads would change that"
    return (
        f"{_rival(f.rival)}, and {change}: what the attended positions hold does not reach the unembedding as "
        f"{w!r}: {named}"
    )


def _advised(f) -> str:
    return f"{words(f.hint).rstrip('.')}. {f.advice}"


SUMMARIES.update(
    {next_token.NothingExpected: _nothing_expected, next_token.MeanMiss: _mean_miss, next_token.TokenMiss: _token_miss}
)
HINTS.update(
    {
        next_token.SpecEmpty: _spec_empty,
        next_token.TooSure: _too_sure,
        next_token.AttentionCause: _attention_cause,
        next_token.SurerPrediction: _surer_prediction,
        next_token.NotReaching: _not_reaching,
        next_token.Advised: _advised,
        next_token.Rival: _rival,
    }
)


# --- in the puzzle's own names ---------------------------------------------------------------------------------
def in_answer_terms(hint: str, head: tuple[int, int] | None, names: dict[tuple[int, int, str], str]) -> str:
    """The hint with each bare W_Q/W_K/W_V/W_O of `head` (or of the head it names) as the answer calls it."""

    def rename(match: re.Match) -> str:
        role = match.group(0)
        at = head
        of = re.match(
            r"(?:(?:,\s*|\s+and\s+|\s+or\s+)W_[QKVO]\b)*(?:'s entries on \S+)?\s+of\s+head (\d+)\.(\d+)",
            hint[match.end() :],
        )
        if of:
            at = (int(of.group(1)), int(of.group(2)))
        elif at is None:  # a hint about the residual names its culprit: "… W_O and W_V of head 1.0"
            found = re.search(r"head (\d+)\.(\d+)", hint[match.end() :]) or re.search(r"head (\d+)\.(\d+)", hint)
            at = (int(found.group(1)), int(found.group(2))) if found else None
        if at is None:  # no head named: every answer matrix in this role
            every = list(dict.fromkeys(n for (_, _, r), n in names.items() if r == role))
            return " or ".join(every) if every else role
        name = names.get((*at, role))
        return f"{role} (a given)" if name is None else name  # a head's matrix the answer does not write

    return re.sub(r"\bW_[QKVO]\b(?![_\w])", rename, hint)


def in_puzzle_terms(hint: str, explanation) -> str:
    """A hint in the puzzle's own terms (`explanation.terms`): its answer's matrix names (givens marked as such),
    and its own sharpness symbol where the hint asks to sharpen."""
    terms = explanation.terms
    heads, mlps = terms.heads, terms.mlps
    hint = in_answer_terms(hint, explanation.head, heads)

    def mlp(match: re.Match) -> str:
        role = match.group(0)
        of = re.search(r"MLP (?:of|in) layer (\d+)", hint[match.end() : match.end() + 80])
        layer = int(of.group(1)) if of else explanation.mlp
        if layer is None:
            return role
        return mlps.get((layer, role), f"{role} (a given)" if mlps else role)

    hint = re.sub(r"\bW_(?:in|out)\b(?![_\w])", mlp, hint)
    answer = terms.answer
    hint = re.sub(
        r"\bW_(?:U|E|pos)\b(?![_\w])(?! \(a given\))",
        lambda m: m.group(0) if m.group(0) in answer else f"{m.group(0)} (a given)",
        hint,
    )
    for what, found in terms.sharpness.items():
        symbols = [s for s in found if s not in answer]
        matrices = [s for s in found if s in answer]
        said = " and ".join(
            ([f"your sharpness symbol{'s' if len(symbols) > 1 else ''} {' and '.join(symbols)}"] if symbols else [])
            + ([f"the scale of {' and '.join(matrices)}"] if matrices else [])
        )
        hint = hint.replace(
            f"your sharpness symbol of the {what}",
            said or f"the scale of the {'scores' if what == 'attention' else 'logits'}",
        )
    return hint
