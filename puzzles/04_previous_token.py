"""Puzzle 04 · A previous-token head from sinusoidal positions   (from Transformer Circuit Exercises, 2(b)–(c))

Tokens a, b, c, d have one-hot content directions tok:a … tok:d. Positions are written
into four more directions as two cos/sin pairs with descending magnitudes:

    position n  →  cos:0 = 2·cos(α₀n)   sin:0 = 2·sin(α₀n)      α₀ = π/32
                   cos:1 = 1·cos(α₁n)   sin:1 = 1·sin(α₁n)      α₁ = π/4

No direction says "the previous position": every position is only these four numbers.

Write two heads of layer 0, each with 4-dimensional queries and keys (4 × 8 matrices):

  head 0.0  attends to its own position:       ≥ 0.9 of its attention on position i, for every i;
  head 0.1  attends to the previous position:  ≥ 0.9 on position i − 1, for every i ≥ 1,

for every string of 2 to 32 tokens (the whole context, n_ctx = 32). Scores are raw dot
products. Scores of the size these numbers give rank keys but make a flat softmax: put a
sharpness factor `s` in front, as a sympy symbol, and bind it in `params`.

Worked behaviour, "abcd" (every string alike: the tokens do not matter here):

    query          0   1   2   3
    head 0.0 on    0   1   2   3
    head 0.1 on    —   0   1   2

A fact about the givens: the positions' four numbers of n and m have the dot product
4·cos(α₀(n−m)) + cos(α₁(n−m)): 5 for m = n, 4.69 for m = n ± 1, 3.92 for m = n ± 2, 3.12
for m = n ± 3, … Neighbouring positions look alike, so scores that differ by these amounts
make a flat softmax: at n = 31, scores in these proportions leave only 0.28 of the attention
on the largest.
"""

import numpy as np
import sympy

from circuits import (
    Attention, Basis, blank, Head, Inputs, Model, Puzzle, sinusoidal, sinusoidal_names, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
N_CTX = 32
ALPHA = (sympy.pi / 32, sympy.pi / 4)  # exact, so sympy.cos / sympy.sin of them stay exact
MAGNITUDES = (2, 1)
vocab = Vocab.chars_of("abcd")
resid = Basis([f"tok:{t}" for t in vocab.tokens] + sinusoidal_names(2))  # d_model = 8
W_E = blank(resid, vocab.tokens)  # [8, 4]: content one-hot
for t in vocab.tokens:
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [8, 32]: the cos/sin pairs
W_pos[["cos:0", "sin:0", "cos:1", "sin:1"], list(range(N_CTX))] = sinusoidal(N_CTX, [float(a) for a in ALPHA], MAGNITUDES)
s = sympy.Symbol("s")  # the sharpness factor


def build(answer) -> Model:
    silent = np.zeros((1, len(resid)))  # these heads are judged by where they look, not what they write
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params, name="previous_token", layers=[[
        Head(W_Q=answer.W_Q_self, W_K=answer.W_K_self, W_V=silent),
        Head(W_Q=answer.W_Q_prev, W_K=answer.W_K_prev, W_V=silent),
    ]])


puzzle = Puzzle(
    number=4,
    name="previous_token",
    title="A previous-token head from sinusoidal positions",
    answer=["W_Q_self", "W_K_self", "W_Q_prev", "W_K_prev"],
    build=build,
    targets=[
        Attention(0, 0, "current-token", min_mass=0.9,
                  description="head 0.0 puts ≥ 0.9 of its attention on its own position"),
        Attention(0, 1, "previous-token", min_mass=0.9,
                  description="head 0.1 puts ≥ 0.9 of its attention on the previous position"),
    ],
    inputs=Inputs(vocab.tokens, min_len=2, max_len=N_CTX),
    examples=["abcd", "dcba" * 8],
    sharpness=["s"],
    source="seed 003: Transformer Circuit Exercises, exercise 2(b) and 2(c)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Four 4 × 8 matrices (build them with blank(4, resid) and write entries by name), and params.
W_Q_self = FILL_ME_IN("(4, 8)")
W_K_self = FILL_ME_IN("(4, 8)")
W_Q_prev = FILL_ME_IN("(4, 8)")
W_K_prev = FILL_ME_IN("(4, 8)")
params = {"s": 1}  # raise s until the attention is sharp enough
