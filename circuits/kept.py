"""What a process keeps from one check for the next (a watch's next save, the next puzzle of a pytest run, an
audit's next mutant), in one place: each memo with its size, and `forget()`, which empties them all.

Every memo here is a pure cache of a function of its key: what it keeps never changes a verdict or a report, only
how soon they come (tests/test_warm_check.py checks each against a cold process). A memo keeps its latest entries,
the oldest dropped first; one read again counts as new where `refresh` is on.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable


class Latest:
    """The latest `size` entries of a memo kept between checks (`name` says what it is)."""

    def __init__(self, name: str, size: int, refresh: bool = False):
        self.name, self.size, self.refresh = name, size, refresh
        self._entries: OrderedDict = OrderedDict()

    def get(self, key: Hashable, default=None):
        if key not in self._entries:
            return default
        if self.refresh:
            self._entries.move_to_end(key)
        return self._entries[key]

    def keep(self, key: Hashable, value) -> None:
        """Keep `value` as the newest entry, dropping the oldest beyond the size."""
        self._entries.pop(key, None)
        self._entries[key] = value
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


_MEMOS: list[Latest] = []
_OTHERS: list[Callable[[], None]] = []  # memos kept their own way (targets/once.py's tables): how to empty each


def latest(name: str, size: int, refresh: bool = False) -> Latest:
    """A new memo kept between checks, emptied with the others by `forget()`."""
    memo = Latest(name, size, refresh)
    _MEMOS.append(memo)
    return memo


def also(clear: Callable[[], None]) -> None:
    """Register how to empty a memo kept some other way, so that `forget()` empties it too."""
    _OTHERS.append(clear)


def memos() -> list[Latest]:
    return list(_MEMOS)


def forget() -> None:
    """Empty every memo kept between checks: the next check starts as a fresh process's would (only its speed
    differs)."""
    for memo in _MEMOS:
        memo.clear()
    for clear in _OTHERS:
        clear()
