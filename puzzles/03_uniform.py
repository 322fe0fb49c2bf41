"""Puzzle 03 · Uniform attention: the fraction of vowels so far      (from CS187 lab 2-6)

The uniform attention model gives every earlier position the same weight, so a head's
result is the plain mean of the values it can see. Use that to count.

              a  b  c  …  z
    vowel     1  0  0  …  0
    consonant 0  1  1  …  1        (W_E, as in puzzle 01)

Write one head (W_Q, W_K: d_head × 2 with any d_head ≥ 1; W_V: 1 × 2) whose result at
position i is the fraction of vowels among the letters at positions 0..i, exact to 1e-9,
for every string of 1 to 40 letters.

Worked example, "abcce":   a → 1,  b → 1/2,  c → 1/3,  c → 1/4,  e → 2/5.
"""

import numpy as np

from circuits import Basis, blank, Head, HeadZ, Inputs, Model, Output, Puzzle, Runs, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
VOWELS = "aeiou"
vocab = Vocab.chars_of("abcdefghijklmnopqrstuvwxyz")
resid = Basis(["vowel", "consonant"])
W_E = blank(resid, vocab.tokens)  # [d_model = 2, n_vocab = 26]
for letter in vocab.tokens:
    W_E["vowel" if letter in VOWELS else "consonant", letter] = 1


def spec(letters: list[str]) -> list[list[float]]:
    """The target, in plain Python: the running fraction of vowels."""
    out, vowels = [], 0
    for i, letter in enumerate(letters):
        vowels += letter in VOWELS
        out.append([vowels / (i + 1)])
    return out


def spec_batched(letters):
    """The same as spec on a whole batch at once (for the checker's speed): letters [b, L] -> [b, L, 1]."""
    vowels = np.cumsum(np.isin(letters, list(VOWELS)), axis=1)  # [b, L]: vowels so far
    return (vowels / np.arange(1, letters.shape[1] + 1))[..., None]


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V)]], name="uniform", params=answer.params)


puzzle = Puzzle(
    number=3,
    name="uniform",
    title="Uniform attention: the fraction of vowels so far",
    answer=["W_Q", "W_K", "W_V"],
    build=build,
    targets=[Output(HeadZ(0, 0), spec, tol=1e-9, batched=spec_batched,
                    description="head 0.0's result is the fraction of vowels among positions 0..i (±1e-9)")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=40,
                  families=[Uniform(), Runs({"vowels": VOWELS, "consonants": "bcdfghjklmnpqrstvwxyz"})]),
    examples=["abcce", "aeiou", "xyz"],
    source="seed 004: CS187 lab 2-6, the uniform attention model; seed 002, problem 1(e)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q, W_K: (d_head, 2)   W_V: (1, 2)
W_Q = FILL_ME_IN("roughly 0 non-zero entries")
W_K = FILL_ME_IN("roughly 0 non-zero entries")
W_V = FILL_ME_IN("roughly 1 non-zero entry")
