"""The words of a failing target's explanation made from the facts its kind found: its summary, its table (per
position) and its hint, in the puzzle's own names, with the checker's notes.

One function per kind of facts; the targets in checking/targets/ hold the numbers, and nothing here computes a
finding.
"""

from __future__ import annotations

import re

import numpy as np

from circuits.checking import diagnosis
from circuits.checking.targets import attention, scores
from circuits.checking.targets.base import EarlierFailure, LeakNote
from circuits.checking.targets.formats import fmt_named, fmt_vec, token_at

COLUMNS = {
    "readout": ["pos", "token", "expected", "yours", "error", ""],
    "attention": ["query", "token", "target key", "argmax key (weight)", "on target", ""],
    "next-token": ["pos", "token", "expected next", "your top guess", "log-prob"],
}


def table(explanation) -> tuple[list[str], list[list[str]]]:
    """The explanation's table: its column headers and one row of cells per position."""
    facts = explanation.per_position
    return COLUMNS[facts.kind], ROWS[facts.kind](facts)


def _readout_rows(f) -> list[list[str]]:
    shown = (lambda v: fmt_named(v, f.names)) if f.names is not None else fmt_vec  # noqa: E731
    return [[str(i), repr(t), "—" if np.isnan(f.expected[i]).all() else shown(f.expected[i]), shown(f.yours[i]),
             f"{f.error[i]:.3g}" if f.error[i] >= 1e-9 else "0", "✗" if f.error[i] > f.tol else "✓"]
            for i, t in enumerate(f.tokens)]


def _attention_rows(f) -> list[list[str]]:
    rows = []
    for i, t in enumerate(f.tokens):
        top = f"{int(np.argmax(f.pattern[i]))} ({f.pattern[i].max():.3f})"
        if f.targets[i] < 0:
            rows.append([str(i), repr(t), "—", top, "—", ""])
            continue
        keys = np.flatnonzero(f.keys[i])
        wanted = ", ".join(str(int(k)) for k in keys) if len(keys) > 1 else f"{f.targets[i]} {f.tokens[f.targets[i]]!r}"
        rows.append([str(i), repr(t), wanted, top, f"{f.mass[i]:.3f}", "✗" if f.mass[i] < f.min_mass else "✓"])
    return rows


def _next_token_rows(f) -> list[list[str]]:
    return [[str(i), repr(t), "—" if e is None else repr(e), repr(top), "—" if np.isnan(lp) else f"{lp:.3f}"]
            for i, (t, e, top, lp) in enumerate(zip(f.tokens, f.expected, f.top, f.logprob))]


ROWS = {"readout": _readout_rows, "attention": _attention_rows, "next-token": _next_token_rows}


# --- the summary and the hint ----------------------------------------------------------------------------------
SUMMARIES: dict = {}  # type of a kind's facts of the miss → its sentence
HINTS: dict = {}  # type of a hint's facts → its sentence


def words(facts) -> str:
    """The sentence for one fact of a summary or a hint (text a kind not yet moved to facts hands in as it is)."""
    if isinstance(facts, str):
        return facts
    return {**SUMMARIES, **HINTS}[type(facts)](facts)


def summary(explanation) -> str:
    """What failed at the explanation's input, in one sentence or two."""
    return words(explanation.summary)


def hint(explanation) -> str:
    """The likely cause and where to look, in the puzzle's own names, with the checker's notes after it."""
    said = words(explanation.hint)
    if explanation.terms is not None:
        said = in_puzzle_terms(said, explanation)
    for note in explanation.notes:
        said = NOTES[type(note)](said, note)
    return said


def _earlier_failure(said: str, note) -> str:
    label = note.label
    name = f"part {label.split(' ', 1)[0]}" if label.startswith("(") else repr(label)
    return said.rstrip(".") + f". This may follow from the failure of {name}, earlier in the circuit: fix that first."


def _leak(said: str, note) -> str:
    return f"{said.rstrip('.')}. Note: {note.detail}"


