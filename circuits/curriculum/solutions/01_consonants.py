"""Puzzle 01 · Consonant detection                         (from Assignment 12, problem 1)

Letters are tokens, and each letter's embedding says one thing: vowel or consonant.

              a  b  c  d  e  f  …  z
    vowel     1  0  0  0  1  0  …  0
    consonant 0  1  1  1  0  1  …  1

Write one attention head (W_Q, W_K, W_V) whose result at each position i,
A·V = Σ_j A_ij W_V x_j, is

    ≈ [1, 0]   while no consonant has appeared at or before position i,
    ≈ [0, 1]   from the first consonant on,

within 0.1 in each coordinate, for every string of 1 to 40 letters.

Conventions: column vectors; q_i = W_Q x_i, k_j = W_K x_j; the score of query i for
key j is the raw dot product q_i · k_j (no 1/sqrt(d_head) here); causal mask (position i
sees positions 0..i); A = row softmax of the scores.

Worked example, "abcce", with W_Q = [[1, 1]], W_K = [[0, 5]], W_V = I (the course's answer):

    query  attention over keys a b c c e           result A·V
    a      1      ·      ·      ·      ·           [1, 0]
    b      .0067  .9933  ·      ·      ·           [.0067, .9933]
    c      .0034  .4983  .4983  ·      ·           [.0034, .9966]
    c      .0022  .3326  .3326  .3326  ·           [.0022, .9978]
    e      .0022  .3318  .3318  .3318  .0022       [.0045, .9955]

That answer gets this example right, but it does not solve the puzzle. Find out why
(`pytest puzzles/` will show you the shortest string it gets wrong), then fix it.
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


def spec(letters: list[str]) -> list[list[int]]:
    """The target, in plain Python: has a consonant appeared at or before each position?"""
    out, seen = [], False
    for letter in letters:
        seen = seen or letter not in VOWELS
        out.append([0, 1] if seen else [1, 0])
    return out


def spec_batched(letters):
    """The same as spec on a whole batch at once (for the checker's speed): letters [b, L] -> [b, L, 2]."""
    seen = np.logical_or.accumulate(~np.isin(letters, list(VOWELS)), axis=1)  # [b, L]
    return np.stack([~seen, seen], axis=-1)


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V)]], name="consonants", params=answer.params)


puzzle = Puzzle(
    number=1,
    name="consonants",
    title="Consonant detection",
    answer=["W_Q", "W_K", "W_V"],
    build=build,
    targets=[Output(HeadZ(0, 0), spec, tol=0.1, batched=spec_batched,
                    description="head 0.0's result is [1, 0] before the first consonant and [0, 1] from it on (±0.1)")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=40,
                  families=[Uniform(), Runs({"vowels": VOWELS, "consonants": "bcdfghjklmnpqrstvwxyz"})]),
    examples=["abcce", "eaeia", "ccrs", "aeri"],
    sharpness=["W_Q"],
    source="seed 002: Assignment 12, problem 1",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q and W_K: (d_head, 2), d_head of your choice (1 is enough).  W_V: (2, 2).
#  vowel consonant
W_Q = [[1, 1]]
W_K = [[0, 20]]
W_V = [[1, 0],
       [0, 1]]


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q and W_K: (d_head, 2), d_head of your choice (1 is enough).  W_V: (2, 2).
# W_Q = FILL_ME_IN("roughly 2 non-zero entries")
# W_K = FILL_ME_IN("roughly 1 non-zero entry")
# W_V = FILL_ME_IN("roughly 2 non-zero entries")
