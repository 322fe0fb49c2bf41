"""Puzzle 02 · Is the first letter a consonant?               (from Assignment 12, problem 2)

The same letters, with one more residual direction, `first`, that only the position
embedding uses: it is 1 at position 0 and 0 everywhere else.

              a  b  c  …  z                  pos 0  1  2  …
    vowel     1  0  0  …  0       vowel          0  0  0  …
    consonant 0  1  1  …  1       consonant      0  0  0  …
    first     0  0  0  …  0       first          1  0  0  …
              (W_E)                          (W_pos)

Write one head (W_Q, W_K: 1 × 3; W_V: 2 × 3) whose result at every position is

    ≈ [1, 0]   if the first letter of the string is a consonant,
    ≈ [0, 0]   if it is a vowel,

within 0.1 in each coordinate, for every string of 1 to 40 letters.
Same conventions as puzzle 01: raw dot-product scores, causal mask, result = Σ_j A_ij W_V x_j.

Worked examples (the target, from `spec`):

    string    first letter    result at every position
    cbcce     c, consonant    [1, 0]
    eacia     e, vowel        [0, 0]
    ccrs      c, consonant    [1, 0]

Position i can look at every letter 0..i, and a share of attention it gives the later
ones blurs its result: at position 39 there are 39 of them, and the result must still be
within 0.1.
"""

import numpy as np

from circuits import Basis, blank, Head, HeadZ, Inputs, Model, Output, Puzzle, Runs, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
VOWELS = "aeiou"
N_CTX = 40  # the statement's range: the checker checks every length the model takes
vocab = Vocab.chars_of("abcdefghijklmnopqrstuvwxyz")
resid = Basis(["vowel", "consonant", "first"])
W_E = blank(resid, vocab.tokens)  # [d_model = 3, n_vocab = 26]
for letter in vocab.tokens:
    W_E["vowel" if letter in VOWELS else "consonant", letter] = 1
W_pos = blank(resid, N_CTX)  # [d_model = 3, n_ctx = 40]
W_pos["first", 0] = 1


def spec(letters: list[str]) -> list[list[int]]:
    """The target, in plain Python: the same answer at every position, set by the first letter."""
    answer = [0, 0] if letters[0] in VOWELS else [1, 0]
    return [answer for _ in letters]


def spec_batched(letters):
    """The same as spec on a whole batch at once (for the checker's speed): letters [b, L] -> [b, L, 2]."""
    consonant = ~np.isin(letters[:, :1], list(VOWELS))  # [b, 1]: the first letter
    return np.stack([np.broadcast_to(consonant, letters.shape), np.zeros(letters.shape)], axis=-1)


def build(answer) -> Model:
    return Model(vocab, W_E, W_pos=W_pos, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V)]],
                 name="first_consonant", params=answer.params)


puzzle = Puzzle(
    number=2,
    name="first_consonant",
    title="Is the first letter a consonant?",
    answer=["W_Q", "W_K", "W_V"],
    build=build,
    targets=[Output(HeadZ(0, 0), spec, tol=0.1, batched=spec_batched,
                    description="head 0.0's result is [1, 0] when the first letter is a consonant, else [0, 0] (±0.1)")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=40,
                  families=[Uniform(), Runs({"vowels": VOWELS, "consonants": "bcdfghjklmnpqrstvwxyz"})]),
    examples=["cbcce", "eacia", "ccrs"],
    sharpness=["W_Q"],
    source="seed 002: Assignment 12, problem 2",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
#         vowel consonant first
W_Q = [[  1,    1,        0  ]]
W_K = [[  0,    0,       20  ]]
W_V = [[  0,    1,        0  ],
       [  0,    0,        0  ]]


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q, W_K: (1, 3)   W_V: (2, 3)
# W_Q = FILL_ME_IN("roughly 2 non-zero entries")
# W_K = FILL_ME_IN("roughly 1 non-zero entry")
# W_V = FILL_ME_IN("roughly 1 non-zero entry")