NOTES = {EarlierFailure: _earlier_failure, LeakNote: _leak}


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
        where = (f"the targets are keys {on}, each needing ≥ {need} (an even share of "
                 f"{f.min_mass:g}), but {name} puts only {got} on key {token_at(labels, f.least)}")
    else:
        got, need = diagnosis.apart(f.mass, f.min_mass)
        where = f"the targets are keys {on}, but {name} puts only {got} on them together (needs ≥ {need})"
    return (f"at query {token_at(labels, q)} {where}; its largest weight, {f.top_weight:.3f}, is on key "
            f"{token_at(labels, f.top)}")


def _fixed_pattern(f) -> str:
    return f"{_head(f.head)} has a fixed pattern; this target needs a computed one"


def _zero_query(f) -> str:
    return (f"{_head(f.head)}'s query at position {f.query} ({f.token!r}) is exactly zero: W_Q reads nothing at that "
            f"token (W_Q reads {', '.join(f.reads) or 'nothing'}; the residual there holds "
            f"{', '.join(f.has) or 'nothing'}), so every key scores the same and the attention spreads evenly. Look at "
            "W_Q: which of this token's directions should it read?")


def _unread(f) -> str:
    name, writers = _head(f.head), [_head(w) for w in f.writers]
    earlier = ", ".join(["the embedding", *writers])
    fix = f"Look at W_{'K' if f.side == 'keys' else 'Q'} of {name}" + "".join(
        f", or at W_O of {w}" for w in writers[:3]) + ": one must read what the other writes"
    return (f"{name}'s {f.side} read {', '.join(f.reads)}, which nothing writes before layer {f.head[0]} ({earlier} "
            f"write only {', '.join(f.written) or 'nothing'} at this input), so every key scores the same "
            f"({f.score:.3g}). {fix}")


def _writer_first(f) -> str:
    who, into = _head(f.writer), ", ".join(f.into)
    return (f"The keys differ in {into}, which {who} writes: W_V of {who} reads {', '.join(f.reads)} and W_O of {who} "
            f"writes that into {into}, pairing directions less faithfully than this head reads them. The writer is the "
            f"likelier culprit: look at W_V and W_O of {who} (what it writes into {into}) before W_Q and W_K of this head")


def _differs(f) -> str:
    if not f.families:
        return ("Their residuals are identical, so no W_Q and W_K can tell them apart: what is written into them "
                "before this layer must differ")
    return (f"Their residuals differ in {', '.join(f.families)}: look at W_Q and W_K — reading those directions would "
            f"make key {f.a} score higher")


def _tied_keys(f) -> str:
    return (f"indistinguishable keys: key {f.rival} and the target key {f.best} both score {f.score:.6g}, so "
            f"{_head(f.head)} splits its attention between them and no scale can separate them. {words(f.then)}")


def _uneven(f) -> str:
    keys = ", ".join(str(k) for k in f.keys)
    scores = ", ".join(f"{k}: {s:.3g}" for k, s in zip(f.keys, f.scores))
    return (f"{_head(f.head)} should spread its attention evenly over keys {keys}, but their scores differ ({scores}). "
            "Look at W_Q and W_K: which directions make these keys score differently?")


def _scale_by(f) -> str:
    if f.factor is None:
        return "no scale up to ×10⁴ is enough, so sharpening alone will not fix it"
    return (f"at this length ({f.keys} keys visible) the scores need ×{diagnosis.factor(f.factor)} (raise your "
            "sharpness symbol of the attention by that much)")


def _sharpen(f) -> str:
    return (f"{_head(f.head)} attends most to the right key{'s' if f.n_keys > 1 else ''}, but the score there beats "
            f"the next best by only {f.gap:.3g}: sharpen the pattern; {_scale_by(f.scale)}")


def _favour(pairs, who: str) -> str:
    return " and ".join(f"{g} favour{'s' if '*' not in g else ''} {who} by {v:.3g}"
                        for g, v in sorted(pairs, key=lambda kv: -kv[1]))


