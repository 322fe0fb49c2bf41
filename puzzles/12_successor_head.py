"""Puzzle 12 · A successor head                               (from Gould et al. 2023, "Successor Heads")

Large language models have *successor heads*: attention heads whose OV circuit maps a token
of an ordered sequence to the next one (1 → 2, Monday → Tuesday, March → April). Gould et
al. (2023) find them in models from 31M to 12B parameters, and find that they work on
"mod-10 features": directions of the embedding that say where a token sits in a cycle of ten.

Here the digits 0 … 9 have nothing *but* such a feature. Digit d is embedded at the point
(cos dθ, sin dθ) of the unit circle, θ = 2π/10 = 36°, in the directions mod:x and mod:y, and
the unembedding W_U reads digit d at the same point of two other directions, out:x and out:y
(d_model = 4). The head's pattern is given: each position attends to itself.

Write its OV circuit, W_V (2 × 4) and W_O (4 × 2), so that

  (a) in its full OV circuit W_U W_O W_V W_E, each digit's column is largest at its
      successor: 0 → 1, 1 → 2, …, 8 → 9, and 9 → 0 (on a cycle of ten, as on a clock);
  (b) after every digit of every string of 1 to 8 digits, its successor gets log-prob ≥ −0.1.

Multiply W_O by a sharpness symbol `γ`, bound in `params`.

Worked example, "3790" (the target, from `successors`):

    position            0     1     2     3
    digit               3     7     9     0
    must predict        4     8     0     1      (each with log-prob ≥ −0.1)

A copying head (puzzle 11's kind) would predict 3, 7, 9, 0: each digit's column of its
full OV circuit is largest at the digit itself. Its logits for digit 3, γ·cos((d − 3)·36°):

    d                 0      1      2      3      4      5      6      7      8      9
    copy 3         −.309γ  .309γ  .809γ   1γ    .809γ  .309γ −.309γ −.809γ  −1γ  −.809γ

Yours must be largest at 4 instead, and 4 must win over its rivals by enough that its
log-prob is ≥ −0.1.

Puzzle 11's copying score cannot tell the two apart well: a successor head can score
close to a copier's 1. Gould et al. check successorship directly, as (a) does.
"""

import sympy

from circuits import Basis, blank, Head, Inputs, Model, NextToken, OVCircuit, Puzzle, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
DIGITS = "0123456789"
THETA = 2 * sympy.pi / 10  # 36°, exact: write angles with sympy.cos / sympy.sin
vocab = Vocab.chars_of(DIGITS)
resid = Basis(["mod:x", "mod:y", "out:x", "out:y"])  # d_model = 4

W_E = blank(resid, vocab.tokens)  # [4, 10]: digit d at (cos dθ, sin dθ) in mod:x, mod:y
W_U = blank(vocab.tokens, resid)  # [10, 4]: digit d read at (cos dθ, sin dθ) from out:x, out:y
for d in range(10):
    W_E["mod:x", DIGITS[d]], W_E["mod:y", DIGITS[d]] = sympy.cos(d * THETA), sympy.sin(d * THETA)
    W_U[DIGITS[d], "out:x"], W_U[DIGITS[d], "out:y"] = sympy.cos(d * THETA), sympy.sin(d * THETA)
γ = sympy.Symbol("γ")  # the sharpness of the prediction


def successor(digit: str) -> str:
    """The next digit on a cycle of ten: 0 → 1, …, 9 → 0."""
    return DIGITS[(DIGITS.index(digit) + 1) % 10]


def successors(digits: list[str]) -> list[str]:
    """The target, in plain Python: after each digit, its successor."""
    return [successor(d) for d in digits]


def build(answer) -> Model:
    return Model(vocab, W_E, W_U=W_U, residual=resid, params=answer.params, name="successor_head",
                 layers=[[Head(W_V=answer.W_V, W_O=answer.W_O, pattern="self")]])


puzzle = Puzzle(
    number=12,
    name="successor_head",
    title="A successor head",
    answer=["W_V", "W_O"],
    build=build,
    targets=[
        OVCircuit("(a) head 0.0's full OV circuit W_U W_OV W_E raises each digit's successor most (9 → 0)",
                  raises=successor),
        NextToken(successors, lo=-0.1, description="(b) after every digit, its successor has log-prob ≥ −0.1"),
    ],
    inputs=Inputs(list(DIGITS), min_len=1, max_len=8),
    examples=["0123456789", "9"],
    sharpness=["γ"],
    source="Gould, Ong, Ogden, Conmy (2023), Successor Heads: Recurring, Interpretable Attention Heads In The Wild",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_V: (2, 4), what the head reads. W_O: (4, 2), where it writes, times γ.
W_V = FILL_ME_IN("(2, 4)")
W_O = FILL_ME_IN("(4, 2)")
