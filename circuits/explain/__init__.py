"""Why a circuit fails, in words: the stage between checking (which finds *that* an answer fails, and where) and
display (which lays the words out as a report, JSON or HTML).

One module per kind of target holds that kind's explanation: the facts it finds about a failing input, and the
words each fact is said in, together. Two type-keyed tables join them:

    explain(target, trace, tokens)   the facts of one failing input, for the target's kind (registered per kind)
    words(fact)                      the sentence for one fact (registered per fact type)

A kind registers both in its own module (`@explain.register`, `@words.register`); this package imports every
kind's module at its end, so asking it is enough.
"""

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


# --- the kinds (explain-b: the finding kinds) --------------------------------------------------------------------
# Every module of this package is a kind's explanation and words, registered on import; importing them all here,
# by listing the package, means a new kind's module is found without a line added to a list.
def _import_kinds() -> None:
    import importlib
    import pkgutil

    for kind in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{kind.name}")


_import_kinds()
# --- end of the kinds ----------------------------------------------------------------------------------------------