WRONG_KEY_ADVICE = {
    "rotates": "look at W_Q and W_K on cos/sin: W_Q rotates the position, so check the rotation's direction and its sign",
    "signs": "look at the signs and sizes of W_Q's and W_K's entries on cos/sin",
}


def _wrong_key(f) -> str:
    head_line = (f"attention went to the wrong position: key {f.top} scores {f.top_score:.3g} against "
                 f"{f.target_score:.3g} for the target key {f.target}")
    if not f.against:
        return f"{head_line}. Look at W_Q and W_K"
    favours = f"; of the directions W_K reads, {_favour(f.against, f'key {f.top}')}"
    if f.toward:
        favours += f", {_favour(f.toward, 'the target')}"
    if f.writer is not None:
        return f"{head_line}{favours}. {words(f.writer)}"
    if f.advice == "outweighs":
        advice = (f"the position term outweighs the {', '.join(g for g, _ in f.toward)} term that should decide: keep "
                  "the weight on position smaller than the content's lead at every distance (look at W_Q's entries on "
                  "cos/sin)")
    else:
        advice = WRONG_KEY_ADVICE.get(f.advice, f"look at W_Q and W_K on {f.worst}")
    return f"{head_line}{favours}: {advice}"


SUMMARIES[attention.AttentionMiss] = _attention_miss
HINTS.update({attention.FixedPattern: _fixed_pattern, attention.ZeroQuery: _zero_query, attention.Unread: _unread,
              attention.WriterFirst: _writer_first, scores.Differs: _differs, attention.TiedKeys: _tied_keys,
              attention.Uneven: _uneven, attention.Sharpen: _sharpen, scores.ScaleBy: _scale_by,
              attention.WrongKey: _wrong_key})


# --- in the puzzle's own names ---------------------------------------------------------------------------------
def in_answer_terms(hint: str, head: tuple[int, int] | None, names: dict[tuple[int, int, str], str]) -> str:
    """The hint with each bare W_Q/W_K/W_V/W_O of `head` (or of the head it names) as the answer calls it."""

    def rename(match: re.Match) -> str:
        role = match.group(0)
        at = head
        of = re.match(r"(?:(?:,\s*|\s+and\s+|\s+or\s+)W_[QKVO]\b)*(?:'s entries on \S+)?\s+of\s+head (\d+)\.(\d+)",
                      hint[match.end():])
        if of:
            at = (int(of.group(1)), int(of.group(2)))
        elif at is None:  # a hint about the residual names its culprit: "… W_O and W_V of head 1.0"
            found = re.search(r"head (\d+)\.(\d+)", hint[match.end():]) or re.search(r"head (\d+)\.(\d+)", hint)
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
        of = re.search(r"MLP (?:of|in) layer (\d+)", hint[match.end():match.end() + 80])
        layer = int(of.group(1)) if of else explanation.mlp
        if layer is None:
            return role
        return mlps.get((layer, role), f"{role} (a given)" if mlps else role)

    hint = re.sub(r"\bW_(?:in|out)\b(?![_\w])", mlp, hint)
    answer = terms.answer
    hint = re.sub(r"\bW_(?:U|E|pos)\b(?![_\w])(?! \(a given\))",
                  lambda m: m.group(0) if m.group(0) in answer else f"{m.group(0)} (a given)", hint)
    for what, found in terms.sharpness.items():
        symbols = [s for s in found if s not in answer]
        matrices = [s for s in found if s in answer]
        said = " and ".join(([f"your sharpness symbol{'s' if len(symbols) > 1 else ''} {' and '.join(symbols)}"]
                             if symbols else []) + ([f"the scale of {' and '.join(matrices)}"] if matrices else []))
        hint = hint.replace(f"your sharpness symbol of the {what}",
                            said or f"the scale of the {'scores' if what == 'attention' else 'logits'}")
    return hint
