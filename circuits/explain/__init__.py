"""Why a circuit fails, in words: the stage between checking (which finds *that* an answer fails, and where) and
display (which lays the words out as a report, JSON or HTML).

One module per kind of target holds that kind's explanation: the facts it finds about a failing input, and the
words each fact is said in, together. Type-keyed tables join them:

    explain(target, trace, tokens)   the facts of one failing input, for the target's kind (registered per kind)
    words(fact)                      the sentence for one fact (registered per fact type)
    columns(facts), rows(facts)      the table of a kind's per-position facts

A kind registers them in its own module (`@explain.register`, `@words.register`); this package imports every
kind's module at its end, so asking it is enough. `explained(result)` adds the explanations to a checker's result
(and its notes: an earlier failure, a leak, a sharpening sized for every length); `check` and `cached_check` are the
checker's, explained: what every entry point that shows a result calls (the mutation audit, which only needs a
verdict, calls the checker's own).
"""

from __future__ import annotations

from circuits.explain.tables import columns, explain, rows, words  # noqa: F401  (the tables)

MARKS = {
    "target": "* = target key",
    "value": "* = a key whose value the expected vector needs",
    "raises": "* = a key that would raise the expected token most",
}  # Explanation.marks_mean → the legend


def table(explanation) -> tuple[list[str], list[list[str]]]:
    """The explanation's table: its column headers and one row of cells per position."""
    return columns(explanation.per_position), rows(explanation.per_position)


def summary(explanation) -> str:
    """What failed at the explanation's input, in one sentence or two."""
    return words(explanation.summary)


from circuits.explain.failures import cached_check, check, explained  # noqa: E402, F401
from circuits.explain.notes import hint  # noqa: E402, F401


def _import_kinds() -> None:
    """Every module of this package, imported: a kind's module registers its explanation and words when it loads,
    so a new kind's module is found without a line added to a list (docs/adding_a_target_kind.md)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_kinds()
