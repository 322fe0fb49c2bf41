"""The library's own answers to the code puzzles, and how a learner's functions are compared with them.

They live here, not in the learner's file, so that what a learner is checked against cannot be
edited or passed off as the learner's own (`attention = reference_attention`). A compare returns the facts of the
first disagreement (explain/code.py words them), or None.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import numpy as np

from circuits.model import functional
from circuits.targets.code import searched_with


def attention(Q, K, V, mask=None):  # [b, q, d], [b, k, d], [b, k, d_v], [b, q, k] -> ([b, q, k], [b, q, d_v])
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # [b, q, k]
    A = functional.softmax(scores, mask)
    return A, A @ V


def causal_mask(T):  # -> [T, T] bool
    return functional.causal_mask(T)


LIBRARY = {attention, causal_mask, functional.causal_mask, functional.attention, functional.softmax}


def attention_cases() -> list[tuple]:
    """The small inputs attention is tried on before the search, in the order the search's shrinker prefers them
    (fewer batches, queries, keys; scale 5 before 500; 0, then 1, then −1): each is the input the search shrinks a
    classic mistake to, so that mistake is reported at once, on the very input the search would have reported."""
    a = lambda *rows: np.array(rows, dtype=float)[None]  # noqa: E731  [1, n, 1] from n single-entry rows
    mask = lambda *keys: np.array([[keys]], dtype=bool)  # noqa: E731  one query's [1, 1, k] mask
    zero = np.zeros((1, 1, 1))
    return [
        (zero, zero, zero, None),
        (zero, zero, zero, mask(False)),  # a fully masked row: all zeros, never NaN
        (a([5]), a([0], [5]), a([0], [0]), mask(True, False)),  # the mask applied after the softmax
        (a([500]), a([0], [500]), a([0], [0]), mask(True, False)),  # the max taken before masking: 0 / 0
        (a([500]), a([0], [-500]), a([0], [0]), mask(False, True)),  # masked scores at −1e5, a visible one lower
        (a([0], [500]), a([-500]), a([0]), None),  # one max for the whole batch: the other row underflows
        (np.zeros((2, 1, 1)), np.zeros((2, 1, 1)), np.zeros((2, 1, 1)), None),  # two batches
    ]


ROUND = (1.0, 5.0, 500.0)  # the values a shrunk input is written in where 0 will not do


def smaller_attention_inputs(example):
    """Simpler inputs than `example` (Q, K, V, mask), simplest first: one batch, query, key or dimension fewer; no
    mask; then one entry simpler (a mask entry False, a value 0, an odd value rounded to ±1, ±5 or ±500)."""
    Q, K, V, mask = example
    cut = lambda X, axis, i: np.delete(X, i, axis)  # noqa: E731
    for i in range(Q.shape[0] if Q.shape[0] > 1 else 0):
        yield cut(Q, 0, i), cut(K, 0, i), cut(V, 0, i), None if mask is None else cut(mask, 0, i)
    for i in range(Q.shape[1] if Q.shape[1] > 1 else 0):
        yield cut(Q, 1, i), K, V, None if mask is None else cut(mask, 1, i)
    for j in range(K.shape[1] if K.shape[1] > 1 else 0):
        yield Q, cut(K, 1, j), cut(V, 1, j), None if mask is None else cut(mask, 2, j)
    for k in range(Q.shape[2] if Q.shape[2] > 1 else 0):
        yield cut(Q, 2, k), cut(K, 2, k), V, mask
    for k in range(V.shape[2] if V.shape[2] > 1 else 0):
        yield Q, K, cut(V, 2, k), mask
    if mask is not None:
        yield Q, K, V, None
        for where in zip(*np.nonzero(mask)):
            fewer = mask.copy()
            fewer[where] = False
            yield Q, K, V, fewer
    for n, X in enumerate((Q, K, V)):
        for where in zip(*np.nonzero(X)):
            odd = abs(X[where]) not in ROUND
            for value in (0.0, *(np.copysign(r, X[where]) for r in ROUND if odd)):
                Y = X.copy()
                Y[where] = value
                yield tuple(Y if m == n else Z for m, Z in enumerate((Q, K, V))) + (mask,)


@searched_with(attention_cases, smaller_attention_inputs)
def attention_inputs():
    """Random batches (Q, K, V, mask) over the whole stated range: shapes 1–3 × 1–5 × 1–4; entries of Q and K
    anywhere in [−5, 5] or in [−500, 500], ±500 themselves among them (scores then reach ±250 000 per
    dimension, far past where exp overflows unless each row's max is subtracted); masks at random, masks
    that hide each row's largest score (a softmax taking its max before masking underflows there), and
    fully masked rows."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    @st.composite
    def draw_inputs(draw):
        b, t, s = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
        d, dv = draw(st.integers(1, 4)), draw(st.integers(1, 3))
        # drawn as integers, so the search draws the statement's range and the masks that matter most often,
        # while the shrinker still heads for the plainest case (small values, no mask)
        scale = 5.0 if draw(st.integers(0, 3)) == 0 else 500.0
        unit = st.one_of(st.floats(-1, 1, allow_nan=False, width=64), st.sampled_from([-1.0, 1.0]))
        Q = draw(hnp.arrays(np.float64, (b, t, d), elements=unit)) * scale
        K = draw(hnp.arrays(np.float64, (b, s, d), elements=unit)) * scale
        V = draw(hnp.arrays(np.float64, (b, s, dv), elements=st.floats(-5, 5, allow_nan=False, width=64)))
        how = ["none", "random", "random", "hide the largest", "hide the largest"][draw(st.integers(0, 4))]
        if how == "none":
            mask = None
        elif how == "random":
            mask = draw(hnp.arrays(np.bool_, (b, t, s), elements=st.booleans()))
        else:
            scores = Q @ np.swapaxes(K, -1, -2)  # [b, t, s]
            mask = scores < scores.max(-1, keepdims=True)  # a row of equal scores comes out fully masked
        return Q, K, V, mask

    return draw_inputs()


def mask_sizes():
    from hypothesis import strategies as st

    return st.integers(1, 64)


# --- what a compare finds: facts, worded by explain/code.py --------------------------------------------------------
@dataclass(frozen=True)
class AttentionCase:
    """The input attention was called on: the shapes of Q, K and V, and the mask (None, or as nested 0/1 lists)."""

    Q: tuple[int, ...]
    K: tuple[int, ...]
    V: tuple[int, ...]
    mask: list | None


@dataclass(frozen=True)
class MaskCase:
    """The input causal_mask was called on: the length T."""

    T: int


@dataclass(frozen=True)
class LibraryFunction:
    """The learner handed in the library's own function `function` of `module` as their `name` (or, `calls`,
    a function of their own that runs it)."""

    name: str
    module: str
    function: str
    calls: bool = False


class LibraryCalled(Exception):
    """Raised where a learner's function, run in its own process, ran circuits' own `module`.`function`."""

    def __init__(self, module: str, function: str):
        super().__init__(f"{module}.{function}")
        self.module, self.function = module, function


@dataclass(frozen=True)
class Raised:
    """The learner's `name` raised `error` (its class name) with `message` ("" for none), on `case`; `line` and `code`
    are the line of the learner's file it raised at (None when the traceback does not reach their file)."""

    name: str
    error: str
    message: str
    line: int | None
    code: str | None
    case: object


@dataclass(frozen=True)
class NotAPair:
    """The learner's `name` returned one value of type `returned`, not the pair (A, C), on `case`."""

    name: str
    returned: str
    case: object


@dataclass(frozen=True)
class WrongShape:
    """The learner's output `name` (A or C) has shape `shape` where the library's has `needs`, on `case`."""

    name: str
    shape: tuple[int, ...]
    needs: tuple[int, ...]
    case: object


@dataclass(frozen=True, eq=False)
class NanAt:
    """The learner's output `name` holds NaN at `index` (the first), on `case`; with the inputs Q and K and the mask
    (None: none), from which explain/code.py tells the NaN's likely cause."""

    name: str
    index: tuple[int, ...]
    case: object
    Q: np.ndarray
    K: np.ndarray
    mask: np.ndarray | None


@dataclass(frozen=True, eq=False)
class ValuesDiffer:
    """The learner's output `name` differs from the library's, first at `index` (`yours` against `expected`), on
    `case`; with the inputs Q, K, V and both whole outputs, shown below the line."""

    name: str
    index: tuple[int, ...]
    yours: float
    expected: float
    case: object
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    your_output: np.ndarray
    expected_output: np.ndarray


@dataclass(frozen=True)
class MaskShape:
    """causal_mask(T) returned an array of shape `shape`, not (T, T)."""

    T: int
    shape: tuple[int, ...]


@dataclass(frozen=True)
class MaskDtype:
    """causal_mask(T) returned an array of dtype `dtype` (its name), not bool."""

    T: int
    dtype: str


@dataclass(frozen=True)
class MaskEntry:
    """causal_mask(T)[i, j] is `yours`, but position i `may` (or may not) attend to position j."""

    T: int
    i: int
    j: int
    yours: bool
    may: bool


def _not_yours(fn, name: str) -> LibraryFunction | None:
    if any(fn is f for f in LIBRARY):
        return LibraryFunction(name, fn.__module__, fn.__name__)
    return None


def _call(fn, name: str, case, *args):
    """fn(*args), or the facts of what the learner's code raised: the exception, its line, the input."""
    try:
        return fn(*args), None
    except LibraryCalled as e:
        return None, LibraryFunction(name, e.module, e.function, calls=True)
    except Exception as e:  # noqa: BLE001 - the learner's code raising is a finding, not a crash
        mine = getattr(getattr(fn, "__code__", None), "co_filename", None)
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == mine]
        line, code = (frames[-1].lineno, frames[-1].line) if frames else (None, None)
        if not frames and getattr(e, "circuits_line", None) is not None:  # raised in the learner's own process
            line, code = e.circuits_line, e.circuits_code
        return None, Raised(name, type(e).__name__, str(e), line, code, case)


