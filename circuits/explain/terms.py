"""The puzzle's own terms for what a hint names: each head's and MLP's matrices as the answer calls them (a given
where the answer does not write it), and its sharpness symbols.

The words name a matrix through the terms as they are made: `matrix("W_Q", head)`, `mlp_matrix("W_in", layer)`,
`given("W_U")`, `sharpness("attention")`, with the terms, the hint's head and its MLP those of the explanation
being said (`saying`; outside it, the library's own names). A remnant: text the puzzle wrote itself (NextToken's
`advice`) is renamed as a whole by `in_text`, by regex, reading which head a matrix belongs to from the words
around it ("W_V and W_O of head 1.0"), as every hint once was."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from circuits.checking.answer_names import head_matrices, mlp_matrices


def _symbols(value) -> set[str]:
    from circuits.model.weights import raw_array

    try:
        raw = raw_array(value)
    except Exception:  # noqa: BLE001 - a value the builder rejects names no symbol
        return set()
    found: set[str] = set()
    for x in np.asarray(raw, dtype=object).flat:
        found |= {str(s) for s in getattr(x, "free_symbols", ())}
    return found


def sharpness_words(attempt, heads: dict) -> dict[str, list[str]]:
    """ "of the attention" / "of the prediction" → the puzzle's sharpness symbols (or matrices) that set each."""
    declared = [str(s) for s in attempt.puzzle.sharpness]
    qk = {name for (l, h, role), name in heads.items() if role in ("W_Q", "W_K")}
    answer = attempt.answer
    out = {}
    for what, wanted in (("attention", lambda n: n in qk), ("prediction", lambda n: n not in qk)):
        names = [n for n in attempt.puzzle.answer if n != "params" and wanted(n)]
        found = [s for s in declared if s in names or any(s in _symbols(getattr(answer, n, None)) for n in names)]
        out[what] = found or declared
    return out


@dataclass(frozen=True)
class PuzzleTerms:
    """The puzzle's own names for what a hint names: each head's and MLP's matrices as the answer calls them (a
    slot the answer does not write is absent: a given), the answer's names, and the sharpness symbols (or
    matrices) that set the attention's and the prediction's sharpness."""

    heads: dict  # (layer, head, role) → name
    mlps: dict  # (layer, "W_in" | "W_out") → name
    answer: frozenset
    sharpness: dict  # "attention" | "prediction" → names
    reads: dict | None = None  # "head 0.1 W_K" → the directions the puzzle lets it read (patterns); None: not known


def puzzle_terms(attempt, model) -> PuzzleTerms:
    """The names a hint is said in, for this answer to this puzzle."""
    from circuits.checking.guarantees import reads_for

    heads = head_matrices(attempt, model)
    return PuzzleTerms(
        heads,
        mlp_matrices(attempt, model),
        frozenset(attempt.puzzle.answer),
        sharpness_words(attempt, heads),
        reads_for(attempt),
    )


def no_given_suspects(facts, terms):
    """The hint's facts without a head named as the suspect (`who`) whose W_V and W_O are both givens: the learner
    cannot edit them, so they are never the place to look."""
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
            if (new := no_given_suspects(value, terms)) is not value:
                changed[f.name] = new
    return dataclasses.replace(facts, **changed) if changed else facts


# --- naming, as the words are made -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Saying:
    """What the words being made are said in: the puzzle's terms (None: the library's own names), and the head and
    MLP layer the hint is about (a matrix named without its head is that head's)."""

    terms: PuzzleTerms | None = None
    head: tuple[int, int] | None = None
    mlp: int | None = None


_SAYING: ContextVar[Saying] = ContextVar("saying", default=Saying())
HERE = object()  # a matrix of the head (or MLP) the hint is about


@contextlib.contextmanager
def saying(terms, head, mlp):
    """Words made within are said in `terms`, about `head` and `mlp` (an explanation's)."""
    token = _SAYING.set(Saying(terms, head, mlp))
    try:
        yield
    finally:
        _SAYING.reset(token)


def matrix(role: str, head=HERE) -> str:
    """A head's W_Q, W_K, W_V or W_O as the answer calls it ("W_Q (a given)" where the answer does not write it);
    `head` None: no head is meant, so every answer matrix in that role."""
    said = _SAYING.get()
    if said.terms is None:
        return role
    at = said.head if head is HERE else head
    if at is None:
        every = list(dict.fromkeys(n for (_, _, r), n in said.terms.heads.items() if r == role))
        return " or ".join(every) if every else role
    name = said.terms.heads.get((*at, role))
    return f"{role} (a given)" if name is None else name


def editable(role: str, head) -> bool:
    """Whether the answer writes this head's W_Q, W_K, W_V or W_O (True where the terms are not known)."""
    said = _SAYING.get()
    return said.terms is None or (*head, role) in said.terms.heads


def mlp_matrix(role: str, layer=HERE) -> str:
    """An MLP's W_in or W_out as the answer calls it."""
    said = _SAYING.get()
    at = said.mlp if layer is HERE else layer
    if said.terms is None or at is None:
        return role
    mlps = said.terms.mlps
    return mlps.get((at, role), f"{role} (a given)" if mlps else role)


def readable(role: str, head, directions) -> list[str] | None:
    """Of `directions`, those the puzzle lets `head`'s `role` (W_Q, W_K) read; None where it declares nothing for it
    (every direction may be read)."""
    from circuits.checking.guarantees import allowed

    said = _SAYING.get()
    declared = None if said.terms is None or said.terms.reads is None or head is None else said.terms.reads
    patterns = None if declared is None else declared.get(f"head {head[0]}.{head[1]} {role}")
    return None if patterns is None else [d for d in directions if allowed(patterns, d)]


def given(name: str) -> str:
    """W_U, W_E or W_pos: as written where the answer sets it, else marked a given."""
    said = _SAYING.get()
    return name if said.terms is None or name in said.terms.answer else f"{name} (a given)"


def sharpness(what: str) -> str:
    """What sets the sharpness of the attention or of the prediction: the puzzle's symbols, or the scale of its
    matrices."""
    said, phrase = _SAYING.get(), f"your sharpness symbol of the {what}"
    if said.terms is None or what not in said.terms.sharpness:
        return phrase
    found = said.terms.sharpness[what]
    symbols = [s for s in found if s not in said.terms.answer]
    matrices = [s for s in found if s in said.terms.answer]
    named = " and ".join(
        ([f"your sharpness symbol{'s' if len(symbols) > 1 else ''} {' and '.join(symbols)}"] if symbols else [])
        + ([f"the scale of {' and '.join(matrices)}"] if matrices else [])
    )
    return named or f"the scale of the {'scores' if what == 'attention' else 'logits'}"


def in_text(text: str) -> str:
    """Text the puzzle wrote itself, with the matrices it names in the puzzle's terms: renamed as a whole."""
    said = _SAYING.get()
    return text if said.terms is None else in_puzzle_terms(text, said)


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
    """A text in the puzzle's own terms (`explanation.terms`, about its `head` and `mlp`): its answer's matrix names
    (givens marked as such), and its own sharpness symbol where it asks to sharpen."""
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
