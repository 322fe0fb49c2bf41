"""The notes after a failing target's hint, their facts and words: the failure of an earlier target, likely its
cause (EarlierFailure); a write or read outside the puzzle's declaration (LeakNote); and the hint itself, in the
puzzle's own terms, with its notes (`hint`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import singledispatch

from circuits.explain.diagnosis import factor
from circuits.explain.formats import head
from circuits.explain.sharpening import NotAScale, Sharpening, holds_scale, sharpenings, sized, unscaled
from circuits.explain.tables import words
from circuits.explain.terms import no_given_suspects, saying


@dataclass(frozen=True)
class EarlierFailure:
    """A note on a later target's hint: the failure may follow from that of the target `label`, earlier in the
    circuit."""

    label: str


@dataclass(frozen=True)
class LeakNote:
    """A note on the first failing target's hint: the answer writes where the puzzle does not let it (`detail`, the
    leak's own message without the puzzle's name), which likely causes the failure."""

    detail: str
    reader: str | None = None  # a read outside the declared ones: whose ("head 1.0", "mlp 0", "W_U"); None: a write


def earliest_first(targets: Sequence, results: list) -> None:
    """Later failures may only echo the earliest one in the circuit (layer order, then the puzzle's): say so
    where the later target reads what the earlier one failed to make (a later layer, or the same head)."""
    failed = [n for n, r in enumerate(results) if r.status == "failed" and r.failure.explanation is not None]
    if len(failed) < 2:
        return
    first = min(failed, key=lambda n: (targets[n].stage, n))
    label = results[first].label
    for n in failed:
        same_head = results[n].failure.explanation.head == results[first].failure.explanation.head is not None
        same_fix = bool(  # one sharpness fixes both: the factor each says is the same
            {x.names for x in sharpenings(results[n])} & {x.names for x in sharpenings(results[first])}
        )
        if n != first and (targets[n].stage > targets[first].stage or same_head) and not same_fix:
            results[n].failure.explanation.notes.append(EarlierFailure(label))


def hint(explanation) -> str:
    """The likely cause and where to look, in the puzzle's own names, with the checker's notes after it."""
    facts, notes = no_given_suspects(explanation.hint, explanation.terms), list(explanation.notes)
    for note in notes:  # a factor sized for every length replaces the hint's own, sized for this input alone
        if isinstance(note, Sharpening) and note.of == "attention" and holds_scale(facts):
            facts, notes = sized(facts, note), [n for n in notes if n is not note]
            break
        if isinstance(note, NotAScale) and holds_scale(facts):
            facts, notes = unscaled(facts, note), [n for n in notes if n is not note]
            break
    lead = [n for n in notes if isinstance(n, EarlierFailure) and getattr(facts, "earlier_first", False)]
    misread = [n for n in notes if isinstance(n, LeakNote) and _reads_of(n, explanation.head)]
    with saying(explanation.terms, explanation.head, explanation.mlp):  # the matrices named as the puzzle names them
        said = words(facts)
    for note in notes:
        if note not in lead and note not in misread:
            said = noted(note, said)
    for note in lead:
        said = (
            f"{_failed_earlier(note)}, earlier in the circuit, is the likelier cause: fix that first. {_capital(said)}"
        )
    for note in misread:  # a read the puzzle forbids, by the failing head itself: the fix, before any other advice
        said = f"{_capital(note.detail.rstrip('.'))}; fix that first. If it still fails: {said}"
    return said


def _reads_of(note, at) -> bool:
    """Whether the note is a read outside its declaration by the head the hint is about."""
    return at is not None and note.reader == head(at)


def _capital(said: str) -> str:
    return said[:1].upper() + said[1:]


def _failed_earlier(note) -> str:
    label = note.label
    return "The failure of " + (f"part {label.split(' ', 1)[0]}" if label.startswith("(") else repr(label))


def _earlier_failure(note, said: str) -> str:
    label = note.label
    name = f"part {label.split(' ', 1)[0]}" if label.startswith("(") else repr(label)
    said = said if said.endswith(("?", "!")) else said.rstrip(".") + "."
    return f"{said} This may follow from the failure of {name}, earlier in the circuit: fix that first."


def _leak_note(note, said: str) -> str:
    return f"{said.rstrip('.')}. Note: {note.detail}"


def _sharpening_note(note, said: str) -> str:
    names = " and ".join(note.names)
    return (
        f"{said.rstrip('.')}. Raising {names} alone fixes this: ×{factor(note.factor)} makes it pass at "
        f"every length up to {note.max_len} (raise {names} ×{factor(note.factor)})"
    )


def _not_a_scale_note(note, said: str) -> str:
    return f"{said.rstrip('.')}. Raising the sharpness will not fix this: {note.detail}"


@singledispatch
def noted(note, said: str) -> str:
    """The hint `said` with the note after it (registered per note type)."""
    raise TypeError(f"no words for a {type(note).__name__} note: register them in circuits/explain/notes.py")


noted.register(EarlierFailure, _earlier_failure)
noted.register(LeakNote, _leak_note)
noted.register(Sharpening, _sharpening_note)
noted.register(NotAScale, _not_a_scale_note)
