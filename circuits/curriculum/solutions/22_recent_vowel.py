"""Puzzle 22 · Challenge: attend to the most recent vowel

Challenge for the first chapter (puzzles 01–03). No construction is walked through here:
the worksheet gives the behaviour, the givens and the constraints; the mechanism is yours.

Letters a … z; each token is a vowel or a consonant, and the position embedding is one-hot
(d_model = 2 + 16 = 18):

              a  b  c  …  z                   pos 0  1  2  …  15
    vowel     1  0  0  …  0       pos:0           1  0  0  …  0
    consonant 0  1  1  …  1       pos:1           0  1  0  …  0
              (W_E)               …               (W_pos: one direction per position)

Write one head, W_Q and W_K (d_head × 18, d_head of your choice), raw dot-product scores
with a causal mask, that at every position i attends to the most recent vowel at or before
i: ≥ 0.9 of its attention on that key, for every string of 1 to 16 letters (the whole
context, n_ctx = 16). Nothing is asked at a position with no vowel up to it. Multiply W_Q
by a sharpness symbol `s`, bound in `params`.

The behaviour, for "bacedu" (0 b, 1 a, 2 c, 3 e, 4 d, 5 u):

    query   0 b   1 a   2 c   3 e   4 d   5 u
    key      —     1     1     3     3     5

The latest vowel holds the attention however many consonants follow it, up to n_ctx.
"""

import sympy

from circuits import Attention, Basis, blank, Head, Inputs, Model, Puzzle, Runs, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
VOWELS = "aeiou"
N_CTX = 16
vocab = Vocab.chars_of("abcdefghijklmnopqrstuvwxyz")
resid = Basis(["vowel", "consonant"] + [f"pos:{i}" for i in range(N_CTX)])  # d_model = 18
W_E = blank(resid, vocab.tokens)  # [18, 26]
for letter in vocab.tokens:
    W_E["vowel" if letter in VOWELS else "consonant", letter] = 1
W_pos = blank(resid, N_CTX)  # [18, 16]
for i in range(N_CTX):
    W_pos[f"pos:{i}", i] = 1
W_V = blank(1, resid)  # [1, 18], given: the head's result is the share of attention on vowels
W_V[0, "vowel"] = 1
s = sympy.Symbol("s")  # the sharpness


def latest_vowel(letters: list[str]) -> list[int | None]:
    """The target, in plain Python: at each position, the position of the latest vowel so far (None: none yet)."""
    out, last = [], None
    for i, letter in enumerate(letters):
        last = i if letter in VOWELS else last
        out.append(last)
    return out


def build(answer) -> Model:
    return Model(vocab, W_E, W_pos=W_pos, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V)]], name="recent_vowel",
                 params=answer.params)


puzzle = Puzzle(
    number=22,
    name="recent_vowel",
    title="Challenge: attend to the most recent vowel",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[Attention(0, 0, latest_vowel, per_input=True,
                       description="head 0.0 puts ≥ 0.9 of its attention on the latest vowel at or before each query")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=N_CTX,
                  families=[Uniform(), Runs({"vowels": VOWELS, "consonants": "bcdfghjklmnpqrstvwxyz"}, max_runs=4)]),
    examples=["bacedu", "aaaa", "abbbbbbbbbbbbbbb", "bbbbbbbbbbbbbbba"],
    sharpness=["s"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 28: a challenge whose mechanism chapter 1 did not walk through",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Every query the same; a key scores 20 for a vowel plus its position: later vowels win, and
# 20 outweighs the 15 positions a consonant could be ahead by.
W_Q = blank(1, resid)
W_K = blank(1, resid)
W_Q[0, "vowel"] = W_Q[0, "consonant"] = s
W_K[0, "vowel"] = 20
for i in range(N_CTX):
    W_K[0, f"pos:{i}"] = i
params = {"s": 5}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q, W_K: (d_head, 18), d_head of your choice; write W_Q with the symbol s.
# # blank(d_head, resid) gives a zero matrix you can fill by name: W[row, "direction"] = x.
# W_Q = FILL_ME_IN("(d_head, 18)")
# W_K = FILL_ME_IN("(d_head, 18)")
