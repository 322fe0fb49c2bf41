"""The puzzle author's functions a target holds (spec, where, after_bos), called when the puzzle loads.

A target's `validate` calls them on the worked examples through `call` and checks what they return
with `check_spec_result` or `check_keys`; each mistake is one line, through the `fail(what)` it is handed,
which names the file and the target.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from circuits import limits
from circuits.errors import CircuitError

Fail = Callable[[str], CircuitError]  # what went wrong -> the error naming the file and the target


def at_line(e: BaseException) -> str:
    """` at line N`: the deepest line of the author's own file in `e`'s traceback."""
    frames = limits.file_frames(e)
    return f" at line {frames[-1].lineno}" if frames else ""


def what_raised(e: BaseException) -> str:
    """An exception of the author's code in one line: its type, the file's line, its message."""
    return f"{type(e).__name__}{at_line(e)}" + (f" ({e})" if str(e) else "")


def shown(tokens: list[str]) -> str:
    return limits.shown_input(tokens)


def call(fn, arg, what: str, fail: Fail):
    """`fn(arg)`, with anything it raises said in one line as `what` raising."""
    try:
        return fn(arg)
    except limits.TimeLimit:
        raise
    except CircuitError as e:
        raise fail(f"{what} raised: {e}") from None
    except BaseException as e:  # noqa: BLE001 - the author's code raising is one line naming it
        raise fail(f"{what} raised {what_raised(e)}") from None


def check_spec_result(got, toks, width: int | None, next_token: bool, fail: Fail) -> None:
    """What `spec(toks)` returned: one value per token (None: no expectation), a token for a next-token spec,
    else a number or vector as wide as the readout (`width`, None: any)."""
    said = shown(toks)
    try:
        n = len(got)
    except TypeError:
        raise fail(
            f"spec({said}) returned {type(got).__name__}, needs a list with one value per token "
            f"({len(toks)}; None where nothing is expected)"
        ) from None
    if isinstance(got, str) and not next_token:
        raise fail(f"spec({said}) returned the string {got!r}, needs a list of numbers or vectors per token")
    if n != len(toks):
        raise fail(
            f"spec({said}) returned {n} values for {len(toks)} tokens; it needs one per token "
            "(None where nothing is expected)"
        )
    sizes = set()
    for i, e in enumerate(got):
        if e is None:
            continue
        if next_token:
            if not isinstance(e, str):
                raise fail(f"spec({said})[{i}] is {e!r}, needs the expected next token (a string) or None")
            continue
        flat = [e] if is_number(e) else (list(np.ravel(np.asarray(e, dtype=object))) if not isinstance(e, str) else [e])
        if not all(is_number(x) for x in flat):
            raise fail(f"spec({said})[{i}] is {e!r}, needs a number, a list of numbers or None")
        sizes.add(len(flat))
    if len(sizes) > 1:
        raise fail(
            f"spec({said}) gives vectors of {' and '.join(map(str, sorted(sizes)))} numbers; every position "
            "needs the readout's width"
        )
    if width is not None and sizes and sizes != {width}:
        raise fail(f"spec({said}) gives {sizes.pop()} numbers per position; the readout has {width} directions")


def is_number(x) -> bool:
    """A number as the checker reads one (int, float, numpy or sympy numbers, bools), not a string or a list."""
    if isinstance(x, (str, bytes)) or np.ndim(x) != 0:
        return False
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return True


def check_keys(got, toks, fail: Fail, name: str = "where") -> None:
    """What a per-input `where(toks)` (or the function `name`) returned: per query, a key position 0..query
    (−1: BOS), a set of them, or None."""
    said = shown(toks)
    try:
        keys = list(got)
    except TypeError:
        raise fail(
            f"{name}({said}) returned {type(got).__name__}, needs a list with a key (or None) per token"
        ) from None
    if len(keys) != len(toks):
        raise fail(
            f"{name}({said}) returned {len(keys)} entries for {len(toks)} tokens; it needs one per query "
            "(None where the query has no target)"
        )
    for q, k in enumerate(keys):
        if k is None:
            continue
        many = [k] if isinstance(k, numbers.Integral) else (list(k) if not isinstance(k, str) else [k])
        for key in many:
            if not isinstance(key, numbers.Integral) or not -1 <= key <= q:  # −1: the BOS token, in a model with one
                raise fail(
                    f"{name}({said})[{q}] is {k!r}, needs a key position 0..{q} (−1: BOS), a set of them, or None"
                )


def expects_something(fn, probe: list[list[str]]) -> bool:
    """Whether a spec (or per-input `where`) gives an expectation somewhere on the inputs `probe`."""
    return any(e is not None for toks in probe for e in fn(list(toks)))
