"""The library's own answers to the code puzzles, and how a learner's functions are compared with them.

They live here, not in the learner's file, so that what a learner is checked against cannot be
edited or passed off as the learner's own (`attention = reference_attention`).
"""

from __future__ import annotations

import traceback

import numpy as np

from circuits.model import functional


def attention(Q, K, V, mask=None):  # [b, q, d], [b, k, d], [b, k, d_v], [b, q, k] -> ([b, q, k], [b, q, d_v])
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # [b, q, k]
    A = functional.softmax(scores, mask)
    return A, A @ V


def causal_mask(T):  # -> [T, T] bool
    return functional.causal_mask(T)


LIBRARY = {attention, causal_mask, functional.causal_mask, functional.attention, functional.softmax}


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


def _show(a) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True, separator=", ")


def _not_yours(fn, name: str) -> str | None:
    if any(fn is f for f in LIBRARY):
        return (f"{name} is the library's own function ({fn.__module__}.{fn.__name__}); write {name} yourself "
                "in your puzzle file")
    return None


def _call(fn, name: str, case: str, *args):
    """fn(*args), or the one-line report of what the learner's code raised: the exception, its line, the input."""
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the learner's code raising is a finding, not a crash
        mine = getattr(getattr(fn, "__code__", None), "co_filename", None)
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == mine]
        where = f" at line {frames[-1].lineno} ({frames[-1].line})" if frames else ""
        said = f": {e}" if str(e) else ""
        return None, f"your {name} raised {type(e).__name__}{said}{where}, for {case}"


def compare_attention(answer, example) -> str | None:
    Q, K, V, mask = example
    case = f"Q {Q.shape}, K {K.shape}, V {V.shape}, mask {'None' if mask is None else mask.astype(int).tolist()}"
    if (msg := _not_yours(answer.attention, "attention")) is not None:
        return msg
    got, crash = _call(answer.attention, "attention", case, Q.copy(), K.copy(), V.copy(),
                       None if mask is None else mask.copy())
    if crash:
        return crash
    if not isinstance(got, tuple) or len(got) != 2:
        return f"attention must return a pair (A, C); it returned {type(got).__name__} (for {case})"
    want = attention(Q, K, V, mask)
    for name, yours, expected in zip("AC", got, want):
        yours = np.asarray(yours, dtype=float)
        if yours.shape != expected.shape:
            return f"{name} has shape {yours.shape} but needs {expected.shape} (for {case})"
        if np.isnan(yours).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(yours))[0])
            return f"{name} has NaN at {list(where)} — {_why_nan(Q, K, mask, *where[:2])} (for {case})"
        if not np.allclose(yours, expected, atol=1e-9):
            where = tuple(int(i) for i in np.argwhere(~np.isclose(yours, expected, atol=1e-9))[0])
            return (f"{name} differs at {list(where)}: yours {yours[where]:.6g}, expected {expected[where]:.6g} (for {case})\n"
                    f"Q = {_show(Q)}\nK = {_show(K)}\nV = {_show(V)}\nyour {name} = {_show(yours)}\nexpected {name} = {_show(expected)}")
    return None


def _why_nan(Q, K, mask, b: int, q: int) -> str:
    """What a NaN in row (b, q) most likely comes from: a fully masked row, or exp overflowing on large scores."""
    if mask is not None and not mask[b, q].any():
        return "a row with every key masked must be all zeros"
    top = float(np.abs(K[b] @ Q[b, q]).max()) / np.sqrt(Q.shape[-1])
    return f"this row's scores reach ±{top:.4g}, where exp overflows (past 709): subtract the row's max before exp"


def compare_mask(answer, T) -> str | None:
    if (msg := _not_yours(answer.causal_mask, "causal_mask")) is not None:
        return msg
    got, crash = _call(answer.causal_mask, "causal_mask", f"T = {T}", T)
    if crash:
        return crash
    got = np.asarray(got)
    if got.shape != (T, T):
        return f"causal_mask({T}) has shape {got.shape} but needs ({T}, {T})"
    if got.dtype != bool:
        return f"causal_mask({T}) has dtype {got.dtype}; it must be bool (True = may attend)"
    want = causal_mask(T)
    if not (got == want).all():
        i, j = (int(x) for x in np.argwhere(got != want)[0])
        return (f"causal_mask({T})[{i}, {j}] is {bool(got[i, j])} but position {i} "
                f"{'may' if want[i, j] else 'may not'} attend to position {j}")
    return None