def compare_attention(answer, example) -> object | None:
    Q, K, V, mask = example
    case = AttentionCase(Q.shape, K.shape, V.shape, None if mask is None else mask.astype(int).tolist())
    if (found := _not_yours(answer.attention, "attention")) is not None:
        return found
    got, crash = _call(
        answer.attention, "attention", case, Q.copy(), K.copy(), V.copy(), None if mask is None else mask.copy()
    )
    if crash:
        return crash
    if not isinstance(got, tuple) or len(got) != 2:
        return NotAPair("attention", type(got).__name__, case)
    want = attention(Q, K, V, mask)
    for name, yours, expected in zip("AC", got, want):
        yours = np.asarray(yours, dtype=float)
        if yours.shape != expected.shape:
            return WrongShape(name, yours.shape, expected.shape, case)
        if np.isnan(yours).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(yours))[0])
            return NanAt(name, where, case, Q, K, mask)
        if not np.allclose(yours, expected, atol=1e-9):
            where = tuple(int(i) for i in np.argwhere(~np.isclose(yours, expected, atol=1e-9))[0])
            return ValuesDiffer(
                name, where, float(yours[where]), float(expected[where]), case, Q, K, V, yours, expected
            )
    return None


def compare_mask(answer, T) -> object | None:
    if (found := _not_yours(answer.causal_mask, "causal_mask")) is not None:
        return found
    got, crash = _call(answer.causal_mask, "causal_mask", MaskCase(T), T)
    if crash:
        return crash
    got = np.asarray(got)
    if got.shape != (T, T):
        return MaskShape(T, got.shape)
    if got.dtype != bool:
        return MaskDtype(T, str(got.dtype))
    want = causal_mask(T)
    if not (got == want).all():
        i, j = (int(x) for x in np.argwhere(got != want)[0])
        return MaskEntry(T, i, j, bool(got[i, j]), bool(want[i, j]))
    return None
