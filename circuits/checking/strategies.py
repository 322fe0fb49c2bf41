"""Hypothesis strategies for puzzle inputs, for instructors writing new puzzles.

Each returns lists of tokens (strings). They shrink toward short inputs made of
the earliest tokens of the alphabet, so a failure shrinks to a minimal, readable case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # hypothesis loads when a strategy is made, not when a puzzle file is
    from hypothesis import strategies as st


def strings(alphabet: Sequence[str], min_size: int = 1, max_size: int = 20) -> st.SearchStrategy[list[str]]:
    """Inputs of `min_size`..`max_size` tokens drawn from `alphabet`."""
    from hypothesis import strategies as st

    return st.lists(st.sampled_from(list(alphabet)), min_size=min_size, max_size=max_size)


def repeated_sequences(
    alphabet: Sequence[str], min_half: int = 1, max_half: int = 10, distinct: bool = False
) -> st.SearchStrategy[list[str]]:
    """A random sequence followed by itself (the induction setting); `distinct` makes the first half repeat-free."""
    from hypothesis import strategies as st

    alphabet = list(alphabet)
    max_half = min(max_half, len(alphabet)) if distinct else max_half
    half = st.lists(st.sampled_from(alphabet), min_size=min_half, max_size=max_half, unique=distinct)
    return half.map(lambda h: h + h)


def runs(
    classes: Mapping[str, Sequence[str]], min_size: int = 1, max_size: int = 20, max_runs: int = 4
) -> st.SearchStrategy[list[str]]:
    """Inputs made of a few long runs, each of tokens from one class (e.g. vowels, then consonants)."""
    from hypothesis import strategies as st

    pools = [list(v) for v in classes.values()]

    def run(draw_pool):
        pool, n = draw_pool
        return st.lists(st.sampled_from(pool), min_size=n, max_size=n)

    one = st.tuples(st.sampled_from(pools), st.integers(1, max_size)).flatmap(run)
    return (
        st.lists(one, min_size=1, max_size=max_runs)
        .map(lambda parts: [t for p in parts for t in p][:max_size])
        .filter(lambda s: len(s) >= min_size)
    )
