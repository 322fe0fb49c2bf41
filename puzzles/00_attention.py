"""Puzzle 00 · Attention by hand (warm-up)                          (from CS187 lab 2-6)

Before writing weights, write the function every head runs. Two functions, in numpy:

  causal_mask(T) -> [T, T] bool
      mask[i, j] is True when position i may attend to position j (j ≤ i), False otherwise.

  attention(Q, K, V, mask=None) -> (A, C)
      Q: [batch, q_len, D]   K: [batch, k_len, D]   V: [batch, k_len, D_v]
      mask: None, or [batch, q_len, k_len] bool, True where attending is allowed
      A: [batch, q_len, k_len]   the attention pattern: a row softmax of Q Kᵀ / √D,
                                 with disallowed entries exactly 0
      C: [batch, q_len, D_v]     the context vectors, A V

  A row whose keys are all disallowed (padding) must come out as all zeros — in A and in
  C — never NaN. (Filling with −inf and calling softmax gives NaN there: handle it.)

Worked example: Q = [[[1, 0]]], K = [[[1, 0], [0, 1]]], V = [[[1], [3]]], no mask:
scores = [1, 0] / √2 = [0.707, 0];  A = [[[0.670, 0.330]]];  C = [[[1.660]]].

Your functions are compared with the library's own on random shapes and values
(hypothesis shrinks any disagreement to the smallest case).
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from circuits.functional import causal_mask as reference_mask
from circuits.functional import softmax
from circuits.puzzle import FILL_ME_IN, Puzzle  # noqa: F401  (FILL_ME_IN marks an unanswered puzzle)
from circuits.targets import Code


# ── what your functions are compared with ─────────────────────────────────────────────────
def reference_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # [batch, q_len, k_len]
    A = softmax(scores, mask)
    return A, A @ V


@st.composite
def attention_inputs(draw):
    b, t, s = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
    d, dv = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    floats = st.floats(-5, 5, allow_nan=False, width=64)
    Q = draw(hnp.arrays(np.float64, (b, t, d), elements=floats))
    K = draw(hnp.arrays(np.float64, (b, s, d), elements=floats))
    V = draw(hnp.arrays(np.float64, (b, s, dv), elements=floats))
    mask = draw(st.one_of(st.none(), hnp.arrays(np.bool_, (b, t, s))))
    return Q, K, V, mask


def _show(a) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True, separator=", ")


def compare_attention(answer, example):
    Q, K, V, mask = example
    case = f"Q {Q.shape}, K {K.shape}, V {V.shape}, mask {'None' if mask is None else mask.astype(int).tolist()}"
    got = answer.attention(Q.copy(), K.copy(), V.copy(), None if mask is None else mask.copy())
    if not isinstance(got, tuple) or len(got) != 2:
        return f"attention must return a pair (A, C); it returned {type(got).__name__} (for {case})"
    want = reference_attention(Q, K, V, mask)
    for name, yours, expected in zip("AC", got, want):
        yours = np.asarray(yours, dtype=float)
        if yours.shape != expected.shape:
            return f"{name} has shape {yours.shape} but needs {expected.shape} (for {case})"
        if np.isnan(yours).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(yours))[0])
            return f"{name} has NaN at {list(where)} — a row with every key masked must be all zeros (for {case})"
        if not np.allclose(yours, expected, atol=1e-9):
            where = tuple(int(i) for i in np.argwhere(~np.isclose(yours, expected, atol=1e-9))[0])
            return (f"{name} differs at {list(where)}: yours {yours[where]:.6g}, expected {expected[where]:.6g} (for {case})\n"
                    f"Q = {_show(Q)}\nK = {_show(K)}\nV = {_show(V)}\nyour {name} = {_show(yours)}\nexpected {name} = {_show(expected)}")
    return None


def compare_mask(answer, T):
    got = np.asarray(answer.causal_mask(T))
    if got.shape != (T, T):
        return f"causal_mask({T}) has shape {got.shape} but needs ({T}, {T})"
    if got.dtype != bool:
        return f"causal_mask({T}) has dtype {got.dtype}; it must be bool (True = may attend)"
    want = reference_mask(T)
    if not (got == want).all():
        i, j = (int(x) for x in np.argwhere(got != want)[0])
        return (f"causal_mask({T})[{i}, {j}] is {bool(got[i, j])} but position {i} "
                f"{'may' if want[i, j] else 'may not'} attend to position {j}")
    return None


puzzle = Puzzle(
    number=0,
    name="attention",
    title="Attention by hand",
    answer=["causal_mask", "attention"],
    targets=[
        Code("causal_mask(T) is True exactly where j ≤ i, for T = 1..64",
             strategy=lambda: st.integers(1, 64), compare=compare_mask, examples=[1, 2, 5]),
        Code("attention(Q, K, V, mask) matches the library's on random shapes, values and masks, "
             "fully masked rows included",
             strategy=attention_inputs, compare=compare_attention,
             examples=[(np.array([[[1.0, 0.0]]]), np.array([[[1.0, 0.0], [0.0, 1.0]]]), np.array([[[1.0], [3.0]]]), None)]),
    ],
    source="seed 004: CS187 lab 2-6, the attention function and the causal mask",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Replace each FILL_ME_IN with a function:
#
#     def causal_mask(T):
#         ...                          # roughly 1 line
#
#     def attention(Q, K, V, mask=None):
#         ...                          # roughly 6 lines
#         return A, C
causal_mask = FILL_ME_IN("a function causal_mask(T), roughly 1 line")
attention = FILL_ME_IN("a function attention(Q, K, V, mask=None) -> (A, C), roughly 6 lines")
