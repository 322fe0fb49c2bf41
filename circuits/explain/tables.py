"""The type-keyed tables of the explain stage: a kind's explanation, a fact's words, a per-position table's columns
and rows; each kind's module registers its own (circuits/explain/__init__.py imports them all)."""

from __future__ import annotations

from functools import singledispatch


@singledispatch
def explain(target, trace, tokens):
    """The facts of why `target` fails on `tokens` (run as `trace`): an Explanation."""
    raise TypeError(f"no explanation for a {type(target).__name__} target: register one in circuits/explain/")


@singledispatch
def words(fact) -> str:
    """The words for one fact of an explanation or a finding (a str is a puzzle's own words, printed as written)."""
    raise TypeError(f"no words for a {type(fact).__name__}: register them beside the fact in circuits/explain/")


@words.register
def _(fact: str) -> str:
    return fact


@singledispatch
def columns(facts) -> list[str]:
    """The column headers of a kind's per-position facts."""
    raise TypeError(f"no table for {type(facts).__name__}: register its columns beside it in circuits/explain/")


@singledispatch
def rows(facts) -> list[list[str]]:
    """One row of cells per position of a kind's per-position facts."""
    raise TypeError(f"no table for {type(facts).__name__}: register its rows beside it in circuits/explain/")
