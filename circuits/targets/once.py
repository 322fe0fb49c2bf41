"""Each spec computed once per distinct input while a check runs: the checker opens the memo, targets read it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence

_open = threading.local()  # the memo of the check running on this thread: {key: {input: value}}


@contextlib.contextmanager
def per_check() -> Iterator[None]:
    """Inside the block, `each` computes a value once per key and distinct input; the memo ends with the block."""
    saved = getattr(_open, "tables", None)
    _open.tables = {} if saved is None else saved  # a nested check shares the outer one's memo
    try:
        yield
    finally:
        _open.tables = saved


def each(key: Hashable, batch: Sequence[Sequence[str]], compute: Callable, many: Callable | None = None) -> list:
    """`[compute(tokens) for tokens in batch]`, computing each distinct input once per `key` inside `per_check`.

    `many(inputs)`, if given, computes the values of several inputs at once (the same as `compute` on
    each). `key` names the computation (it holds the spec function, so the memo keeps it alive);
    values are shared between calls, so callers must not change them."""
    many = many or (lambda inputs: [compute(tokens) for tokens in inputs])
    tables = getattr(_open, "tables", None)
    if tables is None:
        return many(batch)
    table = tables.setdefault(key, {})
    keys = [tuple(tokens) for tokens in batch]
    new = {k: tokens for k, tokens in zip(keys, batch) if k not in table}
    if new:
        table.update(zip(new, many(list(new.values()))))
    return [table[k] for k in keys]
