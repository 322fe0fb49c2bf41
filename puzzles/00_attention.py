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
  Scores can be large (entries of Q and K up to ±500), far past where exp overflows: keep
  the softmax stable.

Worked example: Q = [[[1, 0]]], K = [[[1, 0], [0, 1]]], V = [[[1], [3]]], no mask:
scores = [1, 0] / √2 = [0.707, 0];  A = [[[0.670, 0.330]]];  C = [[[1.660]]].

Your functions are compared with the library's own, on random shapes, values and masks
(hypothesis shrinks any disagreement to the smallest case). Those live in
circuits/checking/reference.py, outside this file, so what you are checked against stays fixed;
handing them in as your own fails. Write yours in numpy.
"""

import numpy as np

from circuits import Code, Puzzle, reference
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)


puzzle = Puzzle(
    number=0,
    name="attention",
    title="Attention by hand",
    answer=["causal_mask", "attention"],
    targets=[
        Code("causal_mask(T) is True exactly where j ≤ i, for T = 1..64",
             strategy=reference.mask_sizes, compare=reference.compare_mask, examples=[1, 2, 5]),
        Code("attention(Q, K, V, mask) matches the library's on random shapes, values up to ±500 and masks, "
             "fully masked rows included",
             strategy=reference.attention_inputs, compare=reference.compare_attention,
             examples=[(np.array([[[1.0, 0.0]]]), np.array([[[1.0, 0.0], [0.0, 1.0]]]), np.array([[[1.0], [3.0]]]), None),
                       (np.array([[[500.0, 0.0]]]), np.array([[[500.0, 0.0], [499.0, 0.0]]]), np.array([[[1.0], [3.0]]]),
                        None)]),
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
