"""Each spec computed once per distinct input while a check runs: the checker opens the memo, targets read it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence

_open = threading.local()  # the memo of the check running on this thread: {key: {input: value}}
_MISSING = object()


@contextlib.contextmanager
def per_check() -> Iterator[None]:
    """Inside the block, `each` computes a value once per key and distinct input; the memo ends with the block."""
    saved = getattr(_open, "tables", None)
    _open.tables = {} if saved is None else saved  # a nested check shares the outer one's memo
    try:
        yield
    finally:
        _open.tables = saved


def each(key: Hashable, batch: Sequence[Sequence[str]], compute: Callable) -> list:
    """`[compute(tokens) for tokens in batch]`, computing each distinct input once per `key` inside `per_check`.

    `key` names the computation (it holds the spec function, so the memo keeps it alive); values are
    shared between calls, so callers must not change them."""
    tables = getattr(_open, "tables", None)
    if tables is None:
        return [compute(tokens) for tokens in batch]
    table = tables.setdefault(key, {})
    out = []
    for tokens in batch:
        k = tuple(tokens)
        value = table.get(k, _MISSING)
        if value is _MISSING:
            value = table[k] = compute(tokens)
        out.append(value)
    return out
