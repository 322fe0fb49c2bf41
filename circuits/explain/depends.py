"""Depends' words: what an intervention found (the head did not follow a patched write: Unfollowed; zeroing the write
left it on its target: Unbroken) and what the check tried (Interventions).

The facts are made where the interventions run (targets/depends.py); here they are said.
"""

from __future__ import annotations

from circuits.explain.structure import head
from circuits.explain.tables import words
from circuits.targets.depends import Interventions, Unbroken, Unfollowed


def _quoted(tokens) -> str:
    return repr("".join(tokens) if all(len(t) == 1 for t in tokens) else " ".join(tokens))


def _into(f) -> str:
    return ", ".join(f.into)


def _key(labels, k: int) -> str:
    return f"key {k} {labels[k]!r}"


def _keys(labels, keys) -> str:
    return _key(labels, keys[0]) if len(keys) == 1 else f"keys {', '.join(map(str, keys))}"


def _writer(writer: str) -> str:
    return "the embedding" if writer == "embed" else writer


def _depends(f, verb: str = "depend on") -> str:
    return f"on {_quoted(f.base)}, {head(f.reader)}'s attention does not {verb} {_into(f)}"


@words.register
def _(f: Unfollowed) -> str:
    at = f"at query {f.query} {f.labels[f.query]!r}"
    patch = f"with {_writer(f.writer)}'s write into {_into(f)} taken from {_quoted(f.source)}"
    if f.top in f.points:  # on the right keys, but not enough
        return (
            f"{_depends(f, 'follow')} enough: {patch}, it puts only {f.mass:.2f} on {_keys(f.labels, f.points)} "
            f"{at}, where the patch points (needs ≥ {f.min_mass:g})"
        )
    where = f"{_key(f.labels, f.top)} ({f.top_weight:.2f}) {at}"
    verb = "depend on" if f.still else "follow"  # it stayed on its own target, or went elsewhere
    return (
        f"{_depends(f, verb)}: {patch}, it {'still ' if f.still else ''}attends to {where}, but the patch "
        f"points to {_keys(f.labels, f.points)} ({f.mass:.2f} there, needs ≥ {f.min_mass:g})"
    )


@words.register
def _(f: Unbroken) -> str:
    return (
        f"{_depends(f)}: with {_writer(f.writer)}'s write into {_into(f)} zeroed, it still puts {f.mass:.2f} on its "
        f"target {_keys(f.labels, f.keys)} at query {f.query} {f.labels[f.query]!r} (zeroing must leave it "
        f"below {f.min_mass:g})"
    )


@words.register
def _(f: Interventions) -> str:
    lo, hi = f.lengths
    span = f"{lo}" if lo == hi else f"{lo}..{hi}"
    pair = f", e.g. {_quoted(f.example[0])} ← {_quoted(f.example[1])}" if f.example else ""
    return (
        f"{head(f.reader)} ← {_writer(f.writer)} into {_into(f)}: {f.patched:,} patches (base ← source, lengths "
        f"{span}{pair}) and {f.zeroed:,} inputs with the write zeroed, {f.queries:,} queries"
    )
