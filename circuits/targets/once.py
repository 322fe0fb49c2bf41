"""Each spec computed once per distinct input while a check runs: the checker opens the memo, targets read it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence

from circuits import kept

_open = threading.local()  # the memo of the check running on this thread: {key: {input: value}}, and the keys used
_kept: dict = {}  # key -> (table, the last block that used it): for the next check (a watch's next save, an
# explanation after a check) runs the same specs on the same inputs
_blocks = 0  # outermost blocks begun in this process
_lock = threading.Lock()
KEPT_VALUES = 100_000  # a table holding more values than this is not kept for the next check
KEPT_BLOCKS = 4  # a table no block used among the last this many is dropped (a spec of a puzzle file run anew)


def _forget() -> None:
    global _kept
    with _lock:
        _kept = {}


kept.also(_forget)


@contextlib.contextmanager
def per_check() -> Iterator[None]:
    """Inside the block, `each` computes a value once per key and distinct input. A nested block shares the outer
    one's memo; an outermost one starts from the tables the last ones kept and leaves them to the next, so the
    same spec (the same function object) on the same input is computed once per process."""
    global _kept, _blocks
    if getattr(_open, "tables", None) is not None:
        yield
        return
    with _lock:
        kept, _kept = _kept, {}  # a check running beside this one on another thread starts afresh
        _blocks += 1
        block = _blocks
    tables = {k: t for k, (t, _) in kept.items()}
    _open.tables, _open.used = tables, set()
    try:
        yield
    finally:
        used = _open.used
        _open.tables = _open.used = None
        last = {k: block if k in used else kept[k][1] for k in tables}
        with _lock:
            _kept = {
                k: (t, last[k]) for k, t in tables.items() if block - last[k] < KEPT_BLOCKS and len(t) <= KEPT_VALUES
            }


def joined() -> Callable[[], None]:
    """What a helper thread of the check running on this thread calls first, to share its memo (checking/cores.py's
    threads, which score parts of one batch side by side)."""
    tables, used = getattr(_open, "tables", None), getattr(_open, "used", None)

    def join() -> None:
        _open.tables, _open.used = tables, used

    return join


def each(key: Hashable, batch: Sequence[Sequence[str]], compute: Callable, many: Callable | None = None) -> list:
    """`[compute(tokens) for tokens in batch]`, computing each distinct input once per `key` inside `per_check`.

    `many(inputs)`, if given, computes the values of several inputs at once (the same as `compute` on
    each). `key` names the computation (it holds the spec function, so the memo keeps it alive, and what
    else the values depend on); values are shared between calls and checks, so callers must not change them."""
    many = many or (lambda inputs: [compute(tokens) for tokens in inputs])
    tables = getattr(_open, "tables", None)
    if tables is None:
        return many(batch)
    table = tables.setdefault(key, {})
    _open.used.add(key)
    keys = [tuple(tokens) for tokens in batch]
    new = {k: tokens for k, tokens in zip(keys, batch) if k not in table}
    if new:
        table.update(zip(new, many(list(new.values()))))
    return [table[k] for k in keys]
